package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/providers"
)

// messagesMaxTokens is the max_tokens of every Messages call (the API
// requires one; the scripted upstream ignores it).
const messagesMaxTokens = 1024

// messagesSurface drives the Anthropic Messages API: anthropic-sdk-go's
// Messages.New against POST /v1/messages, an Anthropic-type upstream
// answering POST /v1/messages.
func messagesSurface() gatewaySurface {
	return gatewaySurface{
		api:          wire.Messages,
		upstreamPath: "/v1/messages",
		render:       messageBody,
		errorBody:    anthropicErrorBody,
		newUpstream:  anthropicUpstream,
		newModel: func(root string, hc *http.Client, tools []Tool) modelSeam {
			return &messagesModel{client: newAnthropicClient(root, hc), tools: anthropicTools(tools)}
		},
	}
}

// anthropicUpstream is the gateway's Anthropic-type upstream for the
// scripted server.
func anthropicUpstream(baseURL string, transport http.RoundTripper) (providers.Upstream, error) {
	return providers.NewAnthropic(providers.AnthropicConfig{
		Name:      "ctk-mock",
		BaseURL:   baseURL,
		Timeout:   gatewayCallTimeout,
		Models:    []string{gatewayModelID},
		Transport: transport,
	})
}

// newAnthropicClient is anthropic-sdk-go on the gateway at root, through
// hc, authenticating with x-api-key as Anthropic's clients do.
func newAnthropicClient(root string, hc *http.Client) anthropic.Client {
	return anthropic.NewClient(
		option.WithoutEnvironmentDefaults(), // never the environment's key, profile or base URL
		option.WithBaseURL(root),
		option.WithHeader("x-api-key", "ctk"), // the gateway authenticates no client
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(gatewayCallTimeout),
	)
}

// messagesModel is the Messages model seam. The transcript alternates
// user and assistant turns as the API requires: the input as a user
// message (a system input is the system prompt), then per tool-calling
// turn the assistant message (its text, when it wrote any, and its
// tool_use blocks) followed by one user message carrying a tool_result
// block per call (tool_use_id, result or "blocked: …").
type messagesModel struct {
	client   anthropic.Client
	tools    []anthropic.ToolUnionParam
	system   []anthropic.TextBlockParam
	messages []anthropic.MessageParam
	results  []anthropic.ContentBlockParamUnion
}

func (m *messagesModel) open(role string, content any) error {
	text, err := messageText(content)
	if err != nil {
		return fmt.Errorf("input content: %w", err)
	}
	if role == "system" {
		m.system = []anthropic.TextBlockParam{{Text: text}}
		return nil
	}
	m.messages = []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))}
	return nil
}

// call sends the transcript to the gateway and reads the verdicted message
// back: its text blocks' text (none: null), tool_use blocks with their
// input decoded number-exactly, and the stop reason in the chat
// vocabulary. The assistant message joins the transcript at once, its
// tool_use input replayed as the exact JSON text the gateway released.
func (m *messagesModel) call(ctx context.Context, i int) (enforcement.ModelResponse, error) {
	msg, err := m.client.Messages.New(ctx, m.params())
	if err != nil {
		return enforcement.ModelResponse{}, anthropicCallError(i, err)
	}
	return m.absorb(i, msg)
}

// params is the request for the next call: the whole transcript.
func (m *messagesModel) params() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     gatewayModelID,
		MaxTokens: messagesMaxTokens,
		System:    m.system,
		Messages:  m.messages,
		Tools:     m.tools,
	}
}

// absorb reads the verdicted message of call i and adds it to the
// transcript.
func (m *messagesModel) absorb(i int, msg *anthropic.Message) (enforcement.ModelResponse, error) {
	var resp enforcement.ModelResponse
	var blocks []anthropic.ContentBlockParamUnion
	for k, b := range msg.Content {
		switch b.Type {
		case "text":
			prev, _ := resp.Content.(string)
			resp.Content = prev + b.Text
			if b.Text != "" { // the API refuses empty text blocks
				blocks = append(blocks, anthropic.NewTextBlock(b.Text))
			}
		case "tool_use":
			args, err := jsonvalue.Decode(b.Input)
			if err != nil {
				return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: content[%d].input: %w", i, k, err)
			}
			resp.ToolCalls = append(resp.ToolCalls, enforcement.ToolCall{ID: b.ID, Name: b.Name, Args: args})
			blocks = append(blocks, anthropic.NewToolUseBlock(b.ID, json.RawMessage(b.Input), b.Name))
		default:
			return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: content[%d] has type %q, want text or tool_use", i, k, b.Type)
		}
	}
	reason, err := messagesFinishReason(msg.StopReason)
	if err != nil {
		return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: %w", i, err)
	}
	resp.FinishReason = reason
	if len(blocks) > 0 {
		m.messages = append(m.messages, anthropic.NewAssistantMessage(blocks...))
	}
	return resp, nil
}

