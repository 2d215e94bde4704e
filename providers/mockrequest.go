package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// mockPrompt is what the mock reads from a request, whatever its surface.
type mockPrompt struct {
	model        string
	stream       bool
	includeUsage bool // chat completions: stream_options.include_usage
	maxTokens    int  // messages: max_tokens (> 0)
	// segments is the text of the prompt (the last user message): one
	// entry per text part or block; chat completions concatenate theirs
	// into one.
	segments []string
	// toolResults holds the text of each tool result that follows the
	// prompt in the conversation.
	toolResults []string
	promptWords int // words of every text the mock reads
}

// text is the prompt's text, its segments one per line.
func (p mockPrompt) text() string { return strings.Join(p.segments, "\n") }

// parsePrompt decodes body as a request of op's wire format. Its errors
// never quote the body.
func parsePrompt(op wire.Operation, body []byte) (mockPrompt, error) {
	switch op {
	case wire.OpChatCompletions:
		return parseChatPrompt(body)
	case wire.OpResponses:
		return parseResponsesPrompt(body)
	case wire.OpMessages, wire.OpCountTokens:
		return parseMessagesPrompt(body, op == wire.OpMessages)
	}
	return mockPrompt{}, ErrUnsupported
}

// decodeStrict decodes one JSON value filling v; trailing data is an error.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

// wordCounter sums the words of texts.
type wordCounter int

func (w *wordCounter) add(texts ...string) {
	for _, t := range texts {
		*w += wordCounter(len(strings.Fields(t)))
	}
}

// textPart is a content part or block; only text-bearing ones matter.
type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// partTexts returns a content member's texts: the string itself, or the
// text of each part whose type is one of types; null and absent are none.
func partTexts(content json.RawMessage, what string, types ...string) ([]string, error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || string(content) == "null" {
		return nil, nil
	}
	if content[0] == '"' {
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return nil, fmt.Errorf("mock: %s is not a string", what)
		}
		return []string{s}, nil
	}
	var parts []textPart
	if err := json.Unmarshal(content, &parts); err != nil {
		return nil, fmt.Errorf("mock: %s is neither a string nor an array of parts", what)
	}
	var out []string
	for _, p := range parts {
		if slices.Contains(types, p.Type) {
			out = append(out, p.Text)
		}
	}
	return out, nil
}

// chatRequest is the part of a chat.completions request the mock reads.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []json.RawMessage `json:"tools"` // decoded only to reject a non-array
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// parseChatPrompt reads a chat completions request: the prompt is the last
// user message (its text parts concatenated), the tool results the "tool"
// messages after it.
func parseChatPrompt(body []byte) (mockPrompt, error) {
	var req chatRequest
	if err := decodeStrict(body, &req); err != nil {
		return mockPrompt{}, errors.New("mock: request body is not a chat completion request")
	}
	if req.Model == "" {
		return mockPrompt{}, errors.New("mock: you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return mockPrompt{}, errors.New("mock: messages must not be empty")
	}
	p := mockPrompt{model: req.Model, stream: req.Stream, includeUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage}
	var words wordCounter
	texts := make([]string, len(req.Messages))
	for i, msg := range req.Messages {
		parts, err := partTexts(msg.Content, "message content", "text")
		if err != nil {
			return mockPrompt{}, err
		}
		texts[i] = strings.Join(parts, "")
		words.add(texts[i])
	}
	p.promptWords = int(words)
	last := lastIndex(len(req.Messages), func(i int) bool { return req.Messages[i].Role == "user" })
	if last >= 0 {
		p.segments = []string{texts[last]}
	}
	for i := last + 1; i < len(req.Messages); i++ {
		if req.Messages[i].Role == "tool" {
			p.toolResults = append(p.toolResults, texts[i])
		}
	}
	return p, nil
}

// responsesRequest is the part of a Responses API request the mock reads.
type responsesRequest struct {
	Model        string            `json:"model"`
	Input        json.RawMessage   `json:"input"`
	Instructions *string           `json:"instructions"`
	Stream       bool              `json:"stream"`
	Tools        []json.RawMessage `json:"tools"` // decoded only to reject a non-array
}

// responsesItem is one input item: a message (type "message" or absent)
// or a function_call_output.
type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"`
}

