package proxy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/approvals"
)

// A queued request waits past the interceptor timeout: the resolver is
// bounded by approvals.timeout, not enforcement.interceptor_timeout.
func TestApprovalsWaitLongerThanInterceptors(t *testing.T) {
	src := strings.Replace(approvalsConfig("1m", ""), "upstreams:", "enforcement:\n  interceptor_timeout: 100ms\nupstreams:", 1)
	gw := approvalsGateway(t, src)
	done := chatAsync(gw.URL, "sess-patient", "patience")
	a := pendingFor(t, gw.URL, "sess-patient")
	time.Sleep(500 * time.Millisecond) // well past the interceptor timeout
	if status, body := admin(t, http.MethodPost, gw.URL+"/admin/approvals/"+a.ID, "application/json", `{"decision":"approve"}`); status != http.StatusOK {
		t.Fatalf("approve: %d %s", status, body)
	}
	if r := result(t, done); r.err != nil || r.text != "patience" {
		t.Fatalf("approved after the interceptor timeout, but the request got %q %v", r.text, r.err)
	}
}

// The webhook resolver configured end to end: it receives the redacted
// request with its bearer token, and its approval lets the call through.
func TestApprovalsWebhookThroughGateway(t *testing.T) {
	var mu sync.Mutex
	var gotAuth, gotBody string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		b, _ := json.Marshal(req)
		mu.Lock()
		gotAuth, gotBody = r.Header.Get("Authorization"), string(b)
		mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"outcome": approvals.Approve, "context_identity": req["context_identity"],
			"verdict": map[string]any{"decision": "allow"}})
	}))
	t.Cleanup(hook.Close)
	t.Setenv("APPROVALS_HOOK_TOKEN_T", "hook-token")
	src := strings.Replace(approvalsConfig("1m", ""), "  resolver: queue\n",
		"  resolver: webhook\n  webhook: {url: \""+hook.URL+"\", bearer_token_env: APPROVALS_HOOK_TOKEN_T}\n", 1)
	gw := approvalsGateway(t, src)
	if r := result(t, chatAsync(gw.URL, "sess-hook", "HOOK-SECRET")); r.err != nil || r.text != "HOOK-SECRET" {
		t.Fatalf("webhook-approved request: %q %v", r.text, r.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotAuth != "Bearer hook-token" {
		t.Errorf("webhook Authorization = %q", gotAuth)
	}
	if strings.Contains(gotBody, "HOOK-SECRET") || !strings.Contains(gotBody, approvals.Redacted) || !strings.Contains(gotBody, "policy:needs_approval") {
		t.Errorf("webhook request = %s, want the liftable deny with the message redacted", gotBody)
	}
	if status, _ := admin(t, http.MethodGet, gw.URL+"/admin/approvals", "", ""); status != http.StatusNotFound {
		t.Errorf("admin approvals with a webhook resolver: %d, want 404", status)
	}
}
