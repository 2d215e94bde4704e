package interceptors_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// remoteBase is gatewayBase with a short engine timeout, so a hanging
// verdict service costs a test one second at most.
var remoteBase = strings.Replace(gatewayBase, "  mode: enforce\n", "  mode: enforce\n  interceptor_timeout: 1s\n", 1)

// policyService is a remote verdict service: decide maps each context it
// receives to a verdict; it remembers the points it was asked about.
type policyService struct {
	*httptest.Server
	mu     sync.Mutex
	points []string
}

func newPolicyService(t *testing.T, decide func(c map[string]any) any) *policyService {
	t.Helper()
	s := &policyService{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c map[string]any
		if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
			http.Error(w, "not a context", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.points = append(s.points, c["interception_point"].(string))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(decide(c))
	}))
	t.Cleanup(s.Close)
	return s
}

// lastUserText is the text of the context's last user message
// (pre_model_call), "" elsewhere.
func lastUserText(c map[string]any) string {
	msgs, _ := c["target"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, _ := msgs[i].(map[string]any); m["role"] == "user" {
			s, _ := m["content"].(string)
			return s
		}
	}
	return ""
}

func TestGatewayHTTPVerdicts(t *testing.T) {
	svc := newPolicyService(t, func(c map[string]any) any {
		switch {
		case c["interception_point"] == "pre_model_call" && strings.Contains(lastUserText(c), "forbidden"):
			return map[string]any{"decision": "deny", "reason": "policy:remote_denied", "message": "not allowed"}
		case c["interception_point"] == "post_model_call":
			return map[string]any{"decision": "transform", "reason": "policy:rewritten",
				"transform": map[string]any{"path": "$target.content", "value": "rewritten by policy"}}
		}
		return map[string]any{"decision": "allow"}
	})
	g := startGatewayConfig(t, remoteBase+`  - name: remote
    type: http
    url: `+svc.URL+`/v1/verdict
    timeout: 500ms
`)
	resp, err := g.chat(t, "bot", "/say hello")
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "rewritten by policy" {
		t.Errorf("content %q; want the service's transform", got)
	}
	_, err = g.chat(t, "bot", "/say forbidden")
	deniedWith(t, err, "policy:remote_denied")
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if !strings.Contains(strings.Join(svc.points, " "), "pre_model_call post_model_call") {
		t.Errorf("service saw points %v", svc.points)
	}
}

// TestGatewayHTTPTimeout: a service that does not answer within the
// interceptor's timeout blocks the call as an interceptor timeout (504),
// and the record says so.
func TestGatewayHTTPTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	g := startGatewayConfig(t, remoteBase+`  - name: remote
    type: http
    points: [pre_model_call]
    url: `+srv.URL+`
    timeout: 200ms
`)
	_, err := g.chat(t, "bot", "/say hi")
	deniedWith(t, err, "host_error:interceptor_timeout")
	rec := g.recordAt(t, "pre_model_call")
	if v := rec["verdict"].(map[string]any); v["reason"] != "host_error:interceptor_timeout" || v["decision"] != "deny" {
		t.Errorf("record verdict %v", v)
	}
}

