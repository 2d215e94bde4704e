package jsonvalue

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unsafe"
)

// testSizeMemo keeps verdicts for the objects it was told about.
type testSizeMemo struct {
	nodes map[unsafe.Pointer]map[any]any
	hits  int
}

func (m *testSizeMemo) keep(objs ...map[string]any) {
	if m.nodes == nil {
		m.nodes = map[unsafe.Pointer]map[any]any{}
	}
	for _, o := range objs {
		m.nodes[objKey(o)] = map[any]any{}
	}
}

func objKey(o map[string]any) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&o)) }

func (m *testSizeMemo) Keeps(o map[string]any) bool { return m.nodes[objKey(o)] != nil }
func (m *testSizeMemo) Verdict(j any, o map[string]any) (any, bool) {
	v, ok := m.nodes[objKey(o)][j]
	if ok {
		m.hits++
	}
	return v, ok
}
func (m *testSizeMemo) RememberVerdict(j any, o map[string]any, v any) {
	if n := m.nodes[objKey(o)]; n != nil {
		n[j] = v
	}
}

// TestCheckMemoMatchesCheck: with measures from earlier walks, Check
// accepts and refuses exactly as without them, at limits around the
// tree's size and depth.
func TestCheckMemoMatchesCheck(t *testing.T) {
	deep := map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": "d"}}}}
	msgs := []map[string]any{
		{"role": "user", "content": "hello é"},
		{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "args": map[string]any{"n": json.Number("12")}}}},
		deep,
		{"role": "tool", "content": strings.Repeat("x", 300)},
	}
	target := make([]any, len(msgs))
	for i, m := range msgs {
		target[i] = m
	}
	ctx := map[string]any{"spec": "AGENT-HOOKS/0.1", "target": target, "sequence": json.Number("3")}
	b, _ := json.Marshal(ctx)
	total := len(b)
	memo := &testSizeMemo{}
	memo.keep(msgs...)
	memo.keep(deep["a"].(map[string]any))
	var limits []Limits
	for _, n := range []int{0, 10, total / 3, total / 2, total - 1, total, total + 1} {
		for _, d := range []int{0, 3, 4, 5, 6, 7, 8} {
			limits = append(limits, Limits{MaxBytes: n, MaxDepth: d})
		}
	}
	for pass := range 3 {
		for _, lim := range limits {
			want, got := Check(ctx, lim), CheckMemo(ctx, lim, memo)
			if (want == nil) != (got == nil) || want != nil && !sameKind(want, got) {
				t.Fatalf("pass %d, %+v: Check %v, CheckMemo %v", pass, lim, want, got)
			}
		}
	}
	if memo.hits == 0 {
		t.Fatal("no measure was used")
	}
}

func sameKind(a, b error) bool {
	for _, k := range []error{ErrTooDeep, ErrTooLarge, ErrInvalidString, ErrInvalidNumber, ErrUnsupportedType, ErrNonFinite} {
		if errors.Is(a, k) != errors.Is(b, k) {
			return false
		}
	}
	return true
}
