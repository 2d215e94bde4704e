package sdk

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/providers"
	"github.com/hooks-gateway/hooks-gateway/proxy"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// recordSink collects records in arrival order.
type recordSink struct {
	mu   sync.Mutex
	recs []*enforcement.Record
}

func (s *recordSink) WriteRecord(_ context.Context, r *enforcement.Record) error {
	s.mu.Lock()
	s.recs = append(s.recs, r)
	s.mu.Unlock()
	return nil
}

// of returns the records of session (every session when "").
func (s *recordSink) of(session string) []*enforcement.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*enforcement.Record
	for _, r := range s.recs {
		if session == "" || trailName(r.SessionID) == session {
			out = append(out, r)
		}
	}
	return out
}

// testGateway is a real gateway (proxy.Server with the mock model and an
// in-memory session store) on a real HTTP listener.
type testGateway struct {
	*httptest.Server
	records *recordSink
	// requests counts every HTTP request that reached the gateway.
	requests atomic.Int64
	// mu guards contexts, every context the policy saw.
	mu       sync.Mutex
	contexts []enforcement.Context
}

type gatewayOptions struct {
	interceptor enforcement.Interceptor // default: allow all
	mode        enforcement.Mode
	principals  map[proxy.KeyHash]proxy.Principal
}

func newTestGateway(t *testing.T, o gatewayOptions) *testGateway {
	t.Helper()
	g := &testGateway{records: &recordSink{}}
	inner := o.interceptor
	if inner == nil {
		inner = policy(allowAll)
	}
	logged := enforcement.InterceptorFunc(func(ctx context.Context, c enforcement.Context) (enforcement.Verdict, error) {
		g.mu.Lock()
		g.contexts = append(g.contexts, c)
		g.mu.Unlock()
		return inner.Intercept(ctx, c)
	})
	em, err := enforcement.NewEmitter(enforcement.Options{
		Interceptors: []enforcement.Registration{{Name: "test", Interceptor: logged}},
		Mode:         o.mode,
		Sink:         g.records,
		Timeout:      2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	router, err := providers.NewRouter([]providers.Route{{Patterns: []string{"*"}, Upstream: providers.NewMock("mock", nil)}})
	if err != nil {
		t.Fatal(err)
	}
	srv := proxy.New(proxy.Options{
		Policy: &proxy.Policy{Emitter: em, Router: router, Principals: o.principals},
		Store:  sessions.NewMemory(sessions.Options{}),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.requests.Add(1)
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

// seen returns the contexts the policy saw at point for session.
func (g *testGateway) seen(point enforcement.Point, session string) []enforcement.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []enforcement.Context
	for _, c := range g.contexts {
		if c.Point() == point && trailName(c.SessionID()) == session {
			out = append(out, c)
		}
	}
	return out
}

func testAgent() enforcement.Agent { return enforcement.Agent{ID: "agent-1", Framework: "go-test"} }

func newRemote(t *testing.T, cfg RemoteConfig) *Session {
	t.Helper()
	if cfg.Agent.ID == "" {
		cfg.Agent = testAgent()
	}
	s, err := NewRemoteSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openaiClient is the official OpenAI client routed through the session.
func openaiClient(g *testGateway, s *Session) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(g.URL+"/v1"),
		option.WithAPIKey("unused"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: s.Transport(nil)}),
	)
}

func recordPoints(recs []*enforcement.Record) []enforcement.Point {
	out := make([]enforcement.Point, len(recs))
	for i, r := range recs {
		out[i] = r.InterceptionPoint
	}
	return out
}

// checkTrail asserts the gateway's trail of one session: one agent_startup
// at sequence 0, gapless strictly increasing sequences, exactly one
// agent_shutdown, last.
func checkTrail(t *testing.T, recs []*enforcement.Record) {
	t.Helper()
	if len(recs) == 0 {
		t.Fatal("no records")
	}
	startups, shutdowns := 0, 0
	for i, r := range recs {
		if r.Sequence != int64(i) {
			t.Errorf("record %d (%s) has sequence %d", i, r.InterceptionPoint, r.Sequence)
		}
		switch r.InterceptionPoint {
		case enforcement.AgentStartup:
			startups++
		case enforcement.AgentShutdown:
			shutdowns++
		}
	}
	if recs[0].InterceptionPoint != enforcement.AgentStartup || startups != 1 {
		t.Errorf("want exactly one agent_startup, first: %v", recordPoints(recs))
	}
	if recs[len(recs)-1].InterceptionPoint != enforcement.AgentShutdown || shutdowns != 1 {
		t.Errorf("want exactly one agent_shutdown, last: %v", recordPoints(recs))
	}
}

func TestRemoteFullLoop(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{interceptor: policy(func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.PreToolCall {
			return enforcement.TransformTo("$target.city", "Paris")
		}
		return enforcement.Allow()
	})})
	local := &recordSink{}
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL, Sink: local})

	if err := s.Start(ctx, []string{"weather"}); err != nil {
		t.Fatal(err)
	}
	in, err := s.Input(ctx, "weather in Lyon?", "user")
	if err != nil || in != "weather in Lyon?" {
		t.Fatalf("Input = %v, %v", in, err)
	}
	// The model call goes through the gateway, which emits pre_model_call
	// and post_model_call in this session.
	client := openaiClient(gw, s)
	completion, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "mock",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(`/tool weather {"city":"Lyon"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := completion.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "weather" {
		t.Fatalf("model answered %+v", completion.Choices[0].Message)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(calls[0].Function.Arguments), &args); err != nil {
		t.Fatal(err)
	}
	var gotArgs any
	res, err := s.ToolCall(ctx, enforcement.ToolCall{ID: calls[0].ID, Name: "weather", Args: args}, func(_ context.Context, a any) (any, bool, error) {
		gotArgs = a
		return map[string]any{"temp": 21}, false, nil
	})
	if err != nil || res.Blocked != nil || !res.Invoked {
		t.Fatalf("ToolCall = %+v, %v", res, err)
	}
	if a, _ := gotArgs.(map[string]any); a["city"] != "Paris" {
		t.Fatalf("tool received %v, want the gateway's transform", gotArgs)
	}
	if v, _ := res.Value.(map[string]any); v["temp"] != json.Number("21") {
		t.Fatalf("tool result = %#v", res.Value)
	}
	out, err := s.Output(ctx, "It is 21 degrees in Paris.")
	if err != nil || out != "It is 21 degrees in Paris." {
		t.Fatalf("Output = %v, %v", out, err)
	}
	end, err := s.End(ctx, enforcement.ShutdownCompleted)
	if err != nil || !end.Proceed || end.Record.InterceptionPoint != enforcement.AgentShutdown {
		t.Fatalf("End = %+v, %v", end, err)
	}

	recs := gw.records.of(s.ID())
	checkTrail(t, recs)
	equalPoints(t, recordPoints(recs), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall, enforcement.PostModelCall,
		enforcement.PreToolCall, enforcement.PostToolCall, enforcement.Output, enforcement.AgentShutdown)
	if r := recs[4]; r.Verdict.Decision != enforcement.DecisionTransform || *r.InputIdentity == *r.EnforcedIdentity {
		t.Errorf("pre_tool_call record does not show the transform: %+v", r)
	}
	// The gateway's model-call contexts name the SDK's agent.
	pre := gw.seen(enforcement.PreModelCall, s.ID())
	if len(pre) != 1 {
		t.Fatalf("%d pre_model_call contexts in the session", len(pre))
	}
	if a, _ := pre[0]["agent"].(map[string]any); a["id"] != "agent-1" {
		t.Errorf("pre_model_call agent = %v", pre[0]["agent"])
	}
	// The post_tool_call context carries the arguments actually passed.
	post := gw.seen(enforcement.PostToolCall, s.ID())
	if tc := post[0]["tool_call"].(map[string]any); tc["args"].(map[string]any)["city"] != "Paris" {
		t.Errorf("post_tool_call args = %v", tc["args"])
	}
	// The sink saw the gateway's record of every SDK emission, as sent.
	mine := local.of(s.ID())
	equalPoints(t, recordPoints(mine), enforcement.AgentStartup, enforcement.Input,
		enforcement.PreToolCall, enforcement.PostToolCall, enforcement.Output, enforcement.AgentShutdown)
	for i, want := range []int64{0, 1, 4, 5, 6, 7} {
		if mine[i].Sequence != want || mine[i].IdentityProvider != enforcement.IdentityJCSSHA256 {
			t.Errorf("sink record %d: sequence %d provider %q, want %d", i, mine[i].Sequence, mine[i].IdentityProvider, want)
		}
	}
	// After End no model call escapes.
	if _, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "mock", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("model call after End = %v", err)
	}
}

func TestRemoteOutcomeContext(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{interceptor: policy(func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.Input {
			return enforcement.TransformTo("$target.content", "[redacted]")
		}
		return enforcement.Allow()
	}), principals: map[proxy.KeyHash]proxy.Principal{sha256.Sum256([]byte("acme-key")): {KeyID: "acme-key", AgentID: testAgent().ID, Tenant: "acme"}}})
	// A context may repeat its key's tenant; the gateway records the
	// tenant's session as "<tenant>/<id>".
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL, APIKey: "acme-key", Common: map[string]any{"tenant": map[string]any{"id": "acme"}}})
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	out, err := s.em.emit(ctx, enforcement.Input, enforcement.InputFields("my key is sk-1", "user"))
	if err != nil {
		t.Fatal(err)
	}
	c := out.Context
	if c.Sequence() != 1 || trailName(c.SessionID()) != "acme/"+s.ID() || c["spec"] != enforcement.SpecVersion || c.Point() != enforcement.Input {
		t.Errorf("outcome context envelope: %v", c)
	}
	if in := c["input"].(map[string]any); in["content"] != "[redacted]" || out.Target().(map[string]any)["content"] != "[redacted]" {
		t.Errorf("the enforced target must be written back into input: %v", c)
	}
	if out.Verdict.Transform == nil || out.Verdict.Transform.Value != "[redacted]" {
		t.Errorf("the outcome carries the full verdict: %+v", out.Verdict)
	}
	if ten := gw.seen(enforcement.Input, "acme/"+s.ID())[0]["tenant"]; ten == nil {
		t.Error("Common members were not sent")
	}
}

func TestRemoteToolDeny(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{interceptor: policy(func(c enforcement.Context) enforcement.Verdict {
		if tc, _ := c["tool_call"].(map[string]any); c.Point() == enforcement.PreToolCall && tc["name"] == "rm" {
			return enforcement.Deny("policy:no-rm", "rm is not allowed")
		}
		return enforcement.Allow()
	})})
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL})
	if err := s.Start(ctx, []string{"rm"}); err != nil {
		t.Fatal(err)
	}
	ran := false
	res, err := s.ToolCall(ctx, enforcement.ToolCall{ID: "1", Name: "rm", Args: map[string]any{"path": "/"}}, func(context.Context, any) (any, bool, error) {
		ran = true
		return nil, false, nil
	})
	if err != nil || ran || res.Invoked || res.Blocked == nil || res.Message() != "blocked: policy:no-rm" {
		t.Fatalf("denied pre_tool_call: res=%+v err=%v ran=%v", res, err, ran)
	}
	if rec := res.Blocked.Outcome.Record; rec.Sequence != 1 || trailName(rec.SessionID) != s.ID() {
		t.Errorf("the blocked outcome carries the gateway's record: %+v", rec)
	}
	if _, err := s.End(ctx, enforcement.ShutdownCompleted); err != nil {
		t.Fatal(err)
	}
	recs := gw.records.of(s.ID())
	checkTrail(t, recs)
	equalPoints(t, recordPoints(recs), enforcement.AgentStartup, enforcement.PreToolCall, enforcement.AgentShutdown)
}

func TestRemoteEvaluateOnlyProceeds(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{mode: enforcement.EvaluateOnly, interceptor: policy(func(enforcement.Context) enforcement.Verdict {
		return enforcement.Deny("policy:audit", "")
	})})
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL})
	if err := s.Start(ctx, nil); err != nil {
		t.Fatalf("evaluate_only startup deny must not block: %v", err)
	}
	ran := false
	res, err := s.ToolCall(ctx, enforcement.ToolCall{ID: "1", Name: "t"}, func(context.Context, any) (any, bool, error) {
		ran = true
		return "ok", false, nil
	})
	if err != nil || !ran || res.Blocked != nil || res.Value != "ok" {
		t.Fatalf("evaluate_only ToolCall = %+v, %v", res, err)
	}
}

func TestRemoteStartupDenyBlocksSession(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{interceptor: policy(func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.AgentStartup {
			return enforcement.Deny("policy:closed", "")
		}
		return enforcement.Allow()
	})})
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL})
	var blocked *BlockedError
	if err := s.Start(ctx, nil); !errors.As(err, &blocked) || blocked.Outcome.Verdict.Reason != "policy:closed" || blocked.Outcome.Proceed {
		t.Fatalf("Start = %v, want a BlockedError", err)
	}
	if _, err := s.Input(ctx, "hi", "user"); !errors.Is(err, ErrSessionBlocked) {
		t.Fatalf("Input after a startup deny = %v", err)
	}
	before := gw.requests.Load()
	client := openaiClient(gw, s)
	if _, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "mock", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}); !errors.Is(err, ErrSessionBlocked) {
		t.Fatalf("model call in a blocked session = %v", err)
	}
	if gw.requests.Load() != before {
		t.Fatal("a model call of a blocked session reached the gateway")
	}
	// Another host of the same session is refused by the gateway.
	other := newRemote(t, RemoteConfig{BaseURL: gw.URL, SessionID: s.ID()})
	if _, err := other.em.emit(ctx, enforcement.Input, enforcement.InputFields("hi", "user")); !errors.Is(err, ErrSessionBlocked) || !errors.Is(err, ErrSessionConflict) {
		t.Fatalf("emission into a blocked session = %v", err)
	}
	out, err := s.End(ctx, enforcement.ShutdownCompleted)
	if err != nil {
		t.Fatal(err)
	}
	if summary := out.Context["summary"].(map[string]any); summary["reason"] != enforcement.ShutdownError {
		t.Errorf("shutdown reason = %v, want error", summary["reason"])
	}
	recs := gw.records.of(s.ID())
	checkTrail(t, recs)
	equalPoints(t, recordPoints(recs), enforcement.AgentStartup, enforcement.AgentShutdown)
}

// checkLocalFailure asserts the SDK's fail-closed record.
func checkLocalFailure(t *testing.T, sink *recordSink, session string, point enforcement.Point, reason string) {
	t.Helper()
	recs := sink.of(session)
	if len(recs) != 1 {
		t.Fatalf("%d local records, want 1", len(recs))
	}
	r := recs[0]
	if r.InterceptionPoint != point || r.Verdict.Decision != enforcement.DecisionDeny || r.Verdict.Reason != reason ||
		r.Sequence != -1 || r.InputIdentity != nil || r.EnforcedIdentity != nil || r.DecidedBy != nil {
		t.Fatalf("local failure record = %+v", r)
	}
	// The test gateways and RemoteConfig.Policy's zero value agree: the
	// gateway's defaults.
	if r.IdentityProvider != enforcement.IdentityJCSSHA256 || r.Mode != enforcement.Enforce || r.Composition.Profile != enforcement.SequentialFirstDeny {
		t.Fatalf("local failure record states provider %q, mode %s, profile %s", r.IdentityProvider, r.Mode, r.Composition.Profile)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"identity_provider":"jcs-sha256"`, `"decided_by":null`, `"input_identity":null`, `"sequence":-1`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("record JSON lacks %s: %s", want, b)
		}
	}
}

