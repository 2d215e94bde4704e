// Package interceptors holds the gateway's built-in interceptor types and
// builds them from configuration.
//
// Each type is one file and one entry in Registry: a Factory that decodes
// the type's own options from the interceptor's YAML mapping (strictly, with
// file:line errors) and returns an enforcement.Interceptor. Restricting an
// interceptor to some points is generic: Build wraps it so that it answers
// allow at the points it was not configured for.
package interceptors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Factory builds one interceptor from its configuration and env. Problems
// with the options come back as a *config.Error.
type Factory func(spec config.Interceptor, env Env) (enforcement.Interceptor, error)

// Env is what the host lends interceptors beyond their own options: shared
// state and logging. The zero Env is valid; a type that needs something Env
// lacks refuses to build with a problem naming it.
type Env struct {
	// Logger receives operational logs (never payloads); nil discards.
	Logger *slog.Logger
	// Counters keeps the budget type's counters; nil means no store lends
	// them, and a budget refuses to build.
	Counters Counters
	// InterceptorTimeout is the engine's per-call timeout, when known (0
	// otherwise): remote types check their own timeouts fit inside it.
	InterceptorTimeout time.Duration
}

// logger returns env's logger, or one that discards.
func (env Env) logger() *slog.Logger {
	if env.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return env.Logger
}

// Registry returns the built-in interceptor types by name. It returns a new
// map on every call, so callers may extend their copy.
func Registry() map[string]Factory {
	return map[string]Factory{
		"allow":  newAllow,
		"budget": newBudget,
		"cel":    newCEL,
		"deny":   newDeny,
		"egress": newEgress,
		"http":   newHTTP,
		"opa":    newOPA,
		"redact": newRedact,
		"regex":  newRegex,
		"tools":  newTools,
	}
}

// Types returns the names of the built-in types, sorted.
func Types() []string { return slices.Sorted(maps.Keys(Registry())) }

// Build looks spec.Type up in Registry, builds the interceptor and, when
// spec.Points is not empty, restricts it to those points.
func Build(spec config.Interceptor, env Env) (enforcement.Registration, error) {
	factory, ok := Registry()[spec.Type]
	if !ok {
		return enforcement.Registration{}, problemsError(spec.Problemf("type",
			"unknown interceptor type %q (one of %s)", spec.Type, strings.Join(Types(), ", ")))
	}
	var ps []config.Problem
	points := make(map[enforcement.Point]bool, len(spec.Points))
	for i, p := range spec.Points {
		if !enforcement.Point(p).Valid() {
			ps = append(ps, spec.Problemf(fmt.Sprintf("points[%d]", i), "unknown interception point %q", p))
		}
		points[enforcement.Point(p)] = true
	}
	ic, err := factory(spec, env)
	if err != nil {
		var cerr *config.Error
		if !errors.As(err, &cerr) {
			return enforcement.Registration{}, fmt.Errorf("interceptor %s: %w", spec.Name, err)
		}
		ps = append(ps, cerr.Problems...)
	}
	if len(ps) > 0 {
		return enforcement.Registration{}, problemsError(ps...)
	}
	if len(points) > 0 {
		if _, ok := ic.(enforcement.OwnsTransforms); ok {
			ic = ownsTransformsOnlyAt{readOnlyOnlyAt{nonBlockingOnlyAt{onlyAt{points: points, next: ic}}}}
		} else if _, ok := ic.(enforcement.ReadsOnly); ok {
			ic = readOnlyOnlyAt{nonBlockingOnlyAt{onlyAt{points: points, next: ic}}}
		} else if _, ok := ic.(enforcement.NonBlocking); ok {
			ic = nonBlockingOnlyAt{onlyAt{points: points, next: ic}}
		} else {
			ic = onlyAt{points: points, next: ic}
		}
	}
	return enforcement.Registration{Name: spec.Name, Interceptor: ic}, nil
}

