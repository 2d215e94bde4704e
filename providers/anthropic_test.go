package providers

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

const anthropicBody = `{"model":"claude-x","max_tokens":16,"messages":[{"role":"user","content":"hi <b> \u00e9"}]}`

// anthropicClientHeaders is what Claude Code might send the gateway.
func anthropicClientHeaders() http.Header {
	h := clientHeaders()
	h.Set("X-Api-Key", "client-x-key")
	h.Set("Anthropic-Version", "2023-01-01")
	h.Set("Anthropic-Beta", "tools-2024-04-04")
	return h
}

func TestAnthropicForwardsRequest(t *testing.T) {
	tests := []struct {
		name        string
		cfg         AnthropicConfig
		op          wire.Operation
		body        string
		header      func(http.Header)
		wantPath    string
		wantKey     string
		wantVersion string
		wantAccept  string
	}{
		{"configured key, client version", AnthropicConfig{APIKey: "sk-ant-gw"}, wire.OpMessages, anthropicBody, nil,
			"/base/v1/messages", "sk-ant-gw", "2023-01-01", "application/json"},
		{"configured version without a client one", AnthropicConfig{APIKey: "sk-ant-gw", Version: "2099-01-01"}, wire.OpMessages, anthropicBody,
			func(h http.Header) { h.Del("Anthropic-Version") }, "/base/v1/messages", "sk-ant-gw", "2099-01-01", "application/json"},
		{"default version", AnthropicConfig{APIKey: "sk-ant-gw"}, wire.OpMessages, anthropicBody,
			func(h http.Header) { h.Del("Anthropic-Version") }, "/base/v1/messages", "sk-ant-gw", DefaultAnthropicVersion, "application/json"},
		{"stream accept", AnthropicConfig{}, wire.OpMessages, `{"model":"m","stream":true}`, nil,
			"/base/v1/messages", "", "2023-01-01", "text/event-stream"},
		{"count tokens ignores stream", AnthropicConfig{APIKey: "sk-ant-gw"}, wire.OpCountTokens, `{"model":"m","stream":true}`, nil,
			"/base/v1/messages/count_tokens", "sk-ant-gw", "2023-01-01", "application/json"},
		{"pass-through x-api-key", AnthropicConfig{APIKey: "sk-ant-gw", PassClientKey: true}, wire.OpMessages, anthropicBody, nil,
			"/base/v1/messages", "client-x-key", "2023-01-01", "application/json"},
		{"pass-through bearer", AnthropicConfig{PassClientKey: true}, wire.OpMessages, anthropicBody,
			func(h http.Header) { h.Del("X-Api-Key") }, "/base/v1/messages", "client-key", "2023-01-01", "application/json"},
		{"pass-through falls back to the configured key", AnthropicConfig{APIKey: "sk-ant-gw", PassClientKey: true}, wire.OpMessages, anthropicBody,
			func(h http.Header) { h.Del("X-Api-Key"); h.Del("Authorization") }, "/base/v1/messages", "sk-ant-gw", "2023-01-01", "application/json"},
		{"client key ignored without pass-through", AnthropicConfig{}, wire.OpMessages, anthropicBody, nil,
			"/base/v1/messages", "", "2023-01-01", "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const respBody = `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`
			srv, seen := recordingServer(t, http.StatusTooManyRequests, respBody)
			cfg := tt.cfg
			cfg.BaseURL = srv.URL + "/base"
			up, err := NewAnthropic(cfg)
			if err != nil {
				t.Fatal(err)
			}
			h := anthropicClientHeaders()
			if tt.header != nil {
				tt.header(h)
			}
			resp, err := up.Send(t.Context(), tt.op, []byte(tt.body), h)
			if err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, resp); resp.StatusCode != http.StatusTooManyRequests || got != respBody {
				t.Errorf("response = %d %q, want the upstream's untouched", resp.StatusCode, got)
			}
			req := <-seen
			if req.method != http.MethodPost || req.path != tt.wantPath || req.rawQuery != "" {
				t.Errorf("request line = %s %s?%s, want POST %s", req.method, req.path, req.rawQuery, tt.wantPath)
			}
			if !bytes.Equal(req.body, []byte(tt.body)) {
				t.Errorf("body = %s, want byte-identical", req.body)
			}
			want := map[string]string{
				"X-Api-Key": tt.wantKey, "Anthropic-Version": tt.wantVersion, "Anthropic-Beta": "tools-2024-04-04",
				"Accept": tt.wantAccept, "Content-Type": "application/json", "User-Agent": "hooks-gateway",
				"Traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
			}
			for k, v := range want {
				if got := req.header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			for _, k := range []string{"Authorization", "Cookie", "Agent-Hooks-Session", "Openai-Organization", "X-Forwarded-For"} {
				if v := req.header.Values(k); len(v) > 0 {
					t.Errorf("client header %s leaked upstream: %q", k, v)
				}
			}
		})
	}
}