func TestRemoteGatewayDownFailsClosed(t *testing.T) {
	ctx := context.Background()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	sink := &recordSink{}
	s := newRemote(t, RemoteConfig{BaseURL: gone.URL, Sink: sink})
	err := s.Start(ctx, []string{"t"})
	var blocked *BlockedError
	if !errors.As(err, &blocked) {
		t.Fatalf("Start against a closed gateway = %v, want a BlockedError", err)
	}
	if o := blocked.Outcome; o.Verdict.Reason != enforcement.ReasonInterceptorFailed || o.Proceed || o.Record == nil {
		t.Fatalf("fail-closed outcome = %+v", o)
	}
	if strings.Contains(blocked.Outcome.Verdict.Message, "127.0.0.1") {
		t.Errorf("the message names the failure type only: %q", blocked.Outcome.Verdict.Message)
	}
	checkLocalFailure(t, sink, s.ID(), enforcement.AgentStartup, enforcement.ReasonInterceptorFailed)
	// A tool guarded by a gateway that is gone does not run.
	gw := newTestGateway(t, gatewayOptions{})
	s2 := newRemote(t, RemoteConfig{BaseURL: gw.URL})
	if err := s2.Start(ctx, []string{"t"}); err != nil {
		t.Fatal(err)
	}
	gw.Close()
	ran := false
	res, err := s2.ToolCall(ctx, enforcement.ToolCall{ID: "1", Name: "t"}, func(context.Context, any) (any, bool, error) {
		ran = true
		return nil, false, nil
	})
	if err != nil || ran || res.Message() != "blocked: "+enforcement.ReasonInterceptorFailed {
		t.Fatalf("ToolCall with the gateway down: %+v %v ran=%v", res, err, ran)
	}
}

