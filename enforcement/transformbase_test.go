package enforcement

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/targetpath"
)

// firstLeaf returns the path (from $target) of the first string leaf of v,
// members taken in name order, or "" when v holds none.
func firstLeaf(v any, at string) string {
	switch x := v.(type) {
	case string:
		return at
	case []any:
		for i, e := range x {
			if p := firstLeaf(e, at+"["+strconv.Itoa(i)+"]"); p != "" {
				return p
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if p := firstLeaf(x[k], at+"."+k); p != "" {
				return p
			}
		}
	}
	return ""
}

// TestRootTransformSharesOnlyWhatNoTransformChanges: a transform of the
// whole target no longer deep-copies the context it starts from; at every
// point the outcome is what transforms applied to a Clone give, later
// transforms of the new target included, and the emitted context is left
// as it was.
func TestRootTransformSharesOnlyWhatNoTransformChanges(t *testing.T) {
	for _, p := range []Point{Input, PreModelCall, PostModelCall, PreToolCall, PostToolCall, Output} {
		c := buildAt(t, nil, p)
		before := c.Clone()
		v1 := jsonvalue.DeepCopy(c["target"])
		leaf := firstLeaf(v1, "$target")
		if leaf == "$target" {
			v1 = "rewritten"
		} else {
			lp, err := targetpath.Parse(leaf)
			if err != nil {
				t.Fatal(err)
			}
			if v1, err = lp.Replace(v1, "rewritten"); err != nil {
				t.Fatal(err)
			}
		}
		regs := []Registration{reg("root", func(context.Context, Context) (Verdict, error) { return TransformTo("$target", v1), nil })}
		want := c.Clone()
		if err := ApplyTransform(want, "$target", v1); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if leaf != "$target" {
			regs = append(regs, reg("leaf", func(context.Context, Context) (Verdict, error) { return TransformTo(leaf, "second"), nil }))
			if err := ApplyTransform(want, leaf, "second"); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		e := newTestEmitter(t, Options{Interceptors: regs, Composition: Composition{Profile: SequentialRunAll}})
		out, err := e.EmitUnchecked(context.Background(), c)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if out.Verdict.Decision != DecisionTransform {
			t.Fatalf("%s: verdict %+v", p, out.Verdict)
		}
		if !jsonvalue.Equal(map[string]any(out.Context), map[string]any(want)) {
			t.Errorf("%s: outcome %v, want %v", p, out.Context, want)
		}
		if alias, ok := targetAlias(out.Context, p); ok && !sameValue(alias, out.Context["target"]) && !jsonvalue.Equal(alias, out.Context["target"]) {
			t.Errorf("%s: the target's mirror was not written", p)
		}
		if !jsonvalue.Equal(map[string]any(c), map[string]any(before)) {
			t.Errorf("%s: the emitted context changed: %v, was %v", p, c, before)
		}
	}
}
