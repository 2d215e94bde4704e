package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/metrics/metricstest"
	"github.com/hooks-gateway/hooks-gateway/sessions"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// scrape serves m over real HTTP and parses the text exposition.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func rec(point enforcement.Point, mode enforcement.Mode, d enforcement.Decision, reason string) *enforcement.Record {
	return &enforcement.Record{InterceptionPoint: point, Mode: mode, Verdict: enforcement.Verdict{Decision: d, Reason: reason}}
}

// reason_class keeps host_error reasons and configured policy reasons,
// folds every other reason into policy, and never mints a series from an
// unexpected value.
func TestEmissionLabels(t *testing.T) {
	m := New(Options{PolicyReasons: []string{"pii_detected", "pii_detected", "host_error:x", "none"}, NoRuntimeCollectors: true})
	tru := true
	for _, r := range []*enforcement.Record{
		rec(enforcement.PreModelCall, enforcement.Enforce, enforcement.DecisionDeny, "pii_detected"),
		rec(enforcement.PreModelCall, enforcement.Enforce, enforcement.DecisionDeny, "pii_detected"),
		rec(enforcement.PreModelCall, enforcement.Enforce, enforcement.DecisionDeny, "customer 42 said something"),
		rec(enforcement.PreModelCall, enforcement.Enforce, enforcement.DecisionDeny, "host_error:made_up"),
		rec(enforcement.PreToolCall, enforcement.Enforce, enforcement.DecisionDeny, enforcement.ReasonApprovalUnresolved),
		rec(enforcement.PreToolCall, enforcement.EvaluateOnly, enforcement.DecisionDeny, "pii_detected"),
		rec(enforcement.PreToolCall, enforcement.EvaluateOnly, enforcement.DecisionTransform, ""), // not applied
		rec(enforcement.Output, enforcement.Enforce, enforcement.DecisionTransform, ""),
		rec("bogus_point", "bogus_mode", "bogus_decision", ""),
		{InterceptionPoint: enforcement.PreToolCall, Mode: enforcement.Enforce, Verdict: enforcement.Allow(), ResolvedBy: enforcement.ResolvedByApproval, FoldTruncated: &tru},
		{InterceptionPoint: enforcement.PreToolCall, Mode: enforcement.Enforce, Verdict: enforcement.Deny("no", ""), ResolvedBy: enforcement.ResolvedByRejection},
		{InterceptionPoint: enforcement.PreToolCall, Mode: enforcement.Enforce, Verdict: enforcement.Deny("no", ""), ResolvedBy: enforcement.ResolvedByRejection},
	} {
		m.ObserveEmission(r, time.Millisecond)
	}
	m.ObserveEmission(rec(enforcement.Input, enforcement.Enforce, enforcement.DecisionDeny, enforcement.ReasonContextInvalid), 0)

	fams := scrape(t, m)
	key := func(point, decision, mode, reason string) string {
		return "decision=" + decision + ",mode=" + mode + ",point=" + point + ",reason_class=" + reason
	}
	metricstest.WantSeries(t, fams, "agent_hooks_emissions_total", map[string]float64{
		key("pre_model_call", "deny", "enforce", "pii_detected"):                  2,
		key("pre_model_call", "deny", "enforce", "policy"):                        1,
		key("pre_model_call", "deny", "enforce", "host_error:other"):              1,
		key("pre_tool_call", "deny", "enforce", "host_error:approval_unresolved"): 1,
		key("pre_tool_call", "deny", "evaluate_only", "pii_detected"):             1,
		key("pre_tool_call", "transform", "evaluate_only", "none"):                1,
		key("output", "transform", "enforce", "none"):                             1,
		key("unknown", "unknown", "unknown", "none"):                              1,
		key("pre_tool_call", "allow", "enforce", "none"):                          1,
		key("pre_tool_call", "deny", "enforce", "policy"):                         2,
		key("input", "deny", "enforce", "host_error:context_invalid"):             1,
	})
	metricstest.WantSeries(t, fams, "agent_hooks_emission_duration_seconds", map[string]float64{
		"point=pre_model_call": 4, "point=pre_tool_call": 6, "point=output": 1, "point=unknown": 1,
	})
	metricstest.WantSeries(t, fams, "agent_hooks_transforms_applied_total", map[string]float64{"point=output": 1})
	metricstest.WantSeries(t, fams, "agent_hooks_approvals_total", map[string]float64{"outcome=approval": 1, "outcome=rejection": 2})
	metricstest.WantSeries(t, fams, "agent_hooks_fold_truncated_total", map[string]float64{"": 1})
}

