package providers

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// mockServer serves the mock over HTTP on every surface's path.
func mockServer(t *testing.T) *httptest.Server {
	t.Helper()
	m := NewMock("", nil)
	ops := map[string]wire.Operation{
		"/v1/chat/completions":      wire.OpChatCompletions,
		"/v1/responses":             wire.OpResponses,
		"/v1/messages":              wire.OpMessages,
		"/v1/messages/count_tokens": wire.OpCountTokens,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, ok := ops[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		resp, err := m.Send(r.Context(), op, body, r.Header)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// officialClient returns the official OpenAI Go client pointed at the mock.
func officialClient(t *testing.T) openai.Client {
	t.Helper()
	return openai.NewClient(
		option.WithBaseURL(mockServer(t).URL+"/v1/"),
		option.WithAPIKey("sk-test"),
		option.WithMaxRetries(0),
	)
}

func chatParams(text string, includeUsage bool) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:    "mock",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
	}
	if includeUsage {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	return p
}

func TestMockWithOfficialClientStreaming(t *testing.T) {
	type call struct{ id, name, args string }
	tests := []struct {
		name         string
		text         string
		includeUsage bool
		wantContent  string
		wantCalls    []call
		wantFinish   string
	}{
		{"echo", "hello streaming world", false, "echo: hello streaming world", nil, "stop"},
		{"echo with usage", "hello", true, "echo: hello", nil, "stop"},
		{"tool calls", "/tool get_weather {\"city\":\"Paris\",\"days\":3}\n/tool lookup {\"q\":\"héllo wörld\"}", true, "", []call{
			{"call_mock_0", "get_weather", `{"city":"Paris","days":3}`},
			{"call_mock_1", "lookup", `{"q":"héllo wörld"}`},
		}, "tool_calls"},
		{"200 chunks", "/chunks 200 " + strings.Repeat("word ", 100), false, strings.Repeat("word ", 100), nil, "stop"},
	}
	client := officialClient(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := client.Chat.Completions.NewStreaming(t.Context(), chatParams(tt.text, tt.includeUsage))
			defer stream.Close()
			var acc openai.ChatCompletionAccumulator
			chunks := 0
			for stream.Next() {
				if !acc.AddChunk(stream.Current()) {
					t.Fatalf("accumulator rejected chunk %d", chunks)
				}
				chunks++
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if len(acc.Choices) != 1 {
				t.Fatalf("choices = %d", len(acc.Choices))
			}
			ch := acc.Choices[0]
			if ch.Message.Content != tt.wantContent || ch.FinishReason != tt.wantFinish {
				t.Errorf("content %q finish %q, want %q %q", ch.Message.Content, ch.FinishReason, tt.wantContent, tt.wantFinish)
			}
			if len(ch.Message.ToolCalls) != len(tt.wantCalls) {
				t.Fatalf("tool calls = %+v", ch.Message.ToolCalls)
			}
			for i, tc := range ch.Message.ToolCalls {
				got := call{tc.ID, tc.Function.Name, tc.Function.Arguments}
				if got != tt.wantCalls[i] || tc.Type != "function" {
					t.Errorf("tool call %d = %+v (type %q), want %+v", i, got, tc.Type, tt.wantCalls[i])
				}
			}
			if tt.includeUsage != (acc.Usage.TotalTokens > 0) {
				t.Errorf("usage = %+v with include_usage %v", acc.Usage, tt.includeUsage)
			}
			if !strings.HasPrefix(acc.ID, "chatcmpl-mock-") || acc.Model != "mock" {
				t.Errorf("id %q model %q", acc.ID, acc.Model)
			}
			if tt.name == "200 chunks" && chunks != 202 { // role + 200 content + finish
				t.Errorf("%d chunks, want 202", chunks)
			}
		})
	}
}

func TestMockWithOfficialClientCutStream(t *testing.T) {
	client := officialClient(t)
	stream := client.Chat.Completions.NewStreaming(t.Context(), chatParams("/cut one two three four", true))
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	// The client ends a stream at EOF without complaint; what marks the cut
	// is a missing finish_reason (and usage).
	if stream.Err() == nil && len(acc.Choices) == 1 && acc.Choices[0].FinishReason != "" {
		t.Fatalf("cut stream looks complete: %+v", acc.Choices[0])
	}
	if got := acc.Choices[0].Message.Content; got != "one two " {
		t.Errorf("content before the cut = %q", got)
	}
}

func TestMockWithOfficialClientErrors(t *testing.T) {
	client := officialClient(t)
	stream := client.Chat.Completions.NewStreaming(t.Context(), chatParams("/error 429 slow down", false))
	defer stream.Close()
	for stream.Next() {
		t.Error("an error response yielded a chunk")
	}
	var apiErr *openai.Error
	if !errors.As(stream.Err(), &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests || apiErr.Message != "slow down" || apiErr.Type != "mock_error" {
		t.Errorf("stream error = %v, want a 429 API error", stream.Err())
	}

	_, err := client.Chat.Completions.New(t.Context(), chatParams("/cut", false))
	if err == nil {
		t.Error("a truncated JSON body decoded without error")
	}
}

func TestMockWithOfficialClientNonStream(t *testing.T) {
	client := officialClient(t)
	res, err := client.Chat.Completions.New(t.Context(), chatParams("/tool f {\"a\":[1,2]}", false))
	if err != nil {
		t.Fatal(err)
	}
	ch := res.Choices[0]
	if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 ||
		ch.Message.ToolCalls[0].Function.Arguments != `{"a":[1,2]}` || res.Usage.TotalTokens == 0 {
		t.Errorf("completion = %+v", res)
	}
	res, err = client.Chat.Completions.New(t.Context(), chatParams("/say done", false))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Choices[0].Message.Content; got != "done" || res.SystemFingerprint != "mock" || res.Created != 1700000000 {
		t.Errorf("completion = %+v", res)
	}
}