// slow is an interceptor that holds agent_startup until release is closed
// or its context ends.
func slow(release <-chan struct{}) enforcement.Interceptor {
	return enforcement.InterceptorFunc(func(ctx context.Context, c enforcement.Context) (enforcement.Verdict, error) {
		if c.Point() == enforcement.AgentStartup {
			select {
			case <-release:
			case <-ctx.Done():
				return enforcement.Verdict{}, ctx.Err()
			}
		}
		return enforcement.Allow(), nil
	})
}

func TestRemoteTimeoutFailsClosed(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	gw := newTestGateway(t, gatewayOptions{interceptor: slow(release)})
	sink := &recordSink{}
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL, Sink: sink, Timeout: 100 * time.Millisecond})
	began := time.Now()
	err := s.Start(context.Background(), nil)
	var blocked *BlockedError
	if !errors.As(err, &blocked) || blocked.Outcome.Verdict.Reason != enforcement.ReasonInterceptorTimeout {
		t.Fatalf("Start against a slow gateway = %v, want host_error:interceptor_timeout", err)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("the emit timeout took %s", d)
	}
	checkLocalFailure(t, sink, s.ID(), enforcement.AgentStartup, enforcement.ReasonInterceptorTimeout)
}

func TestRemoteCallerCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	gw := newTestGateway(t, gatewayOptions{interceptor: slow(release)})
	sink := &recordSink{}
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL, Sink: sink})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	err := s.Start(ctx, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a cancelled ctx = %v", err)
	}
	var blocked *BlockedError
	if errors.As(err, &blocked) {
		t.Fatal("a cancellation is not a verdict")
	}
	if n := len(sink.of("")); n != 0 {
		t.Fatalf("%d local records for a cancellation, want none", n)
	}
}

