package enforcement

import (
	"context"
	"encoding/json"
	"testing"
)

func TestRecordExtensionsOnEveryRecord(t *testing.T) {
	sink := &collectSink{}
	ext := map[string]any{"hooks_gateway": map[string]any{"policy_version": "sha256:0123456789abcdef"}}
	e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Sink: sink, RecordExtensions: ext})
	// The emitter keeps its own copy: the caller's later changes do not leak.
	ext["hooks_gateway"].(map[string]any)["policy_version"] = "changed"

	if _, err := e.Emit(context.Background(), buildAt(t, nil, PreToolCall)); err != nil {
		t.Fatal(err)
	}
	e.RecordHostFailure(context.Background(), HostFailure{Point: Input, SessionID: "s", Sequence: -1, Message: "x"})
	recs := sink.records()
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	for _, r := range recs {
		wire, b := recordWire(t, r)
		gw, _ := wire["extensions"].(map[string]any)["hooks_gateway"].(map[string]any)
		if gw["policy_version"] != "sha256:0123456789abcdef" {
			t.Errorf("record %s: extensions = %v", b, wire["extensions"])
		}
		var back Record
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if again, _ := json.Marshal(back); string(again) != string(b) {
			t.Errorf("round trip changed the record:\n%s\n%s", b, again)
		}
	}
}

func TestRecordWithoutExtensionsOmitsTheMember(t *testing.T) {
	sink := &collectSink{}
	e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Sink: sink})
	if _, err := e.Emit(context.Background(), buildAt(t, nil, PreToolCall)); err != nil {
		t.Fatal(err)
	}
	wire, b := recordWire(t, sink.records()[0])
	if _, ok := wire["extensions"]; ok {
		t.Errorf("record carries extensions without any configured: %s", b)
	}
}

func TestRecordExtensionsMustMarshal(t *testing.T) {
	_, err := NewEmitter(Options{RecordExtensions: map[string]any{"x": func() {}}})
	if err == nil {
		t.Fatal("NewEmitter accepted extensions that cannot be marshalled")
	}
}
