package proxy

import (
	"reflect"
	"sync/atomic"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// extensionsCache keeps a policy's model-call extensions per surface:
// they depend on the policy's ContextExtensions and the surface only.
type extensionsCache struct {
	byAPI [3]atomic.Pointer[builtExtensions] // by extensionsSlot
	// common is the common members of a request without trace or tenant:
	// the extensions member alone.
	common atomic.Pointer[builtExtensions]
}

// builtExtensions is one surface's extensions and the ContextExtensions
// map they were built from: a copy of the policy given other extensions
// shares the cache but not the entry.
type builtExtensions struct {
	from any // the source map, compared by identity
	ext  map[string]any
}

// extensionsSlot is api's slot in extensionsCache, -1 for none.
func extensionsSlot(api wire.API) int {
	switch api {
	case wire.ChatCompletions:
		return 0
	case wire.Responses:
		return 1
	case wire.Messages:
		return 2
	}
	return -1
}

// contextExtensionsFor is the extensions member of a model call's contexts
// on surface api, built once per surface when the policy has a cache and
// then shared, read-only like ContextExtensions itself, by every call. Two
// calls racing to build it build equal maps; either is kept.
func (p *Policy) contextExtensionsFor(api wire.API) map[string]any {
	i := extensionsSlot(api)
	if p.apiExtensions == nil || i < 0 {
		return buildContextExtensions(p, api)
	}
	src := reflect.ValueOf(p.ContextExtensions).UnsafePointer()
	if b := p.apiExtensions.byAPI[i].Load(); b != nil && b.from == src {
		return b.ext
	}
	ext := buildContextExtensions(p, api)
	p.apiExtensions.byAPI[i].Store(&builtExtensions{from: src, ext: ext})
	return ext
}

// extensionsOnly is the common members of a request that carries neither
// trace nor tenant, {"extensions": ContextExtensions}: built once when the
// policy has a cache and shared, read-only like ContextExtensions itself,
// by every such request's builder (Build only reads Common).
func (p *Policy) extensionsOnly() map[string]any {
	if p.apiExtensions == nil {
		return map[string]any{"extensions": p.ContextExtensions}
	}
	src := reflect.ValueOf(p.ContextExtensions).UnsafePointer()
	if b := p.apiExtensions.common.Load(); b != nil && b.from == src {
		return b.ext
	}
	common := map[string]any{"extensions": p.ContextExtensions}
	p.apiExtensions.common.Store(&builtExtensions{from: src, ext: common})
	return common
}

// buildContextExtensions is the policy's context extensions (pol may be
// nil) with the surface added as extensions.hooks_gateway.api, the
// policy's own hooks_gateway members merged in.
func buildContextExtensions(pol *Policy, api wire.API) map[string]any {
	gw := map[string]any{"api": string(api)}
	ext := map[string]any{ExtensionNamespace: gw}
	if pol != nil {
		for k, v := range pol.ContextExtensions {
			if k != ExtensionNamespace {
				ext[k] = v
			}
		}
		own, _ := pol.ContextExtensions[ExtensionNamespace].(map[string]any)
		for k, v := range own {
			gw[k] = v
		}
	}
	return ext
}
