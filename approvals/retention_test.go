package approvals_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/approvals"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/heaptest"
)

// TestQueueDoesNotRetainRequestStrings pins that an approval, which the
// store keeps for its retention period, holds copies of the request's
// strings: the gateway's context strings may slice a whole request body
// (jsonvalue.Text), which must not stay alive with the approval. Each
// case gives one member as a short slice of a fresh 16 MiB string and
// checks that, once the request is gone, the stored approval does not keep
// the string live.
func TestQueueDoesNotRetainRequestStrings(t *testing.T) {
	const size = 16 << 20
	cases := []struct {
		name string
		req  func(doc string) enforcement.ApprovalRequest
	}{
		{"session id", func(doc string) enforcement.ApprovalRequest {
			return approvalRequest(doc[:8], "r", "m")
		}},
		{"reason", func(doc string) enforcement.ApprovalRequest {
			return approvalRequest("s", doc[:8], "m")
		}},
		{"message", func(doc string) enforcement.ApprovalRequest {
			return approvalRequest("s", "r", doc[:8])
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := approvals.NewMemory(time.Hour)
			q := approvals.NewQueue(store, time.Millisecond) // times out at once
			before := heaptest.Live()
			if _, err := q.Resolve(context.Background(), c.req("id-"+strings.Repeat("x", size))); err != nil {
				t.Fatal(err)
			}
			if live := heaptest.Live() - before; live > size/2 {
				t.Errorf("%d MiB stay live after the request: the stored approval keeps the whole string", live>>20)
			}
			runtime.KeepAlive(store) // it keeps the decided approval for an hour
		})
	}
}

func approvalRequest(session, reason, message string) enforcement.ApprovalRequest {
	return enforcement.ApprovalRequest{
		InterceptionPoint: enforcement.PreToolCall,
		Verdict:           enforcement.Verdict{Decision: enforcement.DecisionDeny, Reason: reason, Message: message, Approval: map[string]any{}},
		Context:           enforcement.Context{"session": map[string]any{"id": session}},
	}
}
