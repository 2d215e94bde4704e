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

// emitToolCall runs one pre_tool_call emission through an emitter whose
// only interceptor escalates, with r as its resolver, and returns the
// outcome.
func emitToolCall(t *testing.T, ctx context.Context, r enforcement.ApprovalResolver, redactor enforcement.ApprovalRedactor) *enforcement.Outcome {
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
	c, err := b.Build(ctx, enforcement.PreToolCall, enforcement.PreToolFields(enforcement.ToolCall{
		ID: "call_1", Name: "transfer", Args: map[string]any{"iban": "DE00 SECRET", "amount": 10},
	}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := em.EmitUnchecked(ctx, c)
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	return out
}
