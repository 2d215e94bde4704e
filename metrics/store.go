package metrics

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// Session store operations (the op label).
const (
	OpBegin         = "begin"
	OpAdmit         = "admit"
	OpNext          = "next"
	OpAcquire       = "acquire"
	OpRelease       = "release"
	OpInFlight      = "in_flight"
	OpEnd           = "end"
	OpSeal          = "seal"
	OpStatus        = "status"
	OpBlock         = "block"
	OpClaimExpired  = "claim_expired"
	OpOpenToolCall  = "open_tool_call"
	OpCloseToolCall = "close_tool_call"
	OpBeginCall     = "begin_call"
	OpInputsJudged  = "inputs_judged"
	OpNextMarking   = "next_marking_inputs"
)

// Indexes into storeOps, one per op.
const (
	opBegin = iota
	opAdmit
	opNext
	opAcquire
	opRelease
	opInFlight
	opEnd
	opSeal
	opStatus
	opBlock
	opClaimExpired
	opOpenToolCall
	opCloseToolCall
	opBeginCall
	opInputsJudged
	opNextMarking
)

// storeOps is the op label's closed set, in index order.
var storeOps = [...]string{OpBegin, OpAdmit, OpNext, OpAcquire, OpRelease, OpInFlight, OpEnd, OpSeal, OpStatus, OpBlock, OpClaimExpired, OpOpenToolCall, OpCloseToolCall, OpBeginCall, OpInputsJudged, OpNextMarking}

// ActiveCounter is a store that can count its live sessions
// ([sessions.Memory] and [sessions.Redis] are).
type ActiveCounter interface {
	Active(ctx context.Context) (int64, error)
}

// activeScrapeTimeout bounds the store call a scrape makes.
const activeScrapeTimeout = 2 * time.Second

// InstrumentStore returns s counting its failures in
// hooks_gateway_session_store_errors_total{op}, and makes s the source of
// agent_hooks_sessions_active when it is an [ActiveCounter]. The store's
// sentinel errors (invalid ids, unknown, foreign, ended or sealed
// sessions, …) and canceled requests are answers, not failures, and are
// not counted.
func (m *Metrics) InstrumentStore(s sessions.Store) sessions.Store {
	if s == nil {
		return nil
	}
	if a, ok := s.(ActiveCounter); ok {
		m.sessionsActive.src.Store(&a)
	}
	is := &instrumentedStore{Store: s}
	for i, op := range storeOps {
		is.errs[i] = m.storeErrors.WithLabelValues(op)
	}
	return is
}

type instrumentedStore struct {
	sessions.Store
	errs [len(storeOps)]prometheus.Counter
}

// answers are the store's sentinel errors: answers about a session or an
// argument, not failures of the store.
var answers = [...]error{
	sessions.ErrInvalidSessionID, sessions.ErrUnknownSession, sessions.ErrForeignSession,
	sessions.ErrSessionEnded, sessions.ErrSessionSealed, sessions.ErrSessionNotEnded,
	sessions.ErrInvalidToolCallID, sessions.ErrTooManyToolCalls, sessions.ErrInvalidLease,
	context.Canceled,
}

func (s *instrumentedStore) count(op int, err error) {
	if err == nil {
		return
	}
	for _, a := range answers {
		if errors.Is(err, a) {
			return
		}
	}
	s.errs[op].Inc()
}

func (s *instrumentedStore) Begin(ctx context.Context, k sessions.Key, o sessions.Owner) (bool, sessions.Status, error) {
	claimed, st, err := s.Store.Begin(ctx, k, o)
	s.count(opBegin, err)
	return claimed, st, err
}

func (s *instrumentedStore) BeginCall(ctx context.Context, k sessions.Key, o sessions.Owner, c sessions.Call) (sessions.CallStart, error) {
	cs, err := s.Store.BeginCall(ctx, k, o, c)
	s.count(opBeginCall, err)
	return cs, err
}

func (s *instrumentedStore) Admit(ctx context.Context, k sessions.Key) error {
	err := s.Store.Admit(ctx, k)
	s.count(opAdmit, err)
	return err
}

func (s *instrumentedStore) Next(ctx context.Context, k sessions.Key) (int64, error) {
	n, err := s.Store.Next(ctx, k)
	s.count(opNext, err)
	return n, err
}

func (s *instrumentedStore) Acquire(ctx context.Context, k sessions.Key, callID string, lease time.Duration) error {
	err := s.Store.Acquire(ctx, k, callID, lease)
	s.count(opAcquire, err)
	return err
}

func (s *instrumentedStore) Release(ctx context.Context, k sessions.Key, callID string) error {
	err := s.Store.Release(ctx, k, callID)
	s.count(opRelease, err)
	return err
}

func (s *instrumentedStore) InFlight(ctx context.Context, k sessions.Key) (int, error) {
	n, err := s.Store.InFlight(ctx, k)
	s.count(opInFlight, err)
	return n, err
}

func (s *instrumentedStore) End(ctx context.Context, k sessions.Key, o sessions.Owner) (bool, sessions.Status, error) {
	won, st, err := s.Store.End(ctx, k, o)
	s.count(opEnd, err)
	return won, st, err
}

func (s *instrumentedStore) Seal(ctx context.Context, k sessions.Key) (int64, error) {
	n, err := s.Store.Seal(ctx, k)
	s.count(opSeal, err)
	return n, err
}

func (s *instrumentedStore) Status(ctx context.Context, k sessions.Key) (sessions.Status, bool, error) {
	st, ok, err := s.Store.Status(ctx, k)
	s.count(opStatus, err)
	return st, ok, err
}

func (s *instrumentedStore) Block(ctx context.Context, k sessions.Key) error {
	err := s.Store.Block(ctx, k)
	s.count(opBlock, err)
	return err
}

func (s *instrumentedStore) ClaimExpired(ctx context.Context, max int) ([]sessions.Expired, error) {
	got, err := s.Store.ClaimExpired(ctx, max)
	s.count(opClaimExpired, err)
	return got, err
}

func (s *instrumentedStore) OpenToolCall(ctx context.Context, k sessions.Key, toolCallID string) error {
	err := s.Store.OpenToolCall(ctx, k, toolCallID)
	s.count(opOpenToolCall, err)
	return err
}

func (s *instrumentedStore) CloseToolCall(ctx context.Context, k sessions.Key, toolCallID string) (bool, error) {
	ok, err := s.Store.CloseToolCall(ctx, k, toolCallID)
	s.count(opCloseToolCall, err)
	return ok, err
}

func (s *instrumentedStore) InputsJudged(ctx context.Context, k sessions.Key, ids []string) ([]bool, error) {
	out, err := s.Store.InputsJudged(ctx, k, ids)
	s.count(opInputsJudged, err)
	return out, err
}

func (s *instrumentedStore) NextMarkingInputs(ctx context.Context, k sessions.Key, ids []string) (int64, error) {
	n, err := s.Store.NextMarkingInputs(ctx, k, ids)
	s.count(opNextMarking, err)
	return n, err
}

// activeCollector reads agent_hooks_sessions_active from the store at
// scrape time. When the store cannot answer the series is left out of that
// scrape (absent, not a wrong value); the failure shows in readiness.
type activeCollector struct {
	desc *prometheus.Desc
	src  atomic.Pointer[ActiveCounter]
}

func (c *activeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *activeCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.src.Load()
	if src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), activeScrapeTimeout)
	defer cancel()
	n, err := (*src).Active(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n))
}
