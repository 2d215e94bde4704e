// Package sessions keeps the state of managed agent sessions (those named
// by an Agent-Hooks-Session header) so that every gateway replica sees the
// same session: one gapless sequence, exactly one agent_startup and exactly
// one agent_shutdown, blocked sessions, and idle expiry.
//
// Two stores implement [Store]: [Memory] for a single gateway process and
// [Redis] for replicas sharing one Redis. Both satisfy the same contract,
// which the package's tests run against each of them.
//
// Lifecycle of a session (tenant, id):
//
//	Begin (claims it for its owner, Starting: the claimer emits
//	  agent_startup; other requests wait)
//	  → Admit (startup proceeded) or Block (startup denied)
//	  → Acquire … Next … Release per model call (a leased call keeps the
//	    session from expiring idle)
//	  → End, or ClaimExpired after IdleTimeout without activity or lease
//	    (exactly one caller wins; it waits for the calls in flight, Seals
//	    the session, which takes the last number, and emits
//	    agent_shutdown: nothing is numbered after it)
//	  → retired for Retention after it ended (Begin answers Ended), then
//	    forgotten (or IdleTimeout+Retention after its last activity if
//	    nobody ever swept it).
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

// Key names a managed session: the tenant it belongs to and the id the
// client gave it. Stores namespace ids by tenant, so one id in two tenants
// is two unrelated sessions.
type Key struct {
	// Tenant is the claiming key's tenant ("" for keys without one and
	// for unauthenticated gateways).
	Tenant string
	// ID is the client's Agent-Hooks-Session value (see ValidateID).
	ID string
}

// Owner is who claimed a session, kept for its whole life.
type Owner struct {
	// KeyID names the client key that claimed the session ("" when the
	// gateway authenticates no clients). Only that key may use it.
	KeyID string
	// AgentID is agent.id on every context of the session, its
	// agent_shutdown included (spec §4.1: the agent is one per session).
	AgentID string
}

// Status is a managed session's state.
type Status struct {
	// Started is true once some caller claimed the session with Begin.
	Started bool
	// Starting is true from the claim until the claimer reports the
	// agent_startup verdict (Admit or Block): other requests of the session
	// wait for it (spec §3.1(1)). Ending a session does not clear it, so
	// waiters stop on Ended too (a claimer that died before its verdict
	// leaves the session Starting until it expires).
	Starting bool
	// Blocked is true once the session's agent_startup was denied: later
	// requests in the session are refused, and its shutdown has reason
	// error (spec §6.1a).
	Blocked bool
	// Ended is true once the session ended (End or idle expiry); its
	// agent_shutdown has been or is being emitted by the caller that won.
	Ended bool
	// Sealed is true once the agent_shutdown's sequence number was taken
	// (Seal): no number is handed out after it.
	Sealed bool
	// Owner is the claimer.
	Owner Owner
	// Incarnation names this claim of the session's id where the store
	// cannot tell it from an earlier session under the same id: the
	// memory store mints one per claim (IncarnationLen lowercase hex
	// digits), since a restarted process, or a retention that ran out,
	// forgets the earlier one. "" where the id names one session for the
	// store's whole life (Redis, whose sessions outlive the gateway's
	// processes). The gateway appends it to the session's trail id.
	Incarnation string
}

// IncarnationLen is the length of a minted Status.Incarnation.
const IncarnationLen = 12

// Call is a model call a turn starts with BeginCall.
type Call struct {
	// ID names the call's lease (the tool-call id rule applies).
	ID string
	// Lease bounds how long the call holds the session; positive.
	Lease time.Duration
	// Agent, when non-empty, is the agent the request asserts: in a session
	// of another agent the call takes neither lease nor number.
	Agent string
	// Inputs are identities of the request's user messages: a call that
	// takes its lease learns in the same step which of them the session
	// judged (CallStart.Judged), as InputsJudged would tell.
	Inputs []string
}