// TestGatewayHTTPFailures: every failure of the service fails closed. A
// body that is not JSON is the service failing (interceptor_failed, spec
// §11 "returned a non-JSON value"); JSON that is no verdict is
// verdict_invalid.
func TestGatewayHTTPFailures(t *testing.T) {
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + refused.Addr().String()
	refused.Close()
	answer := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	cases := []struct{ name, url, reason string }{
		{"garbage", answer(200, "<<garbage>>"), "host_error:interceptor_failed"},
		{"not a verdict", answer(200, `{"decision":"maybe"}`), "host_error:verdict_invalid"},
		// Strict reading: a member named twice, or one the closed verdict
		// schema does not define, is an invalid verdict, never last-wins
		// or dropped.
		{"duplicate decision", answer(200, `{"decision":"deny","decision":"allow"}`), "host_error:verdict_invalid"},
		{"duplicate deep in a transform", answer(200, `{"decision":"transform","transform":{"path":"$target[0].content","value":{"garbage":1,"garbage":2}}}`), "host_error:verdict_invalid"},
		{"unknown member", answer(200, `{"decision":"allow","garbage":true}`), "host_error:verdict_invalid"},
		{"unknown warning member", answer(200, `{"decision":"allow","warnings":[{"reason":"w","garbage":1}]}`), "host_error:verdict_invalid"},
		{"unknown transform member", answer(200, `{"decision":"transform","transform":{"path":"$target","value":[],"garbage":1}}`), "host_error:verdict_invalid"},
		{"server error", answer(500, `{"decision":"allow"}`), "host_error:interceptor_failed"},
		{"refused", refusedURL, "host_error:interceptor_failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := startGatewayConfig(t, remoteBase+`  - name: remote
    type: http
    points: [pre_model_call]
    url: `+tc.url+`
    timeout: 500ms
    retries: 1
`)
			_, err := g.chat(t, "bot", "/say hi")
			deniedWith(t, err, tc.reason)
			if strings.Contains(g.recordText(), "garbage") {
				t.Error("the service's body reached the records")
			}
		})
	}
}

// TestGatewayOPAStrict: OPA's answer is read by the same strict decoder:
// a member named twice anywhere, or a result verdict with a member the
// schema does not define, is verdict_invalid; OPA's own envelope members
// pass.
func TestGatewayOPAStrict(t *testing.T) {
	cases := []struct{ name, body, reason string }{
		{"envelope members", `{"decision_id":"d-1","result":true}`, ""},
		{"duplicate result", `{"result":false,"result":true}`, "host_error:verdict_invalid"},
		{"duplicate decision", `{"result":{"decision":"deny","decision":"allow"}}`, "host_error:verdict_invalid"},
		{"unknown verdict member", `{"result":{"decision":"allow","garbage":1}}`, "host_error:verdict_invalid"},
		{"evidence keeps unknown members", `{"result":{"decision":"allow","evidence":{"artefact":"sha256:00","extra":{"k":1}}}}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.body)
			}))
			t.Cleanup(opa.Close)
			g := startGatewayConfig(t, remoteBase+`  - name: opa
    type: opa
    points: [pre_model_call]
    url: `+opa.URL+`
    path: agenthooks/decision
    timeout: 500ms
`)
			_, err := g.chat(t, "bot", "/say fine")
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("allowed call: %v", err)
				}
				return
			}
			deniedWith(t, err, tc.reason)
			if strings.Contains(g.recordText(), "garbage") {
				t.Error("the service's answer reached the records")
			}
		})
	}
}

func TestGatewayOPA(t *testing.T) {
	opa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			Input map[string]any `json:"input"`
		}
		if r.URL.Path != "/v1/data/agenthooks/decision" || json.NewDecoder(r.Body).Decode(&q) != nil {
			http.NotFound(w, r)
			return
		}
		var result any = true
		switch text := lastUserText(q.Input); {
		case strings.Contains(text, "deny me"):
			result = false
		case strings.Contains(text, "escalate me"):
			result = map[string]any{"decision": "deny", "reason": "policy:needs_review", "message": "a reviewer must approve", "approval": map[string]any{}}
		case strings.Contains(text, "undefined"):
			result = nil
		}
		doc := map[string]any{}
		if result != nil {
			doc["result"] = result
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(opa.Close)
	g := startGatewayConfig(t, remoteBase+`  - name: opa
    type: opa
    points: [pre_model_call]
    url: `+opa.URL+`
    path: agenthooks/decision
    timeout: 500ms
`)
	resp, err := g.chat(t, "bot", "/say fine")
	if err != nil || resp.Choices[0].Message.Content != "fine" {
		t.Fatalf("allowed call: %v", err)
	}
	_, err = g.chat(t, "bot", "/say deny me")
	deniedWith(t, err, "policy:opa_denied")
	_, err = g.chat(t, "bot", "/say escalate me")
	deniedWith(t, err, "policy:needs_review")
	_, err = g.chat(t, "bot", "/say undefined")
	deniedWith(t, err, "host_error:interceptor_failed")
}
