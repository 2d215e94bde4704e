package metrics

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/metrics/metricstest"
	"github.com/hooks-gateway/hooks-gateway/records"
)

// TestInstrumentedSinkPassesAttribution: under records.Attributed, an
// instrumented sink passes the attribution on, to a records sink as an
// argument and to any other in its context, and counts those writes and
// their panics like WriteRecord's.
func TestInstrumentedSinkPassesAttribution(t *testing.T) {
	m := New(Options{NoRuntimeCollectors: true})
	a := records.Attribution{PolicyVersion: "v1", Route: "payments"}
	var buf bytes.Buffer
	w := m.InstrumentSink("stdout", records.NewFramedWriter(&buf, records.Framing{Format: records.FormatEnvelope}))
	var seen records.Attribution
	other := m.InstrumentSink("custom", enforcement.RecordSinkFunc(func(ctx context.Context, _ *enforcement.Record) error {
		seen = records.AttributionFrom(ctx)
		return nil
	}))
	panicky := m.InstrumentSink("redis", enforcement.RecordSinkFunc(func(context.Context, *enforcement.Record) error { panic("x") }))
	r := &enforcement.Record{InterceptionPoint: enforcement.Input, Mode: enforcement.Enforce, Verdict: enforcement.Allow(), SessionID: "s"}
	for _, s := range []enforcement.RecordSink{w, other} {
		if err := records.Attributed(s, a).WriteRecord(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the sink's panic was swallowed")
			}
		}()
		records.Attributed(panicky, a).WriteRecord(context.Background(), r)
	}()
	if !strings.Contains(buf.String(), `"hooks_gateway":{"policy_version":"v1","route":"payments"}`) {
		t.Errorf("envelope without the attribution: %s", buf.String())
	}
	if seen != a {
		t.Errorf("context sink saw %+v", seen)
	}
	metricstest.WantSeries(t, scrape(t, m), "agent_hooks_records_total", map[string]float64{
		"result=ok,sink=stdout": 1, "result=error,sink=stdout": 0,
		"result=ok,sink=custom": 1, "result=error,sink=custom": 0,
		"result=ok,sink=redis": 0, "result=error,sink=redis": 1,
	})
}

// A batch (a held request's records) counts each of its records, as ok
// or, when the write lost it (the batch failed or panicked, or the record
// alone failed), as an error.
func TestInstrumentedSinkCountsBatches(t *testing.T) {
	m := New(Options{NoRuntimeCollectors: true})
	a := records.Attribution{PolicyVersion: "v1"}
	var buf bytes.Buffer
	ok := m.InstrumentSink("stdout", records.NewFramedWriter(&buf, records.Framing{}))
	bad := m.InstrumentSink("jsonl", enforcement.RecordSinkFunc(func(context.Context, *enforcement.Record) error {
		return errors.New("disk full")
	}))
	rs := []*enforcement.Record{
		{InterceptionPoint: enforcement.Input, Mode: enforcement.Enforce, Verdict: enforcement.Allow(), SessionID: "s"},
		{InterceptionPoint: enforcement.Output, Mode: enforcement.Enforce, Verdict: enforcement.Allow(), SessionID: "s", Sequence: 1},
		{InterceptionPoint: enforcement.AgentShutdown, Mode: enforcement.Enforce, Verdict: enforcement.Allow(), SessionID: "s", Sequence: 2},
	}
	if err := records.Attributed(records.Fanout{ok}, a).(enforcement.RecordBatchSink).WriteRecords(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	if err := records.Attributed(records.Fanout{bad}, a).(enforcement.RecordBatchSink).WriteRecords(context.Background(), rs); err == nil {
		t.Error("a failing batch reported no error")
	}
	// A sink without batches that fails one record of three: the batch
	// counts that one as an error, the others as written.
	partial := m.InstrumentSink("http", enforcement.RecordSinkFunc(func(_ context.Context, r *enforcement.Record) error {
		if r.Sequence == 1 {
			return errors.New("503")
		}
		return nil
	}))
	if err := records.Attributed(records.Fanout{partial}, a).(enforcement.RecordBatchSink).WriteRecords(context.Background(), rs); err == nil {
		t.Error("a batch that lost a record reported no error")
	}
	panicky := m.InstrumentSink("redis", enforcement.RecordSinkFunc(func(context.Context, *enforcement.Record) error { panic("x") }))
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the sink's panic was swallowed")
			}
		}()
		records.Attributed(records.Fanout{panicky}, a).(enforcement.RecordBatchSink).WriteRecords(context.Background(), rs)
	}()
	if n := strings.Count(buf.String(), "\n"); n != 3 {
		t.Errorf("%d lines written, want 3", n)
	}
	metricstest.WantSeries(t, scrape(t, m), "agent_hooks_records_total", map[string]float64{
		"result=ok,sink=stdout": 3, "result=error,sink=stdout": 0,
		"result=ok,sink=jsonl": 0, "result=error,sink=jsonl": 3,
		"result=ok,sink=redis": 0, "result=error,sink=redis": 3,
		"result=ok,sink=http": 2, "result=error,sink=http": 1,
	})
}
