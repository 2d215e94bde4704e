package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// bodyRecorder keeps the request bodies a handler received.
type bodyRecorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []string
}

func (b *bodyRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.seen = append(b.seen, string(body))
	b.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	b.next.ServeHTTP(w, r)
}

// bigArgsScript is a tool-calling turn whose arguments hold an integer
// beyond float64, then a text answer.
func bigArgsScript() []ModelTurn {
	return []ModelTurn{
		{Respond: Response{
			ToolCalls:    []ToolCall{{ID: "tc-1", Name: "wire_transfer", Args: map[string]any{"id": json.Number("9007199254740993")}}},
			FinishReason: "tool_calls",
		}},
		{Respond: Response{Content: "Hello!", ToolCalls: []ToolCall{}, FinishReason: "stop"}},
	}
}

// TestSurfaceSeamRoundTrip drives each surface's model seam (its official
// client) straight against the scripted upstream, without a gateway: the
// client must read the upstream's native answers, the tool-call id and the
// number-exact arguments must survive both ways, and the transcript of
// the second call must carry the call and its result in the surface's
// native form.
func TestSurfaceSeamRoundTrip(t *testing.T) {
	cases := []struct {
		api wire.API
		// prefix is the path the client puts before the upstream's path.
		prefix string
		// wantSecond are fragments of the second request body.
		wantSecond []string
	}{
		{wire.ChatCompletions, "/v1", []string{`"tool_call_id":"tc-1"`, `"arguments":"{\"id\":9007199254740993}"`, `"content":"42"`}},
		{wire.Responses, "/v1", []string{`"type":"function_call_output"`, `"call_id":"tc-1"`, `"arguments":"{\"id\":9007199254740993}"`, `"output":"42"`, `"store":false`}},
		{wire.Messages, "", []string{`"type":"tool_use"`, `"id":"tc-1"`, `"input":{"id":9007199254740993}`, `"type":"tool_result"`, `"tool_use_id":"tc-1"`}},
	}
	for _, c := range cases {
		t.Run(string(c.api), func(t *testing.T) {
			s, err := gatewaySurfaceFor(c.api)
			if err != nil {
				t.Fatal(err)
			}
			rec := &bodyRecorder{next: newScriptedUpstream(s, bigArgsScript())}
			var h http.Handler = rec
			if c.prefix != "" {
				h = http.StripPrefix(c.prefix, rec)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			m := s.newModel(srv.URL, srv.Client(), []Tool{{Name: "wire_transfer"}})
			second := toolRoundTrip(t, m)
			if second.Content != "Hello!" || second.FinishReason != "stop" || len(second.ToolCalls) != 0 {
				t.Fatalf("second response = %+v, want Hello!, stop, no calls", second)
			}
			if len(rec.seen) != 2 {
				t.Fatalf("upstream saw %d requests, want 2", len(rec.seen))
			}
			for _, want := range c.wantSecond {
				if !strings.Contains(rec.seen[1], want) {
					t.Errorf("second request lacks %s:\n%s", want, rec.seen[1])
				}
			}
		})
	}
}

// toolRoundTrip drives m through bigArgsScript's first turn (one tool
// call, number-exact arguments, answered "42") and returns the second
// response.
func toolRoundTrip(t *testing.T, m modelSeam) enforcement.ModelResponse {
	t.Helper()
	if err := m.open("user", "pay"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := m.call(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if first.Content != nil || first.FinishReason != "tool_calls" || len(first.ToolCalls) != 1 {
		t.Fatalf("first response = %+v, want null content, one tool call, tool_calls", first)
	}
	tc := first.ToolCalls[0]
	args, _ := tc.Args.(map[string]any)
	if tc.ID != "tc-1" || tc.Name != "wire_transfer" || args["id"] != json.Number("9007199254740993") {
		t.Fatalf("tool call = %+v, want tc-1 wire_transfer {id: 9007199254740993}", tc)
	}
	if err := m.toolMessage(tc, "42"); err != nil {
		t.Fatal(err)
	}
	m.closeTurn(first)
	second, err := m.call(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	return second
}

// TestScriptedFinishReasons pins how each surface's upstream expresses
// the script's finish_reason, and that the seam reads it back: every
// chat finish_reason has a native form on every surface.
func TestScriptedFinishReasons(t *testing.T) {
	cases := []struct {
		finish string
		// native fragments per surface
		responses, messages string
	}{
		{"stop", `"status":"completed"`, `"stop_reason":"end_turn"`},
		{"length", `"incomplete_details":{"reason":"max_output_tokens"}`, `"stop_reason":"max_tokens"`},
		{"content_filter", `"incomplete_details":{"reason":"content_filter"}`, `"stop_reason":"refusal"`},
	}
	for _, c := range cases {
		r := Response{Content: "x", ToolCalls: []ToolCall{}, FinishReason: c.finish}
		rb, err := responseBody(0, r)
		if err != nil || !strings.Contains(string(rb), c.responses) {
			t.Errorf("%s: responses body %s, %v; want %s", c.finish, rb, err, c.responses)
		}
		var res responses.Response
		if err := res.UnmarshalJSON(rb); err != nil {
			t.Fatal(err)
		}
		if got, err := responsesFinishReason(&res, false); got != c.finish || err != nil {
			t.Errorf("%s: responses reads back %q, %v", c.finish, got, err)
		}
		mb, err := messageBody(0, r)
		if err != nil || !strings.Contains(string(mb), c.messages) {
			t.Errorf("%s: messages body %s, %v; want %s", c.finish, mb, err, c.messages)
		}
		var msg anthropic.Message
		if err := msg.UnmarshalJSON(mb); err != nil {
			t.Fatal(err)
		}
		if got, err := messagesFinishReason(msg.StopReason); got != c.finish || err != nil {
			t.Errorf("%s: messages reads back %q, %v", c.finish, got, err)
		}
	}
	for _, render := range []func(int, Response) ([]byte, error){responseBody, messageBody} {
		if _, err := render(0, Response{Content: "x", FinishReason: "function_call"}); err == nil {
			t.Error("a finish_reason without a native form rendered")
		}
	}
}

// TestScriptedBodiesNullContent: null content is no message item (no text
// block), and a text answer is one part, on both new surfaces.
func TestScriptedBodiesNullContent(t *testing.T) {
	calls := Response{ToolCalls: []ToolCall{{ID: "tc-9", Name: "noop"}}, FinishReason: "tool_calls"}
	rb, err := responseBody(3, calls)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(rb), `"type":"message"`) || !strings.Contains(string(rb), `"arguments":"{}"`) || !strings.Contains(string(rb), `"call_id":"tc-9"`) {
		t.Errorf("responses body = %s", rb)
	}
	mb, err := messageBody(3, calls)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mb), `"type":"text"`) || !strings.Contains(string(mb), `"input":{}`) || !strings.Contains(string(mb), `"stop_reason":"tool_use"`) {
		t.Errorf("messages body = %s", mb)
	}
}

// TestAnthropicCallError pins which gateway answers in Anthropic's
// envelope end the run as blocked.
func TestAnthropicCallError(t *testing.T) {
	apiError := func(status int, envelope string) error {
		e := &anthropic.Error{StatusCode: status}
		if err := e.UnmarshalJSON([]byte(envelope)); err != nil {
			t.Fatal(err)
		}
		return fmt.Errorf("wrapped: %w", e)
	}
	env := func(typ, code, point string) string {
		inner := map[string]any{"type": typ, "code": code, "message": "m"}
		if point != "" {
			inner["interception_point"] = point
		}
		b, _ := jsonvalue.Marshal(map[string]any{"type": "error", "error": inner})
		return string(b)
	}
	cases := []struct {
		name    string
		err     error
		blocked bool
	}{
		{"policy deny at pre_model_call", apiError(403, env("agent_hooks_denied", "ctk:no", "pre_model_call")), true},
		{"host error at post_model_call", apiError(503, env("agent_hooks_host_error", "host_error:context_invalid", "post_model_call")), true},
		{"verdict at a point the harness emits", apiError(403, env("agent_hooks_denied", "x", "agent_startup")), false},
		{"members outside error", apiError(403, `{"type":"agent_hooks_denied","interception_point":"pre_model_call","error":{"type":"permission_error","message":"m"}}`), false},
		{"upstream failure", apiError(502, env("upstream_error", "upstream_status_500", "")), false},
		{"transport", errors.New("connection refused"), false},
	}
	for _, c := range cases {
		err := anthropicCallError(3, c.err)
		if got := errors.Is(err, errModelCallBlocked); got != c.blocked {
			t.Errorf("%s: blocked = %v, want %v (%v)", c.name, got, c.blocked, err)
		}
		if !strings.Contains(err.Error(), "model_script[3]") {
			t.Errorf("%s: error %q does not name the model call", c.name, err)
		}
	}
}

// TestResponsesCallErrorSharesOpenAIEnvelope: the Responses seam reads the
// same OpenAI envelope as chat (modelCallError).
func TestResponsesCallErrorSharesOpenAIEnvelope(t *testing.T) {
	e := &openai.Error{StatusCode: 403}
	if err := e.UnmarshalJSON([]byte(`{"type":"agent_hooks_denied","code":"ctk:no","message":"m","interception_point":"post_model_call"}`)); err != nil {
		t.Fatal(err)
	}
	var blocked *modelBlockedError
	if err := modelCallError(0, e); !errors.As(err, &blocked) || blocked.point != enforcement.PostModelCall {
		t.Errorf("modelCallError = %v, want blocked at post_model_call", err)
	}
}
