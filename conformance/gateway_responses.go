package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// responsesSurface drives the OpenAI Responses API: openai-go's
// Responses.New (store false, the whole conversation as input items)
// against POST /v1/responses, an OpenAI-type upstream answering POST
// /responses.
func responsesSurface() gatewaySurface {
	return gatewaySurface{
		api:          wire.Responses,
		upstreamPath: "/responses",
		render:       responseBody,
		errorBody:    openAIErrorBody,
		newUpstream:  openAIUpstream,
		newModel: func(root string, hc *http.Client, tools []Tool) modelSeam {
			return &responsesModel{client: newOpenAIClient(root, hc), tools: responsesTools(tools)}
		},
	}
}

// responsesModel is the Responses model seam. Nothing is stored at the
// provider, so each call sends the whole transcript as input items: the
// input message, then per tool-calling turn the assistant's output message
// (when it wrote text) and its function_call items, then one
// function_call_output item per call (call_id, result or "blocked: …").
type responsesModel struct {
	client openai.Client
	tools  []responses.ToolUnionParam
	input  responses.ResponseInputParam
}

// open starts the transcript. A system input is a system message; user and
// external input are user messages.
func (m *responsesModel) open(role string, content any) error {
	text, err := messageText(content)
	if err != nil {
		return fmt.Errorf("input content: %w", err)
	}
	r := responses.EasyInputMessageRoleUser
	if role == "system" {
		r = responses.EasyInputMessageRoleSystem
	}
	m.input = responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(text, r)}
	return nil
}

// call sends the transcript to the gateway and reads the verdicted
// response back: the output messages' text (no message: null), function
// calls with their arguments decoded number-exactly, and the finish
// reason in the chat vocabulary. The output joins the transcript at once.
func (m *responsesModel) call(ctx context.Context, i int) (enforcement.ModelResponse, error) {
	res, err := m.client.Responses.New(ctx, m.params())
	if err != nil {
		return enforcement.ModelResponse{}, modelCallError(i, err)
	}
	return m.absorb(i, res)
}

// params is the request for the next call: the whole transcript, no
// storage at the provider.
func (m *responsesModel) params() responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model: gatewayModelID,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: m.input},
		Tools: m.tools,
		Store: param.NewOpt(false),
	}
}

// absorb reads the verdicted response of call i and adds its output to
// the transcript.
func (m *responsesModel) absorb(i int, res *responses.Response) (enforcement.ModelResponse, error) {
	var resp enforcement.ModelResponse
	for k, item := range res.Output {
		switch item.Type {
		case "message":
			text, err := outputMessageText(item.AsMessage())
			if err != nil {
				return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: output[%d]: %w", i, k, err)
			}
			prev, _ := resp.Content.(string)
			resp.Content = prev + text
			m.input = append(m.input, responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleAssistant))
		case "function_call":
			fc := item.AsFunctionCall()
			args, err := jsonvalue.Decode([]byte(fc.Arguments))
			if err != nil {
				return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: output[%d].arguments: %w", i, k, err)
			}
			resp.ToolCalls = append(resp.ToolCalls, enforcement.ToolCall{ID: fc.CallID, Name: fc.Name, Args: args})
			m.input = append(m.input, responses.ResponseInputItemParamOfFunctionCall(fc.Arguments, fc.CallID, fc.Name))
		default:
			return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: output[%d] has type %q, want message or function_call", i, k, item.Type)
		}
	}
	reason, err := responsesFinishReason(res, len(resp.ToolCalls) > 0)
	if err != nil {
		return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: %w", i, err)
	}
	resp.FinishReason = reason
	return resp, nil
}

// outputMessageText is the text of an output message: its output_text
// parts in order. A refusal has no place in the reference transcript.
func outputMessageText(msg responses.ResponseOutputMessage) (string, error) {
	var text string
	for k, part := range msg.Content {
		if part.Type != "output_text" {
			return "", fmt.Errorf("content[%d] has type %q, want output_text", k, part.Type)
		}
		text += part.Text
	}
	return text, nil
}

// responsesFinishReason is a response's status in the chat vocabulary, as
// the projection's finish_reason reads it.
func responsesFinishReason(res *responses.Response, calls bool) (string, error) {
	switch {
	case res.Status == responses.ResponseStatusCompleted && calls:
		return "tool_calls", nil
	case res.Status == responses.ResponseStatusCompleted:
		return "stop", nil
	case res.Status == responses.ResponseStatusIncomplete && res.IncompleteDetails.Reason == "max_output_tokens":
		return "length", nil
	case res.Status == responses.ResponseStatusIncomplete && res.IncompleteDetails.Reason == "content_filter":
		return "content_filter", nil
	}
	return "", fmt.Errorf("the response has status %q (incomplete reason %q)", res.Status, res.IncompleteDetails.Reason)
}

