package specschema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func valid() map[string]any {
	return map[string]any{
		"spec": "agent-hooks/0.1", "interception_point": "post_tool_call",
		"timestamp": "2026-01-02T03:04:05Z", "sequence": 3,
		"agent":       map[string]any{"id": "a", "framework": "custom"},
		"session":     map[string]any{"id": "s"},
		"target":      map[string]any{},
		"tool_call":   map[string]any{"id": "c1", "name": "t", "args": map[string]any{}},
		"tool_result": map[string]any{"value": "ok", "is_error": false},
	}
}

func TestValidateContext(t *testing.T) {
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateContext("post_tool_call", valid()); err != nil {
		t.Fatalf("valid context rejected: %v", err)
	}
	for _, tt := range []struct {
		name, path, keyword string
		mut                 func(m map[string]any)
	}{
		{"is_error string", "tool_result.is_error", "type", func(m map[string]any) { m["tool_result"].(map[string]any)["is_error"] = "secret-value" }},
		{"missing tool_result", "tool_result", "required", func(m map[string]any) { delete(m, "tool_result") }},
		{"extension name", "extensions", "propertyNames", func(m map[string]any) { m["extensions"] = map[string]any{"Bad-Name": 1} }},
		{"tool_call member", "tool_call", "additionalProperties", func(m map[string]any) { m["tool_call"].(map[string]any)["extra"] = 1 }},
		{"timestamp format", "timestamp", "format", func(m map[string]any) { m["timestamp"] = "yesterday" }},
		{"actor kind", "actor.kind", "enum", func(m map[string]any) { m["actor"] = map[string]any{"kind": "robot"} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := valid()
			tt.mut(m)
			err := s.ValidateContext("post_tool_call", m)
			var v *Violation
			if !errors.As(err, &v) {
				t.Fatalf("got %v, want a Violation", err)
			}
			if v.Path != tt.path || v.Keyword != tt.keyword {
				t.Errorf("violation %+v, want path %q keyword %q", v, tt.path, tt.keyword)
			}
			if strings.Contains(v.Error(), "secret-value") || strings.Contains(v.Error(), "robot") {
				t.Errorf("violation quotes the instance: %q", v.Error())
			}
		})
	}
}

func TestArrayPath(t *testing.T) {
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := `{"spec":"agent-hooks/0.1","interception_point":"post_model_call","timestamp":"2026-01-02T03:04:05Z","sequence":1,
	"agent":{"id":"a","framework":"f"},"session":{"id":"s"},"target":{},"model":{"id":"m"},
	"response":{"content":"x","finish_reason":"stop","tool_calls":[{"name":"t","args":{}},{"name":"t","args":[]}]}}`
	err = s.ValidateJSON("post_model_call", []byte(ctx))
	var v *Violation
	if !errors.As(err, &v) || v.Path != "response.tool_calls[1].args" {
		t.Fatalf("got %v, want a violation at response.tool_calls[1].args", err)
	}
}

func TestValidateRecord(t *testing.T) {
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	rec := `{"interception_point":"input","mode":"enforce","verdict":{"decision":"allow"},"input_identity":null,"enforced_identity":null,"identity_provider":null,"session_id":"s","sequence":0,"decided_by":null,"composition":{"profile":"sequential/first_deny"},"interceptors_registered":0}`
	var m map[string]any
	if err := json.Unmarshal([]byte(rec), &m); err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateRecord(m); err != nil {
		t.Fatalf("valid record rejected: %v", err)
	}
	m["extensions"] = map[string]any{"hooks_gateway": map[string]any{"policy_version": "v"}}
	var v *Violation
	if err := s.ValidateRecord(m); !errors.As(err, &v) || v.Keyword != "additionalProperties" {
		t.Fatalf("record with extensions: got %v, want additionalProperties violation", err)
	}
	if err := s.ValidateContext("nowhere", m); err == nil || errors.As(err, &v) {
		t.Errorf("unknown point: got %v", err)
	}
}
