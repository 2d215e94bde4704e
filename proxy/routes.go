package proxy

import (
	"fmt"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	policyfile "github.com/hooks-gateway/hooks-gateway/policy"
	"github.com/hooks-gateway/hooks-gateway/records"
)

// ExtensionNamespace is the gateway's key under the "extensions" member of
// records and contexts.
const ExtensionNamespace = "hooks_gateway"

// PolicyRoute is one compiled route: its conditions and its own emitter
// (its chain and modes; the sink, identity and observer are the policy's).
type PolicyRoute struct {
	Name    string
	Match   policyfile.Match
	Emitter *enforcement.Emitter
	// Streaming is the route's streaming mode, "" to keep the
	// configuration's.
	Streaming string
	// NativeSessions, when set, overrides Options.NativeSessions for the
	// route's requests.
	NativeSessions *bool
}

// EmitterFor returns the emitter of the first route matching r, or the
// default chain's when none does.
func (p *Policy) EmitterFor(r policyfile.Request) *enforcement.Emitter {
	_, em := p.RouteFor(r)
	return em
}

// RouteFor returns the name and emitter of the first route matching r, or
// "" and the default chain's emitter when none does.
func (p *Policy) RouteFor(r policyfile.Request) (string, *enforcement.Emitter) {
	if rt := p.match(r); rt != nil {
		return rt.Name, rt.Emitter
	}
	return "", p.Emitter
}

// chainFor returns the emitter and the streaming mode ("" to keep the
// configuration's) of the first route matching r, or the default chain's
// emitter and "" when none does: one scan of the routes.
func (p *Policy) chainFor(r policyfile.Request) (*enforcement.Emitter, string) {
	if rt := p.match(r); rt != nil {
		return rt.Emitter, rt.Streaming
	}
	return p.Emitter, ""
}

// nativeSessions reports whether the request r describes uses its
// agent's own run id as its session: def, unless its route says.
func (p *Policy) nativeSessions(r policyfile.Request, def bool) bool {
	if rt := p.match(r); rt != nil && rt.NativeSessions != nil {
		return *rt.NativeSessions
	}
	return def
}

// match is the first route matching r, nil when none does.
func (p *Policy) match(r policyfile.Request) *PolicyRoute {
	for i := range p.Routes {
		if p.Routes[i].Match.Matches(r) {
			return &p.Routes[i]
		}
	}
	return nil
}

// policyExtensions is the extensions member that names the policy version
// (and the route, for a route's chain) in the contexts the gateway builds
// (records name them through their sinks: records.Attributed).
func policyExtensions(version, route string) map[string]any {
	gw := map[string]any{"policy_version": version}
	if route != "" {
		gw["route"] = route
	}
	return map[string]any{ExtensionNamespace: gw}
}

// buildRoutes compiles the document's routes over base, the default
// chain's emitter options; regs are the document's interceptors, built
// once and shared by every chain.
func buildRoutes(cfg *config.Config, doc *policyfile.Document, base enforcement.Options, sink enforcement.RecordSink, regs []enforcement.Registration) ([]PolicyRoute, error) {
	if len(doc.Routes) == 0 {
		return nil, nil
	}
	keys := cfg.Auth.Keys()
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	if err := doc.CheckAPIKeys(names); err != nil {
		return nil, err
	}
	byName := make(map[string]enforcement.Registration, len(regs))
	for _, r := range regs {
		byName[r.Name] = r
	}
	out := make([]PolicyRoute, 0, len(doc.Routes))
	for _, r := range doc.Routes {
		opts := base
		e := doc.EngineEnforcement(r)
		opts.Mode, opts.PointModes = e.EngineMode(), e.EnginePointModes()
		opts.Interceptors = make([]enforcement.Registration, len(r.Interceptors))
		for i, n := range r.Interceptors {
			opts.Interceptors[i] = byName[n]
		}
		opts.Sink = records.Attributed(sink, records.Attribution{PolicyVersion: doc.Version, Route: r.Name})
		em, err := enforcement.NewEmitter(opts)
		if err != nil {
			return nil, fmt.Errorf("route %s: enforcement: %w", r.Name, err)
		}
		out = append(out, PolicyRoute{Name: r.Name, Match: r.Match, Emitter: em, Streaming: r.Streaming, NativeSessions: r.NativeSessions})
	}
	return out, nil
}