// The betas of anthropic-beta reach the provider as the Messages surface
// projects them (messages.BetaHeader): the list a policy judged, joined by
// commas, nothing beside it.
func TestAnthropicSendsBetasAsJudged(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  []string
	}{
		{[]string{"tools-2024-04-04"}, []string{"tools-2024-04-04"}},
		{[]string{" a-1 ,b-2,, ", "c-3"}, []string{"a-1,b-2,c-3"}},
		{[]string{" , "}, nil},
		{nil, nil},
	} {
		srv, seen := recordingServer(t, http.StatusOK, `{}`)
		up, err := NewAnthropic(AnthropicConfig{BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		h := anthropicClientHeaders()
		h.Del("Anthropic-Beta")
		for _, l := range c.lines {
			h.Add("Anthropic-Beta", l)
		}
		resp, err := up.Send(t.Context(), wire.OpMessages, []byte(anthropicBody), h)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := (<-seen).header.Values("Anthropic-Beta"); !slices.Equal(got, c.want) {
			t.Errorf("%q: upstream anthropic-beta = %q, want %q", c.lines, got, c.want)
		}
	}
}

func TestAnthropicDefaultsAndServes(t *testing.T) {
	up, err := NewAnthropic(AnthropicConfig{Models: []string{"claude-*", "claude-x", "claude-x"}})
	if err != nil {
		t.Fatal(err)
	}
	if up.Name() != "anthropic" || up.endpoints[wire.OpMessages] != "https://api.anthropic.com/v1/messages" ||
		up.endpoints[wire.OpCountTokens] != "https://api.anthropic.com/v1/messages/count_tokens" || up.version != DefaultAnthropicVersion {
		t.Errorf("defaults: name %q endpoints %v version %q", up.Name(), up.endpoints, up.version)
	}
	if got := up.Models(); len(got) != 1 || got[0] != "claude-x" {
		t.Errorf("Models() = %v", got)
	}
	for op, want := range map[wire.Operation]bool{wire.OpMessages: true, wire.OpCountTokens: true, wire.OpChatCompletions: false, wire.OpResponses: false} {
		if up.Serves(op) != want {
			t.Errorf("Serves(%s) = %v", op, !want)
		}
	}
	_, err = up.Send(t.Context(), wire.OpChatCompletions, []byte(anthropicBody), nil)
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("chat completions: err = %v, want ErrUnsupported", err)
	}
}

func TestNewAnthropicErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  AnthropicConfig
		want string
	}{
		{"relative base", AnthropicConfig{BaseURL: "api.anthropic.com"}, "absolute"},
		{"base with password", AnthropicConfig{BaseURL: "https://u:hunter2@%zz"}, "invalid URL"},
		{"key with newline", AnthropicConfig{APIKey: "sk-ant\nx"}, "control characters"},
		{"version with newline", AnthropicConfig{Version: "2023\n"}, "control characters"},
		{"bad pattern", AnthropicConfig{Models: []string{"["}}, "pattern"},
		{"negative timeout", AnthropicConfig{Timeout: -1}, "negative timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewAnthropic(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "sk-ant") {
				t.Errorf("error leaks a secret: %v", err)
			}
		})
	}
}

func TestAnthropicTransportErrorNamesUpstreamNotKey(t *testing.T) {
	srv, _ := recordingServer(t, http.StatusOK, "")
	srv.Close() // refuse connections
	up, err := NewAnthropic(AnthropicConfig{Name: "claude", BaseURL: srv.URL, APIKey: "sk-ant-secret"})
	if err != nil {
		t.Fatal(err)
	}
	h := anthropicClientHeaders()
	_, err = up.Send(t.Context(), wire.OpMessages, []byte(anthropicBody), h)
	if err == nil || !strings.Contains(err.Error(), "claude") {
		t.Fatalf("err = %v, want the upstream's name", err)
	}
	for _, secret := range []string{"sk-ant-secret", "client-x-key", "hi <b>"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error carries %q: %v", secret, err)
		}
	}
}
