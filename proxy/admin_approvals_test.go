package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hooks-gateway/hooks-gateway/approvals"
	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

const approvalsAdminToken = "admin-s3cret"

// approvalsConfig is a gateway whose every model call needs an approval,
// with the first message's content hidden from approvers. extra is
// appended (a sessions section, say).
func approvalsConfig(timeout, extra string) string {
	return `upstreams:
  - {name: mock, type: mock}
interceptors:
  - name: ask-first
    type: deny
    points: [pre_model_call]
    reason: policy:needs_approval
    message: every model call needs an operator
    escalate: true
approvals:
  resolver: queue
  timeout: ` + timeout + `
  redact_paths: ["$target[0].content"]
auth:
  admin_token_env: APPROVALS_ADMIN_TOKEN_T
records:
  sinks: []
` + extra
}

// approvalsGateway serves src through Build on a real listener.
func approvalsGateway(t *testing.T, src string) *httptest.Server {
	t.Helper()
	t.Setenv("APPROVALS_ADMIN_TOKEN_T", approvalsAdminToken)
	t.Setenv(config.EnvRedisURL, "")
	cfg, err := config.Parse("gateway.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	asm, err := Build(context.Background(), cfg, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { asm.Close() })
	hs := httptest.NewServer(asm.Server)
	t.Cleanup(hs.Close)
	return hs
}

// chatResult is a finished chat request: the reply's text, or the error.
type chatResult struct {
	text string
	err  error
}

// chatAsync sends "/say text" in session through the official client and
// reports the result when the gateway answers.
func chatAsync(baseURL, session, text string) <-chan chatResult {
	done := make(chan chatResult, 1)
	go func() {
		c := openai.NewClient(option.WithBaseURL(baseURL+"/v1"), option.WithAPIKey("client-key"), option.WithMaxRetries(0),
			option.WithHeader(HeaderSession, session))
		resp, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model:    "mock",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("/say " + text)},
		})
		if err != nil {
			done <- chatResult{err: err}
			return
		}
		done <- chatResult{text: resp.Choices[0].Message.Content}
	}()
	return done
}

func result(t *testing.T, done <-chan chatResult) chatResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("the chat request never finished")
		return chatResult{}
	}
}

// statusAndCode returns the HTTP status and error code of a failed call.
func statusAndCode(t *testing.T, err error) (int, string) {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v is not an API error", err)
	}
	return apiErr.StatusCode, apiErr.Code
}

// admin sends an admin request with the token and returns status and body.
func admin(t *testing.T, method, url, contentType, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+approvalsAdminToken)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// pendingFor waits until baseURL lists an approval for session.
func pendingFor(t *testing.T, baseURL, session string) approvals.Approval {
	t.Helper()
	var found approvals.Approval
	waitFor(t, 30*time.Second, "approval pending for "+session, func() bool {
		status, body := admin(t, http.MethodGet, baseURL+"/admin/approvals", "", "")
		if status != http.StatusOK {
			t.Fatalf("GET /admin/approvals: %d %s", status, body)
		}
		var list struct{ Approvals []approvals.Approval }
		if err := json.Unmarshal(body, &list); err != nil {
			t.Fatal(err)
		}
		for _, a := range list.Approvals {
			if trailName(a.SessionID) == session {
				found = a
				return true
			}
		}
		return false
	})
	return found
}

func TestApprovalsAdminEndpoints(t *testing.T) {
	gw := approvalsGateway(t, approvalsConfig("1m", ""))
	done := chatAsync(gw.URL, "sess-json", "SECRET-TEXT")
	a := pendingFor(t, gw.URL, "sess-json")
	if a.Point != enforcement.PreModelCall || a.Reason != "policy:needs_approval" || a.Message != "every model call needs an operator" {
		t.Errorf("pending approval = %+v", a)
	}
	status, body := admin(t, http.MethodGet, gw.URL+"/admin/approvals/"+a.ID, "", "")
	if status != http.StatusOK || strings.Contains(string(body), "SECRET-TEXT") || !strings.Contains(string(body), approvals.Redacted) {
		t.Errorf("GET approval: %d, want 200 with the message redacted: %s", status, body)
	}
	url := gw.URL + "/admin/approvals/" + a.ID
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
	}{
		{"not JSON", "text/plain", `{"decision":"approve"}`, http.StatusUnsupportedMediaType},
		{"garbage", "application/json", `{"decision":`, http.StatusBadRequest},
		{"unknown field", "application/json", `{"decision":"approve","by":"me"}`, http.StatusBadRequest},
		{"bad outcome", "application/json", `{"decision":"unresolved"}`, http.StatusBadRequest},
		{"bad transform", "application/json", `{"decision":"approve","transform":{"path":"messages","value":[]}}`, http.StatusBadRequest},
	} {
		if status, body := admin(t, http.MethodPost, url, tc.contentType, tc.body); status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, status, body, tc.status)
		}
	}
	if status, _ := admin(t, http.MethodPost, gw.URL+"/admin/approvals/unknown", "application/json", `{"decision":"approve"}`); status != http.StatusNotFound {
		t.Errorf("unknown id: %d, want 404", status)
	}
	if status, body := admin(t, http.MethodPost, url, "application/json", `{"decision":"approve","message":"go ahead"}`); status != http.StatusOK {
		t.Fatalf("approve: %d %s", status, body)
	}
	if r := result(t, done); r.err != nil || r.text != "SECRET-TEXT" {
		t.Fatalf("approved request: %q %v", r.text, r.err)
	}
	if status, _ := admin(t, http.MethodPost, url, "application/json", `{"decision":"reject"}`); status != http.StatusConflict {
		t.Errorf("second decision: %d, want 409", status)
	}
	status, body = admin(t, http.MethodGet, url, "", "")
	var got approvals.Approval
	json.Unmarshal(body, &got)
	if status != http.StatusOK || got.Decision == nil || got.Decision.Outcome != approvals.Approve {
		t.Errorf("decided approval: %d %s", status, body)
	}
	if status, _ := admin(t, http.MethodGet, gw.URL+"/admin/approvals", "", ""); status != http.StatusOK {
		t.Errorf("list: %d", status)
	}
}

