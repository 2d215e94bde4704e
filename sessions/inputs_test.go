package sessions_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

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
		if _, err := a.NextMarkingInputs(ctx, k, []string{"x"}); !errors.Is(err, sessions.ErrUnknownSession) {
			t.Fatalf("marking in an unknown session: %v", err)
		}
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		got, err := b.InputsJudged(ctx, k, []string{"m1", "m2"})
		if err != nil || !slices.Equal(got, []bool{false, false}) {
			t.Fatalf("before any mark: %v, %v", got, err)
		}
		if _, err := a.NextMarkingInputs(ctx, k, []string{"m1"}); err != nil {
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
		if _, err := b.NextMarkingInputs(ctx, k, []string{"m2"}); !errors.Is(err, sessions.ErrSessionSealed) {
			t.Fatalf("marking in a sealed session: %v", err)
		}
	})
}

// BeginCall tells which of a call's inputs the session judged, in the step
// that takes its lease; NextMarkingInputs records them as it takes the
// next number, for every replica.
func TestBeginCallJudgedAndNextMarking(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		k := key("folded")
		call := sessions.Call{ID: "call-1", Lease: time.Minute, Inputs: []string{"m1", "m2"}}
		cs, err := a.BeginCall(ctx, k, owner, call)
		if err != nil || !cs.Claimed || !slices.Equal(cs.Judged, []bool{false, false}) {
			t.Fatalf("claim: %+v %v; want every input unjudged", cs, err)
		}
		call.ID = "call-2"
		if cs, err := b.BeginCall(ctx, k, owner, call); err != nil || cs.Judged != nil {
			t.Fatalf("a join while Starting: %+v %v; want Judged nil (the caller asks later)", cs, err)
		}
		if err := a.Admit(ctx, k); err != nil {
			t.Fatal(err)
		}
		n, err := a.NextMarkingInputs(ctx, k, []string{"m1"})
		if err != nil || n != 1 {
			t.Fatalf("NextMarkingInputs = %d, %v; want 1 (0 is the startup's)", n, err)
		}
		call.ID = "call-3"
		cs, err = b.BeginCall(ctx, k, owner, call)
		if err != nil || !slices.Equal(cs.Judged, []bool{true, false}) || cs.Seq != 2 {
			t.Fatalf("a join once admitted: %+v %v; want m1 judged, m2 not, number 2", cs, err)
		}
		if got, err := b.InputsJudged(ctx, k, []string{"m1", "m2"}); err != nil || !slices.Equal(got, []bool{true, false}) {
			t.Fatalf("InputsJudged = %v %v", got, err)
		}
		if _, _, err := a.End(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Seal(ctx, k); err != nil {
			t.Fatal(err)
		}
		if _, err := b.NextMarkingInputs(ctx, k, []string{"m2"}); !errors.Is(err, sessions.ErrSessionSealed) {
			t.Fatalf("NextMarkingInputs in a sealed session: %v", err)
		}
	})
}
