package enforcement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// Approval outcomes (§9).
const (
	OutcomeApprove    = "approve"
	OutcomeReject     = "reject"
	OutcomeUnresolved = "unresolved"
)

// ApprovalRequest is what the approval seam shows a resolver (§9).
type ApprovalRequest struct {
	// ContextIdentity is computed over Context as presented (after any
	// redaction); nil under the null provider.
	ContextIdentity   *string
	InterceptionPoint Point
	// Verdict is the liftable deny being consulted (interceptor-returned or
	// host-synthesized).
	Verdict Verdict
	// Context is the resolver's own copy, redacted when a redactor is set.
	Context Context
}

// MarshalJSON writes the §9 request shape.
func (r ApprovalRequest) MarshalJSON() ([]byte, error) {
	vb, err := r.Verdict.MarshalJSON()
	if err != nil {
		return nil, err
	}
	cb, err := jsonvalue.Marshal(map[string]any(r.Context))
	if err != nil {
		return nil, fmt.Errorf("approval request context: %w", err)
	}
	return json.Marshal(struct {
		ContextIdentity   *string         `json:"context_identity"`
		InterceptionPoint Point           `json:"interception_point"`
		Verdict           json.RawMessage `json:"verdict"`
		Context           json.RawMessage `json:"context"`
	}{r.ContextIdentity, r.InterceptionPoint, vb, cb})
}

// ApprovalResolution is a resolver's answer (§9).
type ApprovalResolution struct {
	Outcome string
	// ContextIdentity must echo the request's byte for byte (nil for nil).
	ContextIdentity *string
	// Verdict is present iff Outcome is not unresolved.
	Verdict *Verdict
	// The failures of a decoded answer, kept so the host reports the first
	// one in the normative §9 order: identityErr (a context_identity that
	// is missing or not a string or null: it cannot echo), shapeErr (a
	// member approval.schema.json does not define), verdictErr (a carried
	// verdict that fails its type checks).
	identityErr error
	shapeErr    error
	verdictErr  error
}

// ParseApprovalResolution decodes a resolution from a JSON value tree. Only
// a tree that is not an object fails the parse (there is no resolution to
// validate: the resolver failed). A context_identity that is missing or not
// a string or null, and a malformed carried verdict, do not fail it: the
// host reports them in the §9 order, the echo rule first
// (host_error:approval_identity_mismatch), the carried verdict third
// (host_error:verdict_invalid).
func ParseApprovalResolution(tree any) (ApprovalResolution, error) {
	obj, ok := tree.(map[string]any)
	if !ok {
		return ApprovalResolution{}, fmt.Errorf("approval resolution is not a JSON object")
	}
	var res ApprovalResolution
	res.Outcome, _ = obj["outcome"].(string)
	switch id, present := obj["context_identity"]; id := id.(type) {
	case string:
		res.ContextIdentity = &id
	case nil:
		if !present {
			res.identityErr = errors.New("approval resolution lacks its context_identity")
		}
	default:
		res.identityErr = errors.New("approval resolution context_identity is not a string or null")
	}
	if raw, ok := obj["verdict"]; ok {
		v, err := ParseVerdict(raw)
		if err != nil {
			res.verdictErr = err
		}
		res.Verdict = &v
	}
	return res, nil
}

// ApprovalResolver decides liftable denies (§9). It is consulted only in
// enforce mode, never at agent_shutdown, and only when the profile says so.
type ApprovalResolver interface {
	Resolve(ctx context.Context, req ApprovalRequest) (ApprovalResolution, error)
}

// ApprovalResolverFunc adapts a function to ApprovalResolver.
type ApprovalResolverFunc func(ctx context.Context, req ApprovalRequest) (ApprovalResolution, error)

// Resolve calls f.
func (f ApprovalResolverFunc) Resolve(ctx context.Context, req ApprovalRequest) (ApprovalResolution, error) {
	return f(ctx, req)
}

// ApprovalRedactor produces the context placed in an ApprovalRequest (§9).
// It receives a private copy it may modify and return. Its failure fails the
// consultation closed (host_error:approval_resolver_failed).
type ApprovalRedactor interface {
	Redact(ctx context.Context, c Context) (Context, error)
}

// ApprovalRedactorFunc adapts a function to ApprovalRedactor.
type ApprovalRedactorFunc func(ctx context.Context, c Context) (Context, error)

// Redact calls f.
func (f ApprovalRedactorFunc) Redact(ctx context.Context, c Context) (Context, error) {
	return f(ctx, c)
}

// PathRedactor returns a redactor that replaces each listed §5.2 path
// (relative to $target, written back to the mirrored member) with
// replacement. Paths that do not resolve at a point are skipped.
func PathRedactor(paths []string, replacement any) (ApprovalRedactor, error) {
	for _, p := range paths {
		if err := ValidateTransformPath(p); err != nil {
			return nil, fmt.Errorf("redaction path %q: %w", p, err)
		}
	}
	return ApprovalRedactorFunc(func(_ context.Context, c Context) (Context, error) {
		RedactPaths(c, paths, replacement)
		return c, nil
	}), nil
}

// RedactPaths replaces each §5.2 path (validated by the caller) in c with
// replacement and returns the paths it replaced. A path that does not
// resolve here is not sensitive here and is skipped; at a point without a
// transformable target nothing is replaced.
func RedactPaths(c Context, paths []string, replacement any) []string {
	if !c.Point().Transformable() {
		return nil
	}
	var done []string
	for _, p := range paths {
		if ApplyTransform(c, p, replacement) == nil {
			done = append(done, p)
		}
	}
	return done
}
