package proxy

import (
	"reflect"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// TestContextExtensionsCache: a policy builds each surface's extensions
// once and hands every call the same map, equal to a fresh build; a copy
// of the policy given other extensions gets its own, and a policy without
// a cache builds them per call.
func TestContextExtensionsCache(t *testing.T) {
	pol := &Policy{apiExtensions: new(extensionsCache), ContextExtensions: map[string]any{
		"team": "a", ExtensionNamespace: map[string]any{"policy_version": "v1"},
	}}
	for _, api := range []wire.API{wire.ChatCompletions, wire.Responses, wire.Messages, wire.API("other")} {
		first := pol.contextExtensionsFor(api)
		if want := buildContextExtensions(pol, api); !reflect.DeepEqual(first, want) {
			t.Errorf("%s: %v, want %v", api, first, want)
		}
		if gw := first[ExtensionNamespace].(map[string]any); gw["api"] != string(api) || gw["policy_version"] != "v1" || first["team"] != "a" {
			t.Errorf("%s: %v", api, first)
		}
		again := pol.contextExtensionsFor(api)
		same := reflect.ValueOf(again).UnsafePointer() == reflect.ValueOf(first).UnsafePointer()
		if cached := extensionsSlot(api) >= 0; same != cached {
			t.Errorf("%s: second call shares the first's map: %v, want %v", api, same, cached)
		}
	}
	cp := &Policy{apiExtensions: pol.apiExtensions, ContextExtensions: map[string]any{"team": "b"}}
	if got := cp.contextExtensionsFor(wire.ChatCompletions); got["team"] != "b" {
		t.Errorf("copy with other extensions: %v", got)
	}
	if got := pol.contextExtensionsFor(wire.ChatCompletions); got["team"] != "a" {
		t.Errorf("original after the copy: %v", got)
	}
	bare := &Policy{ContextExtensions: map[string]any{"team": "c"}}
	if got := bare.contextExtensionsFor(wire.ChatCompletions); got["team"] != "c" {
		t.Errorf("no cache: %v", got)
	}
}
