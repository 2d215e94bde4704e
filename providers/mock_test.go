package providers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// mockBody builds a request whose last user message is text.
func mockBody(t *testing.T, text string, stream, includeUsage bool) []byte {
	t.Helper()
	req := map[string]any{
		"model": "mock-1",
		"messages": []any{
			map[string]any{"role": "system", "content": "you are a mock"},
			map[string]any{"role": "user", "content": text},
		},
	}
	if stream {
		req["stream"] = true
	}
	if includeUsage {
		req["stream_options"] = map[string]any{"include_usage": true}
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// outcome is a reply reduced to what tests compare.
type outcome struct {
	content   *string
	toolCalls []mockToolCallOut
	finish    string
	usage     *mockUsage
}

type wantReply struct {
	content   *string
	toolCalls []mockFunction // ids must be call_mock_0, _1, …
	finish    string
	words     int // completion tokens
}

func ptr(s string) *string { return &s }

var directiveTests = []struct {
	name string
	text string
	want wantReply
}{
	{"echo", "hello  there", wantReply{content: ptr("echo: hello  there"), finish: "stop", words: 3}},
	{"unknown directive echoes", "/nope x", wantReply{content: ptr("echo: /nope x"), finish: "stop", words: 3}},
	{"directive needs a word boundary", "/sayhi", wantReply{content: ptr("echo: /sayhi"), finish: "stop", words: 2}},
	{"say", "/say Hello, <world> & co", wantReply{content: ptr("Hello, <world> & co"), finish: "stop", words: 4}},
	{"say multi-line", "/say a\nb", wantReply{content: ptr("a\nb"), finish: "stop", words: 2}},
	{"say empty", "/say", wantReply{content: ptr(""), finish: "stop", words: 0}},
	{"tool", `/tool get_weather {"city": "Paris", "n": 1.50}`, wantReply{
		toolCalls: []mockFunction{{"get_weather", `{"city": "Paris", "n": 1.50}`}}, finish: "tool_calls", words: 5}},
	{"tool without args", "/tool ping", wantReply{toolCalls: []mockFunction{{"ping", "{}"}}, finish: "tool_calls", words: 2}},
	{"tool with non-object args", "/tool raw not json", wantReply{toolCalls: []mockFunction{{"raw", "not json"}}, finish: "tool_calls", words: 3}},
	{"several tools", "/tool a {\"x\":1}\r\n\n/tool b {\"y\":\"é\"}\n", wantReply{
		toolCalls: []mockFunction{{"a", `{"x":1}`}, {"b", `{"y":"é"}`}}, finish: "tool_calls", words: 4}},
	{"chunks", "/chunks 3 abcdefg", wantReply{content: ptr("abcdefg"), finish: "stop", words: 1}},
	{"sleep", "/sleep 1ms done now", wantReply{content: ptr("done now"), finish: "stop", words: 2}},
	{"drip", "/drip 1ms done  now", wantReply{content: ptr("done  now"), finish: "stop", words: 2}},
}

func TestMockDirectivesNonStream(t *testing.T) {
	m := NewMock("", nil)
	for _, tt := range directiveTests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := m.Send(t.Context(), wire.OpChatCompletions, mockBody(t, tt.text, false, false), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			body := readAll(t, resp)
			if resp.ContentLength != int64(len(body)) {
				t.Errorf("ContentLength = %d, body has %d bytes", resp.ContentLength, len(body))
			}
			var c mockCompletion
			if err := json.Unmarshal([]byte(body), &c); err != nil {
				t.Fatal(err)
			}
			if c.Object != "chat.completion" || c.Model != "mock-1" || c.Created != 1700000000 || c.SystemFingerprint != "mock" || len(c.Choices) != 1 {
				t.Fatalf("envelope = %s", body)
			}
			if !strings.Contains(body, `"refusal":null`) || !strings.Contains(body, `"logprobs":null`) {
				t.Errorf("refusal/logprobs not null: %s", body)
			}
			ch := c.Choices[0]
			checkReply(t, outcome{ch.Message.Content, ch.Message.ToolCalls, ch.FinishReason, &c.Usage}, tt.want, promptWords(tt.text))
			if tt.want.content == nil && !strings.Contains(body, `"content":null`) {
				t.Errorf("tool-call reply must carry content null: %s", body)
			}
		})
	}
}