func TestRemoteSessionConflicts(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{})
	conflict := func(t *testing.T, err error, code string, sentinel error) {
		t.Helper()
		var ce *SessionConflictError
		if !errors.As(err, &ce) || ce.Code != code || !errors.Is(err, ErrSessionConflict) {
			t.Fatalf("err = %v, want a session conflict %s", err, code)
		}
		if sentinel != nil && !errors.Is(err, sentinel) {
			t.Fatalf("err = %v does not match %v", err, sentinel)
		}
	}
	t.Run("not_started", func(t *testing.T) {
		s := newRemote(t, RemoteConfig{BaseURL: gw.URL})
		_, err := s.em.emit(ctx, enforcement.Input, enforcement.InputFields("hi", "user"))
		conflict(t, err, CodeSessionNotStarted, ErrNotStarted)
	})
	t.Run("already_started", func(t *testing.T) {
		s := newRemote(t, RemoteConfig{BaseURL: gw.URL})
		if err := s.Start(ctx, nil); err != nil {
			t.Fatal(err)
		}
		twin := newRemote(t, RemoteConfig{BaseURL: gw.URL, SessionID: s.ID()})
		conflict(t, twin.Start(ctx, nil), CodeSessionAlreadyStarted, nil)
	})
	t.Run("ended_at_the_gateway", func(t *testing.T) {
		s := newRemote(t, RemoteConfig{BaseURL: gw.URL})
		if err := s.Start(ctx, nil); err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(gw.URL+"/v1/agent-hooks/sessions/"+s.ID()+"/end", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		_, err = s.Output(ctx, "late")
		conflict(t, err, CodeSessionEnded, ErrSessionEnded)
		_, err = s.End(ctx, enforcement.ShutdownCompleted)
		conflict(t, err, CodeSessionEnded, ErrSessionEnded)
		checkTrail(t, gw.records.of(s.ID()))
	})
	t.Run("blocked", func(t *testing.T) {
		gw := newTestGateway(t, gatewayOptions{interceptor: policy(func(c enforcement.Context) enforcement.Verdict {
			if c.Point() == enforcement.AgentStartup {
				return enforcement.Deny("policy:closed", "")
			}
			return enforcement.Allow()
		})})
		s := newRemote(t, RemoteConfig{BaseURL: gw.URL})
		_ = s.Start(ctx, nil)
		twin := newRemote(t, RemoteConfig{BaseURL: gw.URL, SessionID: s.ID()})
		_, err := twin.em.emit(ctx, enforcement.PreToolCall, enforcement.PreToolFields(enforcement.ToolCall{ID: "1", Name: "t"}))
		conflict(t, err, CodeSessionBlocked, ErrSessionBlocked)
	})
}

