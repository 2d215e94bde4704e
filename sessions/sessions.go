// Package sessions keeps the state of managed agent sessions (those named
// by an Agent-Hooks-Session header) so that every gateway replica sees the
// same session: one gapless sequence, exactly one agent_startup and exactly
// one agent_shutdown, blocked sessions, and idle expiry.
//
// Two stores implement [Store]: [Memory] for a single gateway process and
// [Redis] for replicas sharing one Redis. Both satisfy the same contract,
// which the package's tests run against each of them.
//
// Lifecycle of a session id:
//
//	Begin (claims it: the claimer emits agent_startup)
//	  → Next … Next (sequence numbers; each pushes the idle deadline)
//	  → End, or ClaimExpired after IdleTimeout without activity
//	    (exactly one caller wins and emits agent_shutdown, after which
//	    Next still works so the shutdown gets its sequence number)
//	  → forgotten Retention after it ended (or IdleTimeout+Retention after
//	    its last activity if nobody ever swept it).
//
// Both stores also keep counters (counters.go): named integers that
// expire, shared by every replica using the store, which budgets use as
// fixed-window counters (the caller puts the window's start in the key and
// passes the window as the TTL). Keys are opaque to the store; a counter
// that does not exist reads as 0.
package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Status is a managed session's state.
type Status struct {
	// Started is true once some caller claimed the session with Begin.
	Started bool
	// Blocked is true once the session's agent_startup was denied: later
	// requests in the session are refused.
	Blocked bool
	// Ended is true once the session ended (End or idle expiry); its
	// agent_shutdown has been or is being emitted by the caller that won.
	Ended bool
}

// Store keeps managed sessions. Implementations are safe for concurrent use
// by many goroutines and, for Redis, by many gateway replicas sharing one
// Redis.
//
// Every method validates the session id (see [ErrInvalidSessionID]) before
// touching the store. Errors other than ErrInvalidSessionID and
// ErrUnknownSession mean the store could not be consulted; callers fail
// closed on them.
type Store interface {
	// Begin records first sight of session id. claimed is true for exactly
	// one caller across all replicas (that caller emits agent_startup); st is
	// the state after the call. The claim reserves sequence 0 for the
	// claimer's agent_startup (Next then starts at 1), so no replica's
	// emission can precede the startup in the session's order. A session
	// that ended stays ended (claimed false, st.Ended true). Begin on a live
	// session counts as activity and pushes its idle deadline forward.
	Begin(ctx context.Context, id string) (claimed bool, st Status, err error)

	// Next returns the session's next sequence number (0, 1, 2, … strictly
	// increasing, unique under concurrency across replicas) and pushes its
	// idle deadline forward. It keeps working after the session ended so
	// the agent_shutdown emission gets its number, but an ended session's
	// deadline is not pushed (it is never swept twice). Next on a session
	// that was never begun (or was forgotten) returns ErrUnknownSession.
	Next(ctx context.Context, id string) (int64, error)

	// Block marks the session blocked (its agent_startup was denied): later
	// requests are refused. Blocking an unknown session returns
	// ErrUnknownSession.
	Block(ctx context.Context, id string) error

	// End marks the session ended; true for exactly one caller across
	// replicas (that caller emits agent_shutdown). Ending an unknown session
	// returns false and ErrUnknownSession; ending an ended one returns false
	// and no error.
	End(ctx context.Context, id string) (bool, error)

	// ClaimExpired claims up to max sessions idle longer than the idle
	// timeout, marking each ended; each id is returned to exactly one caller
	// across replicas (that caller emits its agent_shutdown with reason
	// cancelled). It returns nothing when max <= 0.
	ClaimExpired(ctx context.Context, max int) ([]string, error)

	// Status reports a session's state; exists is false for an unknown (or
	// expired-and-forgotten) session.
	Status(ctx context.Context, id string) (st Status, exists bool, err error)

	// Ping checks the store is reachable (readiness).
	Ping(ctx context.Context) error

	// Close releases the store's resources.
	Close() error
}

// ErrUnknownSession is returned for a session id the store does not know:
// never begun, or forgotten after its retention.
var ErrUnknownSession = errors.New("sessions: unknown session")

// MaxIDLen is the longest accepted session id, in bytes.
const MaxIDLen = 128

// ErrInvalidSessionID is returned (wrapped, with the offending detail) for a
// session id that is empty, longer than MaxIDLen bytes, or contains a byte
// outside printable ASCII without space (0x21–0x7E). Ids are client-provided
// and become Redis key parts and log fields, hence the strict alphabet.
var ErrInvalidSessionID = errors.New("sessions: invalid session id: want 1-128 printable ASCII characters (0x21-0x7E), no spaces")

// ValidateID reports whether id is an acceptable session id; the error
// wraps ErrInvalidSessionID. It never echoes the id itself.
func ValidateID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty", ErrInvalidSessionID)
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("%w: %d bytes", ErrInvalidSessionID, len(id))
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e {
			return fmt.Errorf("%w: byte 0x%02x at offset %d", ErrInvalidSessionID, c, i)
		}
	}
	return nil
}

// Default option values.
const (
	DefaultIdleTimeout = 30 * time.Minute
	DefaultRetention   = time.Hour
)

// Options configures a store's timing.
type Options struct {
	// IdleTimeout is how long a session may go without Begin or Next before
	// ClaimExpired ends it. Zero or negative means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Retention is how long an ended session is remembered so late requests
	// get "ended" rather than starting a new session. Zero or negative means
	// DefaultRetention.
	Retention time.Duration
	// Now is the clock, for tests; nil means time.Now. Only [Memory] uses
	// it: [Redis] reads the Redis server's clock so that replicas with
	// skewed clocks agree on expiry.
	Now func() time.Time
}

// withDefaults returns o with zero values replaced by defaults.
func (o Options) withDefaults() Options {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// SequenceSource is one session's sequence: it hands out that session's
// numbers from a Store. Its method set matches the enforcement package's
// sequence source interface, so it plugs into a context builder.
type SequenceSource struct {
	store Store
	id    string
}

// Sequence adapts a store to a per-session sequence source.
func Sequence(s Store, id string) SequenceSource {
	return SequenceSource{store: s, id: id}
}

// Next returns the session's next sequence number; see [Store.Next].
func (q SequenceSource) Next(ctx context.Context) (int64, error) {
	return q.store.Next(ctx, q.id)
}
