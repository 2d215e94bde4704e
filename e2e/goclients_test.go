package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// toolCall is one tool call as a client assembled it.
type toolCall struct {
	ID, Name, Args string
}

// streamed is what a client saw of one streamed answer: every text delta
// in order, the text it assembled and the tool calls it assembled; when
// the first delta arrived and when the stream ended (its end or its
// error); and the response headers.
type streamed struct {
	Deltas     []string
	Text       string
	Calls      []toolCall
	FirstDelta time.Time
	End        time.Time
	Header     http.Header
}

// delta records one text delta as it arrives.
func (s *streamed) delta(d string) {
	if s.FirstDelta.IsZero() {
		s.FirstDelta = time.Now()
	}
	s.Deltas = append(s.Deltas, d)
}

// ended records the end of the stream and its response's headers.
func (s *streamed) ended(resp *http.Response) {
	s.End = time.Now()
	if resp != nil {
		s.Header = resp.Header
	}
}

// agentClient is one official SDK on one API surface, reduced to what the
// scenarios need. Every call declares the test's tools.
type agentClient interface {
	// complete sends prompt as the user turn and returns the answer's
	// text and tool calls.
	complete(ctx context.Context, prompt string) (string, []toolCall, error)
	// stream sends prompt with streaming on and returns what arrived
	// (also on error, so the test can check nothing leaked).
	stream(ctx context.Context, prompt string) (streamed, error)
	// answerTool sends the conversation prompt → call → result and returns
	// the final answer's text (streamed when stream is set).
	answerTool(ctx context.Context, prompt string, call toolCall, result string, stream bool) (string, error)
	// api is the surface the client speaks.
	api() wire.API
}

// errorStatus returns the HTTP status of an SDK error, 0 when the error
// did not come from an HTTP error response (an in-stream error event).
func errorStatus(err error) int {
	var oe *openai.Error
	if errors.As(err, &oe) {
		return oe.StatusCode
	}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		return ae.StatusCode
	}
	return 0
}

// errorText is everything an SDK error tells the application: its message
// and, for an HTTP error, the error body (openai-go's Error() leaves the
// body out).
func errorText(err error) string {
	var oe *openai.Error
	if errors.As(err, &oe) {
		return err.Error() + " " + oe.RawJSON()
	}
	return err.Error()
}

// toolSchemas are the test's tools: name → JSON schema properties.
var toolSchemas = []struct {
	name       string
	properties map[string]any
}{
	{weatherTool, map[string]any{"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}}},
	{searchTool, map[string]any{"query": map[string]any{"type": "string"}, "limit": map[string]any{"type": "integer"}, "debug": map[string]any{"type": "boolean"}}},
	{"shell", map[string]any{"command": map[string]any{"type": "string"}}},
}

// objectSchema is the JSON schema of an object with props.
func objectSchema(props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props}
}

// ---- openai-go, chat completions ----

type chatClient struct{ c openai.Client }

func (chatClient) api() wire.API { return wire.ChatCompletions }

func newChatClient(root string) agentClient {
	return chatClient{openai.NewClient(option.WithBaseURL(root+"/v1"), option.WithAPIKey("unused-with-the-mock"), option.WithMaxRetries(0))}
}

func (c chatClient) params(msgs ...openai.ChatCompletionMessageParamUnion) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{Model: "mock", Messages: msgs}
	for _, s := range toolSchemas {
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: s.name, Parameters: objectSchema(s.properties),
		}))
	}
	return p
}

