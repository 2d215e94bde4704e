package chat

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// secret appears in fixture content; no error text may ever contain it.
const secret = "sk-SECRET-4242"

// requestBody is a realistic agent turn: system prompt, a user message
// with content parts, an assistant tool-call turn (no content member), its
// tool result, and a follow-up. It carries odd number tokens, members
// unknown inside messages and a free-form parameter that must survive
// untouched, and client formatting.
const requestBody = `{
  "model": "gpt-4o-2024-08-06",
  "messages": [
    {"role": "system", "content": "You are a travel agent.", "x_weight": 1.0},
    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris? key ` + secret + `"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}}]},
    {"role": "assistant", "tool_calls": [{"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\",\"days\":1e2}"}}], "x_meta": {"score": 1e2, "exact": 9007199254740993}},
    {"role": "tool", "tool_call_id": "call_abc", "content": "{\"temp_c\": 21.50}"},
    {"role": "user", "content": "Thanks! And tomorrow?", "name": "alice"}
  ],
  "temperature": 1.0,
  "max_tokens": 1e2,
  "seed": 9007199254740993,
  "stop": ["\n\n"],
  "tool_choice": "auto",
  "parallel_tool_calls": true,
  "user": "u-123",
  "metadata": {"team": "travel"},
  "chat_template_kwargs": {"keep": [1.0, 1e2, -0]},
  "tools": [
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "book_hotel"}}
  ],
  "stream": true
}`

// messageText returns the raw text of messages[i] in requestBody.
func messageText(t *testing.T, i int) string {
	t.Helper()
	r := mustRequest(t, requestBody)
	s := r.msgRaw[i]
	return requestBody[s.Start:s.End]
}

// toolCallResponse is an OpenAI non-streaming completion with two tool
// calls, logprobs, usage details and unknown members, indented the way
// OpenAI sends it. The second call's arguments hold a big integer.
const toolCallResponse = `{
  "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
  "object": "chat.completion",
  "created": 1741570283,
  "model": "gpt-4o-2024-08-06",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "content": null,
        "tool_calls": [
          {
            "id": "call_weather",
            "type": "function",
            "function": {
              "name": "get_weather",
              "arguments": "{\"city\": \"Paris\", \"unit\": \"c\", \"days\": 1.0}"
            }
          },
          {
            "id": "call_transfer",
            "type": "function",
            "function": {
              "name": "transfer",
              "arguments": "{\"to\":\"` + secret + `\",\"amount_cents\":9007199254740993}"
            },
            "x_provider_trace": "t-1"
          }
        ],
        "refusal": null,
        "annotations": []
      },
      "logprobs": {"content": [{"token": "call", "logprob": -0.0001, "bytes": [99, 97, 108, 108], "top_logprobs": []}]},
      "finish_reason": "tool_calls"
    }
  ],
  "usage": {
    "prompt_tokens": 82,
    "completion_tokens": 17,
    "total_tokens": 99,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "accepted_prediction_tokens": 0}
  },
  "service_tier": "default",
  "system_fingerprint": "fp_f9f4fb6dbf"
}`

// textResponse is a plain text answer.
const textResponse = `{"id":"chatcmpl-1","object":"chat.completion","created":1741570300,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Your card ` + secret + ` is on file.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21},"system_fingerprint":"fp_1"}`

// refusalResponse is a structured-output refusal: content null, refusal set.
const refusalResponse = `{"id":"chatcmpl-2","object":"chat.completion","created":1741570301,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with ` + secret + `."},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":8,"total_tokens":38}}`

// rawArgsResponse has arguments that are not a JSON object.
const rawArgsResponse = `{"id":"chatcmpl-3","object":"chat.completion","created":1741570302,"model":"local-llama","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"shell","arguments":"ls -la /tmp"}},{"id":"c2","type":"function","function":{"name":"noop","arguments":""}},{"id":"c3","type":"function","function":{"name":"list","arguments":"[1,2]"}}]},"finish_reason":"tool_calls"}]}`