func TestMockDirectivesStream(t *testing.T) {
	m := NewMock("", nil)
	for _, tt := range directiveTests {
		for _, includeUsage := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/usage=%v", tt.name, includeUsage), func(t *testing.T) {
				resp, err := m.Send(t.Context(), wire.OpChatCompletions, mockBody(t, tt.text, true, includeUsage), nil)
				if err != nil {
					t.Fatal(err)
				}
				if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
					t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
				}
				s := parseStream(t, readAll(t, resp))
				if !s.done {
					t.Fatal("stream lacks data: [DONE]")
				}
				if s.usageMember != includeUsage {
					t.Errorf("usage member present = %v, want %v", s.usageMember, includeUsage)
				}
				if (s.usage != nil) != includeUsage {
					t.Errorf("usage chunk present = %v, want %v", s.usage != nil, includeUsage)
				}
				checkReply(t, outcome{s.content, s.toolCalls, s.finish, s.usage}, tt.want, promptWords(tt.text))
				if strings.HasPrefix(tt.text, "/chunks 3") && s.contentChunks != 3 {
					t.Errorf("content chunks = %d, want 3", s.contentChunks)
				}
			})
		}
	}
}

// promptWords counts the words of mockBody's messages.
func promptWords(text string) int { return 4 + len(strings.Fields(text)) }

func checkReply(t *testing.T, got outcome, want wantReply, promptWords int) {
	t.Helper()
	switch {
	case want.content == nil && got.content != nil:
		t.Errorf("content = %q, want null", *got.content)
	case want.content != nil && (got.content == nil || *got.content != *want.content):
		t.Errorf("content = %v, want %q", got.content, *want.content)
	}
	if len(got.toolCalls) != len(want.toolCalls) {
		t.Fatalf("tool calls = %+v, want %+v", got.toolCalls, want.toolCalls)
	}
	for i, tc := range got.toolCalls {
		if tc.ID != fmt.Sprintf("call_mock_%d", i) || tc.Type != "function" || tc.Function != want.toolCalls[i] {
			t.Errorf("tool call %d = %+v, want %+v", i, tc, want.toolCalls[i])
		}
	}
	if got.finish != want.finish {
		t.Errorf("finish_reason = %q, want %q", got.finish, want.finish)
	}
	if got.usage != nil {
		wantUsage := mockUsage{promptWords, want.words, promptWords + want.words}
		if *got.usage != wantUsage {
			t.Errorf("usage = %+v, want %+v", *got.usage, wantUsage)
		}
	}
}

// assembled is a stream put back together, checking OpenAI's shape on the way.
type assembled struct {
	content       *string
	contentChunks int
	toolCalls     []mockToolCallOut
	finish        string
	usage         *mockUsage
	usageMember   bool // chunks carry a "usage" member
	done          bool
	events        int
}

