package approvals

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// DefaultRetention is how long a store keeps an approval after its
// deadline, so that a late second decision is told "conflict" and an
// administrator can still look the outcome up.
const DefaultRetention = 10 * time.Minute

// Memory is a Store for a single replica.
type Memory struct {
	retention time.Duration
	now       func() time.Time

	mu      sync.Mutex
	entries map[string]*memoryEntry
}

type memoryEntry struct {
	a       Approval
	decided chan struct{} // closed by Decide
}

// NewMemory returns an empty in-process store keeping approvals retention
// past their deadline (DefaultRetention when 0).
func NewMemory(retention time.Duration) *Memory {
	if retention <= 0 {
		retention = DefaultRetention
	}
	return &Memory{retention: retention, now: time.Now, entries: make(map[string]*memoryEntry)}
}

// Put implements Store.
func (m *Memory) Put(_ context.Context, a Approval) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prune()
	if _, dup := m.entries[a.ID]; dup {
		return fmt.Errorf("approvals: duplicate id %s", a.ID)
	}
	m.entries[a.ID] = &memoryEntry{a: a, decided: make(chan struct{})}
	return nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, id string) (Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[id]
	if !ok {
		return Approval{}, ErrNotFound
	}
	return e.a, nil
}

// List implements Store.
func (m *Memory) List(context.Context) ([]Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prune()
	now := m.now()
	var out []Approval
	for _, e := range m.entries {
		if e.a.Pending() && now.Before(e.a.Deadline) {
			out = append(out, e.a)
		}
	}
	slices.SortFunc(out, func(a, b Approval) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}

// Decide implements Store.
func (m *Memory) Decide(_ context.Context, id string, d Decision) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[id]
	switch {
	case !ok:
		return ErrNotFound
	case !e.a.Pending():
		return ErrConflict
	}
	e.a.Decision = &d
	close(e.decided)
	return nil
}

// Wait implements Store.
func (m *Memory) Wait(ctx context.Context, id string) (Decision, error) {
	m.mu.Lock()
	e, ok := m.entries[id]
	m.mu.Unlock()
	if !ok {
		return Decision{}, ErrNotFound
	}
	select {
	case <-e.decided:
		m.mu.Lock()
		defer m.mu.Unlock()
		return *e.a.Decision, nil
	case <-ctx.Done():
		return Decision{}, ctx.Err()
	}
}

// prune drops approvals past their retention; m.mu is held.
func (m *Memory) prune() {
	cutoff := m.now().Add(-m.retention)
	for id, e := range m.entries {
		if e.a.Deadline.Before(cutoff) {
			delete(m.entries, id)
		}
	}
}
