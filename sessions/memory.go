package sessions

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// Memory is an in-process [Store] for a single gateway replica: a mutex
// guarding a map. It is the embedded default; replicas that must share
// sessions use [Redis].
//
// Expired entries are dropped lazily when touched and on every
// ClaimExpired sweep, which scans the whole map: O(n) per sweep plus
// O(k log k) to hand out the k expired sessions oldest first. That is a
// few milliseconds for 100k sessions, and the gateway sweeps at most every
// few seconds, so no separate idle index is kept.
type Memory struct {
	opts Options

	mu       sync.Mutex
	sessions map[string]*memSession
	// counters are the budget counters (counters.go), pruned of expired
	// entries at most once per counterPruneEvery, at counterPruneAt.
	counters       map[string]*memCounter
	counterPruneAt time.Time
}

// memSession is one session's state; guarded by Memory.mu.
type memSession struct {
	seq      int64 // next number Next hands out
	blocked  bool
	ended    bool
	deadline time.Time // idle deadline: swept once it is not after now
	forgetAt time.Time // dropped from the map once it is not after now
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory(opts Options) *Memory {
	return &Memory{opts: opts.withDefaults(), sessions: make(map[string]*memSession), counters: make(map[string]*memCounter)}
}

// lookup returns id's live entry, dropping it if its retention is over.
// The caller holds m.mu.
func (m *Memory) lookup(id string, now time.Time) *memSession {
	s := m.sessions[id]
	if s != nil && !now.Before(s.forgetAt) {
		delete(m.sessions, id)
		return nil
	}
	return s
}

// touch pushes a live session's idle deadline (and its forget time, so an
// abandoned session is dropped IdleTimeout+Retention after last activity).
func (m *Memory) touch(s *memSession, now time.Time) {
	s.deadline = now.Add(m.opts.IdleTimeout)
	s.forgetAt = s.deadline.Add(m.opts.Retention)
}

// end marks s ended and starts its retention.
func (m *Memory) end(s *memSession, now time.Time) {
	s.ended = true
	s.forgetAt = now.Add(m.opts.Retention)
}

// Begin implements [Store.Begin].
func (m *Memory) Begin(_ context.Context, id string) (bool, Status, error) {
	if err := ValidateID(id); err != nil {
		return false, Status{}, err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.lookup(id, now)
	claimed := false
	if s == nil {
		// The claim reserves sequence 0 for the claimer's agent_startup.
		s = &memSession{seq: 1}
		m.sessions[id] = s
		claimed = true
	}
	if !s.ended {
		m.touch(s, now)
	}
	return claimed, Status{Started: true, Blocked: s.blocked, Ended: s.ended}, nil
}

// Next implements [Store.Next].
func (m *Memory) Next(_ context.Context, id string) (int64, error) {
	if err := ValidateID(id); err != nil {
		return 0, err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.lookup(id, now)
	if s == nil {
		return 0, ErrUnknownSession
	}
	n := s.seq
	s.seq++
	if !s.ended {
		m.touch(s, now)
	}
	return n, nil
}

// Block implements [Store.Block].
func (m *Memory) Block(_ context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.lookup(id, now)
	if s == nil {
		return ErrUnknownSession
	}
	s.blocked = true
	return nil
}

// End implements [Store.End].
func (m *Memory) End(_ context.Context, id string) (bool, error) {
	if err := ValidateID(id); err != nil {
		return false, err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.lookup(id, now)
	if s == nil {
		return false, ErrUnknownSession
	}
	if s.ended {
		return false, nil
	}
	m.end(s, now)
	return true, nil
}

// ClaimExpired implements [Store.ClaimExpired]. It hands out the sessions
// whose idle deadline passed longest ago first and drops forgotten entries.
func (m *Memory) ClaimExpired(_ context.Context, max int) ([]string, error) {
	if max <= 0 {
		return nil, nil
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	type cand struct {
		id       string
		deadline time.Time
	}
	var expired []cand
	for id, s := range m.sessions {
		switch {
		case !now.Before(s.forgetAt):
			delete(m.sessions, id)
		case !s.ended && !now.Before(s.deadline):
			expired = append(expired, cand{id, s.deadline})
		}
	}
	slices.SortFunc(expired, func(a, b cand) int {
		return cmp.Or(a.deadline.Compare(b.deadline), cmp.Compare(a.id, b.id))
	})
	expired = expired[:min(max, len(expired))]
	ids := make([]string, len(expired))
	for i, c := range expired {
		m.end(m.sessions[c.id], now)
		ids[i] = c.id
	}
	return ids, nil
}

// Status implements [Store.Status].
func (m *Memory) Status(_ context.Context, id string) (Status, bool, error) {
	if err := ValidateID(id); err != nil {
		return Status{}, false, err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.lookup(id, now)
	if s == nil {
		return Status{}, false, nil
	}
	return Status{Started: true, Blocked: s.blocked, Ended: s.ended}, true, nil
}

// Ping implements [Store.Ping]; memory is always reachable.
func (m *Memory) Ping(context.Context) error { return nil }

// Close implements [Store.Close]. It is a no-op: the map is garbage
// collected with the store.
func (m *Memory) Close() error { return nil }

// Len reports how many sessions (live or ended within retention) the store
// currently holds, including any not yet dropped lazily; for metrics.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

// Active reports how many sessions have begun and not yet ended (idle
// sessions not yet swept included), like [Redis.Active]; for metrics. It
// scans the map under the store's lock: O(n), a few milliseconds per 100k
// sessions (like a ClaimExpired sweep), once per scrape.
func (m *Memory) Active(context.Context) (int64, error) {
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, s := range m.sessions {
		if !s.ended && now.Before(s.forgetAt) {
			n++
		}
	}
	return n, nil
}
