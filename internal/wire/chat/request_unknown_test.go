package chat

import (
	"errors"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// unknownEverywhere is a request with a member the gateway does not know
// in every object it interprets.
const unknownEverywhere = `{"model":"m","messages":[` +
	`{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}],"x_note":"n"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}","x_fn":1},"extra_content":{"google":{"thought_signature":"sig"}}}]},` +
	`{"role":"tool","tool_call_id":"c","content":"ok"}],` +
	`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"},"x_hint":"h"},"cache_control":{"type":"ephemeral"}}],` +
	`"stream":true,"stream_options":{"include_usage":false,"x_flag":true},` +
	`"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{},"x_js":1},"x_rf":2},` +
	`"tool_choice":{"type":"function","function":{"name":"f","x_tc":3},"x_choice":4},` +
	`"x_route":{"tier":"gold","n":1.50}}`

// Judge mode (the default): every unknown member reaches a policy, where
// the context shows it, and is forwarded as the client sent it.
func TestUnknownRequestMembersJudged(t *testing.T) {
	r := mustRequest(t, unknownEverywhere)
	params := r.Params()
	for name, want := range map[string]string{
		"x_route":         `{"tier":"gold","n":1.50}`,
		"stream_options":  `{"x_flag":true}`,
		"response_format": `{"type":"json_schema","json_schema":{"name":"n","schema":{},"x_js":1},"x_rf":2}`,
		"tool_choice":     `{"type":"function","function":{"name":"f","x_tc":3},"x_choice":4}`,
	} {
		if got := params[name]; !jsonvalue.Equal(got, tree(t, want)) {
			t.Errorf("model.params.%s = %s, want %s", name, mustJSON(t, got), want)
		}
	}
	wantTools := tree(t, `[{"name":"f","schema":{"type":"object"},"members":{"cache_control":{"type":"ephemeral"}},"function_members":{"x_hint":"h"}}]`)
	if got := r.Tools(); !jsonvalue.Equal(any(got), wantTools) {
		t.Errorf("tools = %s", mustJSON(t, got))
	}
	msgs := mustJSON(t, r.Messages())
	for _, member := range []string{`"cache_control"`, `"x_note"`, `"x_fn"`, `"thought_signature"`} {
		if !strings.Contains(msgs, member) {
			t.Errorf("the projected messages lack %s: %s", member, msgs)
		}
	}
	if up, err := r.UpstreamBody(nil, false); err != nil || string(up) != unknownEverywhere {
		t.Errorf("UpstreamBody = %s, %v; want the body as sent", up, err)
	}
	up, err := r.UpstreamBody(nil, true)
	if err != nil || !strings.Contains(string(up), `"stream_options":{"include_usage":true,"x_flag":true}`) {
		t.Errorf("forced usage lost the unknown stream option: %s (%v)", up, err)
	}
}

// Strict mode refuses an unknown member inside every object whose members
// the gateway knows, naming its path and the switch; the members of a
// message itself are the target's and stay accepted.
func TestUnknownRequestMembersRefusedStrict(t *testing.T) {
	strict := (&RequestParser{}).WithStrictMembers(true)
	clean := strings.NewReplacer(`,"cache_control":{"type":"ephemeral"}}],"x_note"`, `}],"x_note"`,
		`,"x_fn":1},"extra_content":{"google":{"thought_signature":"sig"}}}`, `}}`,
		`,"x_hint":"h"},"cache_control":{"type":"ephemeral"}}]`, `}}]`,
		`,"x_flag":true`, ``, `,"x_js":1},"x_rf":2}`, `}}`, `,"x_tc":3},"x_choice":4}`, `}}`,
		`,"x_route":{"tier":"gold","n":1.50}`, ``).Replace(unknownEverywhere)
	if _, err := strict.Parse([]byte(clean)); err != nil {
		t.Fatalf("strict mode refused the request without unknown members: %v", err)
	}
	tests := []struct {
		name, body, field string
	}{
		{"top level", strings.Replace(clean, `"model":"m",`, `"model":"m","x_route":1,`, 1), "x_route"},
		{"content part", strings.Replace(clean, `"text":"hi"`, `"text":"hi","cache_control":{}`, 1), "messages[0].content[0].cache_control"},
		{"tool_calls entry", strings.Replace(clean, `"id":"c",`, `"id":"c","extra_content":{},`, 1), "messages[1].tool_calls[0].extra_content"},
		{"tool_calls function", strings.Replace(clean, `"arguments":"{}"`, `"arguments":"{}","x_fn":1`, 1), "messages[1].tool_calls[0].function.x_fn"},
		{"tools entry", strings.Replace(clean, `"tools":[{"type":"function",`, `"tools":[{"type":"function","cache_control":{},`, 1), "tools[0].cache_control"},
		{"tools function", strings.Replace(clean, `"parameters":{"type":"object"}`, `"parameters":{"type":"object"},"x_hint":1`, 1), "tools[0].function.x_hint"},
		{"tools entry, odd name", strings.Replace(clean, `"tools":[{"type":"function",`, `"tools":[{"type":"function","x `+secret+`":1,`, 1), "tools[0]"},
		{"stream_options", strings.Replace(clean, `"include_usage":false`, `"include_usage":false,"x_flag":true`, 1), "stream_options.x_flag"},
		{"response_format", strings.Replace(clean, `"type":"json_schema",`, `"type":"json_schema","x_rf":1,`, 1), "response_format.x_rf"},
		{"response_format json_schema", strings.Replace(clean, `"schema":{}`, `"schema":{},"x_js":1`, 1), "response_format.json_schema.x_js"},
		{"tool_choice", strings.Replace(clean, `"tool_choice":{"type":"function",`, `"tool_choice":{"type":"function","x_choice":1,`, 1), "tool_choice.x_choice"},
		{"tool_choice function", strings.Replace(clean, `"function":{"name":"f"}}`, `"function":{"name":"f","x_tc":1}}`, 1), "tool_choice.function.x_tc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.body == clean {
				t.Fatal("the case adds nothing")
			}
			if _, err := ParseRequest([]byte(tc.body)); err != nil {
				t.Fatalf("judge mode refused it: %v", err)
			}
			_, err := strict.Parse([]byte(tc.body))
			var re *wire.RequestError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want *RequestError", err)
			}
			if re.Field != tc.field || !strings.Contains(re.Msg, UnknownMembersKey) {
				t.Errorf("refused with %q, want field %q and the switch %s", re.Error(), tc.field, UnknownMembersKey)
			}
			noSecret(t, err)
		})
	}
	// The members of a message itself are judged in both modes.
	if _, err := strict.Parse([]byte(strings.Replace(clean, `"role":"tool",`, `"role":"tool","x_trace":"t",`, 1))); err != nil {
		t.Errorf("strict mode refused an unknown message member: %v", err)
	}
}
