package interceptors_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

const toolPolicy = `  - name: tool-policy
    type: tools
    allow: ["get_weather", "lookup"]
    arguments:
      - tool: get_weather
        required: [city]
        properties:
          city: {type: string, max_length: 64}
          days: {type: integer, minimum: 1, maximum: 7, on_violation: clamp}
`

// chatParams asks the mock for text, with one user message.
func chatParams(text string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
	}
}

// decodeArgs parses tool-call arguments keeping numbers exact.
func decodeArgs(t *testing.T, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("arguments %q: %v", s, err)
	}
	return m
}

// streamed reads a streamed completion with the official client's
// accumulator.
func streamed(t *testing.T, g *testGateway, text string) openai.ChatCompletion {
	t.Helper()
	stream := g.Client.Chat.Completions.NewStreaming(t.Context(), chatParams(text))
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		if !acc.AddChunk(stream.Current()) {
			t.Fatal("the accumulator rejected a chunk")
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if len(acc.Choices) != 1 {
		t.Fatalf("choices: %+v", acc.Choices)
	}
	return acc.ChatCompletion
}

// TestToolsGatewayNotAllowed: a tool outside the allowlist is refused with
// 403 and the configured reason, and the record says who decided.
func TestToolsGatewayNotAllowed(t *testing.T) {
	g := startGateway(t, toolPolicy)
	_, err := g.Client.Chat.Completions.New(t.Context(), chatParams(`/tool shell {"cmd":"cat /etc/shadow"}`))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusForbidden || apiErr.Code != "policy:tool_not_allowed" {
		t.Fatalf("error = %v, want 403 policy:tool_not_allowed", err)
	}
	if !strings.Contains(apiErr.Message, "tool_calls[0]") || strings.Contains(apiErr.Message, "shell") || strings.Contains(apiErr.Message, "shadow") {
		t.Errorf("message %q must name the call by position, not the tool or its arguments", apiErr.Message)
	}
	rec := g.recordAt(t, "post_model_call")
	if rec["decided_by"] != float64(0) || rec["verdict"].(map[string]any)["decision"] != "deny" {
		t.Errorf("record = %v", rec)
	}
	if strings.Contains(g.recordText(), "shadow") {
		t.Error("an argument value reached the records")
	}

	// An allowed tool with valid arguments passes untouched.
	resp, err := g.Client.Chat.Completions.New(t.Context(), chatParams(`/tool lookup {"q":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if calls := resp.Choices[0].Message.ToolCalls; len(calls) != 1 || calls[0].Function.Arguments != `{"q":"x"}` {
		t.Errorf("tool calls = %+v", calls)
	}
}

// TestToolsGatewayClamp: the tools interceptor clamps an argument of a
// tool call, streamed and not; the client sees the clamped value and a
// call the policy did not touch keeps its argument bytes.
func TestToolsGatewayClamp(t *testing.T) {
	g := startGateway(t, toolPolicy)
	// The second call's arguments keep their odd spacing only if the
	// write-back leaves untouched calls alone.
	const text = "/tool get_weather {\"city\":\"Paris\",\"days\":30}\n/tool lookup {\"q\" : \"x\",  \"n\":1.50}"
	check := func(name string, resp openai.ChatCompletion) {
		t.Helper()
		ch := resp.Choices[0]
		if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 2 {
			t.Fatalf("%s: choice %+v", name, ch)
		}
		first := ch.Message.ToolCalls[0]
		args := decodeArgs(t, first.Function.Arguments)
		if first.ID != "call_mock_0" || first.Function.Name != "get_weather" ||
			args["days"] != json.Number("7") || args["city"] != "Paris" || len(args) != 2 {
			t.Errorf("%s: clamped call = %+v (args %v)", name, first, args)
		}
		second := ch.Message.ToolCalls[1]
		if second.ID != "call_mock_1" || second.Function.Arguments != `{"q" : "x",  "n":1.50}` {
			t.Errorf("%s: untouched call = %+v", name, second)
		}
		rec := g.recordAt(t, "post_model_call")
		v := rec["verdict"].(map[string]any)
		if v["decision"] != "transform" || v["reason"] != "policy:tool_arguments_rewritten" {
			t.Errorf("%s: record verdict = %v", name, v)
		}
	}

	check("streamed", streamed(t, g, text))

	resp, err := g.Client.Chat.Completions.New(t.Context(), chatParams(text))
	if err != nil {
		t.Fatal(err)
	}
	check("non-streamed", *resp)

	// The raw body shows the rewrite as compact JSON in the arguments
	// string; the rest of the response is the mock's.
	status, body := g.post(t, `{"model":"m","messages":[{"role":"user","content":"/tool get_weather {\"city\":\"Oslo\",\"days\":0}"}]}`)
	if status != http.StatusOK || !bytes.Contains(body, []byte(`"arguments":"{\"city\":\"Oslo\",\"days\":1}"`)) {
		t.Errorf("status %d, body %s", status, body)
	}
}

// TestToolsGatewayArgumentDenied: a violation with on_violation deny (the
// default) blocks the response and names the argument, not its value.
func TestToolsGatewayArgumentDenied(t *testing.T) {
	g := startGateway(t, toolPolicy)
	status, body := g.post(t, `{"model":"m","stream":true,"messages":[{"role":"user","content":"/tool get_weather {\"city\":\"`+strings.Repeat("Z", 65)+`\"}"}]}`)
	if status != http.StatusForbidden || !bytes.Contains(body, []byte(`"code":"policy:tool_argument_invalid"`)) ||
		!bytes.Contains(body, []byte(`argument \"city\" violates its max_length constraint`)) || bytes.Contains(body, []byte("ZZZ")) {
		t.Errorf("status %d, body %s", status, body)
	}
}
