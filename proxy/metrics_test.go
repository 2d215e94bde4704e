package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/metrics/metricstest"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// scrape GETs /metrics and parses the text exposition.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET /metrics Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// flakyStore fails Begin and BeginCall for one session id, as a store
// that lost its backend would.
type flakyStore struct {
	*sessions.Memory
	failID string
}

func (s *flakyStore) Begin(ctx context.Context, k sessions.Key, o sessions.Owner) (bool, sessions.Status, error) {
	if k.ID == s.failID {
		return false, sessions.Status{}, errors.New("redis: connection refused")
	}
	return s.Memory.Begin(ctx, k, o)
}

func (s *flakyStore) BeginCall(ctx context.Context, k sessions.Key, o sessions.Owner, c sessions.Call) (sessions.CallStart, error) {
	if k.ID == s.failID {
		return sessions.CallStart{}, errors.New("redis: connection refused")
	}
	return s.Memory.BeginCall(ctx, k, o, c)
}

// metricsUpstream answers by keyword in the request: boom → HTTP 500;
// leak → a reply the policy denies; friend → a reply the policy
// transforms; big → a stream over the gateway's buffer; otherwise a
// plain reply, streamed when asked.
func metricsUpstream(w http.ResponseWriter, _ *http.Request, body []byte) {
	b := string(body)
	reply := "all good"
	switch {
	case strings.Contains(b, "boom"):
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"upstream exploded"}}`)
		return
	case strings.Contains(b, "leak"):
		reply = "the SECRET is out"
	case strings.Contains(b, "friend"):
		reply = "Hello FRIEND"
	}
	if strings.Contains(b, `"stream":true`) {
		w.Header().Set("Content-Type", "text/event-stream")
		n := 1
		if strings.Contains(b, "big") {
			n = 200 // ~40 KiB, over the 8 KiB buffer
		}
		for range n {
			io.WriteString(w, "data: "+chunk(`{"content":"`+reply+` "}`, "")+"\n\n")
		}
		io.WriteString(w, "data: "+chunk(`{}`, "stop")+"\n\ndata: [DONE]\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"chatcmpl-m","object":"chat.completion","created":1700000000,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"`+reply+`"},"finish_reason":"stop"}]}`)
}

// metricsPolicy: pre_model_call over a "slow" message outlives the
// interceptor timeout; post_model_call denies SECRET and rewrites FRIEND.
func metricsPolicy(c enforcement.Context) enforcement.Verdict {
	switch c.Point() {
	case enforcement.PreModelCall:
		if strings.Contains(fmt.Sprint(c["messages"]), "slow") {
			time.Sleep(time.Second)
		}
	case enforcement.PostModelCall:
		resp, _ := c.Target().(map[string]any)
		s, _ := resp["content"].(string)
		switch {
		case strings.Contains(s, "SECRET"):
			return enforcement.Deny("leak", "credentials in the answer")
		case strings.Contains(s, "FRIEND"):
			return enforcement.TransformTo("$target.content", strings.ReplaceAll(s, "FRIEND", "friend"))
		}
	}
	return enforcement.Allow()
}