func parseStream(t *testing.T, body string) assembled {
	t.Helper()
	if !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("stream does not end with a blank line: %q", body)
	}
	var s assembled
	var id string
	argFragments := map[int]int{}
	for i, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("event %d is not one data line: %q", i, ev)
		}
		if s.done {
			t.Fatalf("event after [DONE]: %q", ev)
		}
		if data == "[DONE]" {
			s.done = true
			continue
		}
		s.events++
		var c mockChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		var raw map[string]json.RawMessage
		json.Unmarshal([]byte(data), &raw)
		_, s.usageMember = raw["usage"]
		if id == "" {
			id = c.ID
		}
		if c.ID != id || c.Object != "chat.completion.chunk" || c.Created != 1700000000 || c.Model != "mock-1" || c.SystemFingerprint != "mock" {
			t.Fatalf("event %d envelope: %s", i, data)
		}
		if len(c.Choices) == 0 {
			if s.finish == "" {
				t.Fatalf("usage chunk before the finish chunk")
			}
			var u struct{ Usage mockUsage }
			json.Unmarshal([]byte(data), &u)
			s.usage = &u.Usage
			continue
		}
		if s.finish != "" {
			t.Fatalf("choice chunk after the finish chunk: %s", data)
		}
		if !strings.Contains(data, `"logprobs":null,"finish_reason":`) {
			t.Errorf("choice lacks logprobs/finish_reason: %s", data)
		}
		d := c.Choices[0].Delta
		if s.events == 1 {
			if d.Role != "assistant" || !strings.Contains(data, `"delta":{"role":"assistant","content":`) {
				t.Fatalf("first chunk is not the role chunk: %s", data)
			}
			if strings.Contains(data, `"content":""`) {
				s.content = ptr("")
			}
			continue
		}
		if fr := c.Choices[0].FinishReason; fr != nil {
			if string(mustJSON(t, d)) != "{}" {
				t.Errorf("finish chunk delta = %s, want {}", mustJSON(t, d))
			}
			s.finish = *fr
			continue
		}
		if text, ok := d.Content.(string); ok {
			if s.content == nil {
				t.Fatalf("content after a null-content role chunk")
			}
			*s.content += text
			s.contentChunks++
		}
		for _, tc := range d.ToolCalls {
			if tc.ID != "" {
				if tc.Index != len(s.toolCalls) || tc.Function.Arguments != "" || tc.Function.Name == "" {
					t.Fatalf("tool-call header fragment: %s", data)
				}
				s.toolCalls = append(s.toolCalls, mockToolCallOut{ID: tc.ID, Type: tc.Type, Function: mockFunction{Name: tc.Function.Name}})
				continue
			}
			if tc.Index >= len(s.toolCalls) || tc.Function.Name != "" {
				t.Fatalf("tool-call argument fragment: %s", data)
			}
			s.toolCalls[tc.Index].Function.Arguments += tc.Function.Arguments
			argFragments[tc.Index]++
		}
	}
	for i := range s.toolCalls {
		if argFragments[i] < 2 {
			t.Errorf("tool call %d arguments came in %d fragments, want >= 2", i, argFragments[i])
		}
	}
	return s
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMockStreamExactBytes(t *testing.T) {
	body := []byte(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"/say hi you"}]}`)
	resp, err := NewMock("", nil).Send(t.Context(), wire.OpChatCompletions, body, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	id := "chatcmpl-mock-" + hex.EncodeToString(sum[:])[:12]
	head := `data: {"id":"` + id + `","object":"chat.completion.chunk","created":1700000000,"model":"m","system_fingerprint":"mock","choices":`
	want := head + `[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n" +
		head + `[{"index":0,"delta":{"content":"hi "},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n" +
		head + `[{"index":0,"delta":{"content":"you"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n" +
		head + `[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}` + "\n\n" +
		head + `[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n" +
		"data: [DONE]\n\n"
	if got := readAll(t, resp); got != want {
		t.Errorf("stream =\n%s\nwant\n%s", got, want)
	}
	if resp.ContentLength != -1 || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("ContentLength %d, headers %v", resp.ContentLength, resp.Header)
	}
}

func TestMockChunks200(t *testing.T) {
	text := strings.Repeat("ab ", 150) + "çé"
	resp, err := NewMock("", nil).Send(t.Context(), wire.OpChatCompletions, mockBody(t, "/chunks 200 "+text, true, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := parseStream(t, readAll(t, resp))
	if s.contentChunks != 200 || *s.content != text {
		t.Errorf("%d chunks assembling %q", s.contentChunks, *s.content)
	}
}

func TestMockDeterministicID(t *testing.T) {
	m := NewMock("", nil)
	a := mockBody(t, "same", false, false)
	b := mockBody(t, "other", false, false)
	first := readAll(t, mustMock(t, m, a))
	if again := readAll(t, mustMock(t, m, a)); again != first {
		t.Errorf("same body, different bytes:\n%s\n%s", first, again)
	}
	sum := sha256.Sum256(a)
	if !strings.HasPrefix(first, `{"id":"chatcmpl-mock-`+hex.EncodeToString(sum[:])[:12]+`",`) {
		t.Errorf("id not derived from sha256(body): %s", first)
	}
	if other := readAll(t, mustMock(t, m, b)); other[:40] == first[:40] {
		t.Errorf("different bodies share an id: %s", other[:40])
	}
}

func TestMockErrors(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantType   string
		wantMsg    string
		wantCode   any
	}{
		{"error directive", `{"model":"m","messages":[{"role":"user","content":"/error 429 slow down please"}]}`, 429, "mock_error", "slow down please", "429"},
		{"error default message", `{"model":"m","stream":true,"messages":[{"role":"user","content":"/error 503"}]}`, 503, "mock_error", "Service Unavailable", "503"},
		{"error bad code", `{"model":"m","messages":[{"role":"user","content":"/error 42"}]}`, 400, "mock_error", "/error", nil},
		{"chunks zero", `{"model":"m","messages":[{"role":"user","content":"/chunks 0 x"}]}`, 400, "mock_error", "/chunks", nil},
		{"sleep negative", `{"model":"m","messages":[{"role":"user","content":"/sleep -1s x"}]}`, 400, "mock_error", "/sleep", nil},
		{"drip zero", `{"model":"m","stream":true,"messages":[{"role":"user","content":"/drip 0s x"}]}`, 400, "mock_error", "/drip", nil},
		{"drip no interval", `{"model":"m","messages":[{"role":"user","content":"/drip x y"}]}`, 400, "mock_error", "/drip", nil},
		{"tool no name", `{"model":"m","messages":[{"role":"user","content":"/tool "}]}`, 400, "mock_error", "tool name", nil},
		{"tool mixed lines", `{"model":"m","messages":[{"role":"user","content":"/tool a\nhello"}]}`, 400, "mock_error", "every line", nil},
		{"not json", `{"model":`, 400, "invalid_request_error", "not a chat completion", nil},
		{"trailing data", `{"model":"m","messages":[{"role":"user","content":"x"}]} {}`, 400, "invalid_request_error", "not a chat completion", nil},
		{"no model", `{"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "model", nil},
		{"no messages", `{"model":"m","messages":[]}`, 400, "invalid_request_error", "messages", nil},
		{"bad content", `{"model":"m","messages":[{"role":"user","content":42}]}`, 400, "invalid_request_error", "content", nil},
		{"tools not an array", `{"model":"m","tools":{},"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "not a chat completion", nil},
	}
	m := NewMock("", nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := mustMock(t, m, []byte(tt.body))
			body := readAll(t, resp)
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("status %d %q, want %d JSON", resp.StatusCode, resp.Header.Get("Content-Type"), tt.wantStatus)
			}
			var env struct {
				Error map[string]any `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &env); err != nil {
				t.Fatal(err)
			}
			e := env.Error
			if e["type"] != tt.wantType || !strings.Contains(fmt.Sprint(e["message"]), tt.wantMsg) || e["code"] != tt.wantCode {
				t.Errorf("envelope = %s", body)
			}
			if _, ok := e["param"]; !ok {
				t.Errorf("envelope lacks param: %s", body)
			}
		})
	}
}

func TestMockCutNonStream(t *testing.T) {
	resp := mustMock(t, NewMock("", nil), mockBody(t, "/cut", false, false))
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusOK || json.Valid([]byte(body)) || !strings.HasPrefix(body, `{"id":"chatcmpl-mock-`) {
		t.Errorf("status %d body %q, want a truncated JSON body", resp.StatusCode, body)
	}
}

func TestMockCutStream(t *testing.T) {
	resp := mustMock(t, NewMock("", nil), mockBody(t, "/cut one two three four", true, true))
	body := readAll(t, resp)
	if strings.Contains(body, "[DONE]") || strings.Contains(body, `"finish_reason":"`) || strings.Contains(body, `"usage":{`) {
		t.Fatalf("cut stream finished: %s", body)
	}
	if n := strings.Count(body, `"content":"`); n != 3 { // role chunk + first 2 of 4 words
		t.Errorf("%d content deltas before the cut, want 3: %s", n, body)
	}
}

func TestMockContentParts(t *testing.T) {
	body := `{"model":"m","messages":[
		{"role":"user","content":"first"},
		{"role":"assistant","content":null,"tool_calls":[]},
		{"role":"user","content":[{"type":"text","text":"/say a"},{"type":"image_url","image_url":{"url":"data:,"}},{"type":"text","text":"b"}]},
		{"role":"tool","tool_call_id":"x","content":"ignored"}]}`
	resp := mustMock(t, NewMock("", nil), []byte(body))
	var c mockCompletion
	if err := json.Unmarshal([]byte(readAll(t, resp)), &c); err != nil {
		t.Fatal(err)
	}
	if got := *c.Choices[0].Message.Content; got != "ab" {
		t.Errorf("content = %q, want the concatenated text parts of the last user message", got)
	}
	if c.Usage.PromptTokens != 4 { // "first", "/say ab", "ignored"
		t.Errorf("prompt tokens = %d", c.Usage.PromptTokens)
	}
}

func TestMockSleep(t *testing.T) {
	m := NewMock("", nil)
	start := time.Now()
	resp := mustMock(t, m, mockBody(t, "/sleep 30ms later", false, false))
	readAll(t, resp)
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("answered after %v, want >= 30ms", d)
	}

	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	start = time.Now()
	_, err := m.Send(ctx, wire.OpChatCompletions, mockBody(t, "/sleep 10s never", false, false), nil)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second {
		t.Errorf("err = %v after %v, want a prompt context.Canceled", err, time.Since(start))
	}

	_, err = m.Send(ctx, wire.OpChatCompletions, mockBody(t, "hi", false, false), nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "mock") {
		t.Errorf("done ctx: err = %v, want context.Canceled naming the upstream", err)
	}
}

func TestMockModels(t *testing.T) {
	if m := NewMock("", nil); m.Name() != "mock" || strings.Join(m.Models(), ",") != "mock" {
		t.Errorf("defaults: %q %v", m.Name(), m.Models())
	}
	m := NewMock("local", []string{"mock-a", "mock-*", "mock-b"})
	if m.Name() != "local" || strings.Join(m.Models(), ",") != "mock-a,mock-b" {
		t.Errorf("configured: %q %v", m.Name(), m.Models())
	}
	m.Models()[0] = "changed"
	if m.Models()[0] != "mock-a" {
		t.Error("Models exposes internal state")
	}
}

func TestSplitHelpers(t *testing.T) {
	for _, s := range []string{"", "a", "  a b  c ", "héllo wörld\n\tx", strings.Repeat("é", 7)} {
		if got := strings.Join(splitWords(s), ""); got != s {
			t.Errorf("splitWords(%q) joins to %q", s, got)
		}
		for _, n := range []int{1, 2, 3, 10} {
			parts := splitEven(s, n)
			if len(parts) != n || strings.Join(parts, "") != s {
				t.Errorf("splitEven(%q, %d) = %q", s, n, parts)
			}
		}
	}
	if got := splitWords("  a b  c"); strings.Join(got, "|") != "  a |b  |c" {
		t.Errorf("splitWords = %q", got)
	}
}

func mustMock(t *testing.T, m *Mock, body []byte) *http.Response {
	t.Helper()
	resp, err := m.Send(t.Context(), wire.OpChatCompletions, body, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// Guard against accidental HTML escaping in the wire bytes.
func TestMockNoHTMLEscaping(t *testing.T) {
	body := readAll(t, mustMock(t, NewMock("", nil), mockBody(t, "/say <a&b>", false, false)))
	if !strings.Contains(body, `"content":"<a&b>"`) {
		t.Errorf("body = %s", body)
	}
}
