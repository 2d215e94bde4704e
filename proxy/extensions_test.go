package proxy

import (
	"reflect"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// TestContextExtensions: a compiled policy hands every call on a surface
// the map built at compile time, equal to a fresh build; a policy that was
// not compiled, or a surface without a slot, builds them per call.
func TestContextExtensions(t *testing.T) {
	pol := &Policy{ContextExtensions: map[string]any{
		"team": "a", ExtensionNamespace: map[string]any{"policy_version": "v1"},
	}}
	pol.apiExtensions = surfaceExtensions(pol)
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
		if kept := extensionsSlot(api) >= 0; same != kept {
			t.Errorf("%s: second call shares the first's map: %v, want %v", api, same, kept)
		}
	}
	bare := &Policy{ContextExtensions: map[string]any{"team": "c"}}
	if got := bare.contextExtensionsFor(wire.ChatCompletions); got["team"] != "c" {
		t.Errorf("not compiled: %v", got)
	}
}

// A compiled policy's requests without trace or tenant share one common
// map, {"extensions": ContextExtensions}; a policy that was not compiled
// builds an equal one per call.
func TestExtensionsOnly(t *testing.T) {
	ext := map[string]any{"team": "a"}
	pol := &Policy{ContextExtensions: ext, extensionsOnlyMembers: map[string]any{"extensions": ext}}
	first, again := pol.extensionsOnly(), pol.extensionsOnly()
	if reflect.ValueOf(first).UnsafePointer() != reflect.ValueOf(again).UnsafePointer() {
		t.Error("a compiled policy built its common members twice")
	}
	bare := &Policy{ContextExtensions: ext}
	if got := bare.extensionsOnly(); !reflect.DeepEqual(got, first) {
		t.Errorf("not compiled: %v, want %v", got, first)
	}
}
