package sdk

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// TestRemoteFailureRecordsStateDeclaredPolicy: before the gateway has
// answered, the SDK's own failure records state RemoteConfig.Policy: the
// declared identity provider, the mode at the point (PointModes over
// Mode) and the resolved composition, not null, enforce or a guess.
func TestRemoteFailureRecordsStateDeclaredPolicy(t *testing.T) {
	ctx := context.Background()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	sink := &recordSink{}
	s := newRemote(t, RemoteConfig{BaseURL: gone.URL, Sink: sink, Policy: GatewayPolicy{
		IdentityProvider: "hmac-sha256-k1",
		Mode:             enforcement.EvaluateOnly,
		PointModes:       map[enforcement.Point]enforcement.Mode{enforcement.AgentStartup: enforcement.Enforce},
		Composition:      enforcement.Composition{Profile: enforcement.ParallelUnanimous},
		Interceptors:     3,
	}})
	err := s.Start(ctx, nil)
	var blocked *BlockedError
	if !errors.As(err, &blocked) {
		t.Fatalf("Start against a closed gateway = %v, want a BlockedError", err)
	}
	if _, err := s.End(ctx, enforcement.ShutdownCompleted); err != nil {
		t.Fatal(err)
	}
	recs := sink.of(s.ID())
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	wantComp := enforcement.Composition{Profile: enforcement.ParallelUnanimous}.Resolved()
	for i, want := range []enforcement.Mode{enforcement.Enforce, enforcement.EvaluateOnly} {
		r := recs[i]
		if r.IdentityProvider != "hmac-sha256-k1" || r.Mode != want || r.Composition != wantComp || r.InterceptorsRegistered != 3 {
			t.Errorf("%s record states provider %q, mode %s, composition %+v, %d interceptors", r.InterceptionPoint, r.IdentityProvider, r.Mode, r.Composition, r.InterceptorsRegistered)
		}
	}
	if blocked.Outcome.Mode != enforcement.Enforce || blocked.Outcome.Proceed {
		t.Errorf("outcome mode %s proceed %v", blocked.Outcome.Mode, blocked.Outcome.Proceed)
	}

	null := newRemote(t, RemoteConfig{BaseURL: gone.URL, Sink: sink, Policy: GatewayPolicy{IdentityProvider: "null"}})
	null.Start(ctx, nil)
	if r := sink.of(null.ID()); len(r) != 1 || r[0].IdentityProvider != "" {
		t.Errorf("a declared null provider is recorded as null: %+v", r)
	}
}

// TestRemoteFailureRecordsLearnFromGateway: once the gateway answered,
// its records' policy wins over a RemoteConfig.Policy that disagrees.
func TestRemoteFailureRecordsLearnFromGateway(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{
		mode: enforcement.EvaluateOnly,
		interceptor: enforcement.InterceptorFunc(func(ctx context.Context, c enforcement.Context) (enforcement.Verdict, error) {
			if c.Point() == enforcement.PreToolCall {
				select {
				case <-time.After(time.Second):
				case <-ctx.Done():
				}
			}
			return enforcement.Allow(), nil
		}),
	})
	sink := &recordSink{}
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL, Sink: sink, Timeout: 200 * time.Millisecond, Policy: GatewayPolicy{
		IdentityProvider: "null", Composition: enforcement.Composition{Profile: enforcement.SequentialRunAll}, Interceptors: 9,
	}})
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := s.ToolCall(ctx, enforcement.ToolCall{ID: "1", Name: "t"}, func(context.Context, any) (any, bool, error) {
		t.Error("the tool ran although its pre_tool_call failed")
		return nil, false, nil
	})
	if err != nil || res.Blocked == nil {
		t.Fatalf("ToolCall = %+v, %v; want it blocked", res, err)
	}
	var local *enforcement.Record
	for _, r := range sink.of("") {
		if r.Sequence == -1 {
			local = r
		}
	}
	if local == nil {
		t.Fatal("no local failure record")
	}
	if local.IdentityProvider != enforcement.IdentityJCSSHA256 || local.Mode != enforcement.EvaluateOnly ||
		local.Composition.Profile != enforcement.SequentialFirstDeny || local.InterceptorsRegistered != 1 {
		t.Errorf("local record states provider %q, mode %s, profile %s, %d interceptors; want the gateway's", local.IdentityProvider, local.Mode, local.Composition.Profile, local.InterceptorsRegistered)
	}
}

