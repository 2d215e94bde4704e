package sdk

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// GatewayPolicy states the gateway's declared surface for the records a
// remote session writes itself: the host-failure records of emissions that
// failed closed on the SDK's side (gateway unreachable, timed out, an
// answer that could not be read, a value that could not be put on the
// wire). Spec §10.3 has every record name the declared identity provider,
// the mode in effect and the composition in effect, and the SDK cannot
// know them before the gateway has answered. Its members mirror the
// gateway's enforcement section (docs/configuration.md), with the same
// defaults, so a deployment copies the values it configured there.
//
// Once the gateway has answered, what its records say wins: a local
// record at a point the gateway has recorded takes that record's mode,
// composition and interceptor count; elsewhere it takes the mode of
// PointModes when it names the point, else the latest gateway record's;
// the identity provider, composition and count are the latest gateway
// record's.
type GatewayPolicy struct {
	// IdentityProvider is enforcement.identity_provider: "" or
	// "jcs-sha256" (the gateway's default), "null" (no identities), or a
	// host-defined name such as "hmac-sha256-k1".
	IdentityProvider string
	// Mode is enforcement.mode; "" means enforce.
	Mode enforcement.Mode
	// PointModes is enforcement.point_modes.
	PointModes map[enforcement.Point]enforcement.Mode
	// Composition is enforcement.composition; the zero value is
	// sequential/first_deny. Unset knobs take the spec's defaults.
	Composition enforcement.Composition
	// Interceptors is the number of interceptors the gateway registers.
	Interceptors int
}

// recordPolicy is the policy one record states.
type recordPolicy struct {
	provider    string // "" is the null provider
	mode        enforcement.Mode
	composition enforcement.Composition
	registered  int
}

// validate checks p as NewRemoteSession takes it and returns the record
// policy it states before the gateway has answered.
func (p GatewayPolicy) validate() (recordPolicy, error) {
	out := recordPolicy{mode: p.Mode, registered: p.Interceptors}
	switch name := p.IdentityProvider; {
	case name == "" || name == enforcement.IdentityJCSSHA256:
		out.provider = enforcement.IdentityJCSSHA256
	case name == "null":
	case strings.HasPrefix(name, "jcs"):
		return recordPolicy{}, fmt.Errorf("sdk: GatewayPolicy.IdentityProvider %q: the jcs prefix is reserved", name)
	default:
		if _, err := enforcement.NewIdentityProvider(name, func(enforcement.Context) (string, error) { return "", nil }); err != nil {
			return recordPolicy{}, fmt.Errorf("sdk: GatewayPolicy.IdentityProvider: %w", err)
		}
		out.provider = name
	}
	if out.mode == "" {
		out.mode = enforcement.Enforce
	}
	if !out.mode.Valid() {
		return recordPolicy{}, errors.New("sdk: GatewayPolicy.Mode must be enforce or evaluate_only")
	}
	for pt, m := range p.PointModes {
		if !pt.Valid() || !m.Valid() {
			return recordPolicy{}, fmt.Errorf("sdk: GatewayPolicy.PointModes: %q: %q is not a point and a mode", pt, m)
		}
	}
	if err := p.Composition.Validate(); err != nil {
		return recordPolicy{}, fmt.Errorf("sdk: GatewayPolicy.Composition: %w", err)
	}
	out.composition = p.Composition.Resolved()
	if p.Interceptors < 0 {
		return recordPolicy{}, errors.New("sdk: GatewayPolicy.Interceptors must not be negative")
	}
	return out, nil
}

// learn keeps the policy a gateway record states.
func (r *remoteEmitter) learn(rec *enforcement.Record) {
	p := recordPolicy{provider: rec.IdentityProvider, mode: rec.Mode, composition: rec.Composition, registered: rec.InterceptorsRegistered}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.learnt == nil {
		r.learnt = make(map[enforcement.Point]recordPolicy)
	}
	r.learnt[rec.InterceptionPoint] = p
	r.latest = &p
}

// policyAt is the policy a local record at point states (GatewayPolicy
// says which source wins).
func (r *remoteEmitter) policyAt(point enforcement.Point) recordPolicy {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.learnt[point]; ok {
		return p
	}
	p := r.declared
	if r.latest != nil {
		p = *r.latest
	}
	if m, ok := r.pointModes[point]; ok {
		p.mode = m
	}
	return p
}
