package approvals_test

import (
	"context"
	"encoding/json"
	"fmt"
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
		}, enforcement.ReasonApprovalIdentityMismatch},
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

// TestWebhookStrictAnswers: a webhook's answer is read strictly. A member
// named twice anywhere has no single reading (verdict_invalid, before the
// echo rule); a member the closed schemas do not define is refused at the
// resolution's level (the resolver failed) and inside its verdict
// (verdict_invalid); evidence keeps unknown members (§5.3 passes it
// through unchanged). No deny message quotes the answer.
func TestWebhookStrictAnswers(t *testing.T) {
	const leak = "LEAKED_NAME"
	cases := []struct {
		name   string
		answer string // %s is the echoed context_identity
		reason string // "" = the approval lifts the deny
	}{
		{"duplicate outcome", `{"outcome":"reject","outcome":"approve","context_identity":%s,"verdict":{"decision":"allow"}}`, enforcement.ReasonVerdictInvalid},
		{"duplicate identity", `{"outcome":"approve","context_identity":"sha256:other","context_identity":%s,"verdict":{"decision":"allow"}}`, enforcement.ReasonVerdictInvalid},
		{"duplicate decision", `{"outcome":"approve","context_identity":%s,"verdict":{"decision":"deny","decision":"allow"}}`, enforcement.ReasonVerdictInvalid},
		{"duplicate inside transform value", `{"outcome":"approve","context_identity":%s,"verdict":{"decision":"transform","transform":{"path":"$target.iban","value":{"` + leak + `":1,"` + leak + `":2}}}}`, enforcement.ReasonVerdictInvalid},
		{"unknown verdict member", `{"outcome":"approve","context_identity":%s,"verdict":{"decision":"allow","` + leak + `":true}}`, enforcement.ReasonVerdictInvalid},
		{"unknown warning member", `{"outcome":"approve","context_identity":%s,"verdict":{"decision":"allow","warnings":[{"reason":"w","` + leak + `":1}]}}`, enforcement.ReasonVerdictInvalid},
		{"unknown transform member", `{"outcome":"approve","context_identity":%s,"verdict":{"decision":"transform","transform":{"path":"$target.iban","value":"x","` + leak + `":1}}}`, enforcement.ReasonVerdictInvalid},
		{"unknown resolution member", `{"outcome":"approve","context_identity":%s,"verdict":{"decision":"allow"},"` + leak + `":1}`, enforcement.ReasonApprovalResolverFailed},
		{"unknown decision", `{"outcome":"approve","context_identity":%s,"verdict":{"decision":"` + leak + `"}}`, enforcement.ReasonVerdictInvalid},
		{"evidence keeps unknown members", `{"outcome":"approve","context_identity":%s,"verdict":{"decision":"allow","evidence":{"artefact":"sha256:00","` + leak + `":{"k":1}}}}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := webhookServer(t, func(w http.ResponseWriter, req map[string]any) {
				id, _ := json.Marshal(req["context_identity"])
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, tc.answer, id)
			})
			out := emitToolCall(t, context.Background(), newWebhook(t, srv.URL, 5*time.Second), nil)
			if tc.reason == "" {
				if !out.Proceed {
					t.Fatalf("verdict = %s %s %q, want the approval to lift the deny", out.Verdict.Decision, out.Verdict.Reason, out.Verdict.Message)
				}
				return
			}
			if out.Proceed || out.Verdict.Reason != tc.reason {
				t.Fatalf("verdict = %s %s %q, want deny %s", out.Verdict.Decision, out.Verdict.Reason, out.Verdict.Message, tc.reason)
			}
			if strings.Contains(out.Verdict.Message, leak) {
				t.Errorf("deny message quotes the answer: %q", out.Verdict.Message)
			}
		})
	}
}

// TestWebhookValidationOrder: §9 orders the checks of a resolution (echo
// rule, then outcome and verdict presence, then the carried verdict's §5
// gate, then outcome/verdict consistency) and the first failure names the
// deny. So a context_identity that does not echo, is missing, or is not a
// string is host_error:approval_identity_mismatch however malformed the
// rest of the answer is.
func TestWebhookValidationOrder(t *testing.T) {
	cases := []struct {
		name   string
		answer string // %s is the echoed context_identity
		reason string
	}{
		// 1. echo rule, whatever else is wrong.
		{"forged identity, no outcome", `{"context_identity":"sha256:forged","verdict":{"decision":"allow"}}`, enforcement.ReasonApprovalIdentityMismatch},
		{"forged identity, unknown member", `{"outcome":"approve","context_identity":"sha256:forged","verdict":{"decision":"allow"},"extra":1}`, enforcement.ReasonApprovalIdentityMismatch},
		{"forged identity, malformed verdict", `{"outcome":"approve","context_identity":"sha256:forged","verdict":{"decision":"maybe"}}`, enforcement.ReasonApprovalIdentityMismatch},
		{"forged identity, unknown verdict member", `{"outcome":"approve","context_identity":"sha256:forged","verdict":{"decision":"allow","x":1}}`, enforcement.ReasonApprovalIdentityMismatch},
		{"forged identity, unresolved with a verdict", `{"outcome":"unresolved","context_identity":"sha256:forged","verdict":{"decision":"allow"}}`, enforcement.ReasonApprovalIdentityMismatch},
		{"missing identity, valid rest", `{"outcome":"approve","verdict":{"decision":"allow"}}`, enforcement.ReasonApprovalIdentityMismatch},
		{"missing identity, unknown outcome", `{"outcome":"maybe"}`, enforcement.ReasonApprovalIdentityMismatch},
		{"missing identity, unknown member", `{"outcome":"approve","verdict":{"decision":"allow"},"extra":1}`, enforcement.ReasonApprovalIdentityMismatch},
		{"numeric identity", `{"outcome":"approve","context_identity":7,"verdict":{"decision":"allow"}}`, enforcement.ReasonApprovalIdentityMismatch},
		{"object identity, malformed verdict", `{"outcome":"approve","context_identity":{"v":%s},"verdict":"allow"}`, enforcement.ReasonApprovalIdentityMismatch},
		{"empty object", `{}`, enforcement.ReasonApprovalIdentityMismatch},
		// 2. outcome and verdict presence, and the resolution's shape.
		{"unknown member, malformed verdict", `{"outcome":"approve","context_identity":%s,"verdict":{"decision":"maybe"},"extra":1}`, enforcement.ReasonApprovalResolverFailed},
		{"no outcome, malformed verdict", `{"context_identity":%s,"verdict":{"decision":"maybe"}}`, enforcement.ReasonApprovalResolverFailed},
		{"outcome not a string", `{"outcome":true,"context_identity":%s,"verdict":{"decision":"allow"}}`, enforcement.ReasonApprovalResolverFailed},
		{"approve without verdict", `{"outcome":"approve","context_identity":%s}`, enforcement.ReasonApprovalResolverFailed},
		{"unresolved with a malformed verdict", `{"outcome":"unresolved","context_identity":%s,"verdict":{"decision":"maybe"}}`, enforcement.ReasonApprovalResolverFailed},
		// 3. the carried verdict's §5 gate.
		{"host_error reason", `{"outcome":"approve","context_identity":%s,"verdict":{"decision":"allow","reason":"host_error:x"}}`, enforcement.ReasonVerdictInvalid},
		{"warnings not an array", `{"outcome":"reject","context_identity":%s,"verdict":{"decision":"deny","warnings":"x"}}`, enforcement.ReasonVerdictInvalid},
		// 4. outcome/verdict consistency.
		{"approve carrying a deny", `{"outcome":"approve","context_identity":%s,"verdict":{"decision":"deny"}}`, enforcement.ReasonVerdictInvalid},
		{"reject carrying an allow", `{"outcome":"reject","context_identity":%s,"verdict":{"decision":"allow"}}`, enforcement.ReasonVerdictInvalid},
		// All four pass.
		{"reject", `{"outcome":"reject","context_identity":%s,"verdict":{"decision":"deny","reason":"human:no"}}`, "human:no"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := webhookServer(t, func(w http.ResponseWriter, req map[string]any) {
				id, _ := json.Marshal(req["context_identity"])
				w.Header().Set("Content-Type", "application/json")
				answer := tc.answer
				if strings.Contains(answer, "%s") {
					answer = fmt.Sprintf(answer, id)
				}
				io.WriteString(w, answer)
			})
			out := emitToolCall(t, context.Background(), newWebhook(t, srv.URL, 5*time.Second), nil)
			if out.Proceed || out.Verdict.Reason != tc.reason {
				t.Fatalf("verdict = %s %s %q, want deny %s", out.Verdict.Decision, out.Verdict.Reason, out.Verdict.Message, tc.reason)
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
