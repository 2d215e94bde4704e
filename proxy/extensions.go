package proxy

import (
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// modelCallSurfaces is how many surfaces a compiled policy keeps
// extensions for (see extensionsSlot).
const modelCallSurfaces = 3

// extensionsSlot is api's slot in a compiled policy's extensions, -1 for
// none.
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

// surfaceExtensions builds pol's extensions for every model-call surface,
// once, when the policy is compiled: they depend on ContextExtensions
// (read-only) and the surface only.
func surfaceExtensions(pol *Policy) *[modelCallSurfaces]map[string]any {
	var ext [modelCallSurfaces]map[string]any
	for _, api := range [...]wire.API{wire.ChatCompletions, wire.Responses, wire.Messages} {
		ext[extensionsSlot(api)] = buildContextExtensions(pol, api)
	}
	return &ext
}

// contextExtensionsFor is the extensions member of a model call's contexts
// on surface api: the one built when the policy was compiled, shared
// read-only by every call, or a fresh build for a policy that was not
// compiled (or another surface).
func (p *Policy) contextExtensionsFor(api wire.API) map[string]any {
	if i := extensionsSlot(api); p.apiExtensions != nil && i >= 0 {
		return p.apiExtensions[i]
	}
	return buildContextExtensions(p, api)
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

// extensionsOnly is the common members of a request that carries neither
// trace nor tenant, {"extensions": ContextExtensions}: the map built when
// the policy was compiled, shared read-only by every such request's
// builder (Build only reads Common), or a fresh one for a policy that was
// not compiled.
func (p *Policy) extensionsOnly() map[string]any {
	if p.extensionsOnlyMembers != nil {
		return p.extensionsOnlyMembers
	}
	return map[string]any{"extensions": p.ContextExtensions}
}
