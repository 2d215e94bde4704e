package enforcement

import (
	"context"
	"testing"
)

// AdoptFields hands value trees over without a copy, converts what is not
// one, and never writes into the caller's session member.
func TestBuilderAdoptFields(t *testing.T) {
	b := newTestBuilder()
	b.AdoptFields = true
	b.Common = map[string]any{"tenant": map[string]any{"id": "acme"}, "session": map[string]any{"kind": "chat"}}
	messages := []any{map[string]any{"role": "user", "content": "hi"}}
	session := map[string]any{"labels": []any{"a"}}
	c, err := b.Build(context.Background(), PreModelCall, map[string]any{
		"model": map[string]any{"id": "m"}, "messages": messages, "session": session,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := c["messages"].([]any)
	if &got[0] != &messages[0] {
		t.Error("a value tree was copied")
	}
	if _, ok := session["id"]; ok {
		t.Error("Build wrote the session id into the caller's map")
	}
	if s := c["session"].(map[string]any); s["id"] != "sess-1" || s["labels"] == nil {
		t.Errorf("session = %v", s)
	}
	if _, ok := b.Common["session"].(map[string]any)["id"]; ok {
		t.Error("Build wrote the session id into the builder's Common")
	}
	start, err := b.Build(context.Background(), AgentStartup, StartupFields([]string{"b", "a"}))
	if err != nil {
		t.Fatal(err)
	}
	if start["tenant"].(map[string]any)["id"] != "acme" || start["session"].(map[string]any)["kind"] != "chat" {
		t.Errorf("common members = %v, %v", start["tenant"], start["session"])
	}
	if tools := start["agent_init"].(map[string]any)["tools_registered"]; len(tools.([]any)) != 2 {
		t.Errorf("tools_registered = %#v, want a converted []any", tools)
	}
}

// An adopting builder builds concurrently (parallel tool calls) with the
// members its contexts share set up once.
func TestBuilderAdoptFieldsConcurrent(t *testing.T) {
	b := newTestBuilder()
	b.AdoptFields = true
	b.Agent.Name = "Support"
	done := make(chan Context, 8)
	for range 8 {
		go func() {
			c, err := b.Build(context.Background(), Output, OutputFields("x"))
			if err != nil {
				t.Error(err)
			}
			done <- c
		}()
	}
	for range 8 {
		c := <-done
		a := c["agent"].(map[string]any)
		if a["id"] != "agent-1" || a["framework"] != "test-fw" || a["name"] != "Support" || c["session"].(map[string]any)["id"] != "sess-1" {
			t.Fatalf("agent %v, session %v", a, c["session"])
		}
	}
}

// A TrustedFields builder takes its fields as they are, unwalked; what is
// not a JSON value in them still never reaches an interceptor: the
// emitter's bounds check denies the context (host_error:context_invalid)
// before identity and dispatch.
func TestBuilderTrustedFields(t *testing.T) {
	b := newTestBuilder()
	b.AdoptFields, b.TrustedFields = true, true
	messages := []any{map[string]any{"role": "user", "content": "hi"}}
	c, err := b.Build(context.Background(), PreModelCall, PreModelFields("m", messages))
	if err != nil {
		t.Fatal(err)
	}
	if got := c["messages"].([]any); &got[0] != &messages[0] {
		t.Error("a trusted field was copied")
	}
	called := 0
	e := newTestEmitter(t, Options{Interceptors: []Registration{reg("count", func(context.Context, Context) (Verdict, error) {
		called++
		return Allow(), nil
	})}})
	if out, err := e.EmitUnchecked(context.Background(), c); err != nil || out.Verdict.Decision != DecisionAllow {
		t.Fatalf("a trusted value tree: %+v, %v", out, err)
	}
	for name, bad := range map[string]any{
		"typed slice":  []string{"hi"},
		"struct":       struct{ X int }{1},
		"channel":      make(chan int),
		"invalid text": "\xff",
		"typed map":    map[string]string{"role": "user"},
	} {
		called = 0
		c, err := b.Build(context.Background(), PreModelCall, PreModelFields("m", []any{map[string]any{"role": "user", "content": bad}}))
		if err != nil {
			t.Fatalf("%s: Build: %v", name, err)
		}
		out, err := e.EmitUnchecked(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if out.Proceed || out.Verdict.Reason != ReasonContextInvalid || called != 0 {
			t.Errorf("%s: proceed %v, reason %q, interceptor called %d times; want a context_invalid deny before dispatch", name, out.Proceed, out.Verdict.Reason, called)
		}
	}
}