// sseToolStream is a streamed tool-call turn with text first, two calls
// whose arguments arrive in many fragments, keep-alive comments, a
// delta:null finish chunk (Azure style) and a usage-only chunk.
var sseToolStream = strings.Join([]string{
	`: keep-alive`,
	``,
	`data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
	``,
	`data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[{"index":0,"delta":{"content":"Checking "},"logprobs":null,"finish_reason":null}],"usage":null}`,
	``,
	`data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[{"index":0,"delta":{"content":"now."},"logprobs":null,"finish_reason":null}],"usage":null}`,
	``,
	`data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_w","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	``,
	`data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	``,
	`data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Par"}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	``,
	`: ping`,
	`data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"is\", \"days\": 1.0}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	``,
	`data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_t","type":"function","function":{"name":"transfer","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	``,
	`data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"to\":\"` + secret + `\","}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	``,
	`data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"amount_cents\":9007199254740993}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	``,
	`data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[{"index":0,"delta":null,"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}`,
	``,
	`data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[],"usage":{"prompt_tokens":82,"completion_tokens":31,"total_tokens":113,"prompt_tokens_details":{"cached_tokens":0}}}`,
	``,
	`data: [DONE]`,
	``,
	``,
}, "\n")

// sseUsageEvent is the usage-only event of sseToolStream, as Replay must
// strip it for a client that did not ask for usage.
const sseUsageEvent = `data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_s","choices":[],"usage":{"prompt_tokens":82,"completion_tokens":31,"total_tokens":113,"prompt_tokens_details":{"cached_tokens":0}}}` + "\n\n"

// sseToolProjection is sseToolStream's projection.
const sseToolProjection = `{"content":"Checking now.","tool_calls":[
  {"id":"call_w","name":"get_weather","args":{"city":"Paris","days":1.0}},
  {"id":"call_t","name":"transfer","args":{"to":"` + secret + `","amount_cents":9007199254740993}}],
  "finish_reason":"tool_calls"}`

// sseText builds a plain text stream from content pieces.
func sseText(pieces ...string) string {
	var b strings.Builder
	head := `data: {"id":"chatcmpl-T","object":"chat.completion.chunk","created":1741570500,"model":"gpt-4o-mini","choices":[{"index":0,"delta":`
	b.WriteString(head + `{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
	for _, p := range pieces {
		v, _ := jsonvalue.Marshal(p)
		b.WriteString(head + `{"content":` + string(v) + `},"finish_reason":null}]}` + "\n\n")
	}
	b.WriteString(head + `{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func mustRequest(t testing.TB, body string) *Request {
	t.Helper()
	r, err := ParseRequest([]byte(body))
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	return r
}

func mustResponse(t testing.TB, body string) *Response {
	t.Helper()
	r, err := ParseResponse([]byte(body), ResponseOptions{})
	if err != nil {
		t.Fatalf("ParseResponse: %v", err)
	}
	return r
}

// tree decodes a JSON literal used as an expected value.
func tree(t testing.TB, s string) any {
	t.Helper()
	v, err := jsonvalue.Decode([]byte(s))
	if err != nil {
		t.Fatalf("bad test literal %q: %v", s, err)
	}
	return v
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := jsonvalue.Marshal(v)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return string(b)
}

// noSecret fails when an error text leaks fixture content.
func noSecret(t testing.TB, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("error text leaks content: %v", err)
	}
}

// checkReleasedMeta fails unless the released body (or every chunk of a
// released stream) carries id and model, and no system_fingerprint.
func checkReleasedMeta(t testing.TB, out []byte, id, model string) {
	t.Helper()
	var bodies [][]byte
	if bytes.HasPrefix(out, []byte("data: ")) {
		for _, ev := range strings.Split(string(out), "\n\n") {
			data, ok := strings.CutPrefix(ev, "data: ")
			if ok && data != "[DONE]" {
				bodies = append(bodies, []byte(data))
			}
		}
	} else {
		bodies = append(bodies, out)
	}
	for _, b := range bodies {
		v, err := jsonvalue.Decode(b)
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			t.Fatalf("released %q is not a JSON object (%v)", b, err)
		}
		if m["id"] != id || m["model"] != model {
			t.Fatalf("released id %v model %v, want %q %q: %s", m["id"], m["model"], id, model, b)
		}
		if _, ok := m["system_fingerprint"]; ok {
			t.Fatalf("a system_fingerprint was released: %s", b)
		}
	}
}

// testID is the id tests fix for an answer (ResponseOptions.id).
const testID = "chatcmpl-test"
