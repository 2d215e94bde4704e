package enforcement

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// secret stands for target-derived text that must never reach a record (§6.3, §14).
const secret = "SECRET-7f3a-do-not-log"

// testTimeout bounds interceptors in the failure tests: long enough that
// an interceptor meant to answer in time does so on a loaded CI machine,
// short enough to keep the timeout cases quick.
const testTimeout = 250 * time.Millisecond

// lateInterceptor ignores its context and answers a permit after the
// emitter's timeout; done is closed once the late answer has been returned.
func lateInterceptor(done chan struct{}) Registration {
	return reg("slow", func(context.Context, Context) (Verdict, error) {
		defer close(done)
		time.Sleep(3 * testTimeout)
		return TransformTo("$target.url", "https://late.example"), nil
	})
}

// TestInterceptorFailures maps each §6.3 failure to its slot's deny, in
// first_deny (the failure stops the fold) and run_all (later slots still run).
func TestInterceptorFailures(t *testing.T) {
	cases := []struct {
		name   string
		fail   func(done chan struct{}) Registration
		reason string
	}{
		{"timeout", lateInterceptor, ReasonInterceptorTimeout},
		{"own-timeout", func(chan struct{}) Registration {
			return reg("remote", func(context.Context, Context) (Verdict, error) {
				return Verdict{}, fmt.Errorf("calling %s: %w", secret, ErrInterceptorTimeout)
			})
		}, ReasonInterceptorTimeout},
		{"panic", func(chan struct{}) Registration {
			return reg("boom", func(context.Context, Context) (Verdict, error) { panic(secret) })
		}, ReasonInterceptorFailed},
		{"panic-error-value", func(chan struct{}) Registration {
			return reg("boom", func(context.Context, Context) (Verdict, error) { panic(errors.New(secret)) })
		}, ReasonInterceptorFailed},
		{"error", func(chan struct{}) Registration {
			return reg("err", func(context.Context, Context) (Verdict, error) {
				return Allow(), fmt.Errorf("policy backend said %s", secret)
			})
		}, ReasonInterceptorFailed},
		{"verdict-invalid-error", func(chan struct{}) Registration {
			return reg("bad", func(context.Context, Context) (Verdict, error) {
				return Verdict{}, fmt.Errorf("%w: decoding %s", ErrVerdictInvalid, secret)
			})
		}, ReasonVerdictInvalid},
		{"parse-verdict-error-wrapped", func(chan struct{}) Registration {
			return reg("bad", func(context.Context, Context) (Verdict, error) {
				_, err := DecodeVerdict([]byte(`{"decision":"transform"`))
				return Verdict{}, fmt.Errorf("verdict for %s: %w", secret, err)
			})
		}, ReasonVerdictInvalid},
		{"invalid-verdict-returned", func(chan struct{}) Registration {
			return verdictReg(Verdict{Decision: "maybe"})
		}, ReasonVerdictInvalid},
		{"host-error-reason-returned", func(chan struct{}) Registration {
			return verdictReg(Deny(ReasonInterceptorFailed, "spoofed"))
		}, ReasonVerdictInvalid},
	}
	for _, profile := range []Profile{SequentialFirstDeny, SequentialRunAll, ParallelStrictest} {
		for _, tc := range cases {
			t.Run(string(profile)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				done := make(chan struct{})
				after, afterCalls := countingReg()
				e := newTestEmitter(t, Options{
					Interceptors: []Registration{allowReg(), tc.fail(done), after},
					Composition:  Composition{Profile: profile},
					Timeout:      testTimeout,
				})
				c := buildAt(t, nil, PreToolCall)
				out, err := e.Emit(context.Background(), c)
				var blocked *BlockedError
				if !errors.As(err, &blocked) {
					t.Fatalf("Emit error = %v, want *BlockedError", err)
				}
				rec := out.Record
				if rec.Verdict.Decision != DecisionDeny || rec.Verdict.Reason != tc.reason {
					t.Fatalf("verdict %s %s, want deny %s", rec.Verdict.Decision, rec.Verdict.Reason, tc.reason)
				}
				if derefInt(rec.DecidedBy) != 1 {
					t.Fatalf("decided_by = %v, want the failing slot 1", derefInt(rec.DecidedBy))
				}
				if len(rec.Verdicts) < 2 || rec.Verdicts[1].Index != 1 || rec.Verdicts[1].Reason != tc.reason {
					t.Fatalf("verdicts = %+v, want slot 1 to hold %s", rec.Verdicts, tc.reason)
				}
				wantAfter := int64(1)
				if profile == SequentialFirstDeny {
					wantAfter = 0
				}
				if afterCalls.Load() != wantAfter {
					t.Fatalf("slot 2 ran %d times, want %d", afterCalls.Load(), wantAfter)
				}
				_, wire := recordWire(t, rec)
				if strings.Contains(string(wire), secret) || strings.Contains(out.Verdict.Message, secret) {
					t.Fatalf("record carries the failure's text: %s", wire)
				}
				if tc.name == "timeout" {
					// The late permit arrives after Emit returned and is discarded.
					<-done
					if rec.Verdict.Decision != DecisionDeny || out.Proceed {
						t.Fatal("late answer changed the outcome")
					}
					if got := out.Target().(map[string]any)["url"]; got != "https://example.com" {
						t.Fatalf("late transform leaked into the outcome: %v", got)
					}
				}
			})
		}
	}
}

