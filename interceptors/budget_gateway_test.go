package interceptors_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// chat sends one user message as agent through the gateway's openai-go
// client.
func (g *testGateway) chat(t *testing.T, agent, text string) (*openai.ChatCompletion, error) {
	t.Helper()
	return g.Client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
	}, option.WithHeader("Agent-Hooks-Agent", agent))
}

// deniedWith asserts err is the gateway's refusal carrying reason as its
// code, with the status the gateway maps it to: 403 for a policy deny, 503
// for a host_error:* deny (an outage), 504 for an interceptor timeout.
func deniedWith(t *testing.T, err error, reason string) {
	t.Helper()
	status := http.StatusForbidden
	switch {
	case reason == "host_error:interceptor_timeout":
		status = http.StatusGatewayTimeout
	case strings.HasPrefix(reason, "host_error:"):
		status = http.StatusServiceUnavailable
	}
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v; want a %d %s", err, status, reason)
	}
	if apiErr.StatusCode != status || apiErr.Code != reason {
		t.Fatalf("status %d code %q; want %d %s", apiErr.StatusCode, apiErr.Code, status, reason)
	}
}

func TestGatewayBudgetRequests(t *testing.T) {
	g := startGateway(t, `  - name: budgets
    type: budget
    limits:
      - {scope: agent, window: 1h, requests: 3}
`)
	for i := range 3 {
		if _, err := g.chat(t, "bot-a", "/say ok"); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	_, err := g.chat(t, "bot-a", "/say ok")
	deniedWith(t, err, "policy:budget_exhausted")
	rec := g.recordAt(t, "pre_model_call")
	v := rec["verdict"].(map[string]any)
	if v["decision"] != "deny" || v["reason"] != "policy:budget_exhausted" || rec["decided_by"] != float64(0) {
		t.Errorf("record = %v", rec)
	}
	if msg, _ := v["message"].(string); !strings.Contains(msg, "agent request budget for the 1h window") {
		t.Errorf("message %q names neither scope nor window", msg)
	}
	// Another agent has a budget of its own.
	if _, err := g.chat(t, "bot-b", "/say ok"); err != nil {
		t.Errorf("other agent: %v", err)
	}
	if strings.Contains(g.recordText(), "bot-a request") {
		t.Error("records name the agent in a budget message")
	}
}

// TestGatewayBudgetTokens spends a token budget with the mock's usage (it
// counts words) and checks the warning, then the denial, land where the
// client-side sum of reported usage says they should.
func TestGatewayBudgetTokens(t *testing.T) {
	const limit, warnAt = 40, 0.5
	g := startGateway(t, `  - name: budgets
    type: budget
    limits:
      - {scope: agent, window: 1h, tokens: 40, warn_at: 0.5}
`)
	var used int64
	warned := false
	for i := 0; ; i++ {
		if i > limit {
			t.Fatalf("no denial after %d requests (%d tokens used of %d)", i, used, limit)
		}
		resp, err := g.chat(t, "bot", "/say one two three four five")
		if used >= limit {
			deniedWith(t, err, "policy:budget_exhausted")
			break
		}
		if err != nil {
			t.Fatalf("request %d with %d of %d tokens used: %v", i+1, used, limit, err)
		}
		pre := g.recordAt(t, "pre_model_call")["verdict"].(map[string]any)
		ws, _ := pre["warnings"].([]any)
		if want := float64(used) >= warnAt*limit; want != (len(ws) == 1) {
			t.Fatalf("request %d at %d of %d tokens: warnings %v", i+1, used, limit, ws)
		}
		if len(ws) == 1 {
			warned = true
			if w := ws[0].(map[string]any); w["reason"] != "policy:budget_warning" {
				t.Errorf("warning %v", w)
			}
		}
		if resp.Usage.TotalTokens == 0 {
			t.Fatal("the mock reported no usage")
		}
		used += resp.Usage.TotalTokens
	}
	if !warned {
		t.Error("no request carried the budget warning")
	}
}

// TestGatewayBudgetStreamedTokens checks streamed responses are charged too
// (the gateway asks the upstream for the usage chunk).
func TestGatewayBudgetStreamedTokens(t *testing.T) {
	g := startGateway(t, `  - name: budgets
    type: budget
    limits:
      - {scope: agent, window: 1h, tokens: 5}
`)
	status, body := g.post(t, `{"model":"m","stream":true,"messages":[{"role":"user","content":"/say one two three four five six"}]}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	status, body = g.post(t, `{"model":"m","messages":[{"role":"user","content":"/say again"}]}`)
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || status != http.StatusForbidden || e.Error.Code != "policy:budget_exhausted" {
		t.Errorf("after a streamed call over budget: status %d, body %s", status, body)
	}
}

// TestGatewayBudgetSharedRedis runs two gateways on one Redis: a request
// budget is one budget across both.
func TestGatewayBudgetSharedRedis(t *testing.T) {
	url, _ := redistest.Start(t)
	doc := strings.Replace(gatewayBase, "  store: memory\n", "  store: redis\n  redis_url: "+url+"\n", 1) + `  - name: budgets
    type: budget
    limits:
      - {scope: agent, window: 1h, requests: 4}
`
	a, b := startGatewayConfig(t, doc), startGatewayConfig(t, doc)
	for i, g := range []*testGateway{a, b, a, b} {
		if _, err := g.chat(t, "shared-bot", "/say ok"); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	for _, g := range []*testGateway{a, b} {
		_, err := g.chat(t, "shared-bot", "/say ok")
		deniedWith(t, err, "policy:budget_exhausted")
	}
}

// TestGatewayBudgetStoreDown: with Redis gone the budget cannot be
// consulted, and the call is refused (fail closed).
func TestGatewayBudgetStoreDown(t *testing.T) {
	srv := redistest.StartServer(t)
	doc := strings.Replace(gatewayBase, "  store: memory\n", "  store: redis\n  redis_url: "+srv.URL()+"\n", 1) + `  - name: budgets
    type: budget
    limits:
      - {scope: agent, window: 1h, requests: 100}
`
	g := startGatewayConfig(t, doc)
	if _, err := g.chat(t, "bot", "/say ok"); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	_, err := g.chat(t, "bot", "/say ok")
	deniedWith(t, err, "host_error:interceptor_failed")
}
