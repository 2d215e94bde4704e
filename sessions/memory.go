package sessions

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
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
//
// Every string the store keeps (key, owner, call and tool-call ids,
// counter keys) is cloned when first stored: callers may pass strings
// that slice a whole request body (jsonvalue.Text), which a session
// outliving the request must not keep alive.
type Memory struct {
	opts Options

	mu       sync.Mutex
	sessions map[Key]*memSession
	// counters are the budget counters (counters.go), pruned of expired
	// entries at most once per counterPruneEvery, at counterPruneAt.
	counters       map[string]*memCounter
	counterPruneAt time.Time
}

// memSession is one session's state; guarded by Memory.mu.
type memSession struct {
	owner Owner
	// incarnation is minted at the claim (Status.Incarnation).
	incarnation string
	seq         int64 // next number Next or Seal hands out
	starting    bool
	blocked     bool
	ended       bool
	sealed      bool
	deadline    time.Time // idle deadline: swept once it is not after now
	forgetAt    time.Time // dropped from the map once it is not after now
	// leases maps a call in flight to the end of its lease.
	leases map[string]time.Time
	// tools holds the open tool calls (pre_tool_call proceeded, no
	// post_tool_call yet).
	tools map[string]struct{}
	// inputs holds the identities of the inputs judged in the session.
	inputs map[string]struct{}
}

// status is s's state as the Store reports it.
func (s *memSession) status() Status {
	return Status{Started: true, Starting: s.starting, Blocked: s.blocked, Ended: s.ended, Sealed: s.sealed, Owner: s.owner, Incarnation: s.incarnation}
}

