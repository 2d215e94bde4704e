package enforcement

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/hooks-gateway/hooks-gateway/internal/jcs"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// testMemo is an ObjectMemo over the objects it was told about.
type testMemo struct {
	mu    sync.Mutex
	nodes map[unsafe.Pointer]*testNode
}

type testNode struct {
	canon          []byte
	depth, maxDept int
	verdicts       map[any]any
}

func newTestMemo(objs ...map[string]any) *testMemo {
	m := &testMemo{nodes: map[unsafe.Pointer]*testNode{}}
	for _, o := range objs {
		m.nodes[objAddr(o)] = &testNode{verdicts: map[any]any{}}
	}
	return m
}

func objAddr(o map[string]any) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&o)) }

func (m *testMemo) node(o map[string]any) *testNode {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nodes[objAddr(o)]
}

func (m *testMemo) Canonical(o map[string]any, depth, maxDepth int) ([]byte, bool) {
	n := m.node(o)
	if n == nil || n.canon == nil || n.depth != depth || n.maxDept != maxDepth {
		return nil, false
	}
	return n.canon, true
}
func (m *testMemo) Keeps(o map[string]any) bool { return m.node(o) != nil }
func (m *testMemo) Remember(o map[string]any, depth, maxDepth int, b []byte) {
	if n := m.node(o); n != nil {
		m.mu.Lock()
		n.canon, n.depth, n.maxDept = b, depth, maxDepth
		m.mu.Unlock()
	}
}
func (m *testMemo) Verdict(j any, o map[string]any) (any, bool) {
	if n := m.node(o); n != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		v, ok := n.verdicts[j]
		return v, ok
	}
	return nil, false
}
func (m *testMemo) RememberVerdict(j any, o map[string]any, v any) {
	if n := m.node(o); n != nil {
		m.mu.Lock()
		n.verdicts[j] = v
		m.mu.Unlock()
	}
}

