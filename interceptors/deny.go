package interceptors

import (
	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// denyOptions configures the "deny" type.
type denyOptions struct {
	// Reason is the verdict reason (default policy:denied).
	Reason string `yaml:"reason"`
	// Message is the human-readable explanation returned to the client.
	Message string `yaml:"message"`
	// Escalate makes the deny liftable: the approval resolver (spec §9)
	// may let the action proceed.
	Escalate bool `yaml:"escalate"`
}

// newDeny builds the "deny" type: an unconditional deny at its points, for
// switching a point off (say, output in a read-only deployment), or, with
// escalate, for requiring an approval there (say, before every tool call).
func newDeny(spec config.Interceptor, _ Env) (enforcement.Interceptor, error) {
	opts := denyOptions{Reason: "policy:denied"}
	if err := spec.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	if ps := checkReason(spec, opts.Reason); ps != nil {
		return nil, problemsError(ps...)
	}
	if opts.Message == "" {
		opts.Message = "denied by policy " + spec.Name
	}
	verdict := enforcement.Deny(opts.Reason, opts.Message)
	if opts.Escalate {
		verdict = enforcement.Escalate(opts.Reason, opts.Message)
	}
	return fixedVerdict{verdict}, nil
}