// TestTimeoutDisabled checks a negative Timeout really runs unbounded.
func TestTimeoutDisabled(t *testing.T) {
	e := newTestEmitter(t, Options{
		Interceptors: []Registration{reg("", func(ctx context.Context, _ Context) (Verdict, error) {
			if _, ok := ctx.Deadline(); ok {
				return Deny("test:deadline", "unexpected deadline"), nil
			}
			time.Sleep(2 * time.Millisecond)
			return Allow(), nil
		})},
		Timeout: -1,
	})
	if _, err := e.Emit(context.Background(), buildAt(t, nil, Input)); err != nil {
		t.Fatal(err)
	}
}

// TestResolverFailures: every resolver or redactor failure fails the
// consultation closed as approval_resolver_failed, recorded as a rejection
// with a host-synthesized (null) decided_by and no failure text.
func TestResolverFailures(t *testing.T) {
	escalate := verdictReg(Escalate("test:needs-approval", "ask a human"))
	allowRes := echoResolver(OutcomeApprove, &Verdict{Decision: DecisionAllow})
	cases := []struct {
		name     string
		resolver ApprovalResolver
		redactor ApprovalRedactor
	}{
		{name: "resolver-timeout", resolver: ApprovalResolverFunc(func(context.Context, ApprovalRequest) (ApprovalResolution, error) {
			time.Sleep(3 * testTimeout)
			return ApprovalResolution{Outcome: OutcomeApprove}, nil
		})},
		{name: "resolver-panic", resolver: ApprovalResolverFunc(func(context.Context, ApprovalRequest) (ApprovalResolution, error) {
			panic(secret)
		})},
		{name: "resolver-error", resolver: ApprovalResolverFunc(func(context.Context, ApprovalRequest) (ApprovalResolution, error) {
			return ApprovalResolution{}, errors.New("ticket " + secret + " unavailable")
		})},
		{name: "redactor-panic", resolver: allowRes, redactor: ApprovalRedactorFunc(func(context.Context, Context) (Context, error) {
			panic(secret)
		})},
		{name: "redactor-error", resolver: allowRes, redactor: ApprovalRedactorFunc(func(context.Context, Context) (Context, error) {
			return nil, errors.New(secret)
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEmitter(t, Options{
				Interceptors: []Registration{escalate},
				Resolver:     tc.resolver,
				Redactor:     tc.redactor,
				Timeout:      testTimeout,
			})
			out, err := e.Emit(context.Background(), buildAt(t, nil, PreToolCall))
			if err == nil || out.Proceed {
				t.Fatal("a failed consultation must block")
			}
			rec := out.Record
			if rec.Verdict.Reason != ReasonApprovalResolverFailed || rec.ResolvedBy != ResolvedByRejection || rec.DecidedBy != nil {
				t.Fatalf("verdict %s %s resolved_by %q decided_by %v", rec.Verdict.Decision, rec.Verdict.Reason, rec.ResolvedBy, derefInt(rec.DecidedBy))
			}
			if _, wire := recordWire(t, rec); strings.Contains(string(wire), secret) {
				t.Fatalf("record carries the failure's text: %s", wire)
			}
		})
	}
}

// TestCancellation: when the caller's context ends, Emit returns an error
// wrapping it and still delivers a fail-closed record for that sequence, so
// the session's records have no gap.
func TestCancellation(t *testing.T) {
	t.Run("during-interceptor", func(t *testing.T) {
		for _, timeout := range []time.Duration{0, -1} {
			started := make(chan struct{})
			var once sync.Once
			sink := &collectSink{}
			e := newTestEmitter(t, Options{
				Interceptors: []Registration{reg("", func(ctx context.Context, c Context) (Verdict, error) {
					if c.Point() != Input {
						return Allow(), nil
					}
					once.Do(func() { close(started) })
					<-ctx.Done()
					return Verdict{}, ctx.Err()
				}), allowReg()},
				Composition: Composition{Profile: SequentialRunAll},
				Timeout:     timeout,
				Sink:        sink,
			})
			b := newTestBuilder()
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-started; cancel() }()
			out, err := e.Emit(ctx, buildAt(t, b, Input))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("timeout %v: Emit error = %v, want context.Canceled", timeout, err)
			}
			var blocked *BlockedError
			if errors.As(err, &blocked) {
				t.Fatal("cancellation reported as a policy block")
			}
			recs := sink.records()
			if len(recs) != 1 || recs[0] != out.Record {
				t.Fatalf("%d records delivered, want the outcome's record", len(recs))
			}
			r := recs[0]
			if r.Sequence != 0 || r.Verdict.Decision != DecisionDeny || r.Verdict.Reason != ReasonInterceptorFailed || out.Proceed {
				t.Fatalf("record seq %d verdict %s %s proceed %v", r.Sequence, r.Verdict.Decision, r.Verdict.Reason, out.Proceed)
			}
			// run_all: the slot after the interrupted one is failed, not run.
			if len(r.Verdicts) != 2 || r.Verdicts[1].Reason != ReasonInterceptorFailed {
				t.Fatalf("verdicts = %+v", r.Verdicts)
			}
			// The next emission of the session carries the next number.
			if _, err := e.Emit(context.Background(), buildAt(t, b, Output)); err != nil {
				t.Fatal(err)
			}
			if recs := sink.records(); len(recs) != 2 || recs[1].Sequence != 1 {
				t.Fatalf("records after cancellation: %d", len(recs))
			}
		}
	})
	t.Run("before-emit", func(t *testing.T) {
		intercept, calls := countingReg()
		e := newTestEmitter(t, Options{Interceptors: []Registration{intercept}, RecordBuffer: 4})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := buildAt(t, nil, Input)
		out, err := e.EmitUnchecked(ctx, c)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("EmitUnchecked error = %v, want context.Canceled", err)
		}
		if calls.Load() != 0 {
			t.Fatal("interceptor ran under a cancelled context")
		}
		recs := e.TakeRecords()
		if len(recs) != 1 || recs[0].Verdict.Reason != ReasonInterceptorFailed || recs[0].Sequence != 0 || out.Proceed {
			t.Fatalf("records = %+v", recs)
		}
		// The context was valid, so its identity is still recorded.
		if recs[0].InputIdentity == nil || *recs[0].InputIdentity != mustIdentity(t, c) {
			t.Fatalf("input_identity = %v", recs[0].InputIdentity)
		}
	})
	t.Run("during-resolver", func(t *testing.T) {
		started := make(chan struct{})
		e := newTestEmitter(t, Options{
			Interceptors: []Registration{verdictReg(Escalate("test:ask", ""))},
			Resolver: ApprovalResolverFunc(func(ctx context.Context, _ ApprovalRequest) (ApprovalResolution, error) {
				close(started)
				<-ctx.Done()
				return ApprovalResolution{}, ctx.Err()
			}),
			RecordBuffer: 1,
		})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		out, err := e.Emit(ctx, buildAt(t, nil, PreToolCall))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Emit error = %v, want context.Canceled", err)
		}
		if r := out.Record; r.Verdict.Reason != ReasonApprovalResolverFailed || r.ResolvedBy != ResolvedByRejection || len(e.TakeRecords()) != 1 {
			t.Fatalf("record %+v", r)
		}
	})
}

