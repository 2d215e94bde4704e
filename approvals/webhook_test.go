package approvals_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/approvals"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// webhookServer answers each approval request with answer(request).
func webhookServer(t *testing.T, answer func(w http.ResponseWriter, req map[string]any)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("webhook got a body that is not JSON: %v", err)
		}
		answer(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newWebhook(t *testing.T, url string, timeout time.Duration) *approvals.Webhook {
	t.Helper()
	w, err := approvals.NewWebhook(approvals.WebhookOptions{URL: url, Token: "s3cret", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWebhookApproveEchoesAndLifts(t *testing.T) {
	var gotAuth string
	var gotReq map[string]any
	srv := webhookServer(t, func(w http.ResponseWriter, req map[string]any) {
		gotReq = req
		json.NewEncoder(w).Encode(map[string]any{
			"outcome": "approve", "context_identity": req["context_identity"],
			"verdict": map[string]any{"decision": "allow"},
		})
	})
	srv.Config.Handler = authRecorder(&gotAuth, srv.Config.Handler)
	redactor, err := enforcement.PathRedactor([]string{"$target.iban"}, "[redacted]")
	if err != nil {
		t.Fatal(err)
	}
	out := emitToolCall(t, context.Background(), newWebhook(t, srv.URL, 5*time.Second), redactor)
	if !out.Proceed || out.Verdict.Decision != enforcement.DecisionAllow {
		t.Fatalf("approved escalation did not proceed: %+v", out.Verdict)
	}
	if gotAuth != "Bearer s3cret" {
		t.Errorf("Authorization = %q, want the bearer token", gotAuth)
	}
	if gotReq["interception_point"] != string(enforcement.PreToolCall) {
		t.Errorf("request interception_point = %v", gotReq["interception_point"])
	}
	if v, _ := gotReq["verdict"].(map[string]any); v["reason"] != "policy:needs_approval" {
		t.Errorf("request verdict = %v, want the liftable deny", gotReq["verdict"])
	}
	body, _ := json.Marshal(gotReq["context"])
	if strings.Contains(string(body), "SECRET") || !strings.Contains(string(body), "[redacted]") {
		t.Errorf("webhook saw an unredacted context: %s", body)
	}
}

func authRecorder(dst *string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*dst = r.Header.Get("Authorization")
		next.ServeHTTP(w, r)
	})
}

func TestWebhookFailuresFailClosed(t *testing.T) {
	cases := []struct {
		name   string
		answer func(w http.ResponseWriter, req map[string]any)
		reason string
	}{
		{"identity mismatch", func(w http.ResponseWriter, req map[string]any) {
			io.WriteString(w, `{"outcome":"approve","context_identity":"sha256:not-the-one","verdict":{"decision":"allow"}}`)
		}, enforcement.ReasonApprovalIdentityMismatch},
		{"null identity echoed for a string", func(w http.ResponseWriter, req map[string]any) {
			io.WriteString(w, `{"outcome":"approve","context_identity":null,"verdict":{"decision":"allow"}}`)
		}, enforcement.ReasonApprovalIdentityMismatch},
		{"garbage", func(w http.ResponseWriter, req map[string]any) {
			io.WriteString(w, `<html>approved!</html>`)
		}, enforcement.ReasonApprovalResolverFailed},
		{"not an object", func(w http.ResponseWriter, req map[string]any) {
			io.WriteString(w, `["approve"]`)
		}, enforcement.ReasonApprovalResolverFailed},
		{"unknown member", func(w http.ResponseWriter, req map[string]any) {
			json.NewEncoder(w).Encode(map[string]any{"outcome": "approve", "context_identity": req["context_identity"],
				"verdict": map[string]any{"decision": "allow"}, "approved_by": "x"})
		}, enforcement.ReasonApprovalResolverFailed},
		{"missing identity", func(w http.ResponseWriter, req map[string]any) {
			io.WriteString(w, `{"outcome":"approve","verdict":{"decision":"allow"}}`)
		}, enforcement.ReasonApprovalResolverFailed},
		{"status 500", func(w http.ResponseWriter, req map[string]any) {
			w.WriteHeader(http.StatusInternalServerError)
			json.NewEncoder(w).Encode(map[string]any{"outcome": "approve", "context_identity": req["context_identity"],
				"verdict": map[string]any{"decision": "allow"}})
		}, enforcement.ReasonApprovalResolverFailed},
		{"redirect", func(w http.ResponseWriter, req map[string]any) {
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, enforcement.ReasonApprovalResolverFailed},
		{"approve carrying a deny", func(w http.ResponseWriter, req map[string]any) {
			json.NewEncoder(w).Encode(map[string]any{"outcome": "approve", "context_identity": req["context_identity"],
				"verdict": map[string]any{"decision": "deny"}})
		}, enforcement.ReasonVerdictInvalid},
		{"unresolved", func(w http.ResponseWriter, req map[string]any) {
			json.NewEncoder(w).Encode(map[string]any{"outcome": "unresolved", "context_identity": req["context_identity"]})
		}, enforcement.ReasonApprovalUnresolved},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := webhookServer(t, tc.answer)
			out := emitToolCall(t, context.Background(), newWebhook(t, srv.URL, 5*time.Second), nil)
			if out.Proceed || out.Verdict.Reason != tc.reason {
				t.Fatalf("verdict = %s %s, want deny %s", out.Verdict.Decision, out.Verdict.Reason, tc.reason)
			}
		})
	}
}

func TestWebhookTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := webhookServer(t, func(w http.ResponseWriter, req map[string]any) { <-release })
	defer close(release) // before srv.Close, which waits for the handler
	out := emitToolCall(t, context.Background(), newWebhook(t, srv.URL, 50*time.Millisecond), nil)
	if out.Proceed || out.Verdict.Reason != enforcement.ReasonApprovalResolverFailed {
		t.Fatalf("verdict = %s %s, want deny %s", out.Verdict.Decision, out.Verdict.Reason, enforcement.ReasonApprovalResolverFailed)
	}
}

func TestWebhookRejectsBadURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x/y", "/relative", "http://"} {
		if _, err := approvals.NewWebhook(approvals.WebhookOptions{URL: u}); err == nil {
			t.Errorf("NewWebhook(%q) accepted it", u)
		}
	}
}
