package sdk

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// policy is a test interceptor: a function of the context.
type policy func(c enforcement.Context) enforcement.Verdict

func (p policy) Intercept(_ context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	return p(c), nil
}

func newSession(t *testing.T, p policy) (*Session, *enforcement.Emitter) {
	t.Helper()
	em, err := enforcement.NewEmitter(enforcement.Options{
		Interceptors: []enforcement.Registration{{Name: "test", Interceptor: p}},
		RecordBuffer: 256,
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewLocalSession(LocalConfig{Emitter: em, Agent: enforcement.Agent{ID: "agent", Framework: "go-test"}})
	if err != nil {
		t.Fatal(err)
	}
	return s, em
}

func points(em *enforcement.Emitter) []enforcement.Point {
	var out []enforcement.Point
	for _, r := range em.TakeRecords() {
		out = append(out, r.InterceptionPoint)
	}
	return out
}

func equalPoints(t *testing.T, got []enforcement.Point, want ...enforcement.Point) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("points = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("points = %v, want %v", got, want)
		}
	}
}

func allowAll(enforcement.Context) enforcement.Verdict { return enforcement.Allow() }

func TestSessionFullLoop(t *testing.T) {
	ctx := context.Background()
	s, em := newSession(t, func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.PreToolCall {
			return enforcement.TransformTo("$target.city", "Paris")
		}
		return enforcement.Allow()
	})
	if err := s.Start(ctx, []string{"weather", "clock"}); err != nil {
		t.Fatal(err)
	}
	in, err := s.Input(ctx, "weather in Lyon?", "user")
	if err != nil || in != "weather in Lyon?" {
		t.Fatalf("Input = %v, %v", in, err)
	}
	var sent any
	resp, err := s.ModelCall(ctx, "m", []any{map[string]any{"role": "user", "content": in}}, func(_ context.Context, msgs any) (enforcement.ModelResponse, error) {
		sent = msgs
		return enforcement.ModelResponse{ToolCalls: []enforcement.ToolCall{{ID: "c1", Name: "weather", Args: map[string]any{"city": "Lyon"}}}, FinishReason: "tool_calls"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := sent.([]any); len(m) != 1 {
		t.Fatalf("model saw %v", sent)
	}
	var gotArgs any
	res, err := s.ToolCall(ctx, resp.ToolCalls[0], func(_ context.Context, args any) (any, bool, error) {
		gotArgs = args
		return map[string]any{"temp": 21}, false, nil
	})
	if err != nil || res.Blocked != nil || !res.Invoked {
		t.Fatalf("ToolCall = %+v, %v", res, err)
	}
	if a, _ := gotArgs.(map[string]any); a["city"] != "Paris" {
		t.Fatalf("tool received %v, want the transformed city", gotArgs)
	}
	out, err := s.Output(ctx, "It is 21 degrees in Paris.")
	if err != nil || out != "It is 21 degrees in Paris." {
		t.Fatalf("Output = %v, %v", out, err)
	}
	if _, err := s.End(ctx, enforcement.ShutdownCompleted); err != nil {
		t.Fatal(err)
	}
	recs := em.TakeRecords()
	want := []enforcement.Point{enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall, enforcement.PostModelCall,
		enforcement.PreToolCall, enforcement.PostToolCall, enforcement.Output, enforcement.AgentShutdown}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		if r.InterceptionPoint != want[i] || r.Sequence != int64(i) || r.SessionID != s.ID() {
			t.Errorf("record %d = %s seq %d session %q", i, r.InterceptionPoint, r.Sequence, r.SessionID)
		}
	}
	if recs[4].Verdict.Decision != enforcement.DecisionTransform || *recs[4].InputIdentity == *recs[4].EnforcedIdentity {
		t.Errorf("pre_tool_call record does not show the transform: %+v", recs[4])
	}
}

func TestSessionStartupDenyBlocksEverything(t *testing.T) {
	ctx := context.Background()
	s, em := newSession(t, func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.AgentStartup {
			return enforcement.Deny("policy:closed", "")
		}
		return enforcement.Allow()
	})
	var blocked *BlockedError
	if err := s.Start(ctx, nil); !errors.As(err, &blocked) || blocked.Outcome.Verdict.Reason != "policy:closed" {
		t.Fatalf("Start = %v, want a BlockedError", err)
	}
	if _, err := s.Input(ctx, "hi", "user"); !errors.Is(err, ErrSessionBlocked) {
		t.Fatalf("Input after a startup deny = %v", err)
	}
	out, err := s.End(ctx, enforcement.ShutdownCompleted)
	if err != nil {
		t.Fatal(err)
	}
	summary := out.Context["summary"].(map[string]any)
	if summary["reason"] != enforcement.ShutdownError {
		t.Errorf("shutdown reason = %v, want error", summary["reason"])
	}
	equalPoints(t, points(em), enforcement.AgentStartup, enforcement.AgentShutdown)
}