func TestRemoteAuth(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{principals: map[proxy.KeyHash]proxy.Principal{sha256.Sum256([]byte("gw-key")): {KeyID: "gw-key", AgentID: "billing-agent", ClientTurnPoints: true}}})
	sink := &recordSink{}
	bad := newRemote(t, RemoteConfig{BaseURL: gw.URL, APIKey: "wrong", Sink: sink})
	var blocked *BlockedError
	err := bad.Start(ctx, nil)
	if !errors.As(err, &blocked) || blocked.Outcome.Verdict.Reason != enforcement.ReasonInterceptorFailed ||
		blocked.Outcome.Verdict.Message != "agent-hooks gateway answered HTTP 401 (authentication_error)" {
		t.Fatalf("Start with a wrong key = %v", err)
	}
	checkLocalFailure(t, sink, bad.ID(), enforcement.AgentStartup, enforcement.ReasonInterceptorFailed)

	// The session's agent is the key's: the SDK names the same one.
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL, APIKey: "gw-key", Agent: enforcement.Agent{ID: "billing-agent", Framework: "go-test"}})
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// The transport adds the key when the request carries none.
	client := openai.NewClient(option.WithBaseURL(gw.URL+"/v1"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: s.Transport(nil)}))
	if _, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "mock", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.End(ctx, enforcement.ShutdownCompleted); err != nil {
		t.Fatal(err)
	}
	recs := gw.records.of(s.ID())
	checkTrail(t, recs)
	equalPoints(t, recordPoints(recs), enforcement.AgentStartup, enforcement.PreModelCall, enforcement.PostModelCall, enforcement.AgentShutdown)
	if a := gw.seen(enforcement.PreModelCall, s.ID())[0]["agent"].(map[string]any); a["id"] != "billing-agent" {
		t.Errorf("the principal names the agent: %v", a)
	}
}