// TestMetricsExact drives scripted traffic through a real gateway and
// checks the exact series /metrics reports for it.
func TestMetricsExact(t *testing.T) {
	up := newUpstream(t, metricsUpstream)
	g := newGateway(t, gatewayConfig{
		upstream:         up.URL,
		policy:           metricsPolicy,
		buffer:           8 << 10,
		interceptTimeout: 250 * time.Millisecond,
		store:            &flakyStore{Memory: sessions.NewMemory(sessions.Options{}), failID: "broken"},
	})

	type call struct {
		name    string
		text    string
		stream  bool
		session string
		status  int
	}
	calls := []call{
		{"allowed 1", "hello", false, "", 200},
		{"allowed 2", "hello", false, "", 200},
		{"allowed 3", "hello", false, "", 200},
		{"denied post 1", "leak it", false, "", 403},
		{"denied post 2", "leak it", false, "", 403},
		{"transformed", "hi friend", false, "", 200},
		{"interceptor timeout", "slow please", false, "", 504},
		{"stream over buffer", "big", true, "", 503},
		{"upstream 500", "boom", false, "", 502},
		{"store error", "hello", false, "broken", 503},
		{"stream", "hello", true, "", 200},
		{"managed session", "hello", false, "s-1", 200},
	}
	for _, c := range calls {
		h := map[string]string{}
		if c.session != "" {
			h[HeaderSession] = c.session
		}
		status, _, body := g.post(t, chatBody(c.text, c.stream), h)
		if status != c.status {
			t.Fatalf("%s: status %d, want %d: %s", c.name, status, c.status, body)
		}
	}

	fams := scrape(t, g.URL)
	em := func(point, decision, reason string) string {
		return "decision=" + decision + ",mode=enforce,point=" + point + ",reason_class=" + reason
	}
	metricstest.WantSeries(t, fams, "agent_hooks_emissions_total", map[string]float64{
		em("agent_startup", "allow", "none"):                              11,
		em("agent_startup", "deny", "host_error:context_invalid"):         1, // store down
		em("input", "allow", "none"):                                      11,
		em("pre_model_call", "allow", "none"):                             10,
		em("pre_model_call", "deny", "host_error:interceptor_timeout"):    1,
		em("post_model_call", "allow", "none"):                            5,
		em("post_model_call", "deny", "policy"):                           2,
		em("post_model_call", "transform", "none"):                        1,
		em("post_model_call", "deny", "host_error:streaming_unsupported"): 1,
		em("output", "allow", "none"):                                     6,
		em("agent_shutdown", "allow", "none"):                             10, // the managed session is still open
	})
	// Every record but the host failure was timed.
	metricstest.WantSeries(t, fams, "agent_hooks_emission_duration_seconds", map[string]float64{
		"point=agent_startup": 11, "point=input": 11, "point=pre_model_call": 11,
		"point=post_model_call": 9, "point=output": 6, "point=agent_shutdown": 10,
	})
	iv := func(point, decision string) string {
		return "decision=" + decision + ",interceptor=test,point=" + point
	}
	metricstest.WantSeries(t, fams, "agent_hooks_interceptor_verdicts_total", map[string]float64{
		iv("agent_startup", "allow"):       11,
		iv("input", "allow"):               11,
		iv("pre_model_call", "allow"):      10,
		iv("pre_model_call", "deny"):       1,
		iv("post_model_call", "allow"):     5,
		iv("post_model_call", "deny"):      2,
		iv("post_model_call", "transform"): 1,
		iv("output", "allow"):              6,
		iv("agent_shutdown", "allow"):      10,
	})
	metricstest.WantSeries(t, fams, "agent_hooks_interceptor_duration_seconds", map[string]float64{
		"interceptor=test,point=agent_startup": 11, "interceptor=test,point=input": 11,
		"interceptor=test,point=pre_model_call": 11, "interceptor=test,point=post_model_call": 8,
		"interceptor=test,point=output": 6, "interceptor=test,point=agent_shutdown": 10,
	})
	metricstest.WantSeries(t, fams, "agent_hooks_interceptor_failures_total", map[string]float64{
		"interceptor=test,reason=host_error:interceptor_timeout": 1,
	})
	metricstest.WantSeries(t, fams, "agent_hooks_transforms_applied_total", map[string]float64{"point=post_model_call": 1})
	metricstest.WantSeries(t, fams, "agent_hooks_fold_truncated_total", map[string]float64{"": 0})
	metricstest.WantSeries(t, fams, "agent_hooks_approvals_total", map[string]float64{})
	records := float64(len(g.records.all()))
	if records != 59 {
		t.Errorf("%v records written, want 59", records)
	}
	metricstest.WantSeries(t, fams, "agent_hooks_records_total", map[string]float64{"result=ok,sink=test": 59, "result=error,sink=test": 0})
	metricstest.WantSeries(t, fams, "agent_hooks_records_dropped_total", map[string]float64{})
	metricstest.WantSeries(t, fams, "agent_hooks_sessions_active", map[string]float64{"": 1})
	metricstest.WantSeries(t, fams, "agent_hooks_policy_info", map[string]float64{"version=unknown": 1})
	metricstest.WantSeries(t, fams, "agent_hooks_policy_reloads_total", map[string]float64{"result=ok": 0, "result=error": 0})

	const chat, api = "route=/v1/chat/completions", "api=chat_completions,"
	metricstest.WantSeries(t, fams, "hooks_gateway_requests_total", map[string]float64{
		api + "code=200," + chat: 6, api + "code=403," + chat: 2, api + "code=502," + chat: 1, api + "code=503," + chat: 2, api + "code=504," + chat: 1,
	})
	metricstest.WantSeries(t, fams, "hooks_gateway_request_duration_seconds", map[string]float64{
		chat + ",stream=false": 10, chat + ",stream=true": 2,
	})
	metricstest.WantSeries(t, fams, "hooks_gateway_overhead_seconds", map[string]float64{chat: 12})
	metricstest.WantSeries(t, fams, "hooks_gateway_upstream_requests_total", map[string]float64{
		"code=200,upstream=test-upstream": 9, "code=500,upstream=test-upstream": 1,
	})
	metricstest.WantSeries(t, fams, "hooks_gateway_upstream_duration_seconds", map[string]float64{"upstream=test-upstream": 10})
	metricstest.WantSeries(t, fams, "hooks_gateway_stream_buffer_bytes", map[string]float64{"": 1})
	metricstest.WantSeries(t, fams, "hooks_gateway_stream_buffer_overflows_total", map[string]float64{"": 1})
	metricstest.WantSeries(t, fams, "hooks_gateway_session_store_errors_total", map[string]float64{
		"op=begin_call": 1, "op=begin": 0, "op=next": 0, "op=end": 0, "op=status": 0, "op=block": 0, "op=claim_expired": 0,
		"op=admit": 0, "op=acquire": 0, "op=release": 0, "op=in_flight": 0, "op=seal": 0, "op=open_tool_call": 0, "op=close_tool_call": 0, "op=inputs_judged": 0, "op=next_marking_inputs": 0,
	})

	// The first scrape is counted by route pattern; a reload shows in the
	// reload counter and the info gauge; ending the managed session (a
	// pattern with the id in it) is counted by pattern, not by path.
	g.srv.SetPolicy(&Policy{Emitter: g.srv.Policy().Emitter, Router: g.srv.Policy().Router, Version: "v2"})
	g.srv.ReloadFailed()
	resp, err := http.Post(g.URL+"/v1/agent-hooks/sessions/s-1/end", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = http.Get(g.URL + "/no/such/path")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	fams = scrape(t, g.URL)
	metricstest.WantSeries(t, fams, "agent_hooks_policy_info", map[string]float64{"version=v2": 1})
	metricstest.WantSeries(t, fams, "agent_hooks_policy_reloads_total", map[string]float64{"result=ok": 1, "result=error": 1})
	metricstest.WantSeries(t, fams, "agent_hooks_sessions_active", map[string]float64{"": 0})
	got := metricstest.Series(fams, "hooks_gateway_requests_total")
	for k, v := range map[string]float64{
		"api=none,code=200,route=/metrics":                          1,
		"api=none,code=200,route=/v1/agent-hooks/sessions/{id}/end": 1,
		"api=none,code=404,route=unmatched":                         1,
	} {
		if got[k] != v {
			t.Errorf("hooks_gateway_requests_total{%s} = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}

// An evaluate-only gateway's denies are labelled mode="evaluate_only":
// the request proceeds, and the enforced deny rate stays zero.
func TestMetricsEvaluateOnly(t *testing.T) {
	up := newUpstream(t, metricsUpstream)
	g := newGateway(t, gatewayConfig{upstream: up.URL, policy: metricsPolicy, mode: enforcement.EvaluateOnly})
	if status, _, body := g.post(t, chatBody("leak it", false), nil); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	fams := scrape(t, g.URL)
	em := func(point, decision, reason string) string {
		return "decision=" + decision + ",mode=evaluate_only,point=" + point + ",reason_class=" + reason
	}
	metricstest.WantSeries(t, fams, "agent_hooks_emissions_total", map[string]float64{
		em("agent_startup", "allow", "none"):    1,
		em("input", "allow", "none"):            1,
		em("pre_model_call", "allow", "none"):   1,
		em("post_model_call", "deny", "policy"): 1,
		em("output", "allow", "none"):           1,
		em("agent_shutdown", "allow", "none"):   1,
	})
	metricstest.WantSeries(t, fams, "agent_hooks_transforms_applied_total", map[string]float64{})
	metricstest.WantSeries(t, fams, "hooks_gateway_requests_total", map[string]float64{"api=chat_completions,code=200,route=/v1/chat/completions": 1})
}

// Build wires the metrics: the emitter reports to the server's registry,
// each configured sink is counted under its type, the store is counted,
// and the policy version is the config's source.
func TestBuildServesMetrics(t *testing.T) {
	cfg, err := config.Parse("gateway.yaml", []byte(`upstreams:
  - name: mock
    type: mock
interceptors:
  - name: pass
    type: allow
  - name: also-pass
    type: allow
records:
  sinks:
    - type: stdout
`))
	if err != nil {
		t.Fatal(err)
	}
	var stdout lockedBuffer
	asm, err := Build(context.Background(), cfg, &stdout, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer asm.Close()
	hs := httptest.NewServer(asm.Server)
	defer hs.Close()
	g := &gateway{Server: hs, srv: asm.Server}
	if status, _, body := g.post(t, `{"model":"mock","messages":[{"role":"user","content":"hi"}]}`, map[string]string{HeaderSession: "s-1"}); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	fams := scrape(t, hs.URL)
	lines := float64(strings.Count(stdout.String(), "\n"))
	if lines != 1+5 { // the policy marker; startup, input, pre, post, output: the session stays open
		t.Fatalf("%v records on stdout:\n%s", lines, stdout.String())
	}
	metricstest.WantSeries(t, fams, "agent_hooks_records_total", map[string]float64{"result=ok,sink=stdout": 5, "result=error,sink=stdout": 0})
	got := metricstest.Series(fams, "agent_hooks_interceptor_verdicts_total")
	for _, name := range []string{"pass", "also-pass"} {
		if v := got["decision=allow,interceptor="+name+",point=post_model_call"]; v != 1 {
			t.Errorf("interceptor %s at post_model_call: %v (all: %v)", name, v, got)
		}
	}
	if v := metricstest.Series(fams, "agent_hooks_emissions_total")["decision=allow,mode=enforce,point=output,reason_class=none"]; v != 1 {
		t.Errorf("output emissions = %v", v)
	}
	version := asm.Server.Policy().Version
	if !strings.HasPrefix(version, "sha256:") {
		t.Errorf("policy version %q is not a content digest", version)
	}
	metricstest.WantSeries(t, fams, "agent_hooks_policy_info", map[string]float64{"version=" + version: 1})
	metricstest.WantSeries(t, fams, "agent_hooks_sessions_active", map[string]float64{"": 1})
	metricstest.WantSeries(t, fams, "hooks_gateway_upstream_requests_total", map[string]float64{"code=200,upstream=mock": 1})
	if len(metricstest.Series(fams, "hooks_gateway_session_store_errors_total")) != 16 {
		t.Error("the store is not instrumented")
	}
	if fams["go_goroutines"] == nil || fams["process_cpu_seconds_total"] == nil {
		t.Error("runtime and process collectors missing")
	}
}
