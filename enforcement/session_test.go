package enforcement

import (
	"context"
	"sync"
	"testing"
)

// TestConcurrentSessionSequences drives one session from 8 goroutines
// through one emitter: every sequence 0..7999 must be recorded exactly once
// and each goroutine must see its own sequences strictly increase (§12.2).
func TestConcurrentSessionSequences(t *testing.T) {
	const workers, perWorker = 8, 1000
	sink := &collectSink{}
	e := newTestEmitter(t, Options{
		Interceptors: []Registration{verdictReg(Warn("test:w", "seen"))},
		Sink:         sink,
	})
	b := newTestBuilder()
	ctx := context.Background()

	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(-1)
			for i := 0; i < perWorker; i++ {
				c, err := b.Build(ctx, PreToolCall, PreToolFields(ToolCall{ID: "tc", Name: "fetch", Args: map[string]any{"i": i}}))
				if err != nil {
					errs <- err
					return
				}
				out, err := e.Emit(ctx, c)
				if err != nil {
					errs <- err
					return
				}
				if s := out.Record.Sequence; s <= last || s != c.Sequence() {
					t.Errorf("worker sequence %d after %d (context %d)", s, last, c.Sequence())
					return
				}
				last = out.Record.Sequence
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	recs := sink.records()
	if len(recs) != workers*perWorker {
		t.Fatalf("%d records, want %d", len(recs), workers*perWorker)
	}
	seen := make([]bool, workers*perWorker)
	for _, r := range recs {
		s := r.Sequence
		if s < 0 || s >= int64(len(seen)) {
			t.Fatalf("sequence %d out of range", s)
		}
		if seen[s] {
			t.Fatalf("sequence %d recorded twice", s)
		}
		seen[s] = true
		if r.SessionID != "sess-1" || r.Verdict.Decision != DecisionAllow || len(r.Verdict.Warnings) != 1 {
			t.Fatalf("record %d: session %q verdict %+v", s, r.SessionID, r.Verdict)
		}
	}
	for s, ok := range seen {
		if !ok {
			t.Fatalf("sequence %d missing", s)
		}
	}
}

// TestMultiTurnSession runs a two-turn session through the Builder and the
// field constructors: records carry sequences 0, 1, 2, … in emission order,
// the points in lifecycle order, and identities of the exact contexts.
func TestMultiTurnSession(t *testing.T) {
	e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, RecordBuffer: 32})
	b := newTestBuilder()
	ctx := context.Background()

	type step struct {
		point  Point
		fields map[string]any
	}
	steps := []step{{AgentStartup, StartupFields([]string{"search"})}}
	history := []any{}
	for turn, q := range []string{"first question", "second question"} {
		history = append(history, map[string]any{"role": "user", "content": q})
		steps = append(steps,
			step{Input, InputFields(q, "user")},
			step{PreModelCall, PreModelFields("model-x", append([]any(nil), history...))},
			step{PostModelCall, PostModelFields("model-x", ModelResponse{Content: "answer", FinishReason: "stop"})},
			step{Output, OutputFields("answer " + string(rune('A'+turn)))},
		)
		history = append(history, map[string]any{"role": "assistant", "content": "answer"})
	}
	steps = append(steps, step{AgentShutdown, ShutdownFields(ShutdownCompleted)})

	var ids []string
	for _, s := range steps {
		c, err := b.Build(ctx, s.point, s.fields)
		if err != nil {
			t.Fatalf("Build(%s): %v", s.point, err)
		}
		ids = append(ids, mustIdentity(t, c))
		emit := e.Emit
		if s.point == AgentShutdown {
			emit = e.EmitUnchecked
		}
		if _, err := emit(ctx, c); err != nil {
			t.Fatalf("Emit(%s): %v", s.point, err)
		}
	}

	recs := e.TakeRecords()
	if len(recs) != len(steps) {
		t.Fatalf("%d records, want %d", len(recs), len(steps))
	}
	for i, r := range recs {
		if r.Sequence != int64(i) {
			t.Errorf("record %d: sequence %d, want %d", i, r.Sequence, i)
		}
		if r.InterceptionPoint != steps[i].point {
			t.Errorf("record %d: point %s, want %s", i, r.InterceptionPoint, steps[i].point)
		}
		if r.InputIdentity == nil || *r.InputIdentity != ids[i] {
			t.Errorf("record %d: input_identity %v, want %s", i, r.InputIdentity, ids[i])
		}
		if r.Timestamp == nil || *r.Timestamp != fixedNow().Format(TimestampFormat) {
			t.Errorf("record %d: timestamp %v", i, r.Timestamp)
		}
	}
	// Distinct contexts, distinct identities (sequence alone differs).
	uniq := map[string]bool{}
	for _, id := range ids {
		uniq[id] = true
	}
	if len(uniq) != len(ids) {
		t.Fatalf("identities not distinct: %v", ids)
	}
}

// TestBuilderShapes checks every point's Builder output passes the §4
// envelope check and that target mirrors the right member (§4.3).
func TestBuilderShapes(t *testing.T) {
	mirror := map[Point]func(Context) any{
		AgentStartup:  func(c Context) any { return c["agent_init"] },
		Input:         func(c Context) any { return c["input"] },
		PreModelCall:  func(c Context) any { return c["messages"] },
		PostModelCall: func(c Context) any { return c["response"] },
		PreToolCall:   func(c Context) any { return c["tool_call"].(map[string]any)["args"] },
		PostToolCall:  func(c Context) any { return c["tool_result"].(map[string]any)["value"] },
		Output:        func(c Context) any { return c["output"] },
		AgentShutdown: func(c Context) any { return c["summary"] },
	}
	b := newTestBuilder()
	for i, p := range Points() {
		c := buildAt(t, b, p)
		if err := ValidateEnvelope(c); err != nil {
			t.Errorf("%s: envelope: %v", p, err)
		}
		if c.Sequence() != int64(i) || c.Point() != p || c.SessionID() != "sess-1" {
			t.Errorf("%s: sequence %d point %s session %q", p, c.Sequence(), c.Point(), c.SessionID())
		}
		if got, want := c.Target(), mirror[p](c); !jsonEqual(got, want) {
			t.Errorf("%s: target %v does not mirror %v", p, got, want)
		}
	}
	// A nil tool-call list and nil args still serialize as [] and {} (§4.2).
	pm, err := b.Build(context.Background(), PostModelCall, PostModelFields("m", ModelResponse{FinishReason: "stop"}))
	if err != nil {
		t.Fatal(err)
	}
	if calls, ok := pm["response"].(map[string]any)["tool_calls"].([]any); !ok || calls == nil {
		t.Fatalf("tool_calls = %#v, want []", pm["response"].(map[string]any)["tool_calls"])
	}
	pt, err := b.Build(context.Background(), PreToolCall, PreToolFields(ToolCall{ID: "x", Name: "y"}))
	if err != nil {
		t.Fatal(err)
	}
	if args, ok := pt.Target().(map[string]any); !ok || args == nil || len(args) != 0 {
		t.Fatalf("args = %#v, want {}", pt.Target())
	}
}