func TestRemoteMalformedAnswers(t *testing.T) {
	const rec = `{"interception_point":"agent_startup","mode":"enforce","verdict":{"decision":"allow"},"input_identity":null,"enforced_identity":null,"identity_provider":"jcs-sha256","session_id":"s1","sequence":0,"decided_by":null,"composition":{"profile":"sequential/first_deny","on_approval":"stop"},"interceptors_registered":1}`
	cases := []struct {
		name   string
		status int
		body   string
	}{
		{"not json", 200, `<html>`},
		{"no proceed", 200, `{"mode":"enforce","verdict":{"decision":"allow"},"target":{},"record":` + rec + `}`},
		{"bad mode", 200, `{"proceed":true,"mode":"audit","verdict":{"decision":"allow"},"target":{},"record":` + rec + `}`},
		{"no record", 200, `{"proceed":true,"mode":"enforce","verdict":{"decision":"allow"},"target":{}}`},
		{"proceed contradicts deny", 200, `{"proceed":true,"mode":"enforce","verdict":{"decision":"deny","reason":"r"},"target":{},"record":` + rec + `}`},
		{"unknown decision", 200, `{"proceed":true,"mode":"enforce","verdict":{"decision":"maybe"},"target":{},"record":` + rec + `}`},
		{"record of another session", 200, `{"proceed":true,"mode":"enforce","verdict":{"decision":"allow"},"target":{},"record":` + strings.Replace(rec, `"s1"`, `"s2"`, 1) + `}`},
		{"409 without a session code", 409, `{"error":{"message":"x","type":"t","code":"conflict"}}`},
		{"503", 503, `{"error":{"message":"session store unavailable","type":"agent_hooks_host_error","code":"host_error:context_invalid"}}`},
		{"204", 204, ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			sink := &recordSink{}
			s := newRemote(t, RemoteConfig{BaseURL: srv.URL, SessionID: "s1", Sink: sink})
			var blocked *BlockedError
			if err := s.Start(context.Background(), nil); !errors.As(err, &blocked) || blocked.Outcome.Verdict.Reason != enforcement.ReasonInterceptorFailed {
				t.Fatalf("Start = %v, want a fail-closed deny", err)
			}
			if strings.Contains(blocked.Outcome.Verdict.Message, "store") || strings.Contains(blocked.Outcome.Verdict.Message, "html") {
				t.Errorf("the message quotes the answer: %q", blocked.Outcome.Verdict.Message)
			}
			checkLocalFailure(t, sink, "s1", enforcement.AgentStartup, enforcement.ReasonInterceptorFailed)
		})
	}
}

