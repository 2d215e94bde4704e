package config

import (
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// problemFunc records a problem at a field path.
type problemFunc func(field, format string, args ...any)

func (v *validator) policy() {
	p := v.c.Policy
	if p.Path == "" {
		if _, set := v.c.lines["policy.watch"]; set {
			v.problem("policy.watch", "is only used with policy.path")
		}
		return
	}
	if len(v.c.Interceptors) > 0 {
		v.problem("interceptors", "must be left out when policy.path is set: the policy files hold the interceptors")
	}
}

// checkModes checks a default mode ("" is allowed only when optional) and
// per-point modes found at field.mode and field.point_modes.
func checkModes(problem problemFunc, field, mode string, pointModes map[string]string) {
	if !enforcement.Mode(mode).Valid() {
		problem(join(field, "mode"), "must be one of enforce, evaluate_only (got %q)", mode)
	}
	for p, m := range pointModes {
		f := mapKey(join(field, "point_modes"), p)
		if !enforcement.Point(p).Valid() {
			problem(f, "unknown interception point %q (one of %s)", p, pointList())
		}
		if !enforcement.Mode(m).Valid() {
			problem(f, "must be one of enforce, evaluate_only (got %q)", m)
		}
	}
}

// checkComposition checks a composition profile and its knobs at field.
func checkComposition(problem problemFunc, field string, c Composition) {
	cf := field + "."
	if (enforcement.Composition{Profile: enforcement.Profile(c.Profile)}).Validate() != nil || c.Profile == "" {
		problem(cf+"profile", "must be one of sequential/first_deny, sequential/run_all, parallel/strictest, parallel/unanimous (got %q)", c.Profile)
	}
	if (enforcement.Composition{OnApproval: c.OnApproval}).Validate() != nil {
		problem(cf+"on_approval", "must be stop or resume (got %q)", c.OnApproval)
	}
	if (enforcement.Composition{OnDisagreement: c.OnDisagreement}).Validate() != nil {
		problem(cf+"on_disagreement", "must be deny or approval (got %q)", c.OnDisagreement)
	}
	if (enforcement.Composition{OnTransformConflict: c.OnTransformConflict}).Validate() != nil {
		problem(cf+"on_transform_conflict", "must be deny or approval (got %q)", c.OnTransformConflict)
	}
}
