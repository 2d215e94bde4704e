package providers

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

func sendMock(t *testing.T, op wire.Operation, body string) (*http.Response, string) {
	t.Helper()
	resp, err := NewMock("", nil).Send(t.Context(), op, []byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp, readAll(t, resp)
}

// replyText extracts the answer text (or "" for tool calls) and the tool
// names from a non-stream body of op.
func replyText(t *testing.T, op wire.Operation, body string) (text string, tools []string) {
	t.Helper()
	var v struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					Function struct{ Name string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Output []struct {
			Type    string                  `json:"type"`
			Name    string                  `json:"name"`
			Content []struct{ Text string } `json:"content"`
		} `json:"output"`
		Content []struct {
			Type, Text, Name string
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	switch op {
	case wire.OpChatCompletions:
		m := v.Choices[0].Message
		if m.Content != nil {
			text = *m.Content
		}
		for _, c := range m.ToolCalls {
			tools = append(tools, c.Function.Name)
		}
	case wire.OpResponses:
		for _, o := range v.Output {
			if o.Type == "function_call" {
				tools = append(tools, o.Name)
			}
			for _, c := range o.Content {
				text += c.Text
			}
		}
	case wire.OpMessages:
		for _, c := range v.Content {
			if c.Type == "tool_use" {
				tools = append(tools, c.Name)
			}
			text += c.Text
		}
	}
	return text, tools
}

// TestMockConversationShapes reads each surface's prompt and tool results.
func TestMockConversationShapes(t *testing.T) {
	const toolPrompt = `/tool get_weather {\"city\":\"Paris\"}`
	tests := []struct {
		name      string
		op        wire.Operation
		body      string
		wantText  string
		wantTools []string
	}{
		{"chat: first tool turn", wire.OpChatCompletions,
			`{"model":"m","messages":[{"role":"user","content":"` + toolPrompt + `"}]}`, "", []string{"get_weather"}},
		{"chat: tool result answers text", wire.OpChatCompletions,
			`{"model":"m","messages":[{"role":"user","content":"` + toolPrompt + `"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_mock_0","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_mock_0","content":"sunny"},{"role":"tool","tool_call_id":"x","content":[{"type":"text","text":"windy"}]}]}`,
			"tool results: sunny\nwindy", nil},
		{"chat: a new user turn calls again", wire.OpChatCompletions,
			`{"model":"m","messages":[{"role":"user","content":"/say x"},{"role":"tool","tool_call_id":"c","content":"old"},{"role":"user","content":"` + toolPrompt + `"}]}`, "", []string{"get_weather"}},
		{"chat: other directives ignore tool results", wire.OpChatCompletions,
			`{"model":"m","messages":[{"role":"user","content":"/say done"},{"role":"tool","tool_call_id":"c","content":"r"}]}`, "done", nil},
		{"responses: input string", wire.OpResponses,
			`{"model":"m","instructions":"be brief","input":"hello"}`, "echo: hello", nil},
		{"responses: parts are lines", wire.OpResponses,
			`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"<ctx>cwd</ctx>"},{"type":"input_image","image_url":"data:,"},{"type":"input_text","text":"/say a\nb"}]}]}`, "a\nb", nil},
		{"responses: echo joins parts", wire.OpResponses,
			`{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}]}`, "echo: a\nb", nil},
		{"responses: tool turn", wire.OpResponses,
			`{"model":"m","input":[{"type":"message","role":"user","content":"` + toolPrompt + `"}]}`, "", []string{"get_weather"}},
		{"responses: function_call_output answers text", wire.OpResponses,
			`{"model":"m","input":[{"role":"user","content":"` + toolPrompt + `"},{"type":"function_call","call_id":"call_mock_0","name":"get_weather","arguments":"{}"},{"type":"function_call_output","call_id":"call_mock_0","output":"sunny"}]}`,
			"tool results: sunny", nil},
		{"messages: system excluded", wire.OpMessages,
			`{"model":"m","max_tokens":50,"system":"/say from system","messages":[{"role":"user","content":"hi"}]}`, "echo: hi", nil},
		{"messages: directive in a later block", wire.OpMessages,
			`{"model":"m","max_tokens":50,"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"` + toolPrompt + `"}]}]}`, "", []string{"get_weather"}},
		{"messages: tool_result answers text", wire.OpMessages,
			`{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"` + toolPrompt + `"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_mock_0","name":"get_weather","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_mock_0","content":[{"type":"text","text":"sunny"}]},{"type":"text","text":"reminder"}]}]}`,
			"tool results: sunny", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sendMock(t, tt.op, tt.body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			text, tools := replyText(t, tt.op, body)
			if text != tt.wantText || strings.Join(tools, ",") != strings.Join(tt.wantTools, ",") {
				t.Errorf("reply = %q %v, want %q %v", text, tools, tt.wantText, tt.wantTools)
			}
		})
	}
}

func TestFindDirective(t *testing.T) {
	tests := []struct {
		name     string
		segments []string
		want     string
		found    bool
	}{
		{"first line", []string{"/say a\nb"}, "/say a\nb", true},
		{"indented later line", []string{"intro\n\t /chunks 2 ab\nc"}, "/chunks 2 ab\nc", true},
		{"later segment", []string{"<r>x</r>", "/tool f {}"}, "/tool f {}", true},
		{"needs a word boundary", []string{"/sayhi"}, "", false},
		{"not at line start", []string{"please /say hi"}, "", false},
		{"none", []string{"a", "b"}, "", false},
	}
	for _, tt := range tests {
		got, ok := findDirective(tt.segments)
		if got != tt.want || ok != tt.found {
			t.Errorf("%s: findDirective = %q %v, want %q %v", tt.name, got, ok, tt.want, tt.found)
		}
	}
}

func TestToolResultsTextIsCut(t *testing.T) {
	got := toolResultsText([]string{strings.Repeat("é", 150), strings.Repeat("x", 100)})
	want := "tool results: " + strings.Repeat("é", 150) + "\n" + strings.Repeat("x", 49) + "…"
	if got != want {
		t.Errorf("toolResultsText = %q", got)
	}
}

func TestMockSurfaceErrors(t *testing.T) {
	tests := []struct {
		name       string
		op         wire.Operation
		body       string
		wantStatus int
		wantType   string
		wantMsg    string
	}{
		{"responses /error", wire.OpResponses, `{"model":"m","input":"/error 503"}`, 503, "mock_error", "Service Unavailable"},
		{"responses without model", wire.OpResponses, `{"input":"x"}`, 400, "invalid_request_error", "model"},
		{"responses bad input", wire.OpResponses, `{"model":"m","input":42}`, 400, "invalid_request_error", "input"},
		{"responses trailing data", wire.OpResponses, `{"model":"m","input":"x"} 1`, 400, "invalid_request_error", "not a responses request"},
		{"messages /error", wire.OpMessages, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"/error 429 slow"}]}`, 429, "rate_limit_error", "slow"},
		{"messages /error 418", wire.OpMessages, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"/error 418"}]}`, 418, "invalid_request_error", "I'm a teapot"},
		{"messages /error 502", wire.OpMessages, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"/error 502"}]}`, 502, "api_error", "Bad Gateway"},
		{"messages bad directive", wire.OpMessages, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"/chunks 0 x"}]}`, 400, "invalid_request_error", "/chunks"},
		{"messages without max_tokens", wire.OpMessages, `{"model":"m","messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "max_tokens"},
		{"messages without messages", wire.OpMessages, `{"model":"m","max_tokens":5,"messages":[]}`, 400, "invalid_request_error", "messages"},
		{"messages bad content", wire.OpMessages, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":7}]}`, 400, "invalid_request_error", "content"},
		{"messages non-object tool input", wire.OpMessages, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"/tool f not json"}]}`, 400, "invalid_request_error", "JSON object"},
		{"count_tokens without model", wire.OpCountTokens, `{"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sendMock(t, tt.op, tt.body)
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("status %d %q, want %d JSON", resp.StatusCode, resp.Header.Get("Content-Type"), tt.wantStatus)
			}
			var env struct {
				Type  *string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &env); err != nil {
				t.Fatal(err)
			}
			anthropicEnvelope := tt.op == wire.OpMessages || tt.op == wire.OpCountTokens
			if (env.Type != nil && *env.Type == "error") != anthropicEnvelope {
				t.Errorf("envelope %s, want Anthropic's: %v", body, anthropicEnvelope)
			}
			if env.Error.Type != tt.wantType || !strings.Contains(env.Error.Message, tt.wantMsg) {
				t.Errorf("envelope = %s, want type %q mentioning %q", body, tt.wantType, tt.wantMsg)
			}
		})
	}
}