func TestRemoteProjectionFailure(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{})
	sink := &recordSink{}
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL, Sink: sink})
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	before := gw.requests.Load()
	_, err := s.Input(ctx, map[string]any{"x": math.NaN()}, "user")
	var pe *enforcement.ProjectionError
	if !errors.As(err, &pe) || pe.Sequence != -1 {
		t.Fatalf("Input with NaN = %v, want a ProjectionError", err)
	}
	if gw.requests.Load() != before {
		t.Error("an unrepresentable context was sent")
	}
	recs := sink.of(s.ID())
	if r := recs[len(recs)-1]; r.InterceptionPoint != enforcement.Input || r.Verdict.Reason != enforcement.ReasonContextInvalid || r.Sequence != -1 {
		t.Errorf("projection failure record = %+v", r)
	}
	if _, err := s.Output(ctx, "fine"); err != nil {
		t.Fatal(err)
	}
}

func TestRemoteConcurrentToolCalls(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{})
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL})
	if err := s.Start(ctx, []string{"t"}); err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.ToolCall(ctx, enforcement.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "t", Args: map[string]any{"i": i}}, func(_ context.Context, args any) (any, bool, error) {
				return args, false, nil
			})
			if err != nil || res.Blocked != nil {
				t.Errorf("ToolCall %d = %+v, %v", i, res, err)
			}
		}()
	}
	wg.Wait()
	if _, err := s.End(ctx, enforcement.ShutdownCompleted); err != nil {
		t.Fatal(err)
	}
	recs := gw.records.of(s.ID())
	if len(recs) != 2+2*n {
		t.Fatalf("%d records, want %d", len(recs), 2+2*n)
	}
	// Records arrive in completion order; sorted, the sequence is gapless.
	seen := make([]bool, len(recs))
	for _, r := range recs {
		if r.Sequence < 0 || r.Sequence >= int64(len(recs)) || seen[r.Sequence] {
			t.Fatalf("sequence %d duplicated or out of range", r.Sequence)
		}
		seen[r.Sequence] = true
	}
}

