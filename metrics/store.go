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
	OpBegin        = "begin"
	OpNext         = "next"
	OpEnd          = "end"
	OpStatus       = "status"
	OpBlock        = "block"
	OpClaimExpired = "claim_expired"
)

// storeOps is the op label's closed set, in index order.
var storeOps = [...]string{OpBegin, OpNext, OpEnd, OpStatus, OpBlock, OpClaimExpired}

// ActiveCounter is a store that can count its live sessions
// ([sessions.Memory] and [sessions.Redis] are).
type ActiveCounter interface {
	Active(ctx context.Context) (int64, error)
}

// activeScrapeTimeout bounds the store call a scrape makes.
const activeScrapeTimeout = 2 * time.Second

// InstrumentStore returns s counting its failures in
// hooks_gateway_session_store_errors_total{op}, and makes s the source of
// agent_hooks_sessions_active when it is an [ActiveCounter]. Invalid ids,
// unknown sessions and canceled requests are answers, not failures, and
// are not counted.
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

func (s *instrumentedStore) count(op int, err error) {
	if err == nil || errors.Is(err, sessions.ErrInvalidSessionID) || errors.Is(err, sessions.ErrUnknownSession) || errors.Is(err, context.Canceled) {
		return
	}
	s.errs[op].Inc()
}

func (s *instrumentedStore) Begin(ctx context.Context, id string) (bool, sessions.Status, error) {
	claimed, st, err := s.Store.Begin(ctx, id)
	s.count(0, err)
	return claimed, st, err
}

func (s *instrumentedStore) Next(ctx context.Context, id string) (int64, error) {
	n, err := s.Store.Next(ctx, id)
	s.count(1, err)
	return n, err
}

func (s *instrumentedStore) End(ctx context.Context, id string) (bool, error) {
	won, err := s.Store.End(ctx, id)
	s.count(2, err)
	return won, err
}

func (s *instrumentedStore) Status(ctx context.Context, id string) (sessions.Status, bool, error) {
	st, ok, err := s.Store.Status(ctx, id)
	s.count(3, err)
	return st, ok, err
}

func (s *instrumentedStore) Block(ctx context.Context, id string) error {
	err := s.Store.Block(ctx, id)
	s.count(4, err)
	return err
}

func (s *instrumentedStore) ClaimExpired(ctx context.Context, max int) ([]string, error) {
	ids, err := s.Store.ClaimExpired(ctx, max)
	s.count(5, err)
	return ids, err
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