func chatCalls(m openai.ChatCompletionMessage) []toolCall {
	var out []toolCall
	for _, tc := range m.ToolCalls {
		out = append(out, toolCall{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
	}
	return out
}

func (c chatClient) complete(ctx context.Context, prompt string) (string, []toolCall, error) {
	resp, err := c.c.Chat.Completions.New(ctx, c.params(openai.UserMessage(prompt)))
	if err != nil {
		return "", nil, err
	}
	return resp.Choices[0].Message.Content, chatCalls(resp.Choices[0].Message), nil
}

func (c chatClient) streamParams(ctx context.Context, p openai.ChatCompletionNewParams) (streamed, error) {
	var resp *http.Response
	s := c.c.Chat.Completions.NewStreaming(ctx, p, option.WithResponseInto(&resp))
	defer s.Close()
	var out streamed
	acc := openai.ChatCompletionAccumulator{}
	for s.Next() {
		ch := s.Current()
		acc.AddChunk(ch)
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			out.delta(ch.Choices[0].Delta.Content)
		}
	}
	out.ended(resp)
	if err := s.Err(); err != nil {
		return out, err
	}
	if len(acc.Choices) == 0 {
		return out, errors.New("the stream assembled no choice")
	}
	out.Text, out.Calls = acc.Choices[0].Message.Content, chatCalls(acc.Choices[0].Message)
	return out, nil
}

func (c chatClient) stream(ctx context.Context, prompt string) (streamed, error) {
	return c.streamParams(ctx, c.params(openai.UserMessage(prompt)))
}

func (c chatClient) answerTool(ctx context.Context, prompt string, call toolCall, result string, stream bool) (string, error) {
	asst := openai.ChatCompletionAssistantMessageParam{ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{
		OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
			ID:       call.ID,
			Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: call.Name, Arguments: call.Args},
		},
	}}}
	p := c.params(openai.UserMessage(prompt),
		openai.ChatCompletionMessageParamUnion{OfAssistant: &asst},
		openai.ToolMessage(result, call.ID))
	if stream {
		s, err := c.streamParams(ctx, p)
		if err == nil && len(s.Calls) > 0 {
			err = errors.New("the answer to a tool result is another tool call")
		}
		return s.Text, err
	}
	resp, err := c.c.Chat.Completions.New(ctx, p)
	if err != nil {
		return "", err
	}
	if len(resp.Choices[0].Message.ToolCalls) > 0 {
		return "", errors.New("the answer to a tool result is another tool call")
	}
	return resp.Choices[0].Message.Content, nil
}

// ---- openai-go, responses ----

type responsesClient struct{ c openai.Client }

func (responsesClient) api() wire.API { return wire.Responses }

func newResponsesClient(root string) agentClient {
	return responsesClient{openai.NewClient(option.WithBaseURL(root+"/v1"), option.WithAPIKey("unused-with-the-mock"), option.WithMaxRetries(0))}
}

func (c responsesClient) params(input responses.ResponseInputParam) responses.ResponseNewParams {
	p := responses.ResponseNewParams{
		Model: "mock",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
		// Stateless, as an agent behind a gateway runs: the whole
		// conversation travels with each request.
		Store: openai.Bool(false),
	}
	for _, s := range toolSchemas {
		p.Tools = append(p.Tools, responses.ToolParamOfFunction(s.name, objectSchema(s.properties), false))
	}
	return p
}

func userInput(prompt string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemParamOfMessage(prompt, responses.EasyInputMessageRoleUser)
}

func responseResult(r *responses.Response) (string, []toolCall) {
	var calls []toolCall
	for _, item := range r.Output {
		if item.Type == "function_call" {
			fc := item.AsFunctionCall()
			calls = append(calls, toolCall{ID: fc.CallID, Name: fc.Name, Args: fc.Arguments})
		}
	}
	return r.OutputText(), calls
}

func (c responsesClient) complete(ctx context.Context, prompt string) (string, []toolCall, error) {
	r, err := c.c.Responses.New(ctx, c.params(responses.ResponseInputParam{userInput(prompt)}))
	if err != nil {
		return "", nil, err
	}
	text, calls := responseResult(r)
	return text, calls, nil
}

func (c responsesClient) streamParams(ctx context.Context, p responses.ResponseNewParams) (streamed, error) {
	var resp *http.Response
	s := c.c.Responses.NewStreaming(ctx, p, option.WithResponseInto(&resp))
	defer s.Close()
	var out streamed
	var final *responses.Response
	for s.Next() {
		ev := s.Current()
		switch ev.Type {
		case "response.output_text.delta":
			out.delta(ev.Delta)
		case "response.completed":
			r := ev.AsResponseCompleted().Response
			final = &r
		case "error", "response.failed":
			out.ended(resp)
			return out, fmt.Errorf("stream event %s: %s", ev.Type, ev.RawJSON())
		}
	}
	out.ended(resp)
	if err := s.Err(); err != nil {
		return out, err
	}
	if final == nil {
		return out, errors.New("the stream ended without response.completed")
	}
	out.Text, out.Calls = responseResult(final)
	return out, nil
}

func (c responsesClient) stream(ctx context.Context, prompt string) (streamed, error) {
	return c.streamParams(ctx, c.params(responses.ResponseInputParam{userInput(prompt)}))
}