// parseResponsesPrompt reads a Responses request: the prompt is the input
// string, or the input_text parts of the last user message item; the tool
// results are the function_call_output items after it.
func parseResponsesPrompt(body []byte) (mockPrompt, error) {
	var req responsesRequest
	if err := decodeStrict(body, &req); err != nil {
		return mockPrompt{}, errors.New("mock: request body is not a responses request")
	}
	if req.Model == "" {
		return mockPrompt{}, errors.New("mock: you must provide a model parameter")
	}
	p := mockPrompt{model: req.Model, stream: req.Stream}
	var words wordCounter
	if req.Instructions != nil {
		words.add(*req.Instructions)
	}
	input := bytes.TrimSpace(req.Input)
	if len(input) > 0 && input[0] == '"' {
		var s string
		if err := json.Unmarshal(input, &s); err != nil {
			return mockPrompt{}, errors.New("mock: input is not a string")
		}
		words.add(s)
		p.segments, p.promptWords = []string{s}, int(words)
		return p, nil
	}
	var items []responsesItem
	if err := json.Unmarshal(input, &items); err != nil || len(items) == 0 {
		return mockPrompt{}, errors.New("mock: input must be a string or a non-empty array of items")
	}
	texts := make([][]string, len(items))
	for i, it := range items {
		var err error
		switch it.Type {
		case "", "message":
			texts[i], err = partTexts(it.Content, "message content", "input_text", "output_text")
		case "function_call_output":
			texts[i], err = partTexts(it.Output, "function_call_output output", "input_text")
		}
		if err != nil {
			return mockPrompt{}, err
		}
		words.add(texts[i]...)
	}
	p.promptWords = int(words)
	last := lastIndex(len(items), func(i int) bool {
		return (items[i].Type == "" || items[i].Type == "message") && items[i].Role == "user"
	})
	if last >= 0 {
		p.segments = texts[last]
	}
	for i := last + 1; i < len(items); i++ {
		if items[i].Type == "function_call_output" {
			p.toolResults = append(p.toolResults, strings.Join(texts[i], "\n"))
		}
	}
	return p, nil
}

// messagesRequest is the part of a Messages API request the mock reads.
type messagesRequest struct {
	Model     string            `json:"model"`
	MaxTokens *int              `json:"max_tokens"`
	Messages  []chatMessage     `json:"messages"`
	System    json.RawMessage   `json:"system"`
	Stream    bool              `json:"stream"`
	Tools     []json.RawMessage `json:"tools"` // decoded only to reject a non-array
}

// messagesBlock is one content block; tool results carry their own content.
type messagesBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"`
}

// messagesTurn is one message's texts.
type messagesTurn struct {
	user        bool
	texts       []string // text blocks
	toolResults []string // text of each tool_result block
}

// parseMessagesPrompt reads a Messages (or count_tokens, when !needMax)
// request: the prompt is the last user message that holds no tool_result
// block (its text blocks; system excluded), the tool results the
// tool_result blocks of the user messages after it.
func parseMessagesPrompt(body []byte, needMax bool) (mockPrompt, error) {
	var req messagesRequest
	if err := decodeStrict(body, &req); err != nil {
		return mockPrompt{}, errors.New("mock: request body is not a messages request")
	}
	switch {
	case req.Model == "":
		return mockPrompt{}, errors.New("mock: model: Field required")
	case needMax && (req.MaxTokens == nil || *req.MaxTokens < 1):
		return mockPrompt{}, errors.New("mock: max_tokens: a positive integer is required")
	case len(req.Messages) == 0:
		return mockPrompt{}, errors.New("mock: messages: at least one message is required")
	}
	p := mockPrompt{model: req.Model, stream: req.Stream && needMax}
	if needMax {
		p.maxTokens = *req.MaxTokens
	}
	system, err := partTexts(req.System, "system", "text")
	if err != nil {
		return mockPrompt{}, err
	}
	var words wordCounter
	words.add(system...)
	turns := make([]messagesTurn, len(req.Messages))
	for i, msg := range req.Messages {
		if turns[i], err = parseMessagesTurn(msg); err != nil {
			return mockPrompt{}, err
		}
		words.add(turns[i].texts...)
		words.add(turns[i].toolResults...)
	}
	p.promptWords = int(words)
	last := lastIndex(len(turns), func(i int) bool { return turns[i].user && len(turns[i].toolResults) == 0 })
	if last >= 0 {
		p.segments = turns[last].texts
	}
	for _, t := range turns[last+1:] {
		if t.user {
			p.toolResults = append(p.toolResults, t.toolResults...)
		}
	}
	return p, nil
}

// parseMessagesTurn reads one message: string content is one text block.
func parseMessagesTurn(msg chatMessage) (messagesTurn, error) {
	turn := messagesTurn{user: msg.Role == "user"}
	content := bytes.TrimSpace(msg.Content)
	if len(content) > 0 && content[0] == '"' {
		var err error
		turn.texts, err = partTexts(content, "message content", "text")
		return turn, err
	}
	var blocks []messagesBlock
	if err := json.Unmarshal(content, &blocks); err != nil {
		return turn, errors.New("mock: message content is neither a string nor an array of content blocks")
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			turn.texts = append(turn.texts, b.Text)
		case "tool_result":
			texts, err := partTexts(b.Content, "tool_result content", "text")
			if err != nil {
				return turn, err
			}
			turn.toolResults = append(turn.toolResults, strings.Join(texts, "\n"))
		}
	}
	return turn, nil
}

// lastIndex returns the largest i < n for which match holds, else -1.
func lastIndex(n int, match func(int) bool) int {
	for i := n - 1; i >= 0; i-- {
		if match(i) {
			return i
		}
	}
	return -1
}