// emitMessages emits a pre_model_call over messages through e, with memo
// when it is not nil.
func emitMessages(t *testing.T, e *Emitter, messages []any, memo ObjectMemo) *Outcome {
	t.Helper()
	b := newTestBuilder()
	b.AdoptFields, b.TrustedFields = true, true
	c, err := b.Build(context.Background(), PreModelCall, PreModelFields("model-x", messages))
	if err != nil {
		t.Fatal(err)
	}
	var opts []EmitOption
	if memo != nil {
		opts = append(opts, WithObjectMemo(memo))
	}
	out, err := e.EmitUnchecked(context.Background(), c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMemoTransformsLeaveKeptObjects: a transform whose value keeps a
// session's shared objects, then path transforms into them, fold into
// the same context and identities as without the memo, and the shared
// objects never change.
func TestMemoTransformsLeaveKeptObjects(t *testing.T) {
	messages := func() (map[string]any, map[string]any) {
		return map[string]any{"role": "user", "content": "keep me"},
			map[string]any{"role": "assistant", "content": "second", "meta": map[string]any{"x": "y", "list": []any{"a", "b"}}}
	}
	run := func(n1, n2 map[string]any, memo ObjectMemo) *Outcome {
		e := newTestEmitter(t, Options{Interceptors: []Registration{
			// As a rewriter with a memo does: the unchanged kept objects
			// themselves, in a new list.
			reg("root", func(context.Context, Context) (Verdict, error) {
				return TransformTo("$target", []any{n1, n2, map[string]any{"role": "user", "content": "new"}}), nil
			}),
			verdictReg(TransformTo("$target[1].meta.x", "z")),
			verdictReg(TransformTo("$target[1].meta.list[0]", "c")),
			verdictReg(TransformTo("$target[0].content", "changed")),
		}})
		return emitMessages(t, e, []any{n1, n2}, memo)
	}
	a1, a2 := messages()
	want := run(a1, a2, nil)
	n1, n2 := messages()
	pristine1, pristine2 := jsonvalue.DeepCopy(n1), jsonvalue.DeepCopy(n2)
	memo := newTestMemo(n1, n2)
	for pass := range 2 {
		got := run(n1, n2, memo)
		if !jsonvalue.Equal(got.Context["target"], want.Context["target"]) {
			t.Fatalf("pass %d: folded target %v, want %v", pass, got.Context["target"], want.Context["target"])
		}
		if *got.Record.InputIdentity != *want.Record.InputIdentity || *got.Record.EnforcedIdentity != *want.Record.EnforcedIdentity {
			t.Fatalf("pass %d: identities differ with the memo", pass)
		}
		if !jsonvalue.Equal(n1, pristine1) || !jsonvalue.Equal(n2, pristine2) {
			t.Fatalf("pass %d: a kept object changed: %v, %v", pass, n1, n2)
		}
	}
	if memo.node(n2).canon == nil {
		t.Fatal("the memo was not used for the identities")
	}
}

// trailTestMemo is a testMemo that keeps identity walks' trails, and the
// bytes each point's last walk hashed.
type trailTestMemo struct {
	*testMemo
	trails map[trailSlot]*jcs.Trail
	hashed map[trailSlot]int
}

// trailSlot names a trail as trailMemo does.
type trailSlot struct {
	point  string
	folded bool
}

func (m *trailTestMemo) TakeTrail(point string, folded bool) *jcs.Trail {
	t := m.trails[trailSlot{point, folded}]
	delete(m.trails, trailSlot{point, folded})
	return t
}

func (m *trailTestMemo) KeepTrail(point string, folded bool, t *jcs.Trail) {
	m.trails[trailSlot{point, folded}], m.hashed[trailSlot{point, folded}] = t, t.Hashed()
}

// TestTrailsPerWalk: when every turn is transformed, the emitted and the
// folded contexts' identities each resume from their own trail, so the
// next turn of a growing conversation hashes less than its whole history
// on both, and the identities are those made without a memo.
func TestTrailsPerWalk(t *testing.T) {
	var messages []any
	memo := &trailTestMemo{testMemo: newTestMemo(), trails: map[trailSlot]*jcs.Trail{}, hashed: map[trailSlot]int{}}
	// As the gateway's rewriters do: the first message redacted, the
	// others the session's own objects, under the gateway's promise.
	e := newTestEmitter(t, Options{FrozenContexts: true, Interceptors: []Registration{
		reg("redact", func(context.Context, Context) (Verdict, error) {
			out := append([]any{map[string]any{"role": "user", "content": "redacted"}}, messages[1:]...)
			return TransformTo("$target", out), nil
		}),
	}})
	emit := func(memo ObjectMemo) *Outcome { return emitMessages(t, e, messages, memo) }
	for turn := range 12 {
		m := map[string]any{"role": "user", "content": fmt.Sprintf("turn %d: %s", turn, strings.Repeat("output line\n", 400))}
		memo.nodes[objAddr(m)] = &testNode{verdicts: map[any]any{}}
		messages = append(messages, m)
		want := emit(nil)
		got := emit(memo)
		if *got.Record.InputIdentity != *want.Record.InputIdentity || *got.Record.EnforcedIdentity != *want.Record.EnforcedIdentity {
			t.Fatalf("turn %d: identities differ with trails", turn)
		}
		if turn < 4 {
			continue
		}
		history, _ := jcs.Canonicalize(messages)
		added, _ := jcs.Canonicalize(m)
		for _, slot := range []trailSlot{{string(PreModelCall), false}, {string(PreModelCall), true}} {
			// The history is hashed twice (the messages, then the target
			// mirroring them after the sequence number); the trail spares
			// the first but for the new message and at most a state
			// interval and a message hashed again.
			if h := memo.hashed[slot]; h > len(history)+len(added)+8<<10 {
				t.Fatalf("turn %d: %+v hashed %d bytes; the history has %d", turn, slot, h, len(history))
			}
		}
	}
}