// The form endpoint refuses posts that do not come from the page's origin.
func TestApprovalsFormSameOrigin(t *testing.T) {
	gw := approvalsGateway(t, approvalsConfig("1m", ""))
	done := chatAsync(gw.URL, "sess-form", "hello")
	a := pendingFor(t, gw.URL, "sess-form")
	post := func(origin, referer string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, gw.URL+"/admin/approvals/"+a.ID+"/decide", strings.NewReader("decision=reject&message=no"))
		req.SetBasicAuth("admin", approvalsAdminToken)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if referer != "" {
			req.Header.Set("Referer", referer)
		}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for name, h := range map[string][2]string{
		"neither":        {"", ""},
		"other origin":   {"https://evil.example", ""},
		"other referer":  {"", "https://evil.example/admin/"},
		"null, no refer": {"null", ""},
		"origin wins":    {"https://evil.example", gw.URL + "/admin/"},
	} {
		if resp := post(h[0], h[1]); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, resp.StatusCode)
		}
	}
	resp := post(gw.URL, "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/admin/?done=reject" {
		t.Fatalf("same-origin form: %d Location %q, want 303 back to the page", resp.StatusCode, resp.Header.Get("Location"))
	}
	r := result(t, done)
	if status, code := statusAndCode(t, r.err); status != http.StatusForbidden || code != approvals.ReasonRejected {
		t.Fatalf("rejected request: %d %s", status, code)
	}
}

func TestApprovalsNoQueue(t *testing.T) {
	t.Setenv("APPROVALS_ADMIN_TOKEN_T", approvalsAdminToken)
	gw := approvalsGateway(t, "upstreams:\n  - {name: mock, type: mock}\nauth:\n  admin_token_env: APPROVALS_ADMIN_TOKEN_T\nrecords:\n  sinks: []\n")
	for _, path := range []string{"/admin/approvals", "/admin/"} {
		if status, body := admin(t, http.MethodGet, gw.URL+path, "", ""); status != http.StatusNotFound || !strings.Contains(string(body), "no_approval_queue") {
			t.Errorf("%s without a queue: %d %s", path, status, body)
		}
	}
}

// Two gateways sharing Redis: the request waits on one, an administrator
// decides on the other, and the first releases it.
func TestApprovalsSharedAcrossReplicas(t *testing.T) {
	url, _ := redistest.Start(t)
	sessionsYAML := "sessions:\n  store: redis\n  redis_url: " + url + "\n"
	waiting := approvalsGateway(t, approvalsConfig("1m", sessionsYAML))
	other := approvalsGateway(t, approvalsConfig("1m", sessionsYAML))
	done := chatAsync(waiting.URL, "sess-replicas", "across")
	a := pendingFor(t, other.URL, "sess-replicas")
	if status, body := admin(t, http.MethodPost, other.URL+"/admin/approvals/"+a.ID, "application/json", `{"decision":"approve"}`); status != http.StatusOK {
		t.Fatalf("approve on the other replica: %d %s", status, body)
	}
	if r := result(t, done); r.err != nil || r.text != "across" {
		t.Fatalf("request released on the first replica: %q %v", r.text, r.err)
	}
}

// The page escapes what it shows and forbids scripts.
func TestApprovalsPageEscapes(t *testing.T) {
	gw := approvalsGateway(t, approvalsConfig("1m", ""))
	go send(context.Background(), http.MethodPost, gw.URL+"/v1/chat/completions",
		`{"model":"mock","messages":[{"role":"user","content":"first"},{"role":"assistant","content":"<script>alert(1)</script>"},{"role":"user","content":"/say ok"}]}`,
		map[string]string{"Content-Type": "application/json", HeaderSession: "sess-escape"})
	a := pendingFor(t, gw.URL, "sess-escape")
	req, _ := http.NewRequest(http.MethodGet, gw.URL+"/admin/", nil)
	req.SetBasicAuth("admin", approvalsAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), `id="approval-`+a.ID+`"`) {
		t.Fatalf("page: %d, without the approval: %s", resp.StatusCode, page)
	}
	if strings.Contains(string(page), "<script>") || !strings.Contains(string(page), "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the page does not escape the context it shows: %s", page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if status, body := admin(t, http.MethodPost, gw.URL+"/admin/approvals/"+a.ID, "application/json", `{"decision":"reject"}`); status != http.StatusOK {
		t.Fatalf("reject: %d %s", status, body)
	}
}