func (c responsesClient) answerTool(ctx context.Context, prompt string, call toolCall, result string, stream bool) (string, error) {
	out := responses.ResponseInputItemParamOfFunctionCallOutput(result)
	out.OfFunctionCallOutput.CallID = openai.String(call.ID)
	p := c.params(responses.ResponseInputParam{
		userInput(prompt),
		responses.ResponseInputItemParamOfFunctionCall(call.Args, call.ID, call.Name),
		out,
	})
	if stream {
		s, err := c.streamParams(ctx, p)
		if err == nil && len(s.Calls) > 0 {
			err = errors.New("the answer to a tool result is another tool call")
		}
		return s.Text, err
	}
	r, err := c.c.Responses.New(ctx, p)
	if err != nil {
		return "", err
	}
	text, calls := responseResult(r)
	if len(calls) > 0 {
		return "", errors.New("the answer to a tool result is another tool call")
	}
	return text, nil
}

// ---- anthropic-sdk-go, messages ----

type messagesClient struct{ c anthropic.Client }

func (messagesClient) api() wire.API { return wire.Messages }

func newMessagesClient(root string) agentClient {
	return messagesClient{anthropic.NewClient(aoption.WithBaseURL(root), aoption.WithAPIKey("unused-with-the-mock"), aoption.WithMaxRetries(0))}
}

func (c messagesClient) params(msgs ...anthropic.MessageParam) anthropic.MessageNewParams {
	p := anthropic.MessageNewParams{Model: "mock", MaxTokens: 1024, Messages: msgs}
	for _, s := range toolSchemas {
		p.Tools = append(p.Tools, anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{Properties: s.properties}, s.name))
	}
	return p
}

func messageResult(m *anthropic.Message) (string, []toolCall) {
	var text strings.Builder
	var calls []toolCall
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.AsText().Text)
		case "tool_use":
			tu := b.AsToolUse()
			calls = append(calls, toolCall{ID: tu.ID, Name: tu.Name, Args: string(tu.Input)})
		}
	}
	return text.String(), calls
}

func (c messagesClient) complete(ctx context.Context, prompt string) (string, []toolCall, error) {
	m, err := c.c.Messages.New(ctx, c.params(anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))))
	if err != nil {
		return "", nil, err
	}
	text, calls := messageResult(m)
	return text, calls, nil
}

func (c messagesClient) streamParams(ctx context.Context, p anthropic.MessageNewParams) (streamed, error) {
	var resp *http.Response
	s := c.c.Messages.NewStreaming(ctx, p, aoption.WithResponseInto(&resp))
	defer s.Close()
	var out streamed
	var msg anthropic.Message
	for s.Next() {
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			out.ended(resp)
			return out, fmt.Errorf("accumulate: %w", err)
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
			out.delta(ev.Delta.Text)
		}
	}
	out.ended(resp)
	if err := s.Err(); err != nil {
		return out, err
	}
	if msg.StopReason == "" {
		return out, errors.New("the stream ended without a stop reason")
	}
	out.Text, out.Calls = messageResult(&msg)
	return out, nil
}

func (c messagesClient) stream(ctx context.Context, prompt string) (streamed, error) {
	return c.streamParams(ctx, c.params(anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))))
}

func (c messagesClient) answerTool(ctx context.Context, prompt string, call toolCall, result string, stream bool) (string, error) {
	p := c.params(
		anthropic.NewUserMessage(anthropic.NewTextBlock(prompt)),
		anthropic.NewAssistantMessage(anthropic.NewToolUseBlock(call.ID, rawJSON(call.Args), call.Name)),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(call.ID, result, false)),
	)
	if stream {
		s, err := c.streamParams(ctx, p)
		if err == nil && len(s.Calls) > 0 {
			err = errors.New("the answer to a tool result is another tool call")
		}
		return s.Text, err
	}
	m, err := c.c.Messages.New(ctx, p)
	if err != nil {
		return "", err
	}
	text, calls := messageResult(m)
	if len(calls) > 0 {
		return "", errors.New("the answer to a tool result is another tool call")
	}
	return text, nil
}

// rawJSON marshals as its bytes: the tool_use input goes back verbatim.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// deniedStatus is the status of a deny the gateway answers before any byte
// of the response: 403, and 451 on the Messages surface (whose clients
// show a 403 as an authentication failure).
func deniedStatus(c agentClient) int {
	if c.api() == wire.Messages {
		return http.StatusUnavailableForLegalReasons
	}
	return http.StatusForbidden
}
