package providers

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// Route sends the models matching any of Patterns to Upstream.
//
// Patterns use path.Match syntax ("gpt-*", "llama-3.?-*", "*") with one
// difference: '/' is an ordinary character, so "*" also matches
// Hugging Face style names such as "meta-llama/Llama-3.1-8B" (a '/' as the
// bound of a character-class range is the one construct this changes).
type Route struct {
	Patterns []string
	Upstream Upstream
}

// Router maps model names to upstreams. It is immutable and safe for
// concurrent use.
type Router struct {
	routes []compiledRoute
	models []string
}

type compiledRoute struct {
	patterns []string // '/' replaced by slashStandIn
	upstream Upstream
}

// slashStandIn replaces '/' on both sides of path.Match, whose wildcards
// stop at '/'. NUL never occurs in a model name worth routing.
const slashStandIn = "\x00"

// NewRouter validates routes and returns the router. Every route needs an
// upstream and at least one well-formed pattern.
func NewRouter(routes []Route) (*Router, error) {
	if len(routes) == 0 {
		return nil, errors.New("providers: router: no routes")
	}
	r := &Router{routes: make([]compiledRoute, 0, len(routes))}
	for i, rt := range routes {
		if rt.Upstream == nil {
			return nil, fmt.Errorf("providers: router: route %d has no upstream", i)
		}
		if len(rt.Patterns) == 0 {
			return nil, fmt.Errorf("providers: router: route %d (%s) has no patterns", i, rt.Upstream.Name())
		}
		if err := validatePatterns(rt.Patterns); err != nil {
			return nil, fmt.Errorf("providers: router: route %d (%s): %w", i, rt.Upstream.Name(), err)
		}
		c := compiledRoute{upstream: rt.Upstream}
		for _, p := range rt.Patterns {
			c.patterns = append(c.patterns, strings.ReplaceAll(p, "/", slashStandIn))
		}
		r.routes = append(r.routes, c)
	}
	r.models = r.advertised(routes)
	return r, nil
}

// Route returns the upstream of the first route with a pattern matching
// model whose upstream serves op.
func (r *Router) Route(model string, op wire.Operation) (Upstream, bool) {
	return r.route(model, func(u Upstream) bool { return u.Serves(op) })
}

// route returns the upstream of the first route accepted by serves with a
// pattern matching model.
func (r *Router) route(model string, serves func(Upstream) bool) (Upstream, bool) {
	if model == "" || strings.Contains(model, slashStandIn) {
		return nil, false
	}
	name := strings.ReplaceAll(model, "/", slashStandIn)
	for _, rt := range r.routes {
		if !serves(rt.upstream) {
			continue
		}
		for _, p := range rt.patterns {
			// Patterns were validated, so Match cannot fail.
			if ok, _ := path.Match(p, name); ok {
				return rt.upstream, true
			}
		}
	}
	return nil, false
}

// Models returns the model ids for GET /v1/models, sorted and without
// duplicates.
func (r *Router) Models() []string { return slices.Clone(r.models) }

// advertised collects the literal route patterns and the upstreams' own
// models, keeping only names that route somewhere so the list never
// promises a model the gateway would refuse.
func (r *Router) advertised(routes []Route) []string {
	var names []string
	for _, rt := range routes {
		names = append(names, literalModels(rt.Patterns)...)
		names = append(names, rt.Upstream.Models()...)
	}
	names = slices.DeleteFunc(names, func(m string) bool {
		_, ok := r.route(m, func(Upstream) bool { return true })
		return !ok
	})
	slices.Sort(names)
	return slices.Compact(names)
}