// Interceptor failures through a real emitter: a timeout, an error, a
// panic and an invalid verdict each count under their own reason, under
// the registration name or #<index>.
func TestInterceptorFailures(t *testing.T) {
	m := New(Options{NoRuntimeCollectors: true})
	fn := func(f func(ctx context.Context) (enforcement.Verdict, error)) enforcement.Interceptor {
		return enforcement.InterceptorFunc(func(ctx context.Context, _ enforcement.Context) (enforcement.Verdict, error) { return f(ctx) })
	}
	allow := fn(func(context.Context) (enforcement.Verdict, error) { return enforcement.Allow(), nil })
	failing := map[string]enforcement.Interceptor{
		enforcement.ReasonInterceptorTimeout: fn(func(ctx context.Context) (enforcement.Verdict, error) {
			<-ctx.Done()
			return enforcement.Verdict{}, ctx.Err()
		}),
		enforcement.ReasonInterceptorFailed: fn(func(context.Context) (enforcement.Verdict, error) { return enforcement.Verdict{}, errors.New("down") }),
		"panic":                             fn(func(context.Context) (enforcement.Verdict, error) { panic("boom") }),
		enforcement.ReasonVerdictInvalid: fn(func(context.Context) (enforcement.Verdict, error) {
			return enforcement.Deny("host_error:forged", ""), nil
		}),
	}
	for _, name := range []string{enforcement.ReasonInterceptorTimeout, enforcement.ReasonInterceptorFailed, "panic", enforcement.ReasonVerdictInvalid} {
		em, err := enforcement.NewEmitter(enforcement.Options{
			Interceptors: []enforcement.Registration{{Name: "guard", Interceptor: allow}, {Interceptor: failing[name]}, {Name: "after", Interceptor: allow}},
			Timeout:      200 * time.Millisecond,
			Observer:     m,
		})
		if err != nil {
			t.Fatal(err)
		}
		b := &enforcement.Builder{Agent: enforcement.Agent{ID: "a", Framework: "test"}, SessionID: "s", Sequence: &enforcement.Counter{}}
		c, err := b.Build(context.Background(), enforcement.Input, enforcement.InputFields("hi", "user"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := em.Emit(context.Background(), c); err == nil {
			t.Fatalf("%s: emission proceeded", name)
		}
	}
	fams := scrape(t, m)
	metricstest.WantSeries(t, fams, "agent_hooks_interceptor_failures_total", map[string]float64{
		"interceptor=#1,reason=host_error:interceptor_timeout": 1,
		"interceptor=#1,reason=host_error:interceptor_failed":  2, // the error and the panic
		"interceptor=#1,reason=host_error:verdict_invalid":     1,
	})
	metricstest.WantSeries(t, fams, "agent_hooks_interceptor_verdicts_total", map[string]float64{
		"decision=allow,interceptor=guard,point=input": 4,
		"decision=deny,interceptor=#1,point=input":     4,
	})
	metricstest.WantSeries(t, fams, "agent_hooks_interceptor_duration_seconds", map[string]float64{
		"interceptor=guard,point=input": 4, "interceptor=#1,point=input": 4,
	})
	metricstest.WantSeries(t, fams, "agent_hooks_fold_truncated_total", map[string]float64{"": 4})
	metricstest.WantSeries(t, fams, "agent_hooks_emissions_total", map[string]float64{
		"decision=deny,mode=enforce,point=input,reason_class=host_error:interceptor_timeout": 1,
		"decision=deny,mode=enforce,point=input,reason_class=host_error:interceptor_failed":  2,
		"decision=deny,mode=enforce,point=input,reason_class=host_error:verdict_invalid":     1,
	})
}

// The same index under a new name (a reloaded policy) gets its own series.
func TestInterceptorRenamed(t *testing.T) {
	m := New(Options{NoRuntimeCollectors: true})
	for _, name := range []string{"a", "b", "a", ""} {
		m.ObserveInterceptor(enforcement.InterceptorObservation{Index: 0, Name: name, Point: enforcement.Output, Mode: enforcement.Enforce, Decision: enforcement.DecisionAllow})
	}
	m.ObserveInterceptor(enforcement.InterceptorObservation{Index: 100000, Name: "far", Point: enforcement.Output, Decision: enforcement.DecisionAllow})
	metricstest.WantSeries(t, scrape(t, m), "agent_hooks_interceptor_verdicts_total", map[string]float64{
		"decision=allow,interceptor=a,point=output":   2,
		"decision=allow,interceptor=b,point=output":   1,
		"decision=allow,interceptor=#0,point=output":  1,
		"decision=allow,interceptor=far,point=output": 1,
	})
}

type sinkFunc func() error

func (f sinkFunc) WriteRecord(context.Context, *enforcement.Record) error { return f() }

type droppingSink struct {
	sinkFunc
	n int64
}

func (s *droppingSink) Dropped() int64 { return s.n }

func TestRecordSinks(t *testing.T) {
	m := New(Options{NoRuntimeCollectors: true})
	ok := m.InstrumentSink("stdout", sinkFunc(func() error { return nil }))
	bad := m.InstrumentSink("jsonl", sinkFunc(func() error { return errors.New("disk full") }))
	panicky := m.InstrumentSink("redis", sinkFunc(func() error { panic("x") }))
	queue := &droppingSink{sinkFunc: func() error { return nil }}
	q := m.InstrumentSink("http", queue)
	r := &enforcement.Record{}
	for range 3 {
		ok.WriteRecord(context.Background(), r)
	}
	bad.WriteRecord(context.Background(), r)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the sink's panic was swallowed")
			}
		}()
		panicky.WriteRecord(context.Background(), r)
	}()
	q.WriteRecord(context.Background(), r)
	queue.n = 7
	m.RecordsDropped("kafka", 2)
	m.RecordsDropped("kafka", 0)
	m.RecordWritten("kafka", nil)
	m.RecordWritten("kafka", errors.New("x"))
	fams := scrape(t, m)
	metricstest.WantSeries(t, fams, "agent_hooks_records_total", map[string]float64{
		"result=ok,sink=stdout": 3, "result=error,sink=stdout": 0,
		"result=ok,sink=jsonl": 0, "result=error,sink=jsonl": 1,
		"result=ok,sink=redis": 0, "result=error,sink=redis": 1,
		"result=ok,sink=http": 1, "result=error,sink=http": 0,
		"result=ok,sink=kafka": 1, "result=error,sink=kafka": 1,
	})
	metricstest.WantSeries(t, fams, "agent_hooks_records_dropped_total", map[string]float64{"sink=http": 7, "sink=kafka": 2})
}

