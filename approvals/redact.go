package approvals

import (
	"context"
	"fmt"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Redacted is what a redacted value is replaced with.
const Redacted = "[redacted]"

// Redactor returns an enforcement.ApprovalRedactor that replaces each §5.2
// path (rooted at $target) with Redacted in the resolver's copy of the
// context (enforcement.RedactPaths), and lists the paths it replaced under
// extensions.<namespace>.redacted, the shape §9 reserves, so an approver
// knows what was withheld. Paths that do not resolve at a point are
// skipped there (and not listed).
func Redactor(namespace string, paths []string) (enforcement.ApprovalRedactor, error) {
	for _, p := range paths {
		if err := enforcement.ValidateTransformPath(p); err != nil {
			return nil, fmt.Errorf("approvals: redaction path %q: %w", p, err)
		}
	}
	paths = append([]string(nil), paths...)
	return enforcement.ApprovalRedactorFunc(func(_ context.Context, c enforcement.Context) (enforcement.Context, error) {
		done := enforcement.RedactPaths(c, paths, Redacted)
		if len(done) == 0 {
			return c, nil
		}
		ext, _ := c["extensions"].(map[string]any)
		if ext == nil {
			ext = map[string]any{}
			c["extensions"] = ext
		}
		mine, _ := ext[namespace].(map[string]any)
		if mine == nil {
			mine = map[string]any{}
			ext[namespace] = mine
		}
		listed := make([]any, len(done))
		for i, p := range done {
			listed[i] = p
		}
		mine["redacted"] = listed
		return c, nil
	}), nil
}
