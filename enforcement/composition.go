package enforcement

import "fmt"

// Profile is one of the four closed composition profiles (§7.2).
type Profile string

// The composition profiles.
const (
	SequentialFirstDeny Profile = "sequential/first_deny"
	SequentialRunAll    Profile = "sequential/run_all"
	ParallelStrictest   Profile = "parallel/strictest"
	ParallelUnanimous   Profile = "parallel/unanimous"
)

// Knob values (§7.2).
const (
	OnApprovalStop   = "stop"
	OnApprovalResume = "resume"
	KnobDeny         = "deny"
	KnobApproval     = "approval"
)

// Composition is a profile and its knobs. Unset knobs take the normative,
// fail-closed defaults: on_approval stop, on_disagreement deny,
// on_transform_conflict deny. The zero value is sequential/first_deny.
type Composition struct {
	Profile             Profile
	OnApproval          string
	OnDisagreement      string
	OnTransformConflict string
}

// Resolved fills defaults and drops the knobs the profile never consults.
func (c Composition) Resolved() Composition {
	out := Composition{Profile: c.Profile}
	if out.Profile == "" {
		out.Profile = SequentialFirstDeny
	}
	switch out.Profile {
	case SequentialFirstDeny:
		out.OnApproval = orDefault(c.OnApproval, OnApprovalStop)
	case ParallelStrictest:
		out.OnTransformConflict = orDefault(c.OnTransformConflict, KnobDeny)
	case ParallelUnanimous:
		out.OnDisagreement = orDefault(c.OnDisagreement, KnobDeny)
	}
	return out
}

// Validate rejects unknown profiles and knob values.
func (c Composition) Validate() error {
	switch c.Profile {
	case "", SequentialFirstDeny, SequentialRunAll, ParallelStrictest, ParallelUnanimous:
	default:
		return fmt.Errorf("unknown composition profile %q", c.Profile)
	}
	if c.OnApproval != "" && c.OnApproval != OnApprovalStop && c.OnApproval != OnApprovalResume {
		return fmt.Errorf("on_approval must be stop or resume, not %q", c.OnApproval)
	}
	for name, v := range map[string]string{"on_disagreement": c.OnDisagreement, "on_transform_conflict": c.OnTransformConflict} {
		if v != "" && v != KnobDeny && v != KnobApproval {
			return fmt.Errorf("%s must be deny or approval, not %q", name, v)
		}
	}
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Mode is the enforcement mode (§8).
type Mode string

// The two modes.
const (
	Enforce      Mode = "enforce"
	EvaluateOnly Mode = "evaluate_only"
)

// Valid reports whether m is a known mode.
func (m Mode) Valid() bool { return m == Enforce || m == EvaluateOnly }
