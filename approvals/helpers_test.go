package approvals_test

import (
	"context"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// escalating is an interceptor asking for approval of every action.
var escalating = enforcement.NonBlockingFunc(func(context.Context, enforcement.Context) (enforcement.Verdict, error) {
	return enforcement.Escalate("policy:needs_approval", "a human must approve this tool call"), nil
})

// toolCall is one pre_tool_call emission, ready to run, through an
// emitter whose only interceptor escalates.
type toolCall struct {
	em *enforcement.Emitter
	c  enforcement.Context
}

// newToolCall prepares a tool call with r as the resolver.
func newToolCall(t *testing.T, r enforcement.ApprovalResolver, redactor enforcement.ApprovalRedactor) toolCall {
	t.Helper()
	em, err := enforcement.NewEmitter(enforcement.Options{
		Interceptors:    []enforcement.Registration{{Name: "escalate", Interceptor: escalating}},
		Resolver:        r,
		Redactor:        redactor,
		ResolverTimeout: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	b := enforcement.Builder{Agent: enforcement.Agent{ID: "agent", Framework: "test"}, SessionID: "sess-1", Sequence: &enforcement.Counter{}}
	c, err := b.Build(context.Background(), enforcement.PreToolCall, enforcement.PreToolFields(enforcement.ToolCall{
		ID: "call_1", Name: "transfer", Args: map[string]any{"iban": "DE00 SECRET", "amount": 10},
	}))
	if err != nil {
		t.Fatal(err)
	}
	return toolCall{em: em, c: c}
}

// emit runs the emission; safe from any goroutine.
func (tc toolCall) emit(ctx context.Context) (*enforcement.Outcome, error) {
	return tc.em.EmitUnchecked(ctx, tc.c)
}

// emitToolCall runs one tool call through r and returns the outcome.
func emitToolCall(t *testing.T, ctx context.Context, r enforcement.ApprovalResolver, redactor enforcement.ApprovalRedactor) *enforcement.Outcome {
	t.Helper()
	out, err := newToolCall(t, r, redactor).emit(ctx)
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	return out
}

// emitAsync starts one tool call through r in the background; the channel
// receives its outcome (nil when the emission itself failed, reported).
func emitAsync(t *testing.T, r enforcement.ApprovalResolver, redactor enforcement.ApprovalRedactor) <-chan *enforcement.Outcome {
	t.Helper()
	tc := newToolCall(t, r, redactor)
	done := make(chan *enforcement.Outcome, 1)
	go func() {
		out, err := tc.emit(context.Background())
		if err != nil {
			t.Errorf("emit: %v", err)
		}
		done <- out
	}()
	return done
}