// BuildAll builds every interceptor in order. It reports the problems of
// all of them together in one *config.Error, so a bad policy is fixed in one
// round.
func BuildAll(specs []config.Interceptor, env Env) ([]enforcement.Registration, error) {
	regs := make([]enforcement.Registration, 0, len(specs))
	var ps []config.Problem
	for _, spec := range specs {
		reg, err := Build(spec, env)
		if err != nil {
			var cerr *config.Error
			if !errors.As(err, &cerr) {
				return nil, err
			}
			ps = append(ps, cerr.Problems...)
			continue
		}
		regs = append(regs, reg)
	}
	if len(ps) > 0 {
		return nil, problemsError(ps...)
	}
	return regs, nil
}

// onlyAt runs next at the listed points and allows everywhere else.
type onlyAt struct {
	points map[enforcement.Point]bool
	next   enforcement.Interceptor
}

// Intercept implements enforcement.Interceptor.
func (o onlyAt) Intercept(ctx context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	if !o.points[c.Point()] {
		return enforcement.Allow(), nil
	}
	return o.next.Intercept(ctx, c)
}

// AppliesAt implements enforcement.PointScoped: the emitter skips the call
// (and its copy of the context) where the answer is a plain allow.
func (o onlyAt) AppliesAt(p enforcement.Point) bool { return o.points[p] }

// nonBlockingOnlyAt keeps a non-blocking interceptor's mark through the
// point filter.
type nonBlockingOnlyAt struct{ onlyAt }

// NonBlocking implements enforcement.NonBlocking.
func (nonBlockingOnlyAt) NonBlocking() {}

// readOnlyOnlyAt keeps a read-only interceptor's marks through the point
// filter.
type readOnlyOnlyAt struct{ nonBlockingOnlyAt }

// ReadsOnly implements enforcement.ReadsOnly.
func (readOnlyOnlyAt) ReadsOnly() {}

// ownsTransformsOnlyAt keeps an interceptor's claim on its transform
// values through the point filter.
type ownsTransformsOnlyAt struct{ readOnlyOnlyAt }

// OwnsTransforms implements enforcement.OwnsTransforms.
func (ownsTransformsOnlyAt) OwnsTransforms() {}

// fixedVerdict answers the same verdict everywhere without reading the
// context (allow, deny).
type fixedVerdict struct{ v enforcement.Verdict }

// Intercept implements enforcement.Interceptor.
func (f fixedVerdict) Intercept(context.Context, enforcement.Context) (enforcement.Verdict, error) {
	return f.v, nil
}

// NonBlocking implements enforcement.NonBlocking.
func (fixedVerdict) NonBlocking() {}

// ReadsOnly implements enforcement.ReadsOnly: it does not even read.
func (fixedVerdict) ReadsOnly() {}

// problemsError orders problems by line, as config does, so a policy's
// problems read top to bottom whichever check found them.
func problemsError(ps ...config.Problem) error {
	ps = slices.Clone(ps)
	slices.SortStableFunc(ps, func(a, b config.Problem) int {
		switch {
		case a.Line == b.Line:
			return 0
		case a.Line == 0:
			return 1
		case b.Line == 0:
			return -1
		}
		return a.Line - b.Line
	})
	return &config.Error{Problems: ps}
}

// reasonPattern keeps reasons machine-readable identifiers such as
// policy:credential_leak.
var reasonPattern = regexp.MustCompile(`^[A-Za-z0-9_.:/-]+$`)

// checkReason validates a configured reason; host_error:* reasons are the
// host's alone (spec §11) and would turn the verdict invalid.
func checkReason(spec config.Interceptor, reason string) []config.Problem {
	return checkReasonAt(spec, "reason", reason)
}

// checkReasonAt is checkReason for a reason at field inside the
// interceptor's mapping (such as rules[2].deny.reason).
func checkReasonAt(spec config.Interceptor, field, reason string) []config.Problem {
	switch {
	case enforcement.IsHostError(reason):
		return []config.Problem{spec.Problemf(field, "must not use the reserved host_error: prefix (got %q)", reason)}
	case !reasonPattern.MatchString(reason):
		return []config.Problem{spec.Problemf(field, "must be an identifier of letters, digits and _ . : / - such as policy:denied (got %q)", reason)}
	}
	return nil
}
