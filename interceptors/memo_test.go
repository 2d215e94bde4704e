package interceptors

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"unsafe"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// nodeMemo is an enforcement.ObjectMemo over the objects it was told
// about, counting the verdicts it answered.
type nodeMemo struct {
	mu       sync.Mutex
	nodes    map[unsafe.Pointer]map[any]any
	answered int
}

func objPtr(o map[string]any) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&o)) }

// keepAll makes every object of v a node.
func (m *nodeMemo) keepAll(v any) {
	switch x := v.(type) {
	case map[string]any:
		if m.nodes == nil {
			m.nodes = map[unsafe.Pointer]map[any]any{}
		}
		if m.nodes[objPtr(x)] == nil {
			m.nodes[objPtr(x)] = map[any]any{}
		}
		for _, e := range x {
			m.keepAll(e)
		}
	case []any:
		for _, e := range x {
			m.keepAll(e)
		}
	}
}

func (m *nodeMemo) Canonical(map[string]any, int, int) ([]byte, bool) { return nil, false }
func (m *nodeMemo) Remember(map[string]any, int, int, []byte)         {}
func (m *nodeMemo) Keeps(o map[string]any) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nodes[objPtr(o)] != nil
}

func (m *nodeMemo) Verdict(judge any, o map[string]any) (any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.nodes[objPtr(o)][judge]
	if ok {
		m.answered++
	}
	return v, ok
}

func (m *nodeMemo) RememberVerdict(judge any, o map[string]any, v any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := m.nodes[objPtr(o)]; n != nil {
		n[judge] = v
	}
}

// TestMemoVerdictsUnchanged: regex (deny and redact) and redact judge a
// session's shared objects with the memo exactly as without it, on the
// first request (filling it) and on the next ones (reading it), and the
// memo is read.
func TestMemoVerdictsUnchanged(t *testing.T) {
	interceptors := map[string]enforcement.Interceptor{
		"regex deny":   build(t, credentials),
		"regex redact": build(t, redactEmail),
		"redact":       build(t, "  - name: scrub\n    type: redact\n"),
	}
	type target struct {
		name  string
		point enforcement.Point
		v     func() any
	}
	var targets []target
	for _, c := range credentialJoinCases(splitKey) {
		targets = append(targets, target{c.name, c.point, c.target})
	}
	conversation := func() any {
		return []any{
			map[string]any{"role": "system", "content": "Commit as dev@example.com; never print sk-abcdefghijklmnopqrstuvwxyz012345."},
			map[string]any{"role": "user", "content": []any{textPart("Mail ann@example.com"), textPart("@example.org"), imagePart()}},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
				"function": map[string]any{"name": "exec", "arguments": `{"cmd":"git log"}`}}}},
			map[string]any{"role": "tool", "tool_call_id": "c1", "content": "Author: Bob <bob@example.net>\n" + splitKey},
			map[string]any{"role": "user", "content": "clean text, nothing to find"},
			map[string]any{"role": "user", "content": []any{textPart("card 4111 1111 1111 1111")}},
		}
	}
	targets = append(targets, target{"conversation", enforcement.PreModelCall, conversation},
		target{"conversation at output", enforcement.Output, func() any { return map[string]any{"content": conversation()} }})
	answered := 0
	for name, ic := range interceptors {
		for _, tc := range targets {
			want := intercept(t, ic, at(tc.point, tc.v()))
			shared := tc.v() // the one tree every request of the session shares
			memo := &nodeMemo{}
			memo.keepAll(shared)
			ctx := enforcement.ContextWithObjectMemo(context.Background(), memo)
			for pass := range 3 {
				got, err := ic.Intercept(ctx, at(tc.point, shared))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s on %s, pass %d: %+v, want %+v", name, tc.name, pass, got, want)
				}
			}
			answered += memo.answered
		}
	}
	if answered == 0 {
		t.Fatal("the memo was never read")
	}
}