// TestParallelFailuresIndependent: in the parallel profile a panic and a
// timeout fail only their own slots; the others' verdicts are kept.
func TestParallelFailuresIndependent(t *testing.T) {
	var mu sync.Mutex
	ran := map[int]bool{}
	mark := func(i int) { mu.Lock(); ran[i] = true; mu.Unlock() }
	e := newTestEmitter(t, Options{
		Interceptors: []Registration{
			reg("", func(context.Context, Context) (Verdict, error) { mark(0); return Warn("test:w0", ""), nil }),
			reg("", func(context.Context, Context) (Verdict, error) { mark(1); panic("x") }),
			reg("", func(ctx context.Context, _ Context) (Verdict, error) { mark(2); <-ctx.Done(); return Allow(), nil }),
			reg("", func(context.Context, Context) (Verdict, error) { mark(3); return Allow(), nil }),
		},
		Composition: Composition{Profile: ParallelStrictest},
		Timeout:     testTimeout,
	})
	out, _ := e.Emit(context.Background(), buildAt(t, nil, Input))
	r := out.Record
	want := []struct {
		d      Decision
		reason string
	}{{DecisionAllow, ""}, {DecisionDeny, ReasonInterceptorFailed}, {DecisionDeny, ReasonInterceptorTimeout}, {DecisionAllow, ""}}
	if len(r.Verdicts) != len(want) {
		t.Fatalf("verdicts = %+v", r.Verdicts)
	}
	for i, w := range want {
		if v := r.Verdicts[i]; v.Index != i || v.Decision != w.d || v.Reason != w.reason {
			t.Errorf("verdicts[%d] = %+v, want %s %s", i, v, w.d, w.reason)
		}
	}
	// Equal severity: the lowest index wins; the warning union survives.
	if derefInt(r.DecidedBy) != 1 || r.Verdict.Reason != ReasonInterceptorFailed || len(r.Verdict.Warnings) != 1 {
		t.Fatalf("combined %+v decided_by %v", r.Verdict, derefInt(r.DecidedBy))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 4 {
		t.Fatalf("ran = %v", ran)
	}
}
