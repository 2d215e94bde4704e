package enforcement

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

func TestCloneSharesTargetWithItsMirrorOnly(t *testing.T) {
	b := &Builder{Agent: Agent{ID: "a", Framework: "f"}, SessionID: "s", Sequence: &Counter{}}
	c, err := b.Build(context.Background(), PreToolCall, PreToolFields(ToolCall{ID: "1", Name: "t", Args: map[string]any{"k": "v"}}))
	if err != nil {
		t.Fatal(err)
	}
	cp := c.Clone()
	if !jsonvalue.Equal(map[string]any(cp), map[string]any(c)) {
		t.Fatal("clone differs from the original")
	}
	args := cp["tool_call"].(map[string]any)["args"].(map[string]any)
	args["k"] = "changed"
	if cp["target"].(map[string]any)["k"] != "changed" {
		t.Error("the clone's target does not mirror its tool_call.args")
	}
	if c["target"].(map[string]any)["k"] != "v" || c["tool_call"].(map[string]any)["args"].(map[string]any)["k"] != "v" {
		t.Error("mutating the clone changed the original")
	}

	// A context whose target is a separate (equal) value keeps them separate.
	c["target"] = map[string]any{"k": "v"}
	cp = c.Clone()
	cp["target"].(map[string]any)["k"] = "x"
	if cp["tool_call"].(map[string]any)["args"].(map[string]any)["k"] != "v" {
		t.Error("Clone aliased values that were not aliased in the original")
	}
}

func TestRecordJSONRoundTrip(t *testing.T) {
	id := "sha256:ab"
	five, yes := 1, true
	in := Record{
		InterceptionPoint: PreToolCall, Mode: EvaluateOnly,
		Verdict:       Verdict{Decision: DecisionDeny, Reason: "r", Approval: map[string]any{}, Warnings: []Warning{{Reason: "w"}}},
		InputIdentity: &id, EnforcedIdentity: &id, IdentityProvider: IdentityJCSSHA256,
		SessionID: "s", Sequence: 7, DecidedBy: &five, FoldTruncated: &yes, ResolvedBy: ResolvedByRejection,
		Composition:            Composition{Profile: SequentialFirstDeny, OnApproval: OnApprovalStop},
		Verdicts:               []VerdictSummary{{Index: 0, Decision: DecisionAllow}, {Index: 1, Decision: DecisionDeny, Reason: "r", Name: "n"}},
		InterceptorsRegistered: 2,
	}
	b, err := in.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var out Record
	if err := out.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	b2, err := out.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(b2) {
		t.Fatalf("round trip changed the record:\n%s\n%s", b, b2)
	}
	nullProvider := Record{InterceptionPoint: Input, Mode: Enforce, Verdict: Allow(), Sequence: -1}
	b, _ = nullProvider.MarshalJSON()
	if err := out.UnmarshalJSON(b); err != nil || out.IdentityProvider != "" || out.InputIdentity != nil || out.DecidedBy != nil {
		t.Fatalf("null members did not round-trip: %+v %v", out, err)
	}
}

type countingObserver struct {
	mu            sync.Mutex
	emissions     []*Record
	interceptions []InterceptorObservation
}

func (o *countingObserver) ObserveEmission(r *Record, _ time.Duration) {
	o.mu.Lock()
	o.emissions = append(o.emissions, r)
	o.mu.Unlock()
}

func (o *countingObserver) ObserveInterceptor(io InterceptorObservation) {
	o.mu.Lock()
	o.interceptions = append(o.interceptions, io)
	o.mu.Unlock()
}

func TestObserverSeesEveryEmissionAndCall(t *testing.T) {
	obs := &countingObserver{}
	em, err := NewEmitter(Options{
		Interceptors: []Registration{
			{Name: "ok", Interceptor: InterceptorFunc(func(context.Context, Context) (Verdict, error) { return Allow(), nil })},
			{Name: "boom", Interceptor: InterceptorFunc(func(context.Context, Context) (Verdict, error) { panic("x") })},
		},
		Composition: Composition{Profile: SequentialRunAll},
		Observer:    obs,
	})
	if err != nil {
		t.Fatal(err)
	}
	b := &Builder{Agent: Agent{ID: "a", Framework: "f"}, SessionID: "s", Sequence: &Counter{}}
	c, _ := b.Build(context.Background(), Input, InputFields("hi", "user"))
	em.EmitUnchecked(context.Background(), c)
	em.RecordHostFailure(context.Background(), HostFailure{Point: Output, SessionID: "s", Sequence: 1})
	if len(obs.emissions) != 2 || obs.emissions[0].Verdict.Reason != ReasonInterceptorFailed || obs.emissions[1].Verdict.Reason != ReasonContextInvalid {
		t.Fatalf("emissions observed: %+v", obs.emissions)
	}
	if len(obs.interceptions) != 2 || obs.interceptions[1].Name != "boom" || obs.interceptions[1].Reason != ReasonInterceptorFailed || obs.interceptions[0].Decision != DecisionAllow {
		t.Fatalf("interceptor calls observed: %+v", obs.interceptions)
	}
}
