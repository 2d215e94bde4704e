package proxy_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// Request members the gateway does not know are judged, not refused: at
// the top level, inside a tools entry and its function, inside
// stream_options, they reach the policies (a regex over model.params and
// tools, a CEL rule over the projected tool) and, when allowed, are
// forwarded as the client sent them.
func TestUnknownRequestMembersReachPolicy(t *testing.T) {
	var mu sync.Mutex
	var received []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		received = append(received, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(up.Close)
	t.Setenv("UNKNOWN_MEMBERS_KEY", "upstream-key")
	cfg, err := config.Parse("unknown.yaml", []byte(`listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: up
    type: openai
    base_url: `+up.URL+`/v1
    api_key_env: UNKNOWN_MEMBERS_KEY
    models: ["*"]
interceptors:
  - name: deny-keys
    type: regex
    points: [pre_model_call]
    action: deny
    reason: policy:credential_leak
    patterns: ['sk-proj-[A-Za-z0-9]{20,}']
  - name: no-cached-tools
    type: cel
    points: [pre_model_call]
    rules:
      - name: cache-control
        when: 'context.?tools.orValue([]).exists(t, t.?members.?cache_control.?type.orValue("") == "deny-me")'
        deny: {reason: "policy:tool_member"}
`))
	if err != nil {
		t.Fatal(err)
	}
	asm, err := proxy.Build(context.Background(), cfg, io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { asm.Close() })
	gw := httptest.NewServer(asm.Server)
	t.Cleanup(gw.Close)

	const msgs = `"model":"m","messages":[{"role":"user","content":"hi"}]`
	tool := func(entry, fn string) string {
		return `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}` + fn + `}` + entry + `}]`
	}
	tests := []struct {
		name, body, deny string // deny: the reason, "" when allowed
	}{
		{"top level", `{` + msgs + `,"x_route":{"key":"` + chatCredential + `"}}`, "policy:credential_leak"},
		{"tools entry", `{` + msgs + `,` + tool(`,"cache_control":{"note":"`+chatCredential+`"}`, "") + `}`, "policy:credential_leak"},
		{"tools function", `{` + msgs + `,` + tool("", `,"x_hint":"`+chatCredential+`"`) + `}`, "policy:credential_leak"},
		{"stream_options", `{` + msgs + `,"stream":true,"stream_options":{"x_flag":"` + chatCredential + `"}}`, "policy:credential_leak"},
		{"tools entry, cel", `{` + msgs + `,` + tool(`,"cache_control":{"type":"deny-me"}`, "") + `}`, "policy:tool_member"},
		{"top level, allowed", `{` + msgs + `,"x_route":{"tier":"gold","n":1.50}}`, ""},
		{"tools entry, allowed", `{` + msgs + `,` + tool(`,"cache_control":{"type":"ephemeral"}`, `,"x_hint":"h"`) + `}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			before := len(received)
			mu.Unlock()
			resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mu.Lock()
			got := received[before:]
			mu.Unlock()
			if tc.deny != "" {
				if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(out), tc.deny) || len(got) != 0 {
					t.Fatalf("status %d, upstream called %d times, want %s before the upstream: %s", resp.StatusCode, len(got), tc.deny, out)
				}
				return
			}
			if resp.StatusCode != http.StatusOK || len(got) != 1 || got[0] != tc.body {
				t.Fatalf("status %d: %s\nthe upstream received %q, want the body as sent", resp.StatusCode, out, got)
			}
		})
	}
}