// CallStart is what BeginCall did.
type CallStart struct {
	// Claimed and Status are Begin's results.
	Claimed bool
	Status  Status
	// Leased is true when the call's lease was taken (the caller releases
	// it); false for an ended or blocked session or another agent's.
	Leased bool
	// Seq is the number taken for the turn's first emission, -1 when none
	// was (not leased, claimed by this call, or Starting).
	Seq int64
	// Judged says, for each of Call.Inputs, whether the session judged it;
	// nil when the step could not tell (no lease, or a session still
	// Starting): the caller asks InputsJudged then.
	Judged []bool
}

// Expired is a session ClaimExpired ended; the caller emits its
// agent_shutdown.
type Expired struct {
	Key   Key
	Owner Owner
	// Blocked sessions end with reason error, the others with cancelled.
	Blocked bool
	// Incarnation is the session's Status.Incarnation.
	Incarnation string
}

// Store keeps managed sessions. Implementations are safe for concurrent use
// by many goroutines and, for Redis, by many gateway replicas sharing one
// Redis.
//
// Every method taking a Key validates it (see [ErrInvalidSessionID]) before
// touching the store. Errors other than the sentinel errors of this package
// mean the store could not be consulted; callers fail closed on them.
type Store interface {
	// Begin records first sight of session k for owner. claimed is true for
	// exactly one caller across all replicas (that caller emits
	// agent_startup and then calls Admit or Block); the claim records owner
	// and marks the session Starting. st is the state after the call. The
	// claim reserves sequence 0 for the claimer's agent_startup (Next then
	// starts at 1), so no replica's emission can precede the startup in the
	// session's order. A session claimed by another key returns
	// ErrForeignSession and changes nothing. A session that ended stays
	// ended (claimed false, st.Ended true) for the retention period. Begin
	// on a live session counts as activity and pushes its idle deadline.
	Begin(ctx context.Context, k Key, owner Owner) (claimed bool, st Status, err error)

	// BeginCall starts a model call's turn in session k in one atomic step:
	// Begin for owner, then, unless the session has ended, is blocked or
	// (call.Agent set) belongs to another agent, Acquire of call's lease
	// and, when the session is admitted (neither claimed by this call nor
	// Starting), Next for the turn's first emission. The caller must emit
	// with that number: taken and unused it would leave a hole in the
	// session's sequence. Errors and validation are Begin's and Acquire's;
	// an error leaves the call without a lease (like Begin's, an indexing
	// error on Redis leaves the session created). One round trip on Redis
	// for a known session.
	BeginCall(ctx context.Context, k Key, owner Owner, call Call) (CallStart, error)

	// Admit ends the Starting state after an agent_startup that proceeded.
	// Admitting an unknown session returns ErrUnknownSession.
	Admit(ctx context.Context, k Key) error

	// Block marks the session blocked (its agent_startup was denied) and
	// ends the Starting state. Blocking an unknown session returns
	// ErrUnknownSession.
	Block(ctx context.Context, k Key) error

	// Next returns the session's next sequence number (0, 1, 2, … strictly
	// increasing, unique under concurrency across replicas) and pushes its
	// idle deadline forward. It keeps working after End so calls in flight
	// can finish before the shutdown, but returns ErrSessionSealed once
	// Seal took the shutdown's number. Next on a session that was never
	// begun (or was forgotten) returns ErrUnknownSession.
	Next(ctx context.Context, k Key) (int64, error)

	// Acquire registers a model call in flight in the session under callID
	// for at most lease (a replica that dies mid-call holds the session no
	// longer than that). While a session holds an unexpired lease it does
	// not expire idle (nor is it forgotten before the lease ends).
	// Acquire counts as activity and pushes the idle deadline. Acquiring
	// a callID already held renews its lease. Acquire on an ended session
	// returns ErrSessionEnded; on an unknown one ErrUnknownSession. callID
	// follows the tool-call id rule (ErrInvalidToolCallID); lease must be
	// positive (ErrInvalidLease).
	Acquire(ctx context.Context, k Key, callID string, lease time.Duration) error

	// Release removes callID's lease and, while the session is live,
	// pushes the idle deadline (the session's idle time starts when its
	// last call ends). Releasing an unknown lease, or a call of an unknown
	// session, is not an error.
	Release(ctx context.Context, k Key, callID string) error

	// InFlight reports the session's unexpired leases (0 for an unknown
	// session). It keeps counting after End, so the caller that won End
	// can wait for the calls in flight.
	InFlight(ctx context.Context, k Key) (int, error)

	// End marks the session ended; won is true for exactly one caller
	// across replicas (that caller waits for the calls in flight, then
	// calls Seal and emits agent_shutdown). st is the state at the end,
	// with the owner. Ending an unknown session returns ErrUnknownSession;
	// one claimed by another key, ErrForeignSession; an ended one, won
	// false and no error.
	End(ctx context.Context, k Key, owner Owner) (won bool, st Status, err error)

	// Seal hands out the session's last sequence number, for its
	// agent_shutdown: Next returns ErrSessionSealed afterwards. Only an
	// ended session can be sealed (ErrSessionNotEnded otherwise), and only
	// once (ErrSessionSealed).
	Seal(ctx context.Context, k Key) (int64, error)

	// ClaimExpired claims up to max sessions idle longer than the idle
	// timeout and holding no unexpired lease, marking each ended; each is
	// returned to exactly one caller across replicas (that caller seals it
	// and emits its agent_shutdown), oldest deadline first. A session past
	// its deadline that still holds a lease is not claimed: its deadline
	// moves to its latest lease's end, so sweeps skip it until then. It
	// returns nothing when max <= 0.
	ClaimExpired(ctx context.Context, max int) ([]Expired, error)

	// OpenToolCall records that a pre_tool_call for toolCallID proceeded in
	// the session; CloseToolCall consumes it for the matching
	// post_tool_call and reports false when there was none (never opened,
	// denied, or already closed), so each pre pairs with one post (spec
	// §3.1(5)): across replicas exactly one CloseToolCall per opened id
	// reports true. Opening an open id again is a no-op. Both return
	// ErrUnknownSession for an unknown session and wrap
	// ErrInvalidToolCallID for a bad id; OpenToolCall returns
	// ErrSessionSealed once the session is sealed (like Next, it works
	// after End for emissions in flight) and ErrTooManyToolCalls beyond
	// MaxOpenToolCalls. Open tool calls are forgotten with the session.
	OpenToolCall(ctx context.Context, k Key, toolCallID string) error
	CloseToolCall(ctx context.Context, k Key, toolCallID string) (bool, error)

	// InputsJudged reports, for each input identity in ids, whether the
	// session recorded it with NextMarkingInputs: the gateway emits input
	// for the user messages a session has not judged yet (BeginCall tells
	// it as well; this is for a call that joined a session still
	// Starting). NextMarkingInputs is Next that first records ids judged
	// (the emission that follows a turn's inputs, once they proceeded), up
	// to MaxJudgedInputs per session (beyond it, ids are not recorded: they
	// are judged again, never skipped). Both return ErrUnknownSession for
	// an unknown session; NextMarkingInputs returns ErrSessionSealed once
	// the session is sealed. Judged inputs are forgotten with the session.
	InputsJudged(ctx context.Context, k Key, ids []string) ([]bool, error)
	NextMarkingInputs(ctx context.Context, k Key, ids []string) (int64, error)

	// Status reports a session's state; exists is false for an unknown (or
	// expired-and-forgotten) session.
	Status(ctx context.Context, k Key) (st Status, exists bool, err error)

	// Ping checks the store is reachable (readiness).
	Ping(ctx context.Context) error

	// Close releases the store's resources.
	Close() error
}