// The store decorator counts failures per operation, not answers (unknown,
// foreign or sealed session, invalid id); sessions_active reads the store
// at scrape time.
func TestStoreMemory(t *testing.T) {
	m := New(Options{NoRuntimeCollectors: true})
	s := m.InstrumentStore(sessions.NewMemory(sessions.Options{}))
	ctx := context.Background()
	owner := sessions.Owner{KeyID: "k"}
	key := func(id string) sessions.Key { return sessions.Key{Tenant: "t", ID: id} }
	for _, id := range []string{"a", "b", "c"} {
		if _, _, err := s.Begin(ctx, key(id), owner); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.End(ctx, key("c"), owner); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(ctx, key("nope")); !errors.Is(err, sessions.ErrUnknownSession) {
		t.Fatal(err)
	}
	if _, _, err := s.Begin(ctx, key("bad id"), owner); !errors.Is(err, sessions.ErrInvalidSessionID) {
		t.Fatal(err)
	}
	if _, _, err := s.Begin(ctx, key("a"), sessions.Owner{KeyID: "other"}); !errors.Is(err, sessions.ErrForeignSession) {
		t.Fatal(err)
	}
	if _, err := s.Seal(ctx, key("a")); !errors.Is(err, sessions.ErrSessionNotEnded) {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, key("c"), "call", time.Minute); !errors.Is(err, sessions.ErrSessionEnded) {
		t.Fatal(err)
	}
	if err := s.OpenToolCall(ctx, key("a"), "bad tool id"); !errors.Is(err, sessions.ErrInvalidToolCallID) {
		t.Fatal(err)
	}
	fams := scrape(t, m)
	metricstest.WantSeries(t, fams, "agent_hooks_sessions_active", map[string]float64{"": 2})
	metricstest.WantSeries(t, fams, "hooks_gateway_session_store_errors_total", map[string]float64{
		"op=begin": 0, "op=admit": 0, "op=next": 0, "op=acquire": 0, "op=release": 0, "op=in_flight": 0,
		"op=end": 0, "op=seal": 0, "op=status": 0, "op=block": 0, "op=claim_expired": 0,
		"op=open_tool_call": 0, "op=close_tool_call": 0, "op=begin_call": 0, "op=inputs_judged": 0, "op=next_marking_inputs": 0,
	})
}

// With a real Redis: sessions_active is the idle index's size; with Redis
// gone, every operation's failure is counted and the gauge is left out
// rather than reported wrong.
func TestStoreRedis(t *testing.T) {
	rs := redistest.StartServer(t)
	rstore, err := sessions.NewRedis(context.Background(), sessions.RedisOptions{URL: rs.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer rstore.Close()
	m := New(Options{NoRuntimeCollectors: true})
	s := m.InstrumentStore(rstore)
	ctx := context.Background()
	owner := sessions.Owner{KeyID: "k"}
	key := func(id string) sessions.Key { return sessions.Key{Tenant: "t", ID: id} }
	for _, id := range []string{"a", "b", "c"} {
		if _, _, err := s.Begin(ctx, key(id), owner); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.End(ctx, key("a"), owner); err != nil {
		t.Fatal(err)
	}
	metricstest.WantSeries(t, scrape(t, m), "agent_hooks_sessions_active", map[string]float64{"": 2})

	rs.Kill()
	b := key("b")
	s.Begin(ctx, key("d"), owner)
	s.Admit(ctx, b)
	s.Next(ctx, b)
	s.Next(ctx, b)
	s.Acquire(ctx, b, "call", time.Minute)
	s.Release(ctx, b, "call")
	s.InFlight(ctx, b)
	s.End(ctx, b, owner)
	s.Seal(ctx, b)
	s.Status(ctx, b)
	s.Block(ctx, b)
	s.ClaimExpired(ctx, 10)
	s.OpenToolCall(ctx, b, "tool")
	s.CloseToolCall(ctx, b, "tool")
	s.BeginCall(ctx, b, owner, sessions.Call{ID: "call", Lease: time.Minute})
	s.InputsJudged(ctx, b, []string{"input"})
	s.NextMarkingInputs(ctx, b, []string{"input"})
	fams := scrape(t, m)
	metricstest.WantSeries(t, fams, "agent_hooks_sessions_active", map[string]float64{})
	metricstest.WantSeries(t, fams, "hooks_gateway_session_store_errors_total", map[string]float64{
		"op=begin": 1, "op=admit": 1, "op=next": 2, "op=acquire": 1, "op=release": 1, "op=in_flight": 1,
		"op=end": 1, "op=seal": 1, "op=status": 1, "op=block": 1, "op=claim_expired": 1,
		"op=open_tool_call": 1, "op=close_tool_call": 1, "op=begin_call": 1, "op=inputs_judged": 1, "op=next_marking_inputs": 1,
	})
}

func TestPolicyAndGateway(t *testing.T) {
	m := New(Options{})
	m.PolicyLoaded("v1", false)
	m.PolicyLoaded("v2", true)
	m.PolicyLoaded("v2", true)
	m.ReloadFailed()
	m.ObserveRequest("/v1/chat/completions", "chat_completions", 200, true, 3*time.Second, 2*time.Second)
	m.ObserveRequest("/v1/chat/completions", "chat_completions", 499, false, time.Second, 2*time.Second) // never negative
	m.ObserveUpstream("openai", StatusCode(429), time.Second)
	m.ObserveUpstream("openai", UpstreamTimeout, time.Second)
	m.ObserveStreamBuffer(5000)
	m.StreamBufferOverflow()
	fams := scrape(t, m)
	metricstest.WantSeries(t, fams, "agent_hooks_policy_info", map[string]float64{"version=v2": 1})
	metricstest.WantSeries(t, fams, "agent_hooks_policy_reloads_total", map[string]float64{"result=ok": 2, "result=error": 1})
	metricstest.WantSeries(t, fams, "hooks_gateway_requests_total", map[string]float64{
		"api=chat_completions,code=200,route=/v1/chat/completions": 1, "api=chat_completions,code=499,route=/v1/chat/completions": 1,
	})
	metricstest.WantSeries(t, fams, "hooks_gateway_upstream_requests_total", map[string]float64{
		"code=429,upstream=openai": 1, "code=timeout,upstream=openai": 1,
	})
	h := fams["hooks_gateway_overhead_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 1 {
		t.Errorf("overhead count %d sum %v, want 2 and 1 s", h.GetSampleCount(), h.GetSampleSum())
	}
	metricstest.WantSeries(t, fams, "hooks_gateway_stream_buffer_bytes", map[string]float64{"": 1})
	metricstest.WantSeries(t, fams, "hooks_gateway_stream_buffer_overflows_total", map[string]float64{"": 1})
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
	// Two Metrics never share a series.
	if other := scrape(t, New(Options{NoRuntimeCollectors: true})); len(metricstest.Series(other, "hooks_gateway_requests_total")) != 0 {
		t.Error("a fresh Metrics reports another's requests")
	}
}

// The observer's hot path allocates nothing once a series is resolved.
func TestObserverAllocs(t *testing.T) {
	m := New(Options{PolicyReasons: []string{"pii"}, NoRuntimeCollectors: true})
	r := rec(enforcement.PostModelCall, enforcement.Enforce, enforcement.DecisionTransform, "pii")
	o := enforcement.InterceptorObservation{Index: 0, Name: "redact", Point: enforcement.PostModelCall, Mode: enforcement.Enforce,
		Decision: enforcement.DecisionDeny, Reason: enforcement.ReasonInterceptorTimeout, Duration: time.Millisecond}
	m.ObserveEmission(r, time.Millisecond)
	m.ObserveInterceptor(o)
	if n := testing.AllocsPerRun(1000, func() {
		m.ObserveEmission(r, time.Millisecond)
		m.ObserveInterceptor(o)
	}); n != 0 {
		t.Errorf("%v allocations per observation", n)
	}
}