// sseEvents lists the event names of an SSE body, checking that each
// event's data is JSON whose type equals the name.
func sseEvents(t *testing.T, body string) []string {
	t.Helper()
	var names []string
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d struct{ Type string }
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil || d.Type != name {
				t.Errorf("event %q carries data of type %q (%v)", name, d.Type, err)
			}
			names = append(names, name)
		}
	}
	return names
}

func TestMockSurfaceStreams(t *testing.T) {
	tests := []struct {
		name  string
		op    wire.Operation
		body  string
		count string // event counted
		want  int
		last  string
	}{
		{"responses chunks", wire.OpResponses, `{"model":"m","stream":true,"input":"/chunks 5 abcdefghij"}`, "response.output_text.delta", 5, "response.completed"},
		{"responses cut", wire.OpResponses, `{"model":"m","stream":true,"input":"/cut one two three four"}`, "response.output_text.delta", 2, "response.output_text.delta"},
		{"messages chunks", wire.OpMessages, `{"model":"m","max_tokens":99,"stream":true,"messages":[{"role":"user","content":"/chunks 5 abcdefghij"}]}`, "content_block_delta", 5, "message_stop"},
		{"messages cut", wire.OpMessages, `{"model":"m","max_tokens":99,"stream":true,"messages":[{"role":"user","content":"/cut one two three four"}]}`, "content_block_delta", 2, "content_block_delta"},
		{"messages malformed tool input streams verbatim", wire.OpMessages, `{"model":"m","max_tokens":99,"stream":true,"messages":[{"role":"user","content":"/tool f not json"}]}`, "content_block_delta", 2, "message_stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sendMock(t, tt.op, tt.body)
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || resp.ContentLength != -1 {
				t.Fatalf("status %d %v", resp.StatusCode, resp.Header)
			}
			names := sseEvents(t, body)
			n := 0
			for _, name := range names {
				if name == tt.count {
					n++
				}
			}
			if n != tt.want || names[len(names)-1] != tt.last {
				t.Errorf("%d %s events ending with %s, want %d ending with %s:\n%s", n, tt.count, names[len(names)-1], tt.want, tt.last, body)
			}
		})
	}
}

