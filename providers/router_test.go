package providers

import (
	"context"
	"errors"
	"net/http"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// namedUpstream is an Upstream that only has a name, models and the
// operations it serves (chat completions when ops is empty).
type namedUpstream struct {
	name   string
	models []string
	ops    []wire.Operation
}

func (u namedUpstream) Name() string     { return u.name }
func (u namedUpstream) Models() []string { return u.models }
func (u namedUpstream) Serves(op wire.Operation) bool {
	return len(u.ops) == 0 && op == wire.OpChatCompletions || slices.Contains(u.ops, op)
}
func (u namedUpstream) Send(context.Context, wire.Operation, []byte, http.Header) (*http.Response, error) {
	return nil, errors.New("not used")
}

func TestRouterRoute(t *testing.T) {
	r, err := NewRouter([]Route{
		{Patterns: []string{"gpt-4o-mini"}, Upstream: namedUpstream{name: "cheap"}},
		{Patterns: []string{"gpt-*", "o[0-9]*"}, Upstream: namedUpstream{name: "openai"}},
		{Patterns: []string{"meta-llama/*"}, Upstream: namedUpstream{name: "vllm"}},
		{Patterns: []string{"mock"}, Upstream: NewMock("", nil)},
		{Patterns: []string{"*"}, Upstream: namedUpstream{name: "fallback"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		"gpt-4o-mini":              "cheap", // first matching route wins over the later glob
		"gpt-4o":                   "openai",
		"o3":                       "openai",
		"meta-llama/Llama-3.1-8B":  "vllm",
		"mock":                     "mock",
		"claude":                   "fallback",
		"org/sub/model":            "fallback", // '*' crosses '/'
		"Qwen/Qwen2.5-7B-Instruct": "fallback",
	}
	for model, want := range tests {
		up, ok := r.Route(model, wire.OpChatCompletions)
		if !ok || up.Name() != want {
			t.Errorf("Route(%q) = %v, %v; want %s", model, up, ok, want)
		}
	}
	if _, ok := r.Route("", wire.OpChatCompletions); ok {
		t.Error("the empty model routed")
	}
}

func TestRouterNoMatch(t *testing.T) {
	r, err := NewRouter([]Route{{Patterns: []string{"gpt-?o"}, Upstream: namedUpstream{name: "openai"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"gpt-4o-mini", "claude", "gpt-4o\x00"} {
		if up, ok := r.Route(model, wire.OpChatCompletions); ok {
			t.Errorf("Route(%q) = %s, want no match", model, up.Name())
		}
	}
	if up, ok := r.Route("gpt-4o", wire.OpChatCompletions); !ok || up.Name() != "openai" {
		t.Error("gpt-4o did not route")
	}
}

func TestRouterSlashLikePathMatchOtherwise(t *testing.T) {
	r, err := NewRouter([]Route{{Patterns: []string{"a/?/c", `x\*`}, Upstream: namedUpstream{name: "u"}}})
	if err != nil {
		t.Fatal(err)
	}
	// '?' matches any one character, '/' included.
	for model, want := range map[string]bool{"a/b/c": true, "a///c": true, "a//c": false, "x*": true, "xy": false} {
		if _, ok := r.Route(model, wire.OpChatCompletions); ok != want {
			t.Errorf("Route(%q) = %v, want %v", model, ok, want)
		}
	}
}

func TestNewRouterErrors(t *testing.T) {
	up := namedUpstream{name: "openai"}
	tests := []struct {
		name   string
		routes []Route
		want   string
	}{
		{"no routes", nil, "no routes"},
		{"no upstream", []Route{{Patterns: []string{"*"}}}, "no upstream"},
		{"no patterns", []Route{{Upstream: up}}, "no patterns"},
		{"empty pattern", []Route{{Patterns: []string{""}, Upstream: up}}, "empty model pattern"},
		{"bad pattern", []Route{{Patterns: []string{"*"}, Upstream: up}, {Patterns: []string{"gpt-[4"}, Upstream: up}}, `route 1 (openai): model pattern "gpt-[4"`},
		{"trailing backslash", []Route{{Patterns: []string{`gpt\`}, Upstream: up}}, "syntax error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewRouter(tt.routes)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	_, err := NewRouter([]Route{{Patterns: []string{"["}, Upstream: up}})
	if !errors.Is(err, path.ErrBadPattern) {
		t.Errorf("err = %v, want it to wrap path.ErrBadPattern", err)
	}
}

func TestRouterModels(t *testing.T) {
	r, err := NewRouter([]Route{
		{Patterns: []string{"gpt-*"}, Upstream: namedUpstream{name: "openai", models: []string{"gpt-4o", "gpt-4o-mini", "o3"}}},
		{Patterns: []string{"mock", "mock-*"}, Upstream: NewMock("", []string{"mock", "mock-fast"})},
		{Patterns: []string{"llama3"}, Upstream: namedUpstream{name: "ollama"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// o3 is dropped: no route would accept it.
	want := "gpt-4o,gpt-4o-mini,llama3,mock,mock-fast"
	if got := strings.Join(r.Models(), ","); got != want {
		t.Errorf("Models = %s, want %s", got, want)
	}
	r.Models()[0] = "changed"
	if r.Models()[0] != "gpt-4o" {
		t.Error("Models exposes internal state")
	}
}

func TestRouterRouteSkipsUpstreamsNotServingTheOperation(t *testing.T) {
	r, err := NewRouter([]Route{
		{Patterns: []string{"claude-*"}, Upstream: namedUpstream{name: "chat-only"}},
		{Patterns: []string{"claude-*"}, Upstream: namedUpstream{name: "anthropic", ops: []wire.Operation{wire.OpMessages, wire.OpCountTokens}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if up, ok := r.Route("claude-x", wire.OpMessages); !ok || up.Name() != "anthropic" {
		t.Errorf("messages routed to %v, %v; want anthropic", up, ok)
	}
	if up, ok := r.Route("claude-x", wire.OpChatCompletions); !ok || up.Name() != "chat-only" {
		t.Errorf("chat routed to %v, %v; want chat-only", up, ok)
	}
	if _, ok := r.Route("claude-x", wire.OpResponses); ok {
		t.Error("responses routed although no upstream serves it")
	}
}
