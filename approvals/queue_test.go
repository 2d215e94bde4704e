package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/approvals"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// eventually bounds waits on other goroutines generously: CI is slow.
const eventually = 20 * time.Second

// stores runs f against a memory store and a Redis store.
func stores(t *testing.T, f func(t *testing.T, newStore func() approvals.Store)) {
	t.Run("memory", func(t *testing.T) {
		m := approvals.NewMemory(0)
		f(t, func() approvals.Store { return m })
	})
	t.Run("redis", func(t *testing.T) {
		url, _ := redistest.Start(t)
		f(t, func() approvals.Store { return newRedis(t, url) })
	})
}

func newRedis(t *testing.T, url string) *approvals.Redis {
	t.Helper()
	r, err := approvals.NewRedis(approvals.RedisOptions{URL: url, KeyPrefix: "test:", PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// pending emits in the background and waits until q lists the approval.
func pending(t *testing.T, q *approvals.Queue, redactor enforcement.ApprovalRedactor) (approvals.Approval, <-chan *enforcement.Outcome) {
	t.Helper()
	done := emitAsync(t, q, redactor)
	deadline := time.Now().Add(eventually)
	for time.Now().Before(deadline) {
		list, err := q.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 1 {
			return list[0], done
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the approval never showed up as pending")
	return approvals.Approval{}, nil
}

func outcome(t *testing.T, done <-chan *enforcement.Outcome) *enforcement.Outcome {
	t.Helper()
	select {
	case out := <-done:
		if out == nil {
			t.FailNow()
		}
		return out
	case <-time.After(eventually):
		t.Fatal("the emission never finished")
		return nil
	}
}

func TestQueueApprove(t *testing.T) {
	stores(t, func(t *testing.T, newStore func() approvals.Store) {
		ctx := context.Background()
		q := approvals.NewQueue(newStore(), time.Hour)
		redactor, err := enforcement.PathRedactor([]string{"$target.iban"}, "[redacted]")
		if err != nil {
			t.Fatal(err)
		}
		a, done := pending(t, q, redactor)
		if a.Point != enforcement.PreToolCall || a.SessionID != "sess-1" || a.Reason != "policy:needs_approval" || a.Message == "" {
			t.Errorf("pending approval = %+v", a)
		}
		if !a.Deadline.After(a.Created) {
			t.Errorf("deadline %v not after created %v", a.Deadline, a.Created)
		}
		if strings.Contains(string(a.Request), "SECRET") || !strings.Contains(string(a.Request), "[redacted]") {
			t.Errorf("the queue holds an unredacted context: %s", a.Request)
		}
		if err := q.Decide(ctx, a.ID, approvals.Decision{Outcome: approvals.Approve, Message: "ok by ops"}); err != nil {
			t.Fatal(err)
		}
		out := outcome(t, done)
		if !out.Proceed || out.Verdict.Decision != enforcement.DecisionAllow {
			t.Fatalf("approved request: verdict %s %s", out.Verdict.Decision, out.Verdict.Reason)
		}
		if out.Record.ResolvedBy != enforcement.ResolvedByApproval {
			t.Errorf("record resolved_by = %q", out.Record.ResolvedBy)
		}
		err = q.Decide(ctx, a.ID, approvals.Decision{Outcome: approvals.Reject})
		if !errors.Is(err, approvals.ErrConflict) {
			t.Errorf("second decision: %v, want ErrConflict", err)
		}
		got, err := q.Get(ctx, a.ID)
		if err != nil || got.Decision == nil || got.Decision.Outcome != approvals.Approve {
			t.Errorf("Get after approval = %+v, %v", got, err)
		}
		if list, _ := q.List(ctx); len(list) != 0 {
			t.Errorf("decided approval still listed: %+v", list)
		}
		if err := q.Decide(ctx, "nope", approvals.Decision{Outcome: approvals.Approve}); !errors.Is(err, approvals.ErrNotFound) {
			t.Errorf("unknown id: %v, want ErrNotFound", err)
		}
	})
}

func TestQueueReject(t *testing.T) {
	stores(t, func(t *testing.T, newStore func() approvals.Store) {
		q := approvals.NewQueue(newStore(), time.Hour)
		a, done := pending(t, q, nil)
		if err := q.Decide(context.Background(), a.ID, approvals.Decision{Outcome: approvals.Reject, Message: "not today"}); err != nil {
			t.Fatal(err)
		}
		out := outcome(t, done)
		if out.Proceed || out.Verdict.Reason != approvals.ReasonRejected || out.Verdict.Message != "not today" {
			t.Fatalf("rejected request: %+v", out.Verdict)
		}
	})
}

func TestQueueApproveWithTransform(t *testing.T) {
	stores(t, func(t *testing.T, newStore func() approvals.Store) {
		q := approvals.NewQueue(newStore(), time.Hour)
		a, done := pending(t, q, nil)
		ctx := context.Background()
		bad := approvals.Decision{Outcome: approvals.Approve, Transform: &approvals.Transform{Path: "amount", Value: 1}}
		var invalid *approvals.InvalidDecisionError
		if err := q.Decide(ctx, a.ID, bad); !errors.As(err, &invalid) {
			t.Fatalf("transform with a bad path: %v, want InvalidDecisionError", err)
		}
		if err := q.Decide(ctx, a.ID, approvals.Decision{Outcome: "maybe"}); !errors.As(err, &invalid) {
			t.Fatalf("outcome maybe: %v, want InvalidDecisionError", err)
		}
		good := approvals.Decision{Outcome: approvals.Approve, Transform: &approvals.Transform{Path: "$target.amount", Value: json.Number("5")}}
		if err := q.Decide(ctx, a.ID, good); err != nil {
			t.Fatal(err)
		}
		out := outcome(t, done)
		if !out.Proceed || out.Verdict.Decision != enforcement.DecisionTransform {
			t.Fatalf("approved transform: %+v", out.Verdict)
		}
		args, _ := out.Context.Target().(map[string]any)
		if args["amount"] != json.Number("5") || args["iban"] != "DE00 SECRET" {
			t.Errorf("enforced args = %v, want amount rewritten to 5 and iban kept", args)
		}
	})
}

func TestQueueTimeoutIsUnresolved(t *testing.T) {
	stores(t, func(t *testing.T, newStore func() approvals.Store) {
		q := approvals.NewQueue(newStore(), 100*time.Millisecond)
		out := emitToolCall(t, context.Background(), q, nil)
		if out.Proceed || out.Verdict.Reason != enforcement.ReasonApprovalUnresolved {
			t.Fatalf("timed-out approval: %s %s, want deny %s", out.Verdict.Decision, out.Verdict.Reason, enforcement.ReasonApprovalUnresolved)
		}
		if list, _ := q.List(context.Background()); len(list) != 0 {
			t.Errorf("timed-out approval still listed: %+v", list)
		}
	})
}

func TestQueueClientGoneTakesApprovalOffTheList(t *testing.T) {
	stores(t, func(t *testing.T, newStore func() approvals.Store) {
		q := approvals.NewQueue(newStore(), time.Hour)
		a, first := pending(t, q, nil)
		// A second request, through Resolve directly so its ctx can be
		// cancelled the way a departing client's is.
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := q.Resolve(ctx, enforcement.ApprovalRequest{InterceptionPoint: enforcement.PreToolCall,
				Verdict: enforcement.Escalate("policy:x", ""), Context: enforcement.Context{"session": map[string]any{"id": "s2"}}})
			done <- err
		}()
		waitFor(t, func() bool { list, _ := q.List(context.Background()); return len(list) == 2 })
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Resolve after cancel: %v, want context.Canceled", err)
			}
		case <-time.After(eventually):
			t.Fatal("Resolve ignored its context")
		}
		list, _ := q.List(context.Background())
		if len(list) != 1 || list[0].ID != a.ID {
			t.Errorf("after the client left, pending = %+v, want only the first", list)
		}
		if err := q.Decide(context.Background(), a.ID, approvals.Decision{Outcome: approvals.Reject}); err != nil {
			t.Fatal(err)
		}
		outcome(t, first)
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