// messagesFinishReason is a stop reason in the chat vocabulary, as the
// projection's finish_reason reads it.
func messagesFinishReason(r anthropic.StopReason) (string, error) {
	switch r {
	case anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
		return "stop", nil
	case anthropic.StopReasonToolUse:
		return "tool_calls", nil
	case anthropic.StopReasonMaxTokens:
		return "length", nil
	case anthropic.StopReasonRefusal:
		return "content_filter", nil
	}
	return "", fmt.Errorf("the message has stop_reason %q", r)
}

// toolMessage holds the tool_result block until the turn closes: all the
// results of one assistant turn go in one user message.
func (m *messagesModel) toolMessage(tc enforcement.ToolCall, content any) error {
	text, err := messageText(content)
	if err != nil {
		return fmt.Errorf("tool %s result: %w", tc.Name, err)
	}
	m.results = append(m.results, anthropic.NewToolResultBlock(tc.ID, text, false))
	return nil
}

// closeTurn adds the user message carrying the turn's tool results.
func (m *messagesModel) closeTurn(enforcement.ModelResponse) {
	if len(m.results) == 0 {
		return
	}
	m.messages = append(m.messages, anthropic.NewUserMessage(m.results...))
	m.results = nil
}

// anthropicCallError sorts a failed Messages call: the gateway puts its
// error members inside the envelope's "error" object (see
// modelPointVerdict).
func anthropicCallError(i int, err error) error {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("model_script[%d]: model call through the gateway: %w", i, err)
	}
	var env struct {
		Error struct {
			Type              string `json:"type"`
			Code              string `json:"code"`
			InterceptionPoint string `json:"interception_point"`
			Message           string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(apiErr.RawJSON()), &env) // an unreadable envelope leaves every member empty
	if err := modelPointVerdict(i, apiErr.StatusCode, env.Error.Type, env.Error.Code, env.Error.InterceptionPoint); !errors.Is(err, errModelCallBlocked) {
		return fmt.Errorf("%w: %s", err, env.Error.Message)
	}
	return modelPointVerdict(i, apiErr.StatusCode, env.Error.Type, env.Error.Code, env.Error.InterceptionPoint)
}

// anthropicTools declares the scenario's tools as custom tools taking an
// open object (see openAITools).
func anthropicTools(tools []Tool) []anthropic.ToolUnionParam {
	if len(tools) == 0 {
		return nil
	}
	out := make([]anthropic.ToolUnionParam, 0, len(tools))
	for _, t := range tools {
		out = append(out, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name:        t.Name,
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}},
		}})
	}
	return out
}

// messageBody renders a scripted response as an Anthropic message: a text
// block when content is a string (null content: none), then one tool_use
// block per tool call (id the scripted id, input the args as exact JSON).
// finish_reason maps onto stop_reason: stop is end_turn, tool_calls
// tool_use, length max_tokens, content_filter refusal.
func messageBody(n int, r Response) ([]byte, error) {
	stop, err := messagesStopReason(r.FinishReason)
	if err != nil {
		return nil, err
	}
	content := make([]any, 0, 1+len(r.ToolCalls))
	switch c := r.Content.(type) {
	case nil:
	case string:
		content = append(content, map[string]any{"type": "text", "text": c})
	default:
		return nil, fmt.Errorf("content is a %T; the Messages upstream renders text or null", c)
	}
	for _, tc := range r.ToolCalls {
		input := tc.Args
		if input == nil {
			input = map[string]any{}
		}
		content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": input})
	}
	return jsonvalue.Marshal(map[string]any{
		"id":            fmt.Sprintf("msg_ctk_%d", n),
		"type":          "message",
		"role":          "assistant",
		"model":         gatewayModelID,
		"content":       content,
		"stop_reason":   stop,
		"stop_sequence": nil,
		"usage":         map[string]any{"input_tokens": json.Number("0"), "output_tokens": json.Number("0")},
	})
}

// messagesStopReason maps a scripted finish_reason onto a stop_reason.
func messagesStopReason(finish string) (string, error) {
	switch finish {
	case "stop":
		return "end_turn", nil
	case "tool_calls":
		return "tool_use", nil
	case "length":
		return "max_tokens", nil
	case "content_filter":
		return "refusal", nil
	}
	return "", fmt.Errorf("finish_reason %q has no Messages stop_reason", finish)
}

// anthropicErrorBody is Anthropic's error envelope.
func anthropicErrorBody(msg string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}})
	return b
}
