package enforcement

import (
	"context"
	"testing"
	"time"
)

// TestResolverTimeout: ResolverTimeout, not the interceptor Timeout, bounds
// a resolver call (an approval waits for a human), and still bounds it.
func TestResolverTimeout(t *testing.T) {
	escalate := verdictReg(Escalate("test:needs-approval", "ask a human"))
	// slow answers after a pause longer than the interceptor timeout.
	slow := func(pause time.Duration) ApprovalResolver {
		return ApprovalResolverFunc(func(ctx context.Context, req ApprovalRequest) (ApprovalResolution, error) {
			select {
			case <-time.After(pause):
			case <-ctx.Done():
				return ApprovalResolution{}, ctx.Err()
			}
			return ApprovalResolution{Outcome: OutcomeApprove, ContextIdentity: req.ContextIdentity, Verdict: &Verdict{Decision: DecisionAllow}}, nil
		})
	}
	t.Run("longer-than-interceptors", func(t *testing.T) {
		e := newTestEmitter(t, Options{Interceptors: []Registration{escalate}, Resolver: slow(3 * testTimeout),
			Timeout: testTimeout, ResolverTimeout: time.Minute})
		if out, err := e.Emit(context.Background(), buildAt(t, nil, PreToolCall)); err != nil || !out.Proceed {
			t.Fatalf("a resolver within ResolverTimeout was cut off: %v", err)
		}
	})
	t.Run("still-bounded", func(t *testing.T) {
		e := newTestEmitter(t, Options{Interceptors: []Registration{escalate}, Resolver: slow(time.Minute),
			Timeout: time.Minute, ResolverTimeout: testTimeout})
		out, err := e.Emit(context.Background(), buildAt(t, nil, PreToolCall))
		if err == nil || out.Proceed || out.Verdict.Reason != ReasonApprovalResolverFailed {
			t.Fatalf("a resolver past ResolverTimeout: %v, want %s", err, ReasonApprovalResolverFailed)
		}
	})
}
