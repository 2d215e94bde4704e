package providers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	messageswire "github.com/hooks-gateway/hooks-gateway/internal/wire/messages"
)

// mockCreated is the fixed "created" timestamp, for deterministic bytes.
const mockCreated = 1700000000

// The wire shapes below follow OpenAI's, member order included.

type mockUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type mockCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []mockChoice `json:"choices"`
	Usage             mockUsage    `json:"usage"`
}

type mockChoice struct {
	Index        int            `json:"index"`
	Message      mockMessageOut `json:"message"`
	Logprobs     *struct{}      `json:"logprobs"` // always null
	FinishReason string         `json:"finish_reason"`
}

type mockMessageOut struct {
	Role      string            `json:"role"`
	Content   *string           `json:"content"`
	Refusal   *string           `json:"refusal"`
	ToolCalls []mockToolCallOut `json:"tool_calls,omitempty"`
}

type mockToolCallOut struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function mockFunction `json:"function"`
}

type mockFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type mockChunk struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Created           int64             `json:"created"`
	Model             string            `json:"model"`
	SystemFingerprint string            `json:"system_fingerprint"`
	Choices           []mockChunkChoice `json:"choices"`
	// Usage is absent without include_usage, else null on every chunk but
	// the last (a *mockUsage), as OpenAI sends it.
	Usage any `json:"usage,omitempty"`
}

type mockChunkChoice struct {
	Index        int       `json:"index"`
	Delta        mockDelta `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"` // always null
	FinishReason *string   `json:"finish_reason"`
}

type mockDelta struct {
	Role      string              `json:"role,omitempty"`
	Content   any                 `json:"content,omitempty"` // nil: absent; (*string)(nil): null
	ToolCalls []mockToolCallDelta `json:"tool_calls,omitempty"`
}

type mockToolCallDelta struct {
	Index    int               `json:"index"`
	ID       string            `json:"id,omitempty"`
	Type     string            `json:"type,omitempty"`
	Function mockFunctionDelta `json:"function"`
}

type mockFunctionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type mockErrorEnvelope struct {
	Error mockErrorBody `json:"error"`
}

type mockErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// mockWriter serializes one reply.
type mockWriter struct {
	id, model string
	usage     mockUsage
	withUsage bool // stream_options.include_usage
	reply     mockReply
}

// completion returns the non-stream body.
func (w mockWriter) completion() ([]byte, error) {
	msg := mockMessageOut{Role: "assistant"}
	if len(w.reply.toolCalls) == 0 {
		msg.Content = &w.reply.content
	}
	for i, c := range w.reply.toolCalls {
		msg.ToolCalls = append(msg.ToolCalls, mockToolCallOut{
			ID: callID(i), Type: "function", Function: mockFunction{Name: c.name, Arguments: c.args},
		})
	}
	b, err := encodeJSON(mockCompletion{
		ID: w.id, Object: "chat.completion", Created: mockCreated, Model: w.model, SystemFingerprint: "mock",
		Choices: []mockChoice{{Message: msg, FinishReason: w.reply.finishReason()}},
		Usage:   w.usage,
	})
	if w.reply.cut {
		b = b[:len(b)/2]
	}
	return b, err
}

// stream returns the SSE body and the offsets where its second, third, …
// text deltas start (see dripBody).
func (w mockWriter) stream() ([]byte, []int, error) {
	var buf bytes.Buffer
	var breaks []int
	emit := func(c mockChunk) error {
		b, err := encodeJSON(c)
		if err != nil {
			return err
		}
		buf.WriteString("data: ")
		buf.Write(b)
		buf.WriteString("\n\n")
		return nil
	}
	delta := func(d mockDelta) error { return emit(w.chunk(d, nil)) }

	// OpenAI opens a tool-call reply with content null, a text reply with "".
	first := mockDelta{Role: "assistant", Content: ""}
	if len(w.reply.toolCalls) > 0 {
		first.Content = (*string)(nil)
	}
	if err := delta(first); err != nil {
		return nil, nil, err
	}
	pieces := w.reply.contentPieces()
	if w.reply.cut {
		pieces = pieces[:(len(pieces)+1)/2]
	}
	for i, p := range pieces {
		if i > 0 {
			breaks = append(breaks, buf.Len())
		}
		if err := delta(mockDelta{Content: p}); err != nil {
			return nil, nil, err
		}
	}
	if w.reply.cut {
		return buf.Bytes(), breaks, nil
	}
	for i, c := range w.reply.toolCalls {
		head := mockToolCallDelta{Index: i, ID: callID(i), Type: "function", Function: mockFunctionDelta{Name: c.name}}
		if err := delta(mockDelta{ToolCalls: []mockToolCallDelta{head}}); err != nil {
			return nil, nil, err
		}
		// Several fragments, so clients must really concatenate.
		for _, frag := range splitEven(c.args, max(2, (utf8.RuneCountInString(c.args)+7)/8)) {
			part := mockToolCallDelta{Index: i, Function: mockFunctionDelta{Arguments: frag}}
			if err := delta(mockDelta{ToolCalls: []mockToolCallDelta{part}}); err != nil {
				return nil, nil, err
			}
		}
	}
	finish := w.reply.finishReason()
	if err := emit(w.chunk(mockDelta{}, &finish)); err != nil {
		return nil, nil, err
	}
	if w.withUsage {
		c := w.chunk(mockDelta{}, nil)
		c.Choices, c.Usage = []mockChunkChoice{}, &w.usage
		if err := emit(c); err != nil {
			return nil, nil, err
		}
	}
	buf.WriteString("data: [DONE]\n\n")
	return buf.Bytes(), breaks, nil
}

// chunk wraps one delta of choice 0.
func (w mockWriter) chunk(d mockDelta, finish *string) mockChunk {
	c := mockChunk{
		ID: w.id, Object: "chat.completion.chunk", Created: mockCreated, Model: w.model, SystemFingerprint: "mock",
		Choices: []mockChunkChoice{{Delta: d, FinishReason: finish}},
	}
	if w.withUsage {
		c.Usage = (*mockUsage)(nil)
	}
	return c
}

func callID(i int) string { return "call_mock_" + strconv.Itoa(i) }

// errorResponse answers with op's error envelope: OpenAI's for chat
// completions and responses (code "" encodes null), Anthropic's for
// messages and count_tokens (typed by status; typ and code unused).
func (m *Mock) errorResponse(op wire.Operation, status int, typ, message, code string) (*http.Response, error) {
	if op == wire.OpMessages || op == wire.OpCountTokens {
		return m.jsonResponse(status, anthropicErrorEnvelope{
			Type: "error", Error: anthropicErrorBody{Type: messageswire.AnthropicErrorType(status), Message: message},
		})
	}
	e := mockErrorBody{Message: message, Type: typ}
	if code != "" {
		e.Code = &code
	}
	return m.jsonResponse(status, mockErrorEnvelope{Error: e})
}

type anthropicErrorEnvelope struct {
	Type  string             `json:"type"`
	Error anthropicErrorBody `json:"error"`
}

type anthropicErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// encodeJSON marshals v without HTML escaping, so text such as "<b>"
// reaches the wire as written, and without a trailing newline.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
