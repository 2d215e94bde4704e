package sessions_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// The inputs a session judged are recorded for every replica: each is
// judged once; an unknown session is an answer, and a sealed one records
// nothing more.
func TestInputsJudged(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		k := key("inputs")
		if _, err := a.InputsJudged(ctx, k, []string{"x"}); !errors.Is(err, sessions.ErrUnknownSession) {
			t.Fatalf("an unknown session: %v", err)
		}
		if err := a.MarkInputsJudged(ctx, k, []string{"x"}); !errors.Is(err, sessions.ErrUnknownSession) {
			t.Fatalf("marking in an unknown session: %v", err)
		}
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		got, err := b.InputsJudged(ctx, k, []string{"m1", "m2"})
		if err != nil || !slices.Equal(got, []bool{false, false}) {
			t.Fatalf("before any mark: %v, %v", got, err)
		}
		if err := a.MarkInputsJudged(ctx, k, []string{"m1"}); err != nil {
			t.Fatal(err)
		}
		if got, err = b.InputsJudged(ctx, k, []string{"m2", "m1", "m3"}); err != nil || !slices.Equal(got, []bool{false, true, false}) {
			t.Fatalf("after marking m1 (on the other replica): %v, %v", got, err)
		}
		if got, err = b.InputsJudged(ctx, k, nil); err != nil || len(got) != 0 {
			t.Fatalf("no ids: %v, %v", got, err)
		}
		if _, _, err := a.End(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Seal(ctx, k); err != nil {
			t.Fatal(err)
		}
		if err := b.MarkInputsJudged(ctx, k, []string{"m2"}); !errors.Is(err, sessions.ErrSessionSealed) {
			t.Fatalf("marking in a sealed session: %v", err)
		}
	})
}
