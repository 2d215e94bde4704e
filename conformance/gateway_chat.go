package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// chatSurface drives OpenAI Chat Completions: openai-go's
// Chat.Completions.New against POST /v1/chat/completions, an OpenAI-type
// upstream answering POST /chat/completions.
func chatSurface() gatewaySurface {
	return gatewaySurface{
		api:          wire.ChatCompletions,
		upstreamPath: "/chat/completions",
		render:       completionBody,
		errorBody:    openAIErrorBody,
		newUpstream:  openAIUpstream,
		newModel: func(root string, hc *http.Client, tools []Tool) modelSeam {
			return &gatewayModel{client: newOpenAIClient(root, hc), tools: openAITools(tools)}
		},
	}
}

// newOpenAIClient is openai-go on the gateway at root, through hc.
func newOpenAIClient(root string, hc *http.Client) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(root+"/v1"),
		option.WithAPIKey("ctk"), // the gateway authenticates no client; never the environment's key
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(gatewayCallTimeout),
	)
}

// gatewayModel is the gateway model seam: each model call is a chat
// completion sent with openai-go through the session's transport, so the
// gateway brackets it with pre_model_call and post_model_call in the
// session. The transcript is an OpenAI one: the input message, then per
// tool-calling turn the assistant message carrying its tool_calls followed
// by one tool message per call (tool_call_id, result or "blocked: …").
type gatewayModel struct {
	client   openai.Client
	tools    []openai.ChatCompletionToolUnionParam
	messages []openai.ChatCompletionMessageParamUnion
}

// open starts the transcript. A system input is a system message; user and
// external input are user messages (the chat wire has no external role).
func (m *gatewayModel) open(role string, content any) error {
	text, err := messageText(content)
	if err != nil {
		return fmt.Errorf("input content: %w", err)
	}
	msg := openai.UserMessage(text)
	if role == "system" {
		msg = openai.SystemMessage(text)
	}
	m.messages = []openai.ChatCompletionMessageParamUnion{msg}
	return nil
}

// call sends the transcript to the gateway and reads the verdicted
// response back: content (null stays nil), tool calls with their arguments
// decoded number-exactly, finish_reason. The assistant message joins the
// transcript at once, ahead of the tool messages that answer it.
func (m *gatewayModel) call(ctx context.Context, i int) (enforcement.ModelResponse, error) {
	params := openai.ChatCompletionNewParams{
		Model:    gatewayModelID,
		Messages: m.messages,
		Tools:    m.tools,
	}
	completion, err := m.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return enforcement.ModelResponse{}, modelCallError(i, err)
	}
	if len(completion.Choices) != 1 {
		return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: the gateway answered %d choices, want 1", i, len(completion.Choices))
	}
	choice := completion.Choices[0]
	msg := choice.Message
	raw := msg.JSON.Content.Raw()
	if raw != "" && raw != "null" && !msg.JSON.Content.Valid() {
		return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: the response content is not a string or null", i)
	}
	return m.absorb(i, msg, choice.FinishReason, raw != "" && raw != "null")
}

// absorb reads a verdicted assistant message back (content when
// hasContent, tool calls with their arguments decoded number-exactly) and
// adds it to the transcript at once, ahead of the tool messages that
// answer it.
func (m *gatewayModel) absorb(i int, msg openai.ChatCompletionMessage, finish string, hasContent bool) (enforcement.ModelResponse, error) {
	resp := enforcement.ModelResponse{FinishReason: finish}
	assistant := openai.ChatCompletionAssistantMessageParam{}
	if hasContent {
		resp.Content = msg.Content
		assistant.Content.OfString = param.NewOpt(msg.Content)
	}
	for k, tc := range msg.ToolCalls {
		if tc.Type != "function" {
			return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: tool_calls[%d] has type %q, want function", i, k, tc.Type)
		}
		args, err := jsonvalue.Decode([]byte(tc.Function.Arguments))
		if err != nil {
			return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: tool_calls[%d].function.arguments: %w", i, k, err)
		}
		resp.ToolCalls = append(resp.ToolCalls, enforcement.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: args})
		assistant.ToolCalls = append(assistant.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: tc.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
					Name:      tc.Function.Name,
					Arguments: tc.Function.Arguments,
				},
			},
		})
	}
	m.messages = append(m.messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &assistant})
	return resp, nil
}

func (m *gatewayModel) toolMessage(tc enforcement.ToolCall, content any) error {
	text, err := messageText(content)
	if err != nil {
		return fmt.Errorf("tool %s result: %w", tc.Name, err)
	}
	m.messages = append(m.messages, openai.ToolMessage(text, tc.ID))
	return nil
}

// closeTurn has nothing to add: the assistant message went in with the
// response.
func (m *gatewayModel) closeTurn(enforcement.ModelResponse) {}

// modelCallError sorts a failed OpenAI call (chat completions and
// responses share the envelope): see modelPointVerdict.
func modelCallError(i int, err error) error {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("model_script[%d]: model call through the gateway: %w", i, err)
	}
	var env struct {
		InterceptionPoint string `json:"interception_point"`
	}
	_ = json.Unmarshal([]byte(apiErr.RawJSON()), &env) // an unreadable envelope leaves the point empty
	return modelPointVerdict(i, apiErr.StatusCode, apiErr.Type, apiErr.Code, env.InterceptionPoint)
}

// openAITools declares the scenario's tools to the model as functions. The
// vectors' schema member is not a JSON Schema and every harness ignores
// it, so each function takes an open object.
func openAITools(tools []Tool) []openai.ChatCompletionToolUnionParam {
	if len(tools) == 0 {
		return nil
	}
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(tools))
	for _, t := range tools {
		out = append(out, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:       t.Name,
			Parameters: shared.FunctionParameters{"type": "object"},
		}))
	}
	return out
}

// completionBody renders a scripted response as an OpenAI chat completion:
// content as scripted (null included), tool_calls as function calls whose
// arguments are the exact JSON text of the scripted args, finish_reason as
// scripted (the chat vocabulary is the script's).
func completionBody(n int, r Response) ([]byte, error) {
	msg := map[string]any{"role": "assistant", "content": r.Content}
	if len(r.ToolCalls) > 0 {
		calls := make([]any, 0, len(r.ToolCalls))
		for _, tc := range r.ToolCalls {
			text, err := scriptedArgs(tc)
			if err != nil {
				return nil, err
			}
			calls = append(calls, map[string]any{
				"id":       tc.ID,
				"type":     "function",
				"function": map[string]any{"name": tc.Name, "arguments": string(text)},
			})
		}
		msg["tool_calls"] = calls
	}
	return jsonvalue.Marshal(map[string]any{
		"id":      fmt.Sprintf("chatcmpl-ctk-%d", n),
		"object":  "chat.completion",
		"created": json.Number("0"),
		"model":   gatewayModelID,
		"choices": []any{map[string]any{
			"index":         json.Number("0"),
			"message":       msg,
			"finish_reason": r.FinishReason,
		}},
	})
}

// openAIErrorBody is OpenAI's error envelope.
func openAIErrorBody(msg string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "ctk_mock_error"}})
	return b
}
