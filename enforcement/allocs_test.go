package enforcement

import (
	"context"
	"testing"
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
	// EmitUnchecked: the emission and the identity string (the sink's
	// context is detached only when it can be canceled).
	if build > 3 || emit > 2 {
		t.Errorf("Build %.1f allocations (want ≤ 3), EmitUnchecked %.1f (want ≤ 2)", build, emit)
	}
}

// A record and outcome live in their emission's storage: each emission
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
