package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The Anthropic Messages shapes below follow Anthropic's, member order
// included.

type messagesUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

type messagesObject struct {
	ID           string        `json:"id"`
	Type         string        `json:"type"`
	Role         string        `json:"role"`
	Model        string        `json:"model"`
	Content      []any         `json:"content"`
	StopReason   *string       `json:"stop_reason"`
	StopSequence *string       `json:"stop_sequence"` // always null
	Usage        messagesUsage `json:"usage"`
}

type messagesTextBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type messagesToolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type messagesStartEvent struct {
	Type    string         `json:"type"`
	Message messagesObject `json:"message"`
}

type messagesBlockStartEvent struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock any    `json:"content_block"`
}

type messagesBlockDeltaEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Delta any    `json:"delta"`
}

type messagesTextDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type messagesJSONDelta struct {
	Type        string `json:"type"`
	PartialJSON string `json:"partial_json"`
}

type messagesIndexEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

type messagesTypeEvent struct {
	Type string `json:"type"`
}

type messagesDeltaEvent struct {
	Type  string `json:"type"`
	Delta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"` // always null
	} `json:"delta"`
	Usage struct {
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

// messagesWriter serializes one reply on the Messages API.
type messagesWriter struct {
	hash, model string
	usage       mockUsage
	reply       mockReply
	stopReason  string
}

// newMessagesWriter applies max_tokens: a text reply longer than that many
// words keeps its first max_tokens words and stops with "max_tokens".
func newMessagesWriter(hash string, p mockPrompt, reply mockReply) messagesWriter {
	stop := "end_turn"
	if len(reply.toolCalls) > 0 {
		stop = "tool_use"
	} else if words := splitWords(reply.content); p.maxTokens > 0 && len(strings.Fields(reply.content)) > p.maxTokens {
		reply.content, reply.chunks, stop = strings.Join(words[:p.maxTokens], ""), 0, "max_tokens"
	}
	return messagesWriter{hash: hash, model: p.model, usage: reply.usage(p.promptWords), reply: reply, stopReason: stop}
}

func toolUseID(i int) string { return "toolu_mock_" + strconv.Itoa(i) }

// object is the message; the stream's first one has no content yet.
func (w messagesWriter) object(final bool) messagesObject {
	m := messagesObject{
		ID: "msg_mock_" + w.hash, Type: "message", Role: "assistant", Model: w.model, Content: []any{},
		Usage: messagesUsage{InputTokens: w.usage.PromptTokens, OutputTokens: 1},
	}
	if final {
		m.StopReason, m.Usage.OutputTokens = &w.stopReason, w.usage.CompletionTokens
	}
	return m
}

// message returns the non-stream body. Tool input must be a JSON object
// here: the body has no way to carry anything else.
func (w messagesWriter) message() ([]byte, error) {
	m := w.object(true)
	if len(w.reply.toolCalls) == 0 {
		m.Content = append(m.Content, messagesTextBlock{Type: "text", Text: w.reply.content})
	}
	for i, c := range w.reply.toolCalls {
		if !isJSONObject(c.args) {
			return nil, errToolInput
		}
		m.Content = append(m.Content, messagesToolUseBlock{ID: toolUseID(i), Type: "tool_use", Name: c.name, Input: json.RawMessage(c.args)})
	}
	b, err := encodeJSON(m)
	if w.reply.cut {
		b = b[:len(b)/2]
	}
	return b, err
}

// errToolInput fails a non-stream Messages reply whose /tool arguments are
// not a JSON object.
var errToolInput = errors.New("mock: /tool arguments must be a JSON object on the Messages API")

func isJSONObject(s string) bool {
	t := strings.TrimSpace(s)
	return strings.HasPrefix(t, "{") && json.Valid([]byte(t))
}

// messagesStream accumulates named SSE events.
type messagesStream struct {
	buf    bytes.Buffer
	err    error
	breaks []int // where the second, third, … text deltas start
}

func (s *messagesStream) emit(name string, v any) {
	if s.err == nil {
		s.err = writeSSE(&s.buf, name, v)
	}
}

// stream returns the SSE body: message_start, one content block per text
// or tool call (a ping after the first block opens), message_delta and
// message_stop; and the offsets where its second, third, … text deltas
// start.
func (w messagesWriter) stream() ([]byte, []int, error) {
	s := &messagesStream{}
	s.emit("message_start", messagesStartEvent{Type: "message_start", Message: w.object(false)})
	if len(w.reply.toolCalls) == 0 && !w.streamText(s) {
		return s.buf.Bytes(), s.breaks, s.err
	}
	for i := range w.reply.toolCalls {
		w.streamToolUse(s, i)
	}
	var d messagesDeltaEvent
	d.Type, d.Delta.StopReason, d.Usage.OutputTokens = "message_delta", w.stopReason, w.usage.CompletionTokens
	s.emit("message_delta", d)
	s.emit("message_stop", messagesTypeEvent{Type: "message_stop"})
	return s.buf.Bytes(), s.breaks, s.err
}

// streamText streams the text block; it reports false when the reply is
// cut, after the first half of the deltas.
func (w messagesWriter) streamText(s *messagesStream) bool {
	s.emit("content_block_start", messagesBlockStartEvent{Type: "content_block_start", ContentBlock: messagesTextBlock{Type: "text"}})
	s.emit("ping", messagesTypeEvent{Type: "ping"})
	pieces := w.reply.contentPieces()
	if w.reply.cut {
		pieces = pieces[:(len(pieces)+1)/2]
	}
	for i, p := range pieces {
		if i > 0 {
			s.breaks = append(s.breaks, s.buf.Len())
		}
		s.emit("content_block_delta", messagesBlockDeltaEvent{Type: "content_block_delta", Delta: messagesTextDelta{Type: "text_delta", Text: p}})
	}
	if w.reply.cut {
		return false
	}
	s.emit("content_block_stop", messagesIndexEvent{Type: "content_block_stop"})
	return true
}

// streamToolUse streams tool call i as content block i: input {} at the
// start, then the arguments verbatim in two or more input_json_delta
// fragments (malformed arguments reach the client as written).
func (w messagesWriter) streamToolUse(s *messagesStream, i int) {
	c := w.reply.toolCalls[i]
	s.emit("content_block_start", messagesBlockStartEvent{Type: "content_block_start", Index: i,
		ContentBlock: messagesToolUseBlock{ID: toolUseID(i), Type: "tool_use", Name: c.name, Input: json.RawMessage("{}")}})
	if i == 0 {
		s.emit("ping", messagesTypeEvent{Type: "ping"})
	}
	for _, frag := range splitEven(c.args, max(2, (utf8.RuneCountInString(c.args)+7)/8)) {
		s.emit("content_block_delta", messagesBlockDeltaEvent{Type: "content_block_delta", Index: i, Delta: messagesJSONDelta{Type: "input_json_delta", PartialJSON: frag}})
	}
	s.emit("content_block_stop", messagesIndexEvent{Type: "content_block_stop", Index: i})
}
