package proxy

import "testing"

// sameMessages is true only for the conversation itself: a copy, a
// shorter view of it or another type goes to the element-wise comparison.
func TestSameMessages(t *testing.T) {
	orig := []any{map[string]any{"role": "user", "content": "a"}, map[string]any{"role": "user", "content": "b"}}
	cp := append([]any(nil), orig...)
	for _, c := range []struct {
		final any
		want  bool
	}{
		{orig, true},
		{orig[:2:2], true},
		{cp, false},
		{orig[:1], false},
		{orig[1:], false},
		{nil, false},
		{map[string]any{}, false},
	} {
		if got := sameMessages(c.final, orig); got != c.want {
			t.Errorf("sameMessages(%v) = %v, want %v", c.final, got, c.want)
		}
	}
	if !sameMessages([]any{}, []any{}) {
		t.Error("two empty conversations differ")
	}
}
