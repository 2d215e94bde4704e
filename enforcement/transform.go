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
	return applyParsed(c, point, p, value, nil, false)
}

// applyParsed applies a transform to c, a private copy whose target may
// share the objects memo keeps (nil: none) with other requests of the
// session: they are shared into the value too (see owned), and a path
// into one copies the containers it modifies, so that none of them ever
// changes. adopt says value is a value tree c may take as it is (an
// accepted verdict's own, see owned); otherwise c gets a copy.
func applyParsed(c Context, point Point, p targetpath.Path, value any, memo ObjectMemo, adopt bool) error {
	val := value
	var err error
	if !adopt {
		if val, err = fromGo(value, memo); err != nil {
			return &gateError{reason: ReasonTransformInvalid, msg: fmt.Sprintf("transform value for %s cannot be set: %v", p, err)}
		}
	}
	var target any
	if memo == nil {
		target, err = p.Replace(c["target"], val)
	} else {
		target, err = p.ReplaceSharing(c["target"], val, func(v any) bool {
			obj, ok := v.(map[string]any)
			return ok && memo.Keeps(obj)
		})
	}
	if err != nil {
		return &gateError{reason: ReasonTransformInvalid, msg: err.Error()}
	}
	c["target"] = target
	writeBack(c, point)
	return nil
}

// fromGo is jsonvalue.FromGo sharing the objects memo keeps (nil: none).
func fromGo(v any, memo ObjectMemo) (any, error) {
	if memo == nil {
		return jsonvalue.FromGo(v)
	}
	return jsonvalue.FromGoKeeping(v, memo.Keeps)
}

// checkApplicable validates a transform without applying it (evaluate_only,
// §8). A value already the verdict's own value tree (valid) is not
// converted again.
func checkApplicable(c Context, p targetpath.Path, value any, valid bool) error {
	if !valid {
		if _, err := jsonvalue.FromGo(value); err != nil {
			return &gateError{reason: ReasonTransformInvalid, msg: fmt.Sprintf("transform value for %s cannot be set: %v", p, err)}
		}
	}
	if p.IsRoot() {
		return nil
	}
	if _, ok := p.Lookup(c["target"]); !ok {
		return &gateError{reason: ReasonTransformInvalid, msg: fmt.Sprintf("transform path %s does not resolve", p)}
	}
	return nil
}
