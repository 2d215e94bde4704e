package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// chatStreamEvents renders a scripted response as chat-completion chunk
// events: the role, one chunk per stream chunk (or the whole content),
// the tool calls, the finish and [DONE]. A truncated stream ends after
// its chunks, without finish or [DONE].
func chatStreamEvents(n int, r Response) (events []sseEvent, cut bool, err error) {
	add := func(delta map[string]any, finish any) {
		if err != nil {
			return
		}
		var b []byte
		b, err = jsonvalue.Marshal(map[string]any{
			"id": fmt.Sprintf("chatcmpl-ctk-%d", n), "object": "chat.completion.chunk", "created": json.Number("0"),
			"model":   gatewayModelID,
			"choices": []any{map[string]any{"index": json.Number("0"), "delta": delta, "finish_reason": finish}},
		})
		events = append(events, sseEvent{data: b})
	}
	add(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, p := range streamParts(r) {
		add(map[string]any{"content": p}, nil)
	}
	if r.StreamTruncated {
		return events, true, err
	}
	for i, tc := range r.ToolCalls {
		text, aerr := scriptedArgs(tc)
		if aerr != nil {
			return nil, false, aerr
		}
		add(map[string]any{"tool_calls": []any{map[string]any{
			"index": json.Number(fmt.Sprint(i)), "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": string(text)},
		}}}, nil)
	}
	add(map[string]any{}, r.FinishReason)
	events = append(events, sseEvent{data: []byte("[DONE]")})
	return events, false, err
}

// streamingChatModel is the chat model seam over openai-go's streaming
// client: it keeps the text the gateway released, and only that joins the
// transcript when a stream is blocked.
type streamingChatModel struct {
	gatewayModel
	released strings.Builder
}

// call streams the completion and assembles it with openai-go's
// accumulator. An error event is the gateway ending the stream with a
// verdict.
func (m *streamingChatModel) call(ctx context.Context, i int) (enforcement.ModelResponse, error) {
	stream := m.client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: gatewayModelID, Messages: m.messages, Tools: m.tools,
	})
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	var partial strings.Builder
	for stream.Next() {
		c := stream.Current()
		acc.AddChunk(c)
		if len(c.Choices) > 0 {
			partial.WriteString(c.Choices[0].Delta.Content)
		}
	}
	m.released.WriteString(partial.String())
	if err := stream.Err(); err != nil {
		if partial.Len() > 0 {
			assistant := openai.ChatCompletionAssistantMessageParam{}
			assistant.Content.OfString = param.NewOpt(partial.String())
			m.messages = append(m.messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &assistant})
		}
		return enforcement.ModelResponse{}, streamCallError(i, err)
	}
	if len(acc.Choices) != 1 {
		return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: the gateway streamed %d choices, want 1", i, len(acc.Choices))
	}
	choice := acc.Choices[0]
	return m.absorb(i, choice.Message, choice.FinishReason, partial.Len() > 0)
}

// releasedOutput and persisted feed the RunRecord's incremental fields.
func (m *streamingChatModel) releasedOutput() string { return m.released.String() }

func (m *streamingChatModel) persisted() (string, error) {
	b, err := json.Marshal(m.messages)
	return string(b), err
}

// streamCallError sorts a failed streamed call: an error event the
// gateway wrote after committing the stream, or an error answer before.
func streamCallError(i int, err error) error {
	var se *ssestream.StreamError
	if !errors.As(err, &se) {
		return modelCallError(i, err)
	}
	var env struct {
		Error struct {
			Type              string `json:"type"`
			Code              string `json:"code"`
			InterceptionPoint string `json:"interception_point"`
		} `json:"error"`
	}
	if jerr := json.Unmarshal(se.Event.Data, &env); jerr != nil {
		return fmt.Errorf("model_script[%d]: unreadable error event: %w", i, jerr)
	}
	e := env.Error
	return modelPointVerdict(i, http.StatusOK, e.Type, e.Code, e.InterceptionPoint)
}
