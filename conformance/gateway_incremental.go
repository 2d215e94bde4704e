package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// GatewayIncrementalDeclaration is the declared surface of the gateway
// harness with streaming.mode incremental on api.
func GatewayIncrementalDeclaration(api wire.API) Declaration {
	d := IncrementalDeclaration(SDKLocalDeclaration())
	d.Name = "gateway-incremental/" + string(api)
	return d
}

// GatewayIncrementalAPIs lists the surfaces the incremental gateway
// harness drives.
func GatewayIncrementalAPIs() []wire.API { return []wire.API{wire.ChatCompletions} }

// GatewayIncrementalHarness returns the factory of harnesses whose
// production path is the gateway mediating streams incrementally
// (streaming.mode: incremental, every event of text a segment boundary):
// every model call streams, a scripted response's stream chunks are one
// SSE event each (a truncated one is cut after its last chunk), and the
// surface's official streaming client reads what the gateway releases.
func GatewayIncrementalHarness(api wire.API) (HarnessFactory, error) {
	if api != wire.ChatCompletions {
		return nil, fmt.Errorf("the incremental gateway harness has no surface %q (surfaces: chat_completions)", api)
	}
	s := chatSurface()
	s.newModel = func(root string, hc *http.Client, tools []Tool) modelSeam {
		return &streamingChatModel{gatewayModel: gatewayModel{client: newOpenAIClient(root, hc), tools: openAITools(tools)}}
	}
	s.renderStream = chatStreamEvents
	return func() Harness {
		return &gatewayHarness{surface: s, streaming: incrementalStreaming(), declaration: GatewayIncrementalDeclaration(api)}
	}, nil
}

// incrementalStreaming is the harness's streaming configuration: every
// boundary between events of text closes a segment (CTK.md §2.5: each
// chunk boundary), the first one included (segment.first: boundary, so an
// answer of one chunk is one emission), and neither time nor sentences
// close one.
func incrementalStreaming() config.Streaming {
	return config.Streaming{
		Mode: config.StreamingIncremental,
		Segment: config.Segment{Bytes: 1, Interval: time.Hour, MaxSegments: config.DefaultSegmentMaxSegments,
			First: config.SegmentFirstBoundary},
	}
}

// chatStreamEvents renders a scripted response as chat-completion chunk
// events: the role, one chunk per stream chunk (or the whole content),
// the tool calls, the finish and [DONE]. A truncated stream ends after
// its chunks, without finish or [DONE].
func chatStreamEvents(n int, r Response) (events [][]byte, cut bool, err error) {
	chunk := func(delta map[string]any, finish any) ([]byte, error) {
		return jsonvalue.Marshal(map[string]any{
			"id": fmt.Sprintf("chatcmpl-ctk-%d", n), "object": "chat.completion.chunk", "created": json.Number("0"),
			"model":   gatewayModelID,
			"choices": []any{map[string]any{"index": json.Number("0"), "delta": delta, "finish_reason": finish}},
		})
	}
	add := func(delta map[string]any, finish any) {
		if err != nil {
			return
		}
		var b []byte
		if b, err = chunk(delta, finish); err == nil {
			events = append(events, b)
		}
	}
	add(map[string]any{"role": "assistant", "content": ""}, nil)
	parts := r.Stream
	if s, ok := r.Content.(string); ok && parts == nil && s != "" {
		parts = []string{s}
	}
	for _, p := range parts {
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
	resp := enforcement.ModelResponse{FinishReason: choice.FinishReason}
	assistant := openai.ChatCompletionAssistantMessageParam{}
	if partial.Len() > 0 {
		resp.Content = choice.Message.Content
		assistant.Content.OfString = param.NewOpt(choice.Message.Content)
	}
	for k, tc := range choice.Message.ToolCalls {
		args, err := jsonvalue.Decode([]byte(tc.Function.Arguments))
		if err != nil {
			return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: tool_calls[%d].function.arguments: %w", i, k, err)
		}
		resp.ToolCalls = append(resp.ToolCalls, enforcement.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: args})
		assistant.ToolCalls = append(assistant.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: tc.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
					Name: tc.Function.Name, Arguments: tc.Function.Arguments,
				},
			},
		})
	}
	m.messages = append(m.messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &assistant})
	return resp, nil
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
