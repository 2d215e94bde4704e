package approvals_test

import (
	"context"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/approvals"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// Two replicas, each with its own client: the approval parked by one is
// listed and decided on the other, and the first releases the request.
func TestRedisDecidedOnAnotherReplica(t *testing.T) {
	url, _ := redistest.Start(t)
	waiting := approvals.NewQueue(newRedis(t, url), time.Hour)
	other := approvals.NewQueue(newRedis(t, url), time.Hour)
	done := emitAsync(t, waiting, nil)
	var list []approvals.Approval
	waitFor(t, func() bool {
		var err error
		list, err = other.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return len(list) == 1
	})
	if err := other.Decide(context.Background(), list[0].ID, approvals.Decision{Outcome: approvals.Approve}); err != nil {
		t.Fatal(err)
	}
	if out := outcome(t, done); !out.Proceed {
		t.Fatalf("decided on the other replica, but the request was denied: %s", out.Verdict.Reason)
	}
}

// Redis going away while a request waits fails the request closed.
func TestRedisDownFailsClosed(t *testing.T) {
	srv := redistest.StartServer(t)
	q := approvals.NewQueue(newRedis(t, srv.URL()), time.Hour)
	_, done := pending(t, q, nil)
	srv.Kill()
	out := outcome(t, done)
	if out.Proceed || out.Verdict.Reason != enforcement.ReasonApprovalResolverFailed {
		t.Fatalf("verdict with Redis down = %s %s, want deny %s", out.Verdict.Decision, out.Verdict.Reason, enforcement.ReasonApprovalResolverFailed)
	}
	// And a new request cannot even be parked.
	out = emitToolCall(t, context.Background(), q, nil)
	if out.Proceed || out.Verdict.Reason != enforcement.ReasonApprovalResolverFailed {
		t.Fatalf("new request with Redis down = %s %s", out.Verdict.Decision, out.Verdict.Reason)
	}
}
