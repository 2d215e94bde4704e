package chat

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

func TestParseResponseProjection(t *testing.T) {
	tests := []struct {
		name, body, want string
		usage            string // "" for nil
	}{
		{
			name: "tool calls",
			body: toolCallResponse,
			want: `{"content":null,"tool_calls":[
			  {"id":"call_weather","name":"get_weather","args":{"city":"Paris","unit":"c","days":1.0}},
			  {"id":"call_transfer","name":"transfer","args":{"to":"` + secret + `","amount_cents":9007199254740993},"members":{"x_provider_trace":"t-1"}}],
			  "finish_reason":"tool_calls"}`,
			usage: `{"prompt_tokens":82,"completion_tokens":17}`,
		},
		{
			name:  "text",
			body:  textResponse,
			want:  `{"content":"Your card ` + secret + ` is on file.","tool_calls":[],"finish_reason":"stop"}`,
			usage: `{"prompt_tokens":12,"completion_tokens":9}`,
		},
		{
			name:  "refusal projected as a refusal part",
			body:  refusalResponse,
			want:  `{"content":[{"type":"refusal","refusal":"I can't help with ` + secret + `."}],"tool_calls":[],"finish_reason":"stop"}`,
			usage: `{"prompt_tokens":30,"completion_tokens":8}`,
		},
		{
			name: "raw arguments",
			body: rawArgsResponse,
			want: `{"content":"","tool_calls":[
			  {"id":"c1","name":"shell","args":{"raw_arguments":"ls -la /tmp"}},
			  {"id":"c2","name":"noop","args":{"raw_arguments":""}},
			  {"id":"c3","name":"list","args":{"raw_arguments":"[1,2]"}}],"finish_reason":"tool_calls"}`,
		},
		{
			name: "content parts, no finish_reason, odd usage",
			body: `{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"https://x"}}]}}],"usage":{"prompt_tokens":true,"completion_tokens":1.5,"total_tokens":3}}`,
			want: `{"content":"a","tool_calls":[],"finish_reason":"stop"}`,
		},
		{
			name: "missing id, arguments and content; null finish_reason",
			body: `{"choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"function":{"name":"f"}}]},"finish_reason":null}]}`,
			want: `{"content":null,"tool_calls":[{"id":"","name":"f","args":{"raw_arguments":""}}],"finish_reason":"stop"}`,
		},
		{
			name: "refusal next to content is projected too",
			body: `{"choices":[{"message":{"role":"assistant","content":"ok","refusal":"no"},"finish_reason":"stop"}]}`,
			want: `{"content":[{"type":"text","text":"ok"},{"type":"refusal","refusal":"no"}],"tool_calls":[],"finish_reason":"stop"}`,
		},
		{
			name: "arguments with a duplicate key are shown raw",
			body: `{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"sh","arguments":"{\"cmd\":\"ls\",\"cmd\":\"rm -rf /\"}"}}]},"finish_reason":"tool_calls"}]}`,
			want: `{"content":null,"tool_calls":[{"id":"a","name":"sh","args":{"raw_arguments":"{\"cmd\":\"ls\",\"cmd\":\"rm -rf /\"}"}}],"finish_reason":"tool_calls"}`,
		},
		{
			name: "legacy finish_reason passes through verbatim",
			body: `{"choices":[{"message":{"role":"assistant","content":"x"},"finish_reason":"function_call"}]}`,
			want: `{"content":"x","tool_calls":[],"finish_reason":"function_call"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustResponse(t, tc.body)
			got := r.Project()
			if !jsonvalue.Equal(got, tree(t, tc.want)) {
				t.Errorf("Project = %s", mustJSON(t, got))
			}
			var wantUsage any
			if tc.usage != "" {
				wantUsage = tree(t, tc.usage)
			}
			if u := r.Usage(); !jsonvalue.Equal(u, wantUsage) {
				t.Errorf("Usage = %v, want %s", u, tc.usage)
			}
			if err := r.CheckWriteBack(got); err != nil {
				t.Errorf("the projection itself fails CheckWriteBack: %v", err)
			}
		})
	}
}

func TestParseResponseNumbersAndMeta(t *testing.T) {
	r := mustResponse(t, toolCallResponse)
	args := r.Project()["tool_calls"].([]any)[1].(map[string]any)["args"].(map[string]any)
	if got := args["amount_cents"]; got != json.Number("9007199254740993") {
		t.Errorf("amount_cents = %#v, want json.Number 9007199254740993", got)
	}
	if got := r.Project()["tool_calls"].([]any)[0].(map[string]any)["args"].(map[string]any)["days"]; got != json.Number("1.0") {
		t.Errorf("days = %#v, want json.Number 1.0", got)
	}
	// The id is the gateway's, the model the request's.
	if m, err := ParseResponse([]byte(toolCallResponse), ResponseOptions{Model: "asked"}); err != nil ||
		!strings.HasPrefix(m.ID(), "chatcmpl-") || len(m.ID()) != len("chatcmpl-")+24 || m.ID() == r.ID() || m.Model() != "asked" || m.Created() != 1741570283 {
		t.Errorf("ID, Model, Created = %q, %q, %d (%v)", m.ID(), m.Model(), m.Created(), err)
	}
	// Project hands out copies.
	p := r.Project()
	p["content"] = "mutated"
	p["tool_calls"].([]any)[0].(map[string]any)["name"] = "mutated"
	if again := r.Project(); again["content"] != nil || again["tool_calls"].([]any)[0].(map[string]any)["name"] != "get_weather" {
		t.Error("Project shares state between calls")
	}
}

func TestParseResponseErrors(t *testing.T) {
	msg := func(m string) string {
		return `{"id":"x","choices":[{"index":0,"message":` + m + `,"finish_reason":"stop"}]}`
	}
	tests := []struct {
		name, body, field, msg string
	}{
		{"not JSON", `{"choices":[`, "", "not valid JSON"},
		{"not object", `"` + secret + `"`, "", "must be a JSON object"},
		{"no choices", `{"id":"x"}`, "choices", "must be an array"},
		{"zero choices", `{"choices":[]}`, "choices", "exactly one choice, got 0"},
		{"two choices", `{"choices":[{"message":{"role":"assistant","content":"a"}},{"message":{"role":"assistant","content":"b"}}]}`, "choices", "exactly one choice, got 2"},
		{"choice not object", `{"choices":["` + secret + `"]}`, "choices[0]", "must be an object, got string"},
		{"message missing", `{"choices":[{"finish_reason":"stop"}]}`, "choices[0].message", "required"},
		{"finish_reason number", `{"choices":[{"message":{"role":"assistant","content":"a"},"finish_reason":3}]}`, "choices[0].finish_reason", "got number"},
		{"content number", msg(`{"role":"assistant","content":5}`), "choices[0].message.content", "got number"},
		{"content part string", msg(`{"role":"assistant","content":["` + secret + `"]}`), "choices[0].message.content[0]", "content part must be an object"},
		{"content lone surrogate", msg(`{"role":"assistant","content":"` + secret + `\udc00"}`), "choices[0].message.content", "lone surrogate"},
		{"refusal object", msg(`{"role":"assistant","content":null,"refusal":{}}`), "choices[0].message.refusal", "must be a string"},
		{"duplicate content", msg(`{"role":"assistant","content":"a","content":"` + secret + `"}`), "", "duplicate"},
		{"duplicate deep in logprobs", `{"choices":[{"message":{"role":"assistant","content":"a"},"logprobs":{"content":[{"token":"a","token":"b"}]}}]}`, "", "duplicate"},
		{"legacy function_call", msg(`{"role":"assistant","content":null,"function_call":{"name":"f","arguments":"{}"}}`), "choices[0].message.function_call", "cannot be mediated"},
		{"audio", msg(`{"role":"assistant","content":null,"audio":{"id":"a","data":"AAAA","transcript":"` + secret + `"}}`), "choices[0].message.audio", "cannot be mediated"},
		{"tool_calls object", msg(`{"role":"assistant","tool_calls":{}}`), "choices[0].message.tool_calls", "must be an array"},
		{"custom tool call", msg(`{"role":"assistant","tool_calls":[{"id":"c","type":"custom","custom":{"name":"f","input":"` + secret + `"}}]}`), "choices[0].message.tool_calls[0].type", "only function tool calls"},
		{"no function", msg(`{"role":"assistant","tool_calls":[{"id":"c","type":"function"}]}`), "choices[0].message.tool_calls[0].function", "required"},
		{"arguments object", msg(`{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":{"a":"` + secret + `"}}}]}`), "choices[0].message.tool_calls[0].function.arguments", "must be a string, got object"},
		{"id number", msg(`{"role":"assistant","tool_calls":[{"id":1,"function":{"name":"f","arguments":"{}"}}]}`), "choices[0].message.tool_calls[0].id", "must be a string"},
		{"case-colliding member", msg(`{"role":"assistant","content":"a","Content":"` + secret + `"}`), "choices[0].message", "only in case"},
		{"case-colliding top member", `{"Choices":[],"choices":[{"message":{"role":"assistant","content":"a"}}]}`, "", "only in case"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseResponse([]byte(tc.body), ResponseOptions{})
			var re *wire.ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want *ResponseError", err)
			}
			if !errors.Is(err, wire.ErrResponseInvalid) {
				t.Error("does not wrap ErrResponseInvalid")
			}
			if re.Field != tc.field || !strings.Contains(re.Msg, tc.msg) {
				t.Errorf("got %q: %q; want %q: …%q…", re.Field, re.Msg, tc.field, tc.msg)
			}
			noSecret(t, err)
		})
	}
}
