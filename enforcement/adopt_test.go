package enforcement

import (
	"context"
	"testing"
)

// owningReg is an interceptor that claims OwnsTransforms and answers a
// transform of the whole target to the value fresh builds, which it
// hands to got.
type owningReg struct {
	fresh func() any
	got   *any
}

func (o owningReg) Intercept(context.Context, Context) (Verdict, error) {
	v := o.fresh()
	*o.got = v
	return TransformTo("$target", v), nil
}
func (owningReg) NonBlocking()    {}
func (owningReg) ReadsOnly()      {}
func (owningReg) OwnsTransforms() {}

// TestOwnedTransformAdopted: the value of an interceptor claiming
// OwnsTransforms becomes the target as it is, any other interceptor's is
// copied; a later transform of a path inside an adopted target works on
// a copy, so the value the first verdict holds never changes.
func TestOwnedTransformAdopted(t *testing.T) {
	fresh := func() any {
		return []any{map[string]any{"role": "user", "content": "[redacted]"}}
	}
	var got any
	owning := Registration{Name: "owning", Interceptor: owningReg{fresh: fresh, got: &got}}
	plain := reg("plain", func(context.Context, Context) (Verdict, error) {
		v := fresh()
		got = v
		return TransformTo("$target", v), nil
	})
	for _, tc := range []struct {
		name  string
		reg   Registration
		adopt bool
	}{{"owning", owning, true}, {"plain", plain, false}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEmitter(t, Options{Interceptors: []Registration{tc.reg}})
			out, err := e.Emit(context.Background(), buildAt(t, nil, PreModelCall))
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(out.Target(), fresh()) {
				t.Fatalf("target %v, want the transform's value", out.Target())
			}
			if adopted := sameValue(out.Target(), got); adopted != tc.adopt {
				t.Errorf("target is the interceptor's own value: %v, want %v", adopted, tc.adopt)
			}
			if !sameValue(out.Context["messages"], out.Target()) {
				t.Error("the mirrored member is not the new target")
			}
		})
	}

	t.Run("later path transform", func(t *testing.T) {
		for _, profile := range []Profile{SequentialFirstDeny, SequentialRunAll} {
			second := verdictReg(TransformTo("$target[0].content", "second"))
			e := newTestEmitter(t, Options{Interceptors: []Registration{owning, second}, Composition: Composition{Profile: profile}})
			out, err := e.Emit(context.Background(), buildAt(t, nil, PreModelCall))
			if err != nil {
				t.Fatal(err)
			}
			want := fresh()
			if !jsonEqual(got, want) {
				t.Errorf("%s: the adopted value changed under a later transform: %v", profile, got)
			}
			want.([]any)[0].(map[string]any)["content"] = "second"
			if !jsonEqual(out.Target(), want) || !jsonEqual(out.Context["messages"], want) {
				t.Errorf("%s: target %v, messages %v, want %v", profile, out.Target(), out.Context["messages"], want)
			}
			if mustIdentity(t, out.Context) != *out.Record.EnforcedIdentity {
				t.Errorf("%s: enforced identity does not match the outcome context", profile)
			}
		}
	})

	t.Run("frozen contexts", func(t *testing.T) {
		// The interceptor shares the unchanged message with the context,
		// as the text rewriter does when the host froze its contexts.
		var sawFrozen bool
		sharing := Registration{Name: "sharing", Interceptor: owningFunc(func(ctx context.Context, c Context) Verdict {
			sawFrozen = ContextsFrozen(ctx)
			msgs := c.Target().([]any)
			v := []any{map[string]any{"role": "user", "content": "[redacted]"}, msgs[1]}
			got = v
			return TransformTo("$target", v)
		})}
		second := verdictReg(TransformTo("$target[1].content", "second"))
		e := newTestEmitter(t, Options{Interceptors: []Registration{sharing, second}, FrozenContexts: true})
		c := buildAt(t, nil, PreModelCall)
		before := c.Clone()
		out, err := e.Emit(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if !sawFrozen {
			t.Error("the interceptor was not told the contexts are frozen")
		}
		if !jsonEqual(map[string]any(c), map[string]any(before)) {
			t.Error("the later transform changed the emitted context through the shared message")
		}
		if got.([]any)[1].(map[string]any)["content"] != "hi" {
			t.Errorf("the adopted value changed under a later transform: %v", got)
		}
		if msg := out.Target().([]any)[1].(map[string]any); msg["content"] != "second" {
			t.Errorf("target message %v, want the later transform's", msg)
		}
	})

	t.Run("not frozen unless promised", func(t *testing.T) {
		var sawFrozen bool
		probe := reg("probe", func(ctx context.Context, _ Context) (Verdict, error) {
			sawFrozen = ContextsFrozen(ctx)
			return Allow(), nil
		})
		e := newTestEmitter(t, Options{Interceptors: []Registration{probe}})
		if _, err := e.Emit(context.Background(), buildAt(t, nil, PreModelCall)); err != nil {
			t.Fatal(err)
		}
		if sawFrozen {
			t.Error("ContextsFrozen without Options.FrozenContexts")
		}
	})
}

// owningFunc is a function claiming OwnsTransforms.
type owningFunc func(context.Context, Context) Verdict

func (f owningFunc) Intercept(ctx context.Context, c Context) (Verdict, error) { return f(ctx, c), nil }
func (owningFunc) NonBlocking()                                                {}
func (owningFunc) ReadsOnly()                                                  {}
func (owningFunc) OwnsTransforms()                                             {}

// mapMemo is an ObjectMemo of a type == cannot compare: a host's memo
// may be of any type.
type mapMemo map[string]int

func (mapMemo) Canonical(map[string]any, int, int) ([]byte, bool) { return nil, false }
func (mapMemo) Keeps(map[string]any) bool                         { return false }
func (mapMemo) Remember(map[string]any, int, int, []byte)         {}
func (mapMemo) Verdict(any, map[string]any) (any, bool)           { return nil, false }
func (mapMemo) RememberVerdict(any, map[string]any, any)          {}

// TestHostPromisesReachInterceptors: the memo and the frozen promise
// reach the interceptors together, whatever the memo's type.
func TestHostPromisesReachInterceptors(t *testing.T) {
	var frozen bool
	var memo ObjectMemo
	probe := reg("probe", func(ctx context.Context, _ Context) (Verdict, error) {
		frozen, memo = ContextsFrozen(ctx), ObjectMemoFrom(ctx)
		return Allow(), nil
	})
	e := newTestEmitter(t, Options{Interceptors: []Registration{probe}, FrozenContexts: true})
	m := mapMemo{"k": 1}
	if _, err := e.Emit(context.Background(), buildAt(t, nil, PreModelCall), WithObjectMemo(m)); err != nil {
		t.Fatal(err)
	}
	if got, ok := memo.(mapMemo); !frozen || !ok || got["k"] != 1 {
		t.Errorf("frozen %v, memo %v", frozen, memo)
	}
	ctx := ContextWithFrozenContexts(ContextWithObjectMemo(context.Background(), m))
	if !ContextsFrozen(ctx) || ObjectMemoFrom(ctx) == nil {
		t.Error("ContextWithFrozenContexts dropped the memo")
	}
}