// liveLeases drops s's expired leases and returns how many remain and the
// latest end among them (zero when none).
func (s *memSession) liveLeases(now time.Time) (int, time.Time) {
	var last time.Time
	for id, until := range s.leases {
		if !now.Before(until) {
			delete(s.leases, id)
			continue
		}
		if until.After(last) {
			last = until
		}
	}
	return len(s.leases), last
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory(opts Options) *Memory {
	return &Memory{opts: opts.withDefaults(), sessions: make(map[Key]*memSession), counters: make(map[string]*memCounter)}
}

// lookup returns k's live entry, dropping it if its retention is over.
// The caller holds m.mu.
func (m *Memory) lookup(k Key, now time.Time) *memSession {
	s := m.sessions[k]
	if s != nil && !now.Before(s.forgetAt) {
		delete(m.sessions, k)
		return nil
	}
	return s
}

// with validates k, locks the store and calls fn with k's entry (nil when
// unknown) and the time.
func (m *Memory) with(k Key, fn func(s *memSession, now time.Time) error) error {
	if err := ValidateKey(k); err != nil {
		return err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	return fn(m.lookup(k, now), now)
}

// touch pushes a live session's idle deadline, and its forget time so an
// abandoned session is dropped IdleTimeout+Retention after its last
// activity (or after its last lease ends, if later). It never brings the
// forget time closer.
func (m *Memory) touch(s *memSession, now time.Time) {
	s.deadline = now.Add(m.opts.IdleTimeout)
	m.keep(s, s.deadline.Add(m.opts.Retention))
}

// keep moves s's forget time to at least t.
func (m *Memory) keep(s *memSession, t time.Time) {
	if t.After(s.forgetAt) {
		s.forgetAt = t
	}
}

// end marks s ended and starts its retention.
func (m *Memory) end(s *memSession, now time.Time) {
	s.ended = true
	s.forgetAt = now.Add(m.opts.Retention)
}

// join returns s, the session under k, creating it for owner (claimed)
// when there is none, or ErrForeignSession when another key owns it.
func (m *Memory) join(k Key, s *memSession, owner Owner) (_ *memSession, claimed bool, err error) {
	if s == nil {
		// The claim reserves sequence 0 for the claimer's agent_startup.
		s = &memSession{owner: Owner{KeyID: strings.Clone(owner.KeyID), AgentID: strings.Clone(owner.AgentID)}, seq: 1, starting: true,
			incarnation: newIncarnation()}
		m.sessions[Key{Tenant: strings.Clone(k.Tenant), ID: strings.Clone(k.ID)}] = s
		claimed = true
	}
	if s.owner.KeyID != owner.KeyID {
		return nil, false, ErrForeignSession
	}
	return s, claimed, nil
}

// lease holds s for callID until until: a session is not forgotten while
// a call may still use it.
func (m *Memory) lease(s *memSession, callID string, until time.Time) {
	if s.leases == nil {
		s.leases = make(map[string]time.Time)
	}
	// Cloned even when the call holds a lease already: assigning to an
	// existing string key stores the given key string too.
	s.leases[strings.Clone(callID)] = until
	m.keep(s, until.Add(m.opts.Retention))
}

// Begin implements [Store.Begin].
func (m *Memory) Begin(_ context.Context, k Key, owner Owner) (claimed bool, st Status, err error) {
	err = m.with(k, func(s *memSession, now time.Time) error {
		var err error
		if s, claimed, err = m.join(k, s, owner); err != nil {
			return err
		}
		if !s.ended {
			m.touch(s, now)
		}
		st = s.status()
		return nil
	})
	return claimed, st, err
}

// BeginCall implements [Store.BeginCall] under one lock.
func (m *Memory) BeginCall(_ context.Context, k Key, owner Owner, call Call) (cs CallStart, err error) {
	if err := checkLease(call.ID, call.Lease); err != nil {
		return CallStart{}, err
	}
	cs.Seq = -1
	err = m.with(k, func(s *memSession, now time.Time) error {
		var err error
		if s, cs.Claimed, err = m.join(k, s, owner); err != nil {
			return err
		}
		cs.Status = s.status()
		if s.ended {
			return nil
		}
		m.touch(s, now)
		if s.blocked || (call.Agent != "" && s.owner.AgentID != call.Agent) {
			return nil
		}
		m.lease(s, call.ID, now.Add(call.Lease))
		cs.Leased = true
		if len(call.Inputs) > 0 && (cs.Claimed || !s.starting) {
			cs.Judged = make([]bool, len(call.Inputs))
			for i, id := range call.Inputs {
				_, cs.Judged[i] = s.inputs[id]
			}
		}
		if !cs.Claimed && !s.starting {
			cs.Seq = s.seq
			s.seq++
		}
		return nil
	})
	if err != nil {
		return CallStart{}, err
	}
	return cs, nil
}

// Admit implements [Store.Admit].
func (m *Memory) Admit(_ context.Context, k Key) error {
	return m.with(k, func(s *memSession, _ time.Time) error {
		if s == nil {
			return ErrUnknownSession
		}
		s.starting = false
		return nil
	})
}

// Block implements [Store.Block].
func (m *Memory) Block(_ context.Context, k Key) error {
	return m.with(k, func(s *memSession, _ time.Time) error {
		if s == nil {
			return ErrUnknownSession
		}
		s.blocked = true
		s.starting = false
		return nil
	})
}

// Next implements [Store.Next].
func (m *Memory) Next(_ context.Context, k Key) (int64, error) {
	return m.next(k, nil)
}

// next takes k's next number, first recording inputs judged, under one
// lock.
func (m *Memory) next(k Key, inputs []string) (n int64, err error) {
	err = m.with(k, func(s *memSession, now time.Time) error {
		switch {
		case s == nil:
			return ErrUnknownSession
		case s.sealed:
			return ErrSessionSealed
		}
		if len(inputs) > 0 {
			markInputs(s, inputs)
		}
		n = s.seq
		s.seq++
		if !s.ended {
			m.touch(s, now)
		}
		return nil
	})
	return n, err
}

// Acquire implements [Store.Acquire].
func (m *Memory) Acquire(_ context.Context, k Key, callID string, lease time.Duration) error {
	if err := checkLease(callID, lease); err != nil {
		return err
	}
	return m.with(k, func(s *memSession, now time.Time) error {
		switch {
		case s == nil:
			return ErrUnknownSession
		case s.ended:
			return ErrSessionEnded
		}
		m.touch(s, now)
		m.lease(s, callID, now.Add(lease))
		return nil
	})
}

// Release implements [Store.Release]. Releasing a call of an unknown (or
// forgotten) session is not an error either.
func (m *Memory) Release(_ context.Context, k Key, callID string) error {
	if err := validateCallID(callID); err != nil {
		return err
	}
	return m.with(k, func(s *memSession, now time.Time) error {
		if s == nil {
			return nil
		}
		delete(s.leases, callID)
		if !s.ended {
			m.touch(s, now)
		}
		return nil
	})
}

// InFlight implements [Store.InFlight]; an unknown session has none.
func (m *Memory) InFlight(_ context.Context, k Key) (n int, err error) {
	err = m.with(k, func(s *memSession, now time.Time) error {
		if s != nil {
			n, _ = s.liveLeases(now)
		}
		return nil
	})
	return n, err
}

// End implements [Store.End].
func (m *Memory) End(_ context.Context, k Key, owner Owner) (won bool, st Status, err error) {
	err = m.with(k, func(s *memSession, now time.Time) error {
		switch {
		case s == nil:
			return ErrUnknownSession
		case s.owner.KeyID != owner.KeyID:
			return ErrForeignSession
		}
		if !s.ended {
			m.end(s, now)
			won = true
		}
		st = s.status()
		return nil
	})
	return won, st, err
}

// Seal implements [Store.Seal].
func (m *Memory) Seal(_ context.Context, k Key) (n int64, err error) {
	err = m.with(k, func(s *memSession, _ time.Time) error {
		switch {
		case s == nil:
			return ErrUnknownSession
		case s.sealed:
			return ErrSessionSealed
		case !s.ended:
			return ErrSessionNotEnded
		}
		n = s.seq
		s.seq++
		s.sealed = true
		return nil
	})
	return n, err
}

// ClaimExpired implements [Store.ClaimExpired]. It hands out the sessions
// whose idle deadline passed longest ago first and drops forgotten entries.
// A session past its deadline but holding a lease gets the lease's end as
// its deadline instead of being claimed.
func (m *Memory) ClaimExpired(_ context.Context, max int) ([]Expired, error) {
	if max <= 0 {
		return nil, nil
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	type cand struct {
		k        Key
		deadline time.Time
	}
	var expired []cand
	for k, s := range m.sessions {
		switch {
		case !now.Before(s.forgetAt):
			delete(m.sessions, k)
		case s.ended || now.Before(s.deadline):
		default:
			if n, last := s.liveLeases(now); n > 0 {
				s.deadline = last
				continue
			}
			expired = append(expired, cand{k, s.deadline})
		}
	}
	slices.SortFunc(expired, func(a, b cand) int {
		return cmp.Or(a.deadline.Compare(b.deadline), cmp.Compare(a.k.Tenant, b.k.Tenant), cmp.Compare(a.k.ID, b.k.ID))
	})
	expired = expired[:min(max, len(expired))]
	out := make([]Expired, len(expired))
	for i, c := range expired {
		s := m.sessions[c.k]
		m.end(s, now)
		out[i] = Expired{Key: c.k, Owner: s.owner, Blocked: s.blocked, Incarnation: s.incarnation}
	}
	return out, nil
}

// ClaimOpen claims up to max sessions that have not ended, idle or not,
// marking each ended, for the process that holds them to shut them down
// before it exits: a memory store's sessions end with its process, and
// their trails must end with an agent_shutdown. Each is returned once
// (ClaimExpired never returns it again).
func (m *Memory) ClaimOpen(_ context.Context, max int) ([]Expired, error) {
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Expired
	for k, s := range m.sessions {
		if len(out) == max {
			break
		}
		if s.ended {
			continue
		}
		m.end(s, now)
		out = append(out, Expired{Key: k, Owner: s.owner, Blocked: s.blocked, Incarnation: s.incarnation})
	}
	return out, nil
}

// InputsJudged implements [Store.InputsJudged].
func (m *Memory) InputsJudged(_ context.Context, k Key, ids []string) ([]bool, error) {
	out := make([]bool, len(ids))
	err := m.with(k, func(s *memSession, _ time.Time) error {
		if s == nil {
			return ErrUnknownSession
		}
		for i, id := range ids {
			_, out[i] = s.inputs[id]
		}
		return nil
	})
	return out, err
}

// NextMarkingInputs implements [Store.NextMarkingInputs] under one lock.
func (m *Memory) NextMarkingInputs(_ context.Context, k Key, ids []string) (int64, error) {
	return m.next(k, ids)
}

// markInputs records ids as judged in s, up to MaxJudgedInputs.
func markInputs(s *memSession, ids []string) {
	if s.inputs == nil {
		s.inputs = make(map[string]struct{}, len(ids))
	}
	for _, id := range ids {
		if len(s.inputs) >= MaxJudgedInputs {
			break
		}
		s.inputs[strings.Clone(id)] = struct{}{}
	}
}

// OpenToolCall implements [Store.OpenToolCall]. It works until the session
// is sealed (like Next: an emission in flight at End may still open one).
func (m *Memory) OpenToolCall(_ context.Context, k Key, toolCallID string) error {
	if err := validateCallID(toolCallID); err != nil {
		return err
	}
	return m.with(k, func(s *memSession, _ time.Time) error {
		switch {
		case s == nil:
			return ErrUnknownSession
		case s.sealed:
			return ErrSessionSealed
		}
		if _, ok := s.tools[toolCallID]; ok {
			return nil
		}
		if len(s.tools) >= MaxOpenToolCalls {
			return ErrTooManyToolCalls
		}
		if s.tools == nil {
			s.tools = make(map[string]struct{})
		}
		s.tools[strings.Clone(toolCallID)] = struct{}{}
		return nil
	})
}

// CloseToolCall implements [Store.CloseToolCall].
func (m *Memory) CloseToolCall(_ context.Context, k Key, toolCallID string) (closed bool, err error) {
	if err := validateCallID(toolCallID); err != nil {
		return false, err
	}
	err = m.with(k, func(s *memSession, _ time.Time) error {
		if s == nil {
			return ErrUnknownSession
		}
		if _, closed = s.tools[toolCallID]; closed {
			delete(s.tools, toolCallID)
		}
		return nil
	})
	return closed, err
}

// Status implements [Store.Status].
func (m *Memory) Status(_ context.Context, k Key) (st Status, exists bool, err error) {
	err = m.with(k, func(s *memSession, _ time.Time) error {
		if s != nil {
			st, exists = s.status(), true
		}
		return nil
	})
	return st, exists, err
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

// newIncarnation mints a claim's incarnation: IncarnationLen random
// lowercase hex digits (48 bits: two claims of one id colliding is out of
// reach).
func newIncarnation() string {
	var b [IncarnationLen / 2]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