// ErrForeignSession is returned for a session another key claimed. Callers
// answer it as they answer an unknown session: its existence is not
// disclosed.
var ErrForeignSession = errors.New("sessions: session belongs to another key")

// ErrSessionEnded is returned by Acquire on an ended session.
var ErrSessionEnded = errors.New("sessions: session ended")

// ErrSessionSealed is returned by Next and Seal once the session's
// agent_shutdown took its number.
var ErrSessionSealed = errors.New("sessions: session sealed by its agent_shutdown")

// ErrSessionNotEnded is returned by Seal on a session that has not ended.
var ErrSessionNotEnded = errors.New("sessions: session not ended")

// MaxToolCallIDLen bounds tool-call ids kept for pairing, in bytes.
const MaxToolCallIDLen = 256

// MaxOpenToolCalls bounds the tool calls one session may hold open at once,
// so a client cannot grow a session's state without limit; OpenToolCall
// beyond it returns ErrTooManyToolCalls.
const MaxOpenToolCalls = 1024

// MaxJudgedInputs bounds the input identities one session records.
const MaxJudgedInputs = 10000

// ErrInvalidToolCallID is returned (wrapped, with the offending detail) by
// OpenToolCall and CloseToolCall for a tool-call id that is empty, longer
// than MaxToolCallIDLen bytes, or holds a byte outside 0x21–0x7E. The same
// rule bounds the call ids of Acquire and Release.
var ErrInvalidToolCallID = errors.New("sessions: invalid tool-call id: want 1-256 printable ASCII characters (0x21-0x7E), no spaces")

