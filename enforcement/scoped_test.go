package enforcement

import (
	"context"
	"sync/atomic"
	"testing"
)

// scopedInterceptor denies at its points and counts its calls.
type scopedInterceptor struct {
	at    Point
	calls atomic.Int64
}

func (s *scopedInterceptor) Intercept(context.Context, Context) (Verdict, error) {
	s.calls.Add(1)
	return Deny("policy:scoped", "denied at its point"), nil
}

func (s *scopedInterceptor) AppliesAt(p Point) bool { return p == s.at }

func TestPointScopedSkippedElsewhere(t *testing.T) {
	for _, profile := range []Profile{SequentialFirstDeny, SequentialRunAll, ParallelStrictest, ParallelUnanimous} {
		t.Run(string(profile), func(t *testing.T) {
			scoped := &scopedInterceptor{at: PreToolCall}
			sink := &collectSink{}
			e := newTestEmitter(t, Options{
				Interceptors: []Registration{allowReg(), {Name: "scoped", Interceptor: scoped}},
				Composition:  Composition{Profile: profile},
				Sink:         sink,
			})
			b := newTestBuilder()
			out, err := e.Emit(context.Background(), buildAt(t, b, Input))
			if err != nil {
				t.Fatal(err)
			}
			if !out.Proceed || out.Verdict.Decision != DecisionAllow {
				t.Fatalf("outside its points: decision %s, proceed %v; want allow", out.Verdict.Decision, out.Proceed)
			}
			if n := scoped.calls.Load(); n != 0 {
				t.Fatalf("called %d times outside its points", n)
			}
			recs := sink.records()
			if len(recs) != 1 || len(recs[0].Verdicts) != 2 || recs[0].Verdicts[1].Decision != DecisionAllow || recs[0].Verdicts[1].Name != "scoped" {
				t.Fatalf("record verdicts %+v: want the skipped interceptor's allow listed", recs[len(recs)-1].Verdicts)
			}

			out, err = e.EmitUnchecked(context.Background(), buildAt(t, b, PreToolCall))
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict.Decision != DecisionDeny || scoped.calls.Load() != 1 {
				t.Fatalf("at its point: decision %s after %d calls; want its deny after 1", out.Verdict.Decision, scoped.calls.Load())
			}
		})
	}
}
