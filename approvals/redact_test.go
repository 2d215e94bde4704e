package approvals_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/approvals"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

func TestRedactorListsWhatItRemoved(t *testing.T) {
	red, err := approvals.Redactor("hooks_gateway", []string{"$target.iban", "$target.missing", "$target[0].content"})
	if err != nil {
		t.Fatal(err)
	}
	var seen enforcement.Context
	spy := enforcement.ApprovalResolverFunc(func(_ context.Context, req enforcement.ApprovalRequest) (enforcement.ApprovalResolution, error) {
		seen = req.Context
		return enforcement.ApprovalResolution{Outcome: enforcement.OutcomeUnresolved, ContextIdentity: req.ContextIdentity}, nil
	})
	out := emitToolCall(t, context.Background(), spy, red)
	if out.Verdict.Reason != enforcement.ReasonApprovalUnresolved {
		t.Fatalf("verdict = %s", out.Verdict.Reason)
	}
	args, _ := seen.Target().(map[string]any)
	if args["iban"] != approvals.Redacted || args["amount"] == approvals.Redacted {
		t.Errorf("resolver saw args %v, want only iban redacted", args)
	}
	ext, _ := seen["extensions"].(map[string]any)
	mine, _ := ext["hooks_gateway"].(map[string]any)
	if got := mine["redacted"]; !reflect.DeepEqual(got, []any{"$target.iban"}) {
		t.Errorf("extensions.hooks_gateway.redacted = %v, want only the path that resolved", got)
	}
	// The enforcement path is untouched: the action uses the real value.
	if enforced, _ := out.Context.Target().(map[string]any); enforced["iban"] != "DE00 SECRET" {
		t.Errorf("redaction leaked into the enforced context: %v", enforced)
	}
	if _, err := approvals.Redactor("h", []string{"$.iban"}); err == nil {
		t.Error("a path not rooted at $target was accepted")
	}
}