// ErrTooManyToolCalls is returned by OpenToolCall when the session already
// holds MaxOpenToolCalls open tool calls.
var ErrTooManyToolCalls = errors.New("sessions: too many open tool calls in the session")

// ErrInvalidLease is returned (wrapped) by Acquire for a lease that is not
// positive.
var ErrInvalidLease = errors.New("sessions: invalid call lease")

// validateCallID checks a tool-call or model-call id; the error wraps
// ErrInvalidToolCallID and never echoes the id.
func validateCallID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty", ErrInvalidToolCallID)
	}
	if len(id) > MaxToolCallIDLen {
		return fmt.Errorf("%w: %d bytes", ErrInvalidToolCallID, len(id))
	}
	if i := nonPrintable(id); i >= 0 {
		return fmt.Errorf("%w: byte 0x%02x at offset %d", ErrInvalidToolCallID, id[i], i)
	}
	return nil
}

// nonPrintable returns the offset of s's first byte outside 0x21–0x7E (the
// alphabet of session ids, tenants and call ids), or -1.
func nonPrintable(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return i
		}
	}
	return -1
}

// checkLease validates Acquire's call id and lease; both stores check
// them before the key.
func checkLease(callID string, lease time.Duration) error {
	if err := validateCallID(callID); err != nil {
		return err
	}
	if lease <= 0 {
		return fmt.Errorf("%w: %v is not positive", ErrInvalidLease, lease)
	}
	return nil
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
	if i := nonPrintable(id); i >= 0 {
		return fmt.Errorf("%w: byte 0x%02x at offset %d", ErrInvalidSessionID, id[i], i)
	}
	return nil
}

// ValidateKey validates k's id (ValidateID) and its tenant: at most
// MaxIDLen bytes of printable ASCII, possibly empty.
func ValidateKey(k Key) error {
	if err := ValidateID(k.ID); err != nil {
		return err
	}
	if len(k.Tenant) > MaxIDLen {
		return fmt.Errorf("%w: tenant of %d bytes", ErrInvalidSessionID, len(k.Tenant))
	}
	if i := nonPrintable(k.Tenant); i >= 0 {
		return fmt.Errorf("%w: tenant byte 0x%02x at offset %d", ErrInvalidSessionID, k.Tenant[i], i)
	}
	return nil
}

// Default option values.
const (
	DefaultIdleTimeout = 30 * time.Minute
	DefaultRetention   = 24 * time.Hour
)

// Options configures a store's timing.
type Options struct {
	// IdleTimeout is how long a session may go without activity (Begin,
	// Next, Acquire, Release) and without a call in flight before
	// ClaimExpired ends it. Zero or negative means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Retention is how long an ended session's id stays retired: requests
	// naming it get "ended" (409) rather than starting a new session that
	// would repeat its (session_id, sequence) pairs. Zero or negative means
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
	key   Key
}

// Sequence adapts a store to a per-session sequence source.
func Sequence(s Store, k Key) SequenceSource {
	return SequenceSource{store: s, key: k}
}

// Next returns the session's next sequence number; see [Store.Next].
func (q SequenceSource) Next(ctx context.Context) (int64, error) {
	return q.store.Next(ctx, q.key)
}
