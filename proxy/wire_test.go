package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// In strict mode a request member the gateway does not know, and in both
// modes one whose name differs from a known member only in letter case, is
// refused before any emission and never reaches the upstream.
func TestUnknownRequestMemberRefused(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	var seen ctxLog
	g := newGateway(t, gatewayConfig{upstream: up.URL + "/v1", policy: seen.wrap(nil), strictMembers: true})
	tests := []struct {
		name, body, param string
		mention           []string
	}{
		{"unknown member", `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}],"top_a":7}`, "top_a",
			[]string{"top_a: is not a request member the gateway knows", "wire.chat.allow_request_members", "wire.chat.unknown_members"}},
		{"not a plain identifier", `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}],"top a":7}`, "",
			[]string{"a member whose name is not a plain identifier", "wire.chat.allow_request_members", "wire.chat.unknown_members"}},
		{"unknown member in a tool", `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"},"cache_control":{}}]}`, "tools[0].cache_control",
			[]string{"tools[0].cache_control: is not a member the gateway knows", "wire.chat.unknown_members"}},
		{"case collision at the top", `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}],"Messages":[{"role":"user","content":"x"}]}`, "",
			[]string{`differs from "messages" only in letter case`}},
		{"case collision in a message", `{"model":"gpt-test","messages":[{"role":"user","content":"hi","Content":"x"}]}`, "messages[0]",
			[]string{`messages[0]: has a member whose name differs from "content" only in letter case`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := g.post(t, tc.body, nil)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", status, body)
			}
			e := errorBody(t, body)
			param := ""
			if e.Param != nil {
				param = *e.Param
			}
			if e.Type != typeInvalid || e.Code != "invalid_request" || param != tc.param {
				t.Errorf("error = %s %s param %q, want %s invalid_request with param %q", e.Type, e.Code, param, typeInvalid, tc.param)
			}
			for _, m := range tc.mention {
				if !strings.Contains(e.Message, m) {
					t.Errorf("message %q does not mention %q", e.Message, m)
				}
			}
		})
	}
	if n := len(up.received()); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
	if n := len(seen.at("")); n != 0 || len(g.records.all()) != 0 {
		t.Errorf("%d contexts and %d records for refused requests", n, len(g.records.all()))
	}
}

// With the member allowed it is forwarded as sent and shown to the policy
// in model.params, beside user and metadata, in strict mode too.
func TestAllowedRequestMemberProjected(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	var seen ctxLog
	g := newGateway(t, gatewayConfig{upstream: up.URL + "/v1", policy: seen.wrap(nil), allowRequestMembers: []string{"top_a"}, strictMembers: true})
	body := `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}],"top_a":{"k":1.50},"user":"u-1","metadata":{"team":"t"},"temperature":0.20}`
	status, _, out := g.post(t, body, nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	if got := up.received(); len(got) != 1 || string(got[0]) != body {
		t.Fatalf("upstream received %q, want the body as sent", got)
	}
	pre := seen.at(enforcement.PreModelCall)
	if len(pre) != 1 {
		t.Fatalf("%d pre_model_call contexts", len(pre))
	}
	model, _ := pre[0]["model"].(map[string]any)
	want, err := jsonvalue.Decode([]byte(`{"top_a":{"k":1.50},"user":"u-1","metadata":{"team":"t"},"temperature":0.20}`))
	if err != nil {
		t.Fatal(err)
	}
	if !jsonvalue.Equal(model["params"], want) {
		t.Errorf("model.params = %v, want %v", model["params"], want)
	}
}

// Build takes the allowance from wire.chat.allow_request_members, and a
// policy can judge the allowed member; a member not allowed is judged
// too (the default), projected and forwarded.
func TestBuildAllowsConfiguredRequestMembers(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	cfg, err := config.Parse("gateway.yaml", []byte(`upstreams:
  - name: local
    type: openai
    base_url: `+up.URL+`/v1
wire:
  chat:
    allow_request_members: [top_a]
    allow_response_members: [provider]
interceptors:
  - name: top-a-cap
    type: cel
    points: [pre_model_call]
    rules:
      - name: cap
        when: 'context.model.?params.?top_a.orValue(0) > 5'
        deny: {reason: policy:top_a, message: top_a is capped}
`))
	if err != nil {
		t.Fatal(err)
	}
	asm, err := Build(context.Background(), cfg, io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer asm.Close()
	hs := httptest.NewServer(asm.Server)
	defer hs.Close()
	g := &gateway{Server: hs, srv: asm.Server}
	const msgs = `"model":"gpt-test","messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		body   string
		status int
		code   string
	}{
		{`{` + msgs + `,"top_a":2}`, http.StatusOK, ""},
		{`{` + msgs + `,"top_a":9}`, http.StatusForbidden, "policy:top_a"},
		{`{` + msgs + `,"top_b":2}`, http.StatusOK, ""},
	}
	for _, tc := range tests {
		before := len(up.received())
		status, _, body := g.post(t, tc.body, nil)
		if status != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.body, status, tc.status, body)
			continue
		}
		reached := len(up.received()) > before
		if tc.status == http.StatusOK {
			if !reached || string(up.received()[before]) != tc.body {
				t.Errorf("%s: the upstream did not receive the body as sent", tc.body)
			}
			continue
		}
		if reached {
			t.Errorf("%s: a refused request reached the upstream", tc.body)
		}
		if e := errorBody(t, body); e.Code != tc.code {
			t.Errorf("%s: code %q, want %q", tc.body, e.Code, tc.code)
		}
	}
}
