package metrics

import (
	"context"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/records"
)

// InstrumentSink returns sink counting each write in
// agent_hooks_records_total{sink=name, result=ok|error}. name must be
// bounded and payload-free (the configured sink's type or name). A panic in
// sink is counted as an error and re-raised (the emitter recovers it).
//
// Sinks that write asynchronously should instead report their outcomes
// themselves with [Metrics.RecordWritten] and [Metrics.RecordsDropped].
//
// A sink with a monotonic Dropped() int64 count (records.Dropper) has that
// count exported as agent_hooks_records_dropped_total{sink=name}, read at
// scrape time; such a sink must not also report through RecordsDropped.
func (m *Metrics) InstrumentSink(name string, sink enforcement.RecordSink) enforcement.RecordSink {
	if d, ok := sink.(dropper); ok {
		m.recordsDropped.addSource(name, d)
	}
	return &instrumentedSink{
		sink: sink,
		ok:   m.records.WithLabelValues(name, "ok"),
		err:  m.records.WithLabelValues(name, "error"),
	}
}

type instrumentedSink struct {
	sink    enforcement.RecordSink
	ok, err prometheus.Counter
}

func (s *instrumentedSink) WriteRecord(ctx context.Context, r *enforcement.Record) (err error) {
	defer s.countPanic(1)
	return s.count(1, s.sink.WriteRecord(ctx, r))
}

// WriteAttributed implements records.AttributedSink, passing a on.
func (s *instrumentedSink) WriteAttributed(ctx context.Context, r *enforcement.Record, a records.Attribution) error {
	defer s.countPanic(1)
	return s.count(1, records.WriteAttributed(ctx, s.sink, r, a))
}

// WriteAttributedBatch implements records.AttributedBatchSink, passing
// the batch on; each record counts once, as an error when the write lost
// it (enforcement.FailedRecords).
func (s *instrumentedSink) WriteAttributedBatch(ctx context.Context, rs []*enforcement.Record, a records.Attribution) error {
	defer s.countPanic(len(rs))
	err := records.WriteAttributedBatch(ctx, s.sink, rs, a)
	failed := enforcement.FailedRecords(err, len(rs))
	s.err.Add(float64(failed))
	s.ok.Add(float64(len(rs) - failed))
	return err
}

// count counts the result of a write of n records.
func (s *instrumentedSink) count(n int, err error) error {
	if err != nil {
		s.err.Add(float64(n))
	} else {
		s.ok.Add(float64(n))
	}
	return err
}

// countPanic, deferred, counts a panicking write of n records as errors
// and re-raises the panic.
func (s *instrumentedSink) countPanic(n int) {
	if p := recover(); p != nil {
		s.err.Add(float64(n))
		panic(p)
	}
}

// Unwrap returns the wrapped sink.
func (s *instrumentedSink) Unwrap() enforcement.RecordSink { return s.sink }

// RecordWritten counts one record a sink wrote (err nil) or failed to write,
// for sinks that write off the emission path (queues, batches).
func (m *Metrics) RecordWritten(sink string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.records.WithLabelValues(sink, result).Inc()
}

// RecordsDropped counts n records sink discarded without writing them (a
// full queue): agent_hooks_records_dropped_total{sink}.
func (m *Metrics) RecordsDropped(sink string, n int) {
	if n <= 0 {
		return
	}
	m.recordsDropped.add(sink, n)
}

// dropper is records.Dropper: a monotonic count of records lost.
type dropper interface{ Dropped() int64 }

// droppedCollector is agent_hooks_records_dropped_total{sink}: counts
// pushed through RecordsDropped plus the counts of Dropper sinks, read at
// scrape time.
type droppedCollector struct {
	desc    *prometheus.Desc
	mu      sync.Mutex
	pushed  map[string]int64
	sources []droppedSource
}

type droppedSource struct {
	sink string
	d    dropper
}

func newDroppedCollector() *droppedCollector {
	return &droppedCollector{
		desc: prometheus.NewDesc("agent_hooks_records_dropped_total",
			"Records a sink accepted or was offered but discarded without writing them (queue overflow, delivery given up).",
			[]string{"sink"}, nil),
		pushed: map[string]int64{},
	}
}

func (c *droppedCollector) add(sink string, n int) {
	c.mu.Lock()
	c.pushed[sink] += int64(n)
	c.mu.Unlock()
}

func (c *droppedCollector) addSource(sink string, d dropper) {
	c.mu.Lock()
	c.sources = append(c.sources, droppedSource{sink, d})
	if _, ok := c.pushed[sink]; !ok {
		c.pushed[sink] = 0 // export the sink's series from the start
	}
	c.mu.Unlock()
}

func (c *droppedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *droppedCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	totals := make(map[string]int64, len(c.pushed))
	for s, n := range c.pushed {
		totals[s] = n
	}
	sources := slices.Clone(c.sources)
	c.mu.Unlock()
	for _, src := range sources {
		totals[src.sink] += src.d.Dropped()
	}
	for s, n := range totals {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), s)
	}
}
