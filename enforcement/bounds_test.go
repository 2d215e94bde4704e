package enforcement

import (
	"context"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// TestBoundCountsAliasedTargetOnce: the §12.3 size bound measures a target
// that is its member (as Builder makes it) once, so a response of n bytes
// fits a bound a little over n; a target that is a separate copy is
// measured too, so the same context then needs twice the room.
func TestBoundCountsAliasedTargetOnce(t *testing.T) {
	const n = 1 << 20
	content := strings.Repeat("x", n)
	build := func(t *testing.T) Context {
		t.Helper()
		c, err := newTestBuilder().Build(context.Background(), PostModelCall,
			PostModelFields("m", ModelResponse{Content: content, FinishReason: "stop"}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	size := func(t *testing.T, c Context) int {
		t.Helper()
		b, err := jsonvalue.Marshal(map[string]any(c))
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	cases := []struct {
		name     string
		separate bool // the target is a deep copy, not the member
		bound    func(full int) int
		admitted bool
	}{
		{"aliased, bound above one copy", false, func(full int) int { return full - n }, true},
		{"aliased, bound below one copy", false, func(int) int { return n }, false},
		{"separate copy, bound above one copy", true, func(full int) int { return full - n }, false},
		{"separate copy, bound above both", true, func(full int) int { return full }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t)
			full := size(t, c) // both copies, as the wire carries them
			if tc.separate {
				c["target"] = jsonvalue.DeepCopy(c["target"])
			}
			e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, MaxContextBytes: tc.bound(full)})
			out, err := e.EmitUnchecked(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			refused := out.Verdict.Reason == ReasonContextInvalid
			if refused == tc.admitted {
				t.Fatalf("bound %d, context %d bytes on the wire: verdict %s %s %q", tc.bound(full), full, out.Verdict.Decision, out.Verdict.Reason, out.Verdict.Message)
			}
		})
	}
}