func TestNewRemoteSessionValidation(t *testing.T) {
	good := RemoteConfig{BaseURL: "http://localhost:8080", Agent: testAgent()}
	cases := []struct {
		name string
		edit func(*RemoteConfig)
	}{
		{"no base", func(c *RemoteConfig) { c.BaseURL = "" }},
		{"relative base", func(c *RemoteConfig) { c.BaseURL = "localhost:8080" }},
		{"ftp base", func(c *RemoteConfig) { c.BaseURL = "ftp://localhost" }},
		{"base with query", func(c *RemoteConfig) { c.BaseURL = "http://localhost?x=1" }},
		{"no agent id", func(c *RemoteConfig) { c.Agent.ID = "" }},
		{"bad framework", func(c *RemoteConfig) { c.Agent.Framework = "Go Test" }},
		{"session id with space", func(c *RemoteConfig) { c.SessionID = "a b" }},
		{"session id too long", func(c *RemoteConfig) { c.SessionID = strings.Repeat("a", 129) }},
		{"reserved common member", func(c *RemoteConfig) { c.Common = map[string]any{"sequence": 3} }},
		{"unrepresentable common", func(c *RemoteConfig) { c.Common = map[string]any{"x": math.Inf(1)} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.edit(&cfg)
			if _, err := NewRemoteSession(cfg); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	s, err := NewRemoteSession(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.ID()) != 32 {
		t.Errorf("default session id %q", s.ID())
	}
	r := s.em.(*remoteEmitter)
	if r.timeout != DefaultRemoteTimeout || r.emitURL != "http://localhost:8080/v1/agent-hooks/emit" {
		t.Errorf("defaults: timeout %s, url %s", r.timeout, r.emitURL)
	}
	s, _ = NewRemoteSession(RemoteConfig{BaseURL: "https://gw.example/prefix/", Agent: testAgent()})
	if u := s.em.(*remoteEmitter).emitURL; u != "https://gw.example/prefix/v1/agent-hooks/emit" {
		t.Errorf("emit url under a prefix = %s", u)
	}
}

// trailName is a gateway trail id less the incarnation a gateway on the
// memory store appends ("~" and incarnationLen hex digits).
func trailName(trail string) string {
	if n := len(trail) - incarnationLen - 1; n > 0 && trail[n] == '~' && isLowerHex(trail[n+1:]) {
		return trail[:n]
	}
	return trail
}

// A record names the session when its trail id is the id, the tenant's
// "<tenant>/<id>", or either with the incarnation a memory-store gateway
// appends; nothing else does.
func TestNamesSession(t *testing.T) {
	for _, c := range []struct {
		trail string
		want  bool
	}{
		{"s1", true},
		{"acme/s1", true},
		{"s1~0123456789ab", true},
		{"acme/s1~0123456789ab", true},
		{"s1~0123456789a", false},   // not an incarnation's length
		{"s1~0123456789AB", false},  // not lowercase hex
		{"xs1~0123456789ab", false}, // another id
		{"/s1", false},              // no tenant
		{"s1~0123456789ab~0123456789ab", false},
	} {
		if got := namesSession(c.trail, "s1"); got != c.want {
			t.Errorf("namesSession(%q, s1) = %v, want %v", c.trail, got, c.want)
		}
	}
}
