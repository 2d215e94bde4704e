package jcs

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unsafe"
)

// mapMemo is a Memo over the objects it was told about.
type mapMemo struct {
	kept  map[unsafe.Pointer]map[string]any
	bytes map[unsafe.Pointer][]byte
	at    map[unsafe.Pointer][2]int
	hits  int
}

func newMapMemo(objs ...map[string]any) *mapMemo {
	m := &mapMemo{kept: map[unsafe.Pointer]map[string]any{}, bytes: map[unsafe.Pointer][]byte{}, at: map[unsafe.Pointer][2]int{}}
	for _, o := range objs {
		m.kept[ptr(o)] = o
	}
	return m
}

func ptr(o map[string]any) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&o)) }

func (m *mapMemo) Canonical(o map[string]any, depth, maxDepth int) ([]byte, bool) {
	b, ok := m.bytes[ptr(o)]
	if ok && m.at[ptr(o)] == [2]int{depth, maxDepth} {
		m.hits++
		return b, true
	}
	return nil, false
}

func (m *mapMemo) Keeps(o map[string]any) bool { _, ok := m.kept[ptr(o)]; return ok }

func (m *mapMemo) Remember(o map[string]any, depth, maxDepth int, b []byte) {
	m.bytes[ptr(o)], m.at[ptr(o)] = b, [2]int{depth, maxDepth}
}

// TestMemoIdentityUnchanged: identities made with a memo, cold and warm,
// are those made without, and a walk that fails fails the same way.
func TestMemoIdentityUnchanged(t *testing.T) {
	msg := func(text string) map[string]any {
		return map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}, "n": json.Number("7")}
	}
	inner := msg("nested é \u2028")
	outer := map[string]any{"role": "assistant", "tool_calls": []any{inner}}
	deep := map[string]any{"a": map[string]any{"b": map[string]any{"c": "d"}}}
	big := map[string]any{"id": json.Number("9007199254740993")}
	tree := map[string]any{"messages": []any{msg("one"), outer, deep, msg(strings.Repeat("x", 40<<10))}, "target": "t"}
	objs := []map[string]any{outer, inner, deep}
	for _, m := range tree["messages"].([]any) {
		objs = append(objs, m.(map[string]any))
	}
	memo := newMapMemo(objs...)
	for _, maxDepth := range []int{0, 4, 5, 128} {
		want, wantErr := SHA256Identity(tree, maxDepth)
		for pass := range 2 {
			var got [SHA256IdentitySize]byte
			err := SHA256IdentityMemoInto(&got, tree, maxDepth, memo)
			if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Fatalf("maxDepth %d pass %d: error %v, want %v", maxDepth, pass, err, wantErr)
			}
			if err == nil && string(got[:]) != want {
				t.Fatalf("maxDepth %d pass %d: identity differs", maxDepth, pass)
			}
		}
	}
	if memo.hits == 0 {
		t.Fatal("the memo was never used")
	}
	// A kept object whose walk fails is never remembered.
	bad := map[string]any{"messages": []any{big}}
	memo = newMapMemo(big)
	var got [SHA256IdentitySize]byte
	for range 2 {
		if err := SHA256IdentityMemoInto(&got, bad, 0, memo); !errors.Is(err, ErrIntegerRange) {
			t.Fatalf("error %v, want the integer range", err)
		}
	}
	if len(memo.bytes) != 0 {
		t.Fatal("a failed walk was remembered")
	}
}

// TestMemoCanonicalEncode: Canonical.EncodeMemo makes Encode's bytes.
func TestMemoCanonicalEncode(t *testing.T) {
	m := map[string]any{"b": "2", "a": []any{"1"}}
	v := map[string]any{"x": []any{m, m}}
	memo := newMapMemo(m)
	var plain, memoed Canonical
	defer plain.Release()
	defer memoed.Release()
	if err := plain.Encode(v, 2, 0); err != nil {
		t.Fatal(err)
	}
	if err := memoed.EncodeMemo(v, 2, 0, memo); err != nil {
		t.Fatal(err)
	}
	if string(plain.bytes) != string(memoed.bytes) || memo.hits != 1 {
		t.Fatalf("%s != %s (hits %d)", plain.bytes, memoed.bytes, memo.hits)
	}
}
