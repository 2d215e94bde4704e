package enforcement

import (
	"errors"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// This file is the strict reading of answers that arrive over the wire from
// services outside the process: remote verdict services, OPA, approval
// webhooks. JSON parsers disagree on which of two same-named members wins,
// so an answer naming a member twice has no single meaning and is refused;
// and where the spec's schemas are closed (the verdict's top level, its
// transform and warnings entries, the approval resolution) an unknown member
// is refused rather than dropped. Error texts name the gateway's own member
// names and indices only, never anything taken from the answer.

// ErrAnswerNotJSON reports an answer that does not parse as JSON. It is a
// failure of the service (host_error:interceptor_failed for an interceptor,
// spec §11 "returned a non-JSON value"), not an invalid verdict.
var ErrAnswerNotJSON = errors.New("the answer is not JSON")

// DecodeAnswer decodes a remote service's answer into a JSON value tree.
// An answer naming the same member twice anywhere is an error wrapping
// ErrVerdictInvalid (the engine substitutes host_error:verdict_invalid); an
// answer that is not JSON is ErrAnswerNotJSON. The parser's own error is
// dropped: it may quote the answer.
func DecodeAnswer(data []byte) (any, error) {
	tree, err := jsonvalue.DecodeStrict(data)
	switch {
	case err == nil:
		return tree, nil
	case errors.Is(err, jsonvalue.ErrDuplicateKey):
		return nil, invalidf("the answer names a member more than once")
	}
	return nil, ErrAnswerNotJSON
}

// ParseVerdictStrict is ParseVerdict for a verdict read from the wire: on
// top of ParseVerdict's type checks, a member verdict.schema.json does not
// define (at the top level, in transform, in a warnings entry) is an error
// wrapping ErrVerdictInvalid. Evidence keeps unknown members, since §5.3 has
// the host propagate evidence unchanged.
func ParseVerdictStrict(tree any) (Verdict, error) {
	if err := checkClosedVerdict(tree); err != nil {
		return Verdict{}, err
	}
	return ParseVerdict(tree)
}

// Member sets of the closed objects of verdict.schema.json and of the
// approval resolution (approval.schema.json).
var (
	verdictMembers    = []string{"decision", "reason", "message", "warnings", "approval", "transform", "evidence", "result_labels"}
	warningMembers    = []string{"reason", "message"}
	transformMembers  = []string{"path", "value"}
	resolutionMembers = []string{"outcome", "context_identity", "verdict"}
)

// onlyMembers reports whether every member of obj is in names.
func onlyMembers(obj map[string]any, names []string) bool {
	if len(obj) > len(names) {
		return false
	}
	for k := range obj {
		known := false
		for _, n := range names {
			if k == n {
				known = true
				break
			}
		}
		if !known {
			return false
		}
	}
	return true
}

// checkClosedVerdict refuses members the closed verdict schema does not
// define, and the two type failures whose ParseVerdict or Validate message
// would quote the answer (an unknown decision, a non-string verification
// pointer). Everything else is left to ParseVerdict and Validate.
func checkClosedVerdict(tree any) error {
	obj, ok := tree.(map[string]any)
	if !ok {
		return nil
	}
	if !onlyMembers(obj, verdictMembers) {
		return invalidf("the verdict has a member verdict.schema.json does not define")
	}
	if d, ok := obj["decision"].(string); ok {
		switch Decision(d) {
		case DecisionAllow, DecisionDeny, DecisionTransform:
		default:
			return invalidf("decision is not allow, deny or transform")
		}
	}
	if ws, ok := obj["warnings"].([]any); ok {
		for i, w := range ws {
			if wo, ok := w.(map[string]any); ok && !onlyMembers(wo, warningMembers) {
				return invalidf("warnings[%d] has a member verdict.schema.json does not define", i)
			}
		}
	}
	if to, ok := obj["transform"].(map[string]any); ok && !onlyMembers(to, transformMembers) {
		return invalidf("transform has a member verdict.schema.json does not define")
	}
	if eo, ok := obj["evidence"].(map[string]any); ok {
		if vp, ok := eo["verification_pointers"].(map[string]any); ok {
			for _, u := range vp {
				if _, ok := u.(string); !ok {
					return invalidf("evidence.verification_pointers holds a value that is not a string")
				}
			}
		}
	}
	return nil
}

// ParseApprovalResolutionStrict is ParseApprovalResolution for a resolution
// read from the wire (approval.schema.json, closed). Only an answer that is
// not an object fails the parse. The rest is reported in the §9 order: a
// missing or non-string context_identity fails the echo rule
// (host_error:approval_identity_mismatch) whatever else is wrong; then a
// member other than outcome, context_identity and verdict is the resolver
// failing (host_error:approval_resolver_failed), as a missing or unknown
// outcome is; then a carried verdict with a member the verdict schema does
// not define is host_error:verdict_invalid, as every carried-verdict
// failure is.
func ParseApprovalResolutionStrict(tree any) (ApprovalResolution, error) {
	obj, ok := tree.(map[string]any)
	if !ok {
		return ApprovalResolution{}, errors.New("approval resolution is not a JSON object")
	}
	res, err := ParseApprovalResolution(obj)
	if err != nil {
		return res, err
	}
	if !onlyMembers(obj, resolutionMembers) {
		res.shapeErr = errors.New("approval resolution has a member approval.schema.json does not define")
	}
	if res.Verdict != nil && res.verdictErr == nil {
		res.verdictErr = checkClosedVerdict(obj["verdict"])
	}
	return res, nil
}
