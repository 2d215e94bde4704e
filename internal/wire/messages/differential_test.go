package messages

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// sdkServer answers every request with status and body (an SSE stream
// when stream is set) and returns an SDK client pointed at it.
func sdkServer(t *testing.T, status int, body []byte, stream bool) anthropic.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if stream {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
}

var sdkParams = anthropic.MessageNewParams{
	Model:     "claude-sonnet-4-5",
	MaxTokens: 64,
	Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
}

// sdkAccumulate streams body through the SDK and returns its accumulated
// message's wire JSON.
func sdkAccumulate(t *testing.T, body []byte) string {
	t.Helper()
	client := sdkServer(t, 200, body, true)
	stream := client.Messages.NewStreaming(context.Background(), sdkParams)
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatalf("Accumulate: %v", err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return acc.RawJSON()
}

// judged asserts that what a client assembles from released bytes is what
// the policy judged.
func judged(t *testing.T, opts Options, clientJSON string, target map[string]any) {
	t.Helper()
	got := parseAnswer(t, opts, clientJSON).Project()
	if !jsonvalue.Equal(any(got), any(target)) {
		g, _ := jsonvalue.Marshal(got)
		w, _ := jsonvalue.Marshal(target)
		t.Errorf("the SDK assembles\n%s\nthe policy judged\n%s", g, w)
	}
}

func TestDifferentialStreams(t *testing.T) {
	serverOpts := Options{AllowServerTools: true}
	serverStream := sse(
		"message_start", `{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"go 1.26\"}"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://go.dev","title":"Go","encrypted_content":"Ex==","page_age":null}]}}`,
		"content_block_stop", `{"type":"content_block_stop","index":1}`,
		"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Found it."}}`,
		"content_block_stop", `{"type":"content_block_stop","index":2}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9,"server_tool_use":{"web_search_requests":1}}}`,
		"message_stop", `{"type":"message_stop"}`,
	)
	cases := []struct {
		name   string
		opts   Options
		stream string
		edit   func(p map[string]any)
	}{
		{name: "allow replays", stream: sse(streamEvents...)},
		{name: "redacted text", stream: sse(streamEvents...), edit: func(p map[string]any) {
			obj(p["content"].([]any)[1])["text"] = "[redacted]"
		}},
		{name: "thinking removed, call dropped", stream: sse(streamEvents...), edit: func(p map[string]any) {
			p["content"] = p["content"].([]any)[1:]
			p["tool_calls"] = p["tool_calls"].([]any)[1:]
		}},
		{name: "args rewritten", stream: sse(streamEvents...), edit: func(p map[string]any) {
			obj(p["tool_calls"].([]any)[0])["args"] = map[string]any{"command": "true", "n": jsonNumber(9007199254740993)}
		}},
		{name: "plain string", stream: sse(streamEvents...), edit: func(p map[string]any) {
			p["content"], p["tool_calls"], p["finish_reason"] = "no", []any{}, "stop"
		}},
		{name: "provider tools replay", opts: serverOpts, stream: serverStream},
		{name: "provider tools synthesized", opts: serverOpts, stream: serverStream, edit: func(p map[string]any) {
			obj(p["content"].([]any)[2])["text"] = "Found nothing."
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := readStream(t, c.opts, c.stream)
			target := st.Response().Project()
			if c.edit != nil {
				c.edit(target)
			}
			out, err := st.Release(target)
			if err != nil {
				t.Fatal(err)
			}
			judged(t, c.opts, sdkAccumulate(t, out), target)
		})
	}
}

func TestDifferentialJSON(t *testing.T) {
	r := parseAnswer(t, Options{}, answerJSON)
	for name, edit := range map[string]func(p map[string]any){
		"allow":   func(map[string]any) {},
		"redact":  func(p map[string]any) { obj(p["content"].([]any)[1])["text"] = "x" },
		"no text": func(p map[string]any) { p["content"] = nil },
	} {
		t.Run(name, func(t *testing.T) {
			target := r.Project()
			edit(target)
			out, err := r.Release(target)
			if err != nil {
				t.Fatal(err)
			}
			client := sdkServer(t, 200, out, false)
			msg, err := client.Messages.New(context.Background(), sdkParams)
			if err != nil {
				t.Fatal(err)
			}
			judged(t, Options{}, msg.RawJSON(), target)
		})
	}
}

// Error bodies and stream errors are raised by the SDK as API errors with
// the right status, type and the gateway's members.
func TestDifferentialErrors(t *testing.T) {
	seq := int64(7)
	s := New(Options{})
	for i, status := range []int{400, 401, 403, 404, 413, 429, 451, 500, 502, 503, 529} {
		// A policy deny is a permission_error whatever its status; other
		// errors take the type Anthropic sends with the status.
		typ, wantType := "agent_hooks_denied", "permission_error"
		if i%2 == 1 {
			typ, wantType = "agent_hooks_host_error", AnthropicErrorType(status)
		}
		e := wire.Error{Status: status, Type: typ, Code: "deny:policy", Message: "blocked by policy", Point: "pre_model_call", SessionID: "s1", Sequence: &seq}
		client := sdkServer(t, status, s.ErrorBody(e), false)
		_, err := client.Messages.New(context.Background(), sdkParams)
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("%d: err = %v", status, err)
		}
		if apiErr.StatusCode != status || string(apiErr.Type()) != wantType || apiErr.Message != "blocked by policy" {
			t.Errorf("%d: status %d type %q message %q", status, apiErr.StatusCode, apiErr.Type(), apiErr.Message)
		}
		for _, member := range []string{`"code":"deny:policy"`, `"interception_point":"pre_model_call"`, `"session_id":"s1"`, `"sequence":7`} {
			if !strings.Contains(apiErr.RawJSON(), member) {
				t.Errorf("%d: body lacks %s", status, member)
			}
		}
	}
	body := append([]byte(": keep-alive\n\n"), s.StreamError(wire.Error{Status: 502, Code: "host_error:timeout", Message: "upstream timed out"})...)
	client := sdkServer(t, 200, body, true)
	stream := client.Messages.NewStreaming(context.Background(), sdkParams)
	for stream.Next() {
	}
	var apiErr *anthropic.Error
	if !errors.As(stream.Err(), &apiErr) || apiErr.Message != "upstream timed out" || string(apiErr.Type()) != "api_error" {
		t.Errorf("stream error = %v", stream.Err())
	}
}
