package interceptors

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// TestReadOnlyTypesNeverWrite audits the types that claim
// enforcement.ReadsOnly (the emitter then hands them its own snapshot):
// whatever they answer, deny or transform, the context is unchanged, and
// changing the transform value they return does not reach the context.
func TestReadOnlyTypesNeverWrite(t *testing.T) {
	policies := map[string]string{
		"allow":        "  - {name: a, type: allow}\n",
		"deny":         "  - {name: d, type: deny, escalate: true}\n",
		"regex deny":   "  - name: r\n    type: regex\n    action: deny\n    patterns: ['secret']\n",
		"regex redact": "  - name: r\n    type: regex\n    action: redact\n    patterns: ['[a-z]+@[a-z]+\\.com', 'secret']\n",
		"cel transform": `  - name: c
    type: cel
    rules:
      - points: [post_model_call]
        when: 'size(target.tool_calls) > 0'
        transform: {path: '$target.tool_calls[0].args', value: 'target.tool_calls[0].args'}
      - points: [pre_model_call]
        when: 'true'
        transform: {path: '$target', value: 'target'}
`,
		"redact": "  - {name: x, type: redact, detectors: [email]}\n",
		"tools clamp": `  - name: t
    type: tools
    deny: [shell]
    arguments:
      - tool: send
        properties:
          n: {type: integer, minimum: 1, maximum: 2, on_violation: clamp}
`,
		"egress rewrite": "  - {name: e, type: egress, allow_hosts: [ok.example], action: rewrite}\n",
		"cel deny":       "  - name: c\n    type: cel\n    rules:\n      - {when: 'point == \"pre_model_call\"', deny: {reason: policy:x}}\n",
	}
	b := &enforcement.Builder{Agent: enforcement.Agent{ID: "a", Framework: "test"}, SessionID: "s", Sequence: &enforcement.Counter{}}
	ctx := context.Background()
	pre, err := b.Build(ctx, enforcement.PreModelCall, enforcement.PreModelFields("gpt-4o", []any{
		map[string]any{"role": "user", "content": "mail bob@example.com the secret, see https://evil.example/x"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	// A request with tools and model.params: the members judged beside the
	// target are read, never written, and a key in the target is renamed in
	// the transform only.
	wide := enforcement.PreModelFields("gpt-4o", []any{
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
			"function": map[string]any{"name": "send", "arguments": "{}"}}}, "ann@example.com": "the secret https://evil.example/k"},
		// Matches split over parts: a run's rewrite is the rewriter's own too.
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "mail bob@exa"}, map[string]any{"type": "image_url", "image_url": map[string]any{"url": "x"}},
			map[string]any{"type": "text", "text": "mple.com, the sec"}, map[string]any{"type": "text", "text": "ret, https://evil.ex"},
			map[string]any{"type": "text", "text": "ample/x"}}},
	})
	wide["tools"] = []any{map[string]any{"name": "send", "description": "Sends mail.", "schema": map[string]any{
		"type": "object", "properties": map[string]any{"to": map[string]any{"type": "string"}}}}}
	wide["model"].(map[string]any)["params"] = map[string]any{"temperature": json.Number("0.2"), "metadata": map[string]any{"k": "v"}}
	preWide, err := b.Build(ctx, enforcement.PreModelCall, wide)
	if err != nil {
		t.Fatal(err)
	}
	// The same request with matches beside the target: the types that
	// transform deny, as they cannot reach them.
	outside := enforcement.PreModelFields("gpt-4o", []any{map[string]any{"role": "user", "content": "hi"}})
	outside["tools"] = []any{map[string]any{"name": "send", "description": "Mail bob@example.com the secret at https://evil.example/x"}}
	outside["model"].(map[string]any)["params"] = map[string]any{"metadata": map[string]any{"secret": "amy@example.com"}}
	preOutside, err := b.Build(ctx, enforcement.PreModelCall, outside)
	if err != nil {
		t.Fatal(err)
	}
	post, err := b.Build(ctx, enforcement.PostModelCall, enforcement.PostModelFields("gpt-4o", enforcement.ModelResponse{
		Content:      "write to amy@example.com",
		ToolCalls:    []enforcement.ToolCall{{ID: "c1", Name: "send", Args: map[string]any{"to": "amy@example.com", "n": json.Number("3"), "url": "https://evil.example/a"}}},
		FinishReason: "tool_calls",
	}))
	if err != nil {
		t.Fatal(err)
	}
	transforms, owning := 0, 0
	for name, src := range policies {
		ic := build(t, src)
		if _, ok := ic.(enforcement.ReadsOnly); !ok {
			t.Fatalf("%s: does not claim ReadsOnly", name)
		}
		for i, c := range []enforcement.Context{pre, preWide, preOutside, post} {
			before := jsonvalue.DeepCopy(map[string]any(c))
			v, err := ic.Intercept(ctx, c)
			if err != nil {
				t.Fatalf("%s at %s: %v", name, c.Point(), err)
			}
			if !reflect.DeepEqual(map[string]any(c), before) {
				t.Fatalf("%s at %s changed the context", name, c.Point())
			}
			if scans := strings.HasPrefix(name, "regex") || name == "redact" || name == "egress rewrite"; scans && i == 2 && v.Decision != enforcement.DecisionDeny {
				t.Errorf("%s: %+v, want deny for the matches beside the target", name, v)
			}
			if v.Transform != nil {
				transforms++
				if _, owns := ic.(enforcement.OwnsTransforms); owns {
					// The emitter adopts the value as it is: it must be a
					// value tree already.
					if !jsonvalue.IsValueTree(v.Transform.Value) {
						t.Fatalf("%s at %s claims OwnsTransforms but its value is not a value tree", name, c.Point())
					}
					owning++
				}
				scribble(v.Transform.Value)
				if !reflect.DeepEqual(map[string]any(c), before) {
					t.Fatalf("%s at %s: its transform value shares memory with the context", name, c.Point())
				}
			}
		}
	}
	if transforms != 14 {
		t.Errorf("%d transforms audited, want the 14 the policies produce", transforms)
	}
	if owning == 0 {
		t.Error("no transform of a type claiming OwnsTransforms was audited")
	}
}

// scribble overwrites every container member of v in place.
func scribble(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			scribble(e)
			x[k] = "scribbled"
		}
	case []any:
		for i, e := range x {
			scribble(e)
			x[i] = "scribbled"
		}
	}
}
