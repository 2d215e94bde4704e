package enforcement

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// readsOnlyAllow is an audited read-only allow, like the built-in ones.
type readsOnlyAllow struct{}

func (readsOnlyAllow) Intercept(context.Context, Context) (Verdict, error) { return Allow(), nil }
func (readsOnlyAllow) NonBlocking()                                        {}
func (readsOnlyAllow) ReadsOnly()                                          {}

// The fixed cost of an emission is what every one of a request's six
// emissions pays: this pins its allocations (build and emit of a small
// context through two read-only interceptors with a write-back option,
// record to a sink) so that
// a regression shows up here, not only in the gateway's benchmark.
func TestEmissionAllocations(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation count (the race detector changes it)")
	}
	sink := RecordSinkFunc(func(context.Context, *Record) error { return nil })
	e := newTestEmitter(t, Options{Interceptors: []Registration{{Interceptor: readsOnlyAllow{}}, {Interceptor: readsOnlyAllow{}}}, Sink: sink})
	b := &Builder{Agent: Agent{ID: "a", Framework: "f"}, SessionID: "s", Sequence: &Counter{}, AdoptFields: true}
	ctx := context.Background()
	fields := ShutdownFields(ShutdownCompleted)
	var c Context
	validate := TargetValidator(func(any) error { return nil })
	build := testing.AllocsPerRun(200, func() {
		var err error
		if c, err = b.Build(ctx, AgentShutdown, fields); err != nil {
			t.Fatal(err)
		}
	})
	emit := testing.AllocsPerRun(200, func() {
		if _, err := e.EmitUnchecked(ctx, c, WithTargetValidator(validate)); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("Build %.1f, EmitUnchecked %.1f allocations", build, emit)
	// Build: the context map and, once per millisecond, the timestamp;
	// EmitUnchecked: the emission, the identity string and the outcome
	// (apart from the emission: TestKeptRecordReleasesContext; the sink's
	// context is detached only when it can be canceled).
	if build > 3 || emit > 3 {
		t.Errorf("Build %.1f allocations (want ≤ 3), EmitUnchecked %.1f (want ≤ 3)", build, emit)
	}
}

// A record lives in its emission's storage: each emission
// has its own, and releasing the emission's references leaves them whole.
func TestRecordsOutliveTheirEmission(t *testing.T) {
	deny := Registration{Name: "d", Interceptor: NonBlockingFunc(func(_ context.Context, c Context) (Verdict, error) {
		if c.Point() == Output {
			return Deny("no", "m"), nil
		}
		return Allow(), nil
	})}
	e := newTestEmitter(t, Options{Interceptors: []Registration{{Name: "a", Interceptor: readsOnlyAllow{}}, deny}})
	b := newTestBuilder()
	b.Common = map[string]any{"trace": map[string]any{"trace_id": "t1", "span_id": "s1"}}
	ctx := context.Background()
	first, err := e.EmitUnchecked(ctx, buildAt(t, b, Output))
	if err != nil {
		t.Fatal(err)
	}
	ts := *first.Record.Timestamp
	if _, err := e.EmitUnchecked(ctx, buildAt(t, b, Input)); err != nil {
		t.Fatal(err)
	}
	r := first.Record
	if first.Proceed || r.DecidedBy == nil || *r.DecidedBy != 1 || r.Verdict.Reason != "no" ||
		len(r.Verdicts) != 2 || r.Verdicts[1].Name != "d" || r.Trace == nil || r.Trace.TraceID != "t1" ||
		*r.Timestamp != ts || r.FoldTruncated == nil || *r.FoldTruncated || first.Context.Point() != Output {
		t.Fatalf("first record changed: %+v", r)
	}
}

// A kept record (a sink's queue, the bounded buffer) does not keep its
// emission's context reachable: the outcome, which holds the context, is
// not stored beside the record.
func TestKeptRecordReleasesContext(t *testing.T) {
	e := newTestEmitter(t, Options{Interceptors: []Registration{{Interceptor: readsOnlyAllow{}}}, RecordBuffer: 1})
	collected := make(chan struct{})
	func() {
		c := buildAt(t, nil, Output)
		held := make([]any, 8)
		for i := range held {
			held[i] = "x"
		}
		runtime.AddCleanup(&held[0], func(ch chan struct{}) { close(ch) }, collected)
		c["extensions"] = map[string]any{"held": held}
		out, err := e.EmitUnchecked(context.Background(), c)
		if err != nil || !out.Proceed {
			t.Fatalf("emission: %v, %+v", err, out)
		}
	}()
	kept := e.TakeRecords()
	for range 20 {
		runtime.GC()
		select {
		case <-collected:
			runtime.KeepAlive(kept)
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("the context stayed reachable from %d kept records", len(kept))
}

// keptValue keeps what an allocation test boxes, so that the compiler
// cannot drop the boxing.
var keptValue any

// A shutdown reason the spec names is boxed without an allocation.
func TestShutdownReasonAllocations(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation count (the race detector changes it)")
	}
	for _, reason := range []string{ShutdownCompleted, ShutdownError, ShutdownCancelled} {
		dynamic := string(append([]byte(nil), reason...)) // not the constant's storage
		if n := testing.AllocsPerRun(100, func() { keptValue = reasonValue(dynamic) }); n != 0 {
			t.Errorf("reasonValue(%q): %.0f allocations, want 0", reason, n)
		}
	}
}
