package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// treeChecker is a read-only interceptor that records every context it is
// given, as the emitter holds it, and any node that is not a JSON value
// tree: map[string]any, []any, string (valid UTF-8), json.Number, bool
// or nil.
type treeChecker struct {
	mu     sync.Mutex
	faults []string
	seen   map[enforcement.Point]int
	traced int // contexts with a trace member
}

func (k *treeChecker) Intercept(_ context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	fault := treeFault(map[string]any(c), "$")
	k.mu.Lock()
	defer k.mu.Unlock()
	k.seen[c.Point()]++
	if c["trace"] != nil {
		k.traced++
	}
	if fault != "" {
		k.faults = append(k.faults, string(c.Point())+": "+fault)
	}
	return enforcement.Allow(), nil
}

func (*treeChecker) NonBlocking() {}
func (*treeChecker) ReadsOnly()   {}

// treeFault names the first node of v that is not a value tree's, or "".
func treeFault(v any, path string) string {
	switch x := v.(type) {
	case nil, bool, json.Number:
		return ""
	case string:
		if !utf8.ValidString(x) {
			return path + ": invalid UTF-8"
		}
		return ""
	case map[string]any:
		if x == nil {
			return path + ": nil map"
		}
		for k, e := range x {
			if f := treeFault(e, path+"."+k); f != "" {
				return f
			}
		}
		return ""
	case []any:
		if x == nil {
			return path + ": nil slice"
		}
		for i, e := range x {
			if f := treeFault(e, fmt.Sprintf("%s[%d]", path, i)); f != "" {
				return f
			}
		}
		return ""
	}
	return fmt.Sprintf("%s: %T", path, v)
}

// A turn's builder takes its fields without proving them value trees
// (TrustedFields): every context it builds, on every surface, JSON and
// streamed, with tool calls, tool results, content parts and tools
// declared, must hold nothing else. A Go number or a typed slice here
// would reach interceptors and CEL as a type no decoded context has.
func TestTurnContextsAreValueTrees(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, []byte("interceptors:\n  - {name: allow, type: allow}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startPolicyGateway(t, path, "")
	k := &treeChecker{seen: map[enforcement.Point]int{}}
	em, err := enforcement.NewEmitter(enforcement.Options{Interceptors: []enforcement.Registration{{Name: "trees", Interceptor: k}}})
	if err != nil {
		t.Fatal(err)
	}
	swapped := *g.asm.Server.Policy()
	swapped.Emitter = em
	g.asm.Server.SetPolicy(&swapped)

	tool := `/tool get_weather {\"city\": \"Paris\", \"n\": 1.50, \"tags\": [true, null, {\"k\": -2e3}]}`
	chatTools := `"tools":[{"type":"function","function":{"name":"get_weather","description":"d","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`
	requests := []struct{ name, path, body string }{
		{"chat", "/v1/chat/completions", `{"model":"mock","temperature":0.5,"max_tokens":64,` + chatTools + `,"messages":[` +
			`{"role":"system","content":"be brief"},` +
			`{"role":"user","content":[{"type":"text","text":"earlier"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\",\"days\":3}"}}]},` +
			`{"role":"tool","tool_call_id":"call_1","content":"cold"},` +
			`{"role":"user","content":"` + tool + `"}]}`},
		{"responses", "/v1/responses", `{"model":"mock","temperature":0.5,"instructions":"be brief",` +
			`"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}],"input":[` +
			`{"role":"user","content":[{"type":"input_text","text":"earlier"}]},` +
			`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Oslo\"}"},` +
			`{"type":"function_call_output","call_id":"call_1","output":"cold"},` +
			`{"role":"user","content":"` + tool + `"}]}`},
		{"messages", "/v1/messages", `{"model":"mock","max_tokens":64,"system":[{"type":"text","text":"be brief"}],` +
			`"tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}],"messages":[` +
			`{"role":"user","content":"earlier"},` +
			`{"role":"assistant","content":[{"type":"text","text":"checking"},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Oslo","days":3}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"cold"}]}]},` +
			`{"role":"user","content":"` + tool + `"}]}`},
	}
	// Each request four ways: answered with a tool call and with text (only
	// a text answer has an output emission), JSON and streamed; half of
	// them carry a traceparent, which adds the trace member to the turn's
	// common members.
	for _, r := range requests {
		for _, variant := range []string{"tool", "stream tool", "text", "stream text"} {
			body := r.body
			if strings.HasPrefix(variant, "stream") {
				body = strings.Replace(body, `{"model":"mock",`, `{"model":"mock","stream":true,`, 1)
			}
			want := "get_weather"
			if strings.HasSuffix(variant, "text") {
				body = strings.Replace(body, tool, "/say hello there", 1)
				want = "there"
			}
			var header map[string]string
			if strings.HasPrefix(variant, "stream") {
				header = map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
			}
			status, _, out := do(t, http.MethodPost, g.main.URL+r.path, body, header)
			if status != http.StatusOK || !strings.Contains(string(out), want) {
				t.Fatalf("%s (%s): %d %s", r.name, variant, status, out)
			}
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, f := range k.faults {
		t.Error(f)
	}
	if k.traced == 0 {
		t.Error("no context carried a trace member: the common members went unchecked")
	}
	for p, want := range map[enforcement.Point]int{
		enforcement.AgentStartup: 4, enforcement.Input: 4, enforcement.PreModelCall: 4,
		enforcement.PostModelCall: 4, enforcement.Output: 2, enforcement.AgentShutdown: 4,
	} {
		if k.seen[p] < want*len(requests) {
			t.Errorf("%s: %d contexts checked, want %d", p, k.seen[p], want*len(requests))
		}
	}
}
