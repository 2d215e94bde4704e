package enforcement

import (
	"fmt"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/targetpath"
)

// ValidateTransformPath checks a §5.2 path against the grammar. Use
// GateReason on the error for the reserved reason.
func ValidateTransformPath(path string) error {
	if _, err := targetpath.Parse(path); err != nil {
		return pathGateError(err)
	}
	return nil
}

// ApplyTransform replaces the value at path inside c's target and writes the
// new target back into the member it mirrors (§4.3, §5.2). value is
// converted from Go values and copied, so c never aliases it. Replace-only:
// a path that does not resolve, or would add a key, fails and leaves c
// unchanged.
func ApplyTransform(c Context, path string, value any) error {
	p, err := targetpath.Parse(path)
	if err != nil {
		return pathGateError(err)
	}
	point := c.Point()
	if !point.Transformable() {
		return &gateError{reason: ReasonTransformTargetForbidden, msg: fmt.Sprintf("transform is not permitted at %s", point)}
	}
	return applyParsed(c, point, p, value)
}

func applyParsed(c Context, point Point, p targetpath.Path, value any) error {
	val, err := jsonvalue.FromGo(value)
	if err != nil {
		return &gateError{reason: ReasonTransformInvalid, msg: fmt.Sprintf("transform value for %s cannot be set: %v", p, err)}
	}
	target, err := p.Replace(c["target"], val)
	if err != nil {
		return &gateError{reason: ReasonTransformInvalid, msg: err.Error()}
	}
	c["target"] = target
	writeBack(c, point)
	return nil
}

// checkApplicable validates a transform without applying it (evaluate_only, §8).
func checkApplicable(c Context, p targetpath.Path, value any) error {
	if _, err := jsonvalue.FromGo(value); err != nil {
		return &gateError{reason: ReasonTransformInvalid, msg: fmt.Sprintf("transform value for %s cannot be set: %v", p, err)}
	}
	if p.IsRoot() {
		return nil
	}
	if _, ok := p.Lookup(c["target"]); !ok {
		return &gateError{reason: ReasonTransformInvalid, msg: fmt.Sprintf("transform path %s does not resolve", p)}
	}
	return nil
}
