package proxy

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
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

// A policy Build compiles carries its extensions, per surface and
// without trace or tenant, equal to what a call would build.
func TestBuildCompilesExtensions(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("HOOKS_GATEWAY_LISTEN", "")
	t.Setenv("HOOKS_GATEWAY_REDIS_URL", "")
	asm, err := Build(context.Background(), config.Default(), io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { asm.Close() })
	pol := asm.Server.Policy()
	if pol.apiExtensions == nil || pol.extensionsOnlyMembers == nil {
		t.Fatal("the compiled policy builds its extensions per call")
	}
	for _, api := range []wire.API{wire.ChatCompletions, wire.Responses, wire.Messages} {
		if got, want := pol.contextExtensionsFor(api), buildContextExtensions(pol, api); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", api, got, want)
		}
	}
	if got := pol.extensionsOnly(); !reflect.DeepEqual(got, map[string]any{"extensions": pol.ContextExtensions}) {
		t.Errorf("common members %v", got)
	}
}