func TestRemotePolicyValidated(t *testing.T) {
	for _, p := range []GatewayPolicy{
		{IdentityProvider: "jcs-other"},
		{IdentityProvider: "Bad Name"},
		{Mode: "audit"},
		{PointModes: map[enforcement.Point]enforcement.Mode{"nowhere": enforcement.Enforce}},
		{Composition: enforcement.Composition{Profile: "quorum"}},
		{Interceptors: -1},
	} {
		if _, err := NewRemoteSession(RemoteConfig{BaseURL: "http://127.0.0.1:1", Agent: testAgent(), Policy: p}); err == nil {
			t.Errorf("NewRemoteSession accepted Policy %+v", p)
		}
	}
}

// TestLocalFailureRecordsStateEmitterPolicy: a local session's projection
// failure is recorded under the emitter's declared provider, the mode at
// the point and its composition.
func TestLocalFailureRecordsStateEmitterPolicy(t *testing.T) {
	ctx := context.Background()
	id, err := enforcement.NewIdentityProvider("custom-id", func(enforcement.Context) (string, error) { return "x", nil })
	if err != nil {
		t.Fatal(err)
	}
	em, err := enforcement.NewEmitter(enforcement.Options{
		Interceptors: []enforcement.Registration{{Name: "a", Interceptor: policy(allowAll)}, {Name: "b", Interceptor: policy(allowAll)}},
		Composition:  enforcement.Composition{Profile: enforcement.SequentialRunAll},
		Mode:         enforcement.EvaluateOnly,
		Identity:     &id,
		RecordBuffer: 16,
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewLocalSession(LocalConfig{Emitter: em, Agent: testAgent()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Input(ctx, math.Inf(1), "user"); err == nil {
		t.Fatal("Input with +Inf was projected")
	}
	recs := em.TakeRecords()
	r := recs[len(recs)-1]
	if r.Verdict.Reason != enforcement.ReasonContextInvalid || r.IdentityProvider != "custom-id" || r.Mode != enforcement.EvaluateOnly ||
		r.Composition.Profile != enforcement.SequentialRunAll || r.InterceptorsRegistered != 2 {
		t.Errorf("local failure record = %+v", r)
	}
}

// TestToolResultLabels: ToolResult carries the post_tool_call verdict's
// result labels (§5.4), on a local and a remote session, and none for a
// result that was blocked.
func TestToolResultLabels(t *testing.T) {
	labelled := policy(func(c enforcement.Context) enforcement.Verdict {
		if c.Point() != enforcement.PostToolCall {
			return enforcement.Allow()
		}
		if tc, _ := c["tool_call"].(map[string]any); tc["name"] == "secret" {
			return enforcement.Verdict{Decision: enforcement.DecisionDeny, Reason: "policy:no", ResultLabels: []string{"pii"}}
		}
		return enforcement.Verdict{Decision: enforcement.DecisionAllow, ResultLabels: []string{"source:web", "untrusted"}}
	})
	local, _ := newSession(t, labelled)
	gw := newTestGateway(t, gatewayOptions{interceptor: labelled})
	remote := newRemote(t, RemoteConfig{BaseURL: gw.URL})
	ctx := context.Background()
	tool := func(context.Context, any) (any, bool, error) { return "page", false, nil }
	for name, s := range map[string]*Session{"local": local, "remote": remote} {
		if err := s.Start(ctx, nil); err != nil {
			t.Fatal(err)
		}
		res, err := s.ToolCall(ctx, enforcement.ToolCall{ID: "1", Name: "fetch"}, tool)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.ResultLabels, []string{"source:web", "untrusted"}) {
			t.Errorf("%s: labels %v", name, res.ResultLabels)
		}
		res, err = s.ToolCall(ctx, enforcement.ToolCall{ID: "2", Name: "secret"}, tool)
		if err != nil || res.Blocked == nil || res.ResultLabels != nil {
			t.Errorf("%s: blocked result %+v, %v", name, res, err)
		}
	}
}