func TestMockSurfaceCutNonStream(t *testing.T) {
	for op, body := range map[wire.Operation]string{
		wire.OpResponses: `{"model":"m","input":"/cut"}`,
		wire.OpMessages:  `{"model":"m","max_tokens":99,"messages":[{"role":"user","content":"/cut"}]}`,
	} {
		resp, got := sendMock(t, op, body)
		if resp.StatusCode != http.StatusOK || json.Valid([]byte(got)) || !strings.HasPrefix(got, `{"id":"`) {
			t.Errorf("%s: status %d body %q, want a truncated JSON body", op, resp.StatusCode, got)
		}
	}
}

func TestMockServesEverySurface(t *testing.T) {
	m := NewMock("", nil)
	for _, op := range []wire.Operation{wire.OpChatCompletions, wire.OpResponses, wire.OpMessages, wire.OpCountTokens} {
		if !m.Serves(op) {
			t.Errorf("mock does not serve %s", op)
		}
	}
	if _, err := m.Send(t.Context(), "embeddings", []byte(`{}`), nil); m.Serves("embeddings") || !errors.Is(err, ErrUnsupported) {
		t.Errorf("unknown operation: err = %v", err)
	}
}

// TestMockResponsesNamespaceCall: a /tool name "NS.FN" is, on the
// Responses surface, a function_call of FN in namespace NS, streamed or
// not; other surfaces keep the name whole.
func TestMockResponsesNamespaceCall(t *testing.T) {
	const prompt = `/tool mcp__fs.deploy {\"env\":\"prod\"}`
	_, body := sendMock(t, wire.OpResponses, `{"model":"m","input":"`+prompt+`"}`)
	var v struct {
		Output []struct{ Type, Name, Namespace, Arguments string } `json:"output"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Output) != 1 || v.Output[0].Type != "function_call" || v.Output[0].Namespace != "mcp__fs" || v.Output[0].Name != "deploy" || v.Output[0].Arguments != `{"env":"prod"}` {
		t.Errorf("output %+v, want a call of deploy in namespace mcp__fs", v.Output)
	}
	_, stream := sendMock(t, wire.OpResponses, `{"model":"m","stream":true,"input":"`+prompt+`"}`)
	if !strings.Contains(stream, `"name":"deploy","namespace":"mcp__fs"`) || strings.Contains(stream, `mcp__fs.deploy`) {
		t.Errorf("stream does not carry the namespaced call:\n%s", stream)
	}
	if _, tools := replyText(t, wire.OpChatCompletions, mustSend(t, wire.OpChatCompletions, `{"model":"m","messages":[{"role":"user","content":"`+prompt+`"}]}`)); len(tools) != 1 || tools[0] != "mcp__fs.deploy" {
		t.Errorf("chat tools %v, want the name whole", tools)
	}
	if _, body := sendMock(t, wire.OpResponses, `{"model":"m","input":"/tool get_weather {}"}`); strings.Contains(body, "namespace") {
		t.Errorf("a plain call carries a namespace: %s", body)
	}
}

func mustSend(t *testing.T, op wire.Operation, body string) string {
	t.Helper()
	_, b := sendMock(t, op, body)
	return b
}