func TestSessionToolDenies(t *testing.T) {
	ctx := context.Background()
	s, em := newSession(t, func(c enforcement.Context) enforcement.Verdict {
		tc, _ := c["tool_call"].(map[string]any)
		switch {
		case c.Point() == enforcement.PreToolCall && tc["name"] == "rm":
			return enforcement.Deny("policy:no-rm", "")
		case c.Point() == enforcement.PostToolCall:
			return enforcement.Deny("policy:tainted", "")
		}
		return enforcement.Allow()
	})
	if err := s.Start(ctx, []string{"rm", "ls"}); err != nil {
		t.Fatal(err)
	}
	ran := false
	res, err := s.ToolCall(ctx, enforcement.ToolCall{ID: "1", Name: "rm"}, func(context.Context, any) (any, bool, error) {
		ran = true
		return nil, false, nil
	})
	if err != nil || ran || res.Invoked || res.Message() != "blocked: policy:no-rm" {
		t.Fatalf("denied pre_tool_call: res=%+v err=%v ran=%v", res, err, ran)
	}
	res, err = s.ToolCall(ctx, enforcement.ToolCall{ID: "2", Name: "ls"}, func(context.Context, any) (any, bool, error) {
		return "secret listing", false, nil
	})
	if err != nil || !res.Invoked || res.Value != nil || res.Message() != "blocked: policy:tainted" {
		t.Fatalf("denied post_tool_call must discard the value: %+v %v", res, err)
	}
	equalPoints(t, points(em), enforcement.AgentStartup, enforcement.PreToolCall, enforcement.PreToolCall, enforcement.PostToolCall)
}

func TestSessionModelErrorSkipsPostModelCall(t *testing.T) {
	ctx := context.Background()
	s, em := newSession(t, allowAll)
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("upstream 500")
	_, err := s.ModelCall(ctx, "m", []any{}, func(context.Context, any) (enforcement.ModelResponse, error) {
		return enforcement.ModelResponse{}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("ModelCall = %v, want the model error", err)
	}
	equalPoints(t, points(em), enforcement.AgentStartup, enforcement.PreModelCall)
}

func TestSessionPostModelDenyDiscardsResponse(t *testing.T) {
	ctx := context.Background()
	s, _ := newSession(t, func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.PostModelCall {
			return enforcement.Deny("policy:leak", "")
		}
		return enforcement.Allow()
	})
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := s.ModelCall(ctx, "m", []any{}, func(context.Context, any) (enforcement.ModelResponse, error) {
		return enforcement.ModelResponse{Content: "sk-secret", FinishReason: "stop"}, nil
	})
	var blocked *BlockedError
	if !errors.As(err, &blocked) || resp.Content != nil {
		t.Fatalf("ModelCall = %+v, %v; want a BlockedError and no content", resp, err)
	}
}

func TestSessionStateErrors(t *testing.T) {
	ctx := context.Background()
	s, _ := newSession(t, allowAll)
	if _, err := s.Input(ctx, "x", "user"); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("Input before Start = %v", err)
	}
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx, nil); err == nil {
		t.Fatal("second Start succeeded")
	}
	if _, err := s.End(ctx, enforcement.ShutdownCompleted); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Output(ctx, "x"); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("Output after End = %v", err)
	}
	if _, err := s.End(ctx, enforcement.ShutdownCompleted); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("second End = %v", err)
	}
}

func TestSessionProjectionFailureIsRecorded(t *testing.T) {
	ctx := context.Background()
	s, em := newSession(t, allowAll)
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err := s.Input(ctx, map[string]any{"x": math.NaN()}, "user")
	var pe *enforcement.ProjectionError
	if !errors.As(err, &pe) {
		t.Fatalf("Input with NaN = %v, want a ProjectionError", err)
	}
	if _, err := s.Output(ctx, "fine"); err != nil {
		t.Fatal(err)
	}
	recs := em.TakeRecords()
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	for i, r := range recs {
		if r.Sequence != int64(i) {
			t.Errorf("record %d has sequence %d: the failed projection must consume its number", i, r.Sequence)
		}
	}
	if r := recs[1]; r.Verdict.Reason != enforcement.ReasonContextInvalid || r.InputIdentity != nil || r.InterceptionPoint != enforcement.Input {
		t.Errorf("host failure record = %+v", r)
	}
}

func TestSessionConcurrentToolCalls(t *testing.T) {
	ctx := context.Background()
	s, em := newSession(t, allowAll)
	if err := s.Start(ctx, []string{"t"}); err != nil {
		t.Fatal(err)
	}
	const n = 32
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.ToolCall(ctx, enforcement.ToolCall{ID: "c", Name: "t", Args: map[string]any{"i": i}}, func(_ context.Context, args any) (any, bool, error) {
				return args, false, nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, r := range em.TakeRecords() {
		if seen[r.Sequence] {
			t.Fatalf("duplicate sequence %d", r.Sequence)
		}
		seen[r.Sequence] = true
	}
	if len(seen) != 1+2*n {
		t.Fatalf("%d distinct sequences, want %d", len(seen), 1+2*n)
	}
}