func (m *responsesModel) toolMessage(tc enforcement.ToolCall, content any) error {
	text, err := messageText(content)
	if err != nil {
		return fmt.Errorf("tool %s result: %w", tc.Name, err)
	}
	item := responses.ResponseInputItemParamOfFunctionCallOutput(text)
	item.OfFunctionCallOutput.CallID = param.NewOpt(tc.ID)
	m.input = append(m.input, item)
	return nil
}

// closeTurn has nothing to add: the output items went in with the
// response.
func (m *responsesModel) closeTurn(enforcement.ModelResponse) {}

// responsesTools declares the scenario's tools as function tools taking
// an open object (see openAITools).
func responsesTools(tools []Tool) []responses.ToolUnionParam {
	if len(tools) == 0 {
		return nil
	}
	out := make([]responses.ToolUnionParam, 0, len(tools))
	for _, t := range tools {
		out = append(out, responses.ToolParamOfFunction(t.Name, map[string]any{"type": "object"}, false))
	}
	return out
}

// responseBody renders a scripted response as a Responses API response:
// an output message with one output_text part when content is a string
// (null content: no message), then one function_call item per tool call
// (call_id the scripted id, arguments the exact JSON text of the args).
// finish_reason maps onto status: stop and tool_calls are completed (the
// function_call items say which), length is incomplete with reason
// max_output_tokens, content_filter incomplete with reason content_filter.
func responseBody(n int, r Response) ([]byte, error) {
	obj, err := responseObject(n, r)
	if err != nil {
		return nil, err
	}
	return jsonvalue.Marshal(obj)
}

// responseObject is the response object responseBody renders; the
// streamed answer's terminal event carries it too.
func responseObject(n int, r Response) (map[string]any, error) {
	status, incomplete, err := responsesStatus(r.FinishReason)
	if err != nil {
		return nil, err
	}
	output := make([]any, 0, 1+len(r.ToolCalls))
	switch c := r.Content.(type) {
	case nil:
	case string:
		output = append(output, responseMessageItem(n, c, "completed"))
	default:
		return nil, fmt.Errorf("content is a %T; the Responses upstream renders text or null", c)
	}
	for k, tc := range r.ToolCalls {
		item, err := responseCallItem(n, k, tc, "completed")
		if err != nil {
			return nil, err
		}
		output = append(output, item)
	}
	return map[string]any{
		"id":                 fmt.Sprintf("resp_ctk_%d", n),
		"object":             "response",
		"created_at":         json.Number("0"),
		"model":              gatewayModelID,
		"status":             status,
		"incomplete_details": incomplete,
		"output":             output,
	}, nil
}

// responseMessageItem is the output message of call n holding text, in
// status; in_progress is the empty item a stream adds first.
func responseMessageItem(n int, text, status string) map[string]any {
	content := []any{}
	if status == "completed" {
		content = []any{responseTextPart(text)}
	}
	return map[string]any{
		"type": "message", "id": fmt.Sprintf("msg_ctk_%d", n), "role": "assistant", "status": status,
		"content": content,
	}
}

// responseTextPart is an output_text part holding text.
func responseTextPart(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
}

// responseCallItem is the k-th function_call item of call n, in status;
// in_progress is the item a stream adds first, its arguments empty.
func responseCallItem(n, k int, tc ToolCall, status string) (map[string]any, error) {
	text, err := scriptedArgs(tc)
	if err != nil {
		return nil, err
	}
	args := string(text)
	if status != "completed" {
		args = ""
	}
	return map[string]any{
		"type": "function_call", "id": fmt.Sprintf("fc_ctk_%d_%d", n, k), "call_id": tc.ID,
		"name": tc.Name, "arguments": args, "status": status,
	}, nil
}

// responsesStatus maps a scripted finish_reason onto a response's status
// and incomplete_details.
func responsesStatus(finish string) (string, any, error) {
	switch finish {
	case "stop", "tool_calls":
		return "completed", nil, nil
	case "length":
		return "incomplete", map[string]any{"reason": "max_output_tokens"}, nil
	case "content_filter":
		return "incomplete", map[string]any{"reason": "content_filter"}, nil
	}
	return "", nil, fmt.Errorf("finish_reason %q has no Responses status", finish)
}
