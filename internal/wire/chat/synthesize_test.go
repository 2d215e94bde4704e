package chat

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// accumulate serves sse to the official openai-go client and folds every
// chunk into its ChatCompletionAccumulator, failing on any chunk the
// accumulator rejects or any stream error.
func accumulate(t *testing.T, sse []byte) openai.ChatCompletionAccumulator {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(sse)
	}))
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:    "gpt-4o",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	var acc openai.ChatCompletionAccumulator
	n := 0
	for stream.Next() {
		n++
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("accumulator rejected chunk %d", n)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("openai-go stream error: %v", err)
	}
	if n == 0 {
		t.Fatal("openai-go saw no chunks")
	}
	return acc
}

func TestSynthesizeAcceptedByOpenAIGo(t *testing.T) {
	st := mustStream(t, sseToolStream)
	target := st.Response().Project()
	target["content"] = "Checking [REDACTED]."
	callAt(target, 1)["args"].(map[string]any)["to"] = "[REDACTED]"

	for _, includeUsage := range []bool{true, false} {
		sse, err := st.Synthesize(target, includeUsage)
		if err != nil {
			t.Fatal(err)
		}
		acc := accumulate(t, sse)
		if acc.ID != "chatcmpl-S1" || acc.Model != "gpt-4o-2024-08-06" || acc.Created != 1741570400 || acc.SystemFingerprint != "" {
			t.Errorf("metadata = %q %q %d %q", acc.ID, acc.Model, acc.Created, acc.SystemFingerprint)
		}
		if len(acc.Choices) != 1 {
			t.Fatalf("%d choices", len(acc.Choices))
		}
		c := acc.Choices[0]
		if c.Message.Content != "Checking [REDACTED]." {
			t.Errorf("content = %q", c.Message.Content)
		}
		if c.FinishReason != "tool_calls" {
			t.Errorf("finish_reason = %q", c.FinishReason)
		}
		calls := c.Message.ToolCalls
		if len(calls) != 2 {
			t.Fatalf("%d tool calls", len(calls))
		}
		// The untouched call keeps the upstream arguments text exactly.
		if calls[0].ID != "call_w" || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city": "Paris", "days": 1.0}` {
			t.Errorf("call 0 = %+v", calls[0])
		}
		if calls[1].ID != "call_t" || calls[1].Function.Name != "transfer" || calls[1].Function.Arguments != `{"amount_cents":9007199254740993,"to":"[REDACTED]"}` {
			t.Errorf("call 1 = %+v", calls[1])
		}
		if strings.Contains(string(sse), secret) {
			t.Error("redacted content reached the synthesized stream")
		}
		wantPrompt := int64(0)
		if includeUsage {
			wantPrompt = 82
		}
		if acc.Usage.PromptTokens != wantPrompt {
			t.Errorf("includeUsage %v: usage.prompt_tokens = %d", includeUsage, acc.Usage.PromptTokens)
		}
	}
}

func TestSynthesizeRefusalAndText(t *testing.T) {
	refusal := "data: {\"id\":\"r\",\"created\":5,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":\"no \"}}]}\n\n" +
		"data: {\"id\":\"r\",\"created\":5,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"" + secret + "\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	st := mustStream(t, refusal)
	target := st.Response().Project()
	target["content"] = []any{map[string]any{"type": "refusal", "refusal": "no."}}
	sse, err := st.Synthesize(target, true)
	if err != nil {
		t.Fatal(err)
	}
	acc := accumulate(t, sse)
	if m := acc.Choices[0].Message; m.Refusal != "no." || m.Content != "" {
		t.Errorf("refusal, content = %q, %q", m.Refusal, m.Content)
	}

	st = mustStream(t, sseText("a", "b"))
	target = st.Response().Project()
	target["content"] = "c"
	target["finish_reason"] = "content_filter"
	sse, err = st.Synthesize(target, true)
	if err != nil {
		t.Fatal(err)
	}
	acc = accumulate(t, sse)
	if c := acc.Choices[0]; c.Message.Content != "c" || c.FinishReason != "content_filter" || len(c.Message.ToolCalls) != 0 {
		t.Errorf("choice = %+v", c)
	}
}

func TestSynthesizeBytes(t *testing.T) {
	st := mustStream(t, sseToolStream)
	target := st.Response().Project()
	target["content"] = nil
	target["tool_calls"] = target["tool_calls"].([]any)[:1]
	got, err := st.Synthesize(target, true)
	if err != nil {
		t.Fatal(err)
	}
	head := `data: {"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1741570400,"model":"gpt-4o-2024-08-06","choices":`
	want := head + `[{"index":0,"delta":{"role":"assistant","content":null},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
		head + `[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_w","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\", \"days\": 1.0}"}}]},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
		head + `[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}` + "\n\n" +
		head + `[],"usage":{"prompt_tokens":82,"completion_tokens":31,"total_tokens":113,"prompt_tokens_details":{"cached_tokens":0}}}` + "\n\n" +
		"data: [DONE]\n\n"
	if string(got) != want {
		t.Errorf("Synthesize =\n%s\nwant\n%s", got, want)
	}
}

func TestSynthesizeRoundTrip(t *testing.T) {
	// What Synthesize releases assembles back to the verdicted target.
	streams := []string{sseToolStream, crlf(sseToolStream), sseText("x", "y"), sseText()}
	for i, s := range streams {
		st := mustStream(t, s)
		targets := []map[string]any{st.Response().Project()}
		changed := st.Response().Project()
		changed["content"] = "rewritten \u2028 <b>"
		changed["finish_reason"] = "length"
		targets = append(targets, changed)
		for _, target := range targets {
			sse, err := st.Synthesize(target, true)
			if err != nil {
				t.Fatal(err)
			}
			again, err := ReadStream(bytes.NewReader(sse), int64(len(sse)), ResponseOptions{})
			if err != nil {
				t.Fatalf("stream %d: synthesized bytes do not parse: %v", i, err)
			}
			if got := again.Response().Project(); !jsonvalue.Equal(got, target) {
				t.Errorf("stream %d: round trip = %s, want %s", i, mustJSON(t, got), mustJSON(t, target))
			}
		}
	}
}

func TestSynthesizeRefusesWhatCannotBeStreamed(t *testing.T) {
	st := mustStream(t, sseToolStream)
	target := st.Response().Project()
	target["content"] = []any{map[string]any{"type": "reasoning", "text": "a reasoning channel the model never had"}}
	_, err := st.Synthesize(target, false)
	var we *wire.WriteBackError
	if !errors.As(err, &we) || we.Field != "$target.content[0]" {
		t.Errorf("err = %v, want wire.WriteBackError on $target.content[0]", err)
	}
	target = st.Response().Project()
	target["tool_calls"] = append(target["tool_calls"].([]any), map[string]any{"id": "new", "name": "x", "args": map[string]any{}})
	if _, err := st.Synthesize(target, false); !errors.As(err, &we) {
		t.Errorf("added call: err = %v", err)
	}
}

func TestReplayAcceptedByOpenAIGo(t *testing.T) {
	st := mustStream(t, sseToolStream)
	out, err := st.Release(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	acc := accumulate(t, out)
	c := acc.Choices[0]
	if c.Message.Content != "Checking now." || len(c.Message.ToolCalls) != 2 || c.Message.ToolCalls[1].Function.Arguments != `{"to":"`+secret+`","amount_cents":9007199254740993}` {
		t.Errorf("replayed choice = %+v", c)
	}
}
