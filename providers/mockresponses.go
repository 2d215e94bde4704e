package providers

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The Responses API shapes below follow OpenAI's, member order included.
// Members the mock has no value for carry the API's defaults.

type responsesUsage struct {
	InputTokens         int            `json:"input_tokens"`
	InputTokensDetails  cachedTokens   `json:"input_tokens_details"`
	OutputTokens        int            `json:"output_tokens"`
	OutputTokensDetails reasoningTkens `json:"output_tokens_details"`
	TotalTokens         int            `json:"total_tokens"`
}

type cachedTokens struct {
	CachedTokens int `json:"cached_tokens"`
}

type reasoningTkens struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

type responsesObject struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	CreatedAt         int64           `json:"created_at"`
	Status            string          `json:"status"`
	Error             *struct{}       `json:"error"`              // always null
	IncompleteDetails *struct{}       `json:"incomplete_details"` // always null
	Instructions      *string         `json:"instructions"`       // always null
	Metadata          struct{}        `json:"metadata"`
	Model             string          `json:"model"`
	Output            []any           `json:"output"`
	ParallelToolCalls bool            `json:"parallel_tool_calls"`
	Temperature       float64         `json:"temperature"`
	ToolChoice        string          `json:"tool_choice"`
	Tools             []struct{}      `json:"tools"`
	TopP              float64         `json:"top_p"`
	Usage             *responsesUsage `json:"usage"`
}

type responsesMessageItem struct {
	ID      string              `json:"id"`
	Type    string              `json:"type"`
	Status  string              `json:"status"`
	Content []responsesTextPart `json:"content"`
	Role    string              `json:"role"`
}

type responsesTextPart struct {
	Type        string     `json:"type"`
	Annotations []struct{} `json:"annotations"`
	Logprobs    []struct{} `json:"logprobs"`
	Text        string     `json:"text"`
}

type responsesFunctionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	// Namespace is set for a call into a namespace tool (a tool name
	// "NAMESPACE.NAME" of the directive), as Codex declares MCP tools.
	Namespace string `json:"namespace,omitempty"`
}

type responsesLifecycleEvent struct {
	Type           string           `json:"type"`
	SequenceNumber int              `json:"sequence_number"`
	Response       *responsesObject `json:"response"`
}

type responsesItemEvent struct {
	Type           string `json:"type"`
	SequenceNumber int    `json:"sequence_number"`
	OutputIndex    int    `json:"output_index"`
	Item           any    `json:"item"`
}

type responsesPartEvent struct {
	Type           string            `json:"type"`
	SequenceNumber int               `json:"sequence_number"`
	ItemID         string            `json:"item_id"`
	OutputIndex    int               `json:"output_index"`
	ContentIndex   int               `json:"content_index"`
	Part           responsesTextPart `json:"part"`
}

type responsesTextDeltaEvent struct {
	Type           string     `json:"type"`
	SequenceNumber int        `json:"sequence_number"`
	ItemID         string     `json:"item_id"`
	OutputIndex    int        `json:"output_index"`
	ContentIndex   int        `json:"content_index"`
	Delta          string     `json:"delta"`
	Logprobs       []struct{} `json:"logprobs"`
}

type responsesTextDoneEvent struct {
	Type           string     `json:"type"`
	SequenceNumber int        `json:"sequence_number"`
	ItemID         string     `json:"item_id"`
	OutputIndex    int        `json:"output_index"`
	ContentIndex   int        `json:"content_index"`
	Text           string     `json:"text"`
	Logprobs       []struct{} `json:"logprobs"`
}

type responsesArgsDeltaEvent struct {
	Type           string `json:"type"`
	SequenceNumber int    `json:"sequence_number"`
	ItemID         string `json:"item_id"`
	OutputIndex    int    `json:"output_index"`
	Delta          string `json:"delta"`
}

type responsesArgsDoneEvent struct {
	Type           string `json:"type"`
	SequenceNumber int    `json:"sequence_number"`
	ItemID         string `json:"item_id"`
	OutputIndex    int    `json:"output_index"`
	Arguments      string `json:"arguments"`
}

// responsesWriter serializes one reply on the Responses API.
type responsesWriter struct {
	hash, model string
	usage       mockUsage
	reply       mockReply
}

func (w responsesWriter) messageID() string { return "msg_mock_" + w.hash }

func (w responsesWriter) functionCallID(i int) string {
	return "fc_mock_" + w.hash + "_" + strconv.Itoa(i)
}

// object is the response object; final ones carry output and usage.
func (w responsesWriter) object(final bool) *responsesObject {
	o := &responsesObject{
		ID: "resp_mock_" + w.hash, Object: "response", CreatedAt: mockCreated, Status: "in_progress",
		Model: w.model, Output: []any{}, ParallelToolCalls: true, Temperature: 1, ToolChoice: "auto",
		Tools: []struct{}{}, TopP: 1,
	}
	if final {
		o.Status, o.Output = "completed", w.output()
		o.Usage = &responsesUsage{InputTokens: w.usage.PromptTokens, OutputTokens: w.usage.CompletionTokens, TotalTokens: w.usage.TotalTokens}
	}
	return o
}

// output lists the reply's items: one message, or one function call per
// tool call.
func (w responsesWriter) output() []any {
	if len(w.reply.toolCalls) == 0 {
		return []any{w.messageItem("completed", w.reply.content)}
	}
	out := make([]any, len(w.reply.toolCalls))
	for i, c := range w.reply.toolCalls {
		out[i] = w.functionCallItem(i, "completed", c.args)
	}
	return out
}

func (w responsesWriter) messageItem(status, text string) responsesMessageItem {
	item := responsesMessageItem{ID: w.messageID(), Type: "message", Status: status, Content: []responsesTextPart{}, Role: "assistant"}
	if status == "completed" {
		item.Content = append(item.Content, outputText(text))
	}
	return item
}

func (w responsesWriter) functionCallItem(i int, status, args string) responsesFunctionCallItem {
	item := responsesFunctionCallItem{
		ID: w.functionCallID(i), Type: "function_call", Status: status,
		Arguments: args, CallID: callID(i), Name: w.reply.toolCalls[i].name,
	}
	// A function name has no '.', so one in the directive's name splits
	// a namespace off (the gateway projects such a call the same way).
	if ns, name, ok := strings.Cut(item.Name, "."); ok && ns != "" && name != "" {
		item.Namespace, item.Name = ns, name
	}
	return item
}

func outputText(text string) responsesTextPart {
	return responsesTextPart{Type: "output_text", Annotations: []struct{}{}, Logprobs: []struct{}{}, Text: text}
}

// response returns the non-stream body.
func (w responsesWriter) response() ([]byte, error) {
	b, err := encodeJSON(w.object(true))
	if w.reply.cut {
		b = b[:len(b)/2]
	}
	return b, err
}

// responsesStream accumulates typed SSE events with their sequence numbers.
type responsesStream struct {
	buf    bytes.Buffer
	seq    int
	err    error
	breaks []int // where the second, third, … text deltas start
}

// emit writes one event; build receives the event's sequence number.
func (s *responsesStream) emit(name string, build func(seq int) any) {
	if s.err != nil {
		return
	}
	s.err = writeSSE(&s.buf, name, build(s.seq))
	s.seq++
}

// stream returns the SSE body (created, in_progress, the items, completed)
// and the offsets where its second, third, … text deltas start.
func (w responsesWriter) stream() ([]byte, []int, error) {
	s := &responsesStream{}
	for _, name := range []string{"response.created", "response.in_progress"} {
		s.emit(name, func(seq int) any {
			return responsesLifecycleEvent{Type: name, SequenceNumber: seq, Response: w.object(false)}
		})
	}
	if len(w.reply.toolCalls) == 0 {
		if !w.streamMessage(s) {
			return s.buf.Bytes(), s.breaks, s.err
		}
	}
	for i := range w.reply.toolCalls {
		w.streamFunctionCall(s, i)
	}
	s.emit("response.completed", func(seq int) any {
		return responsesLifecycleEvent{Type: "response.completed", SequenceNumber: seq, Response: w.object(true)}
	})
	return s.buf.Bytes(), s.breaks, s.err
}

// streamMessage streams the text item; it reports false when the reply is
// cut, after the first half of the deltas.
func (w responsesWriter) streamMessage(s *responsesStream) bool {
	id := w.messageID()
	s.emit("response.output_item.added", func(seq int) any {
		return responsesItemEvent{Type: "response.output_item.added", SequenceNumber: seq, Item: w.messageItem("in_progress", "")}
	})
	s.emit("response.content_part.added", func(seq int) any {
		return responsesPartEvent{Type: "response.content_part.added", SequenceNumber: seq, ItemID: id, Part: outputText("")}
	})
	pieces := w.reply.contentPieces()
	if w.reply.cut {
		pieces = pieces[:(len(pieces)+1)/2]
	}
	for i, p := range pieces {
		if i > 0 {
			s.breaks = append(s.breaks, s.buf.Len())
		}
		s.emit("response.output_text.delta", func(seq int) any {
			return responsesTextDeltaEvent{Type: "response.output_text.delta", SequenceNumber: seq, ItemID: id, Delta: p, Logprobs: []struct{}{}}
		})
	}
	if w.reply.cut {
		return false
	}
	text := w.reply.content
	s.emit("response.output_text.done", func(seq int) any {
		return responsesTextDoneEvent{Type: "response.output_text.done", SequenceNumber: seq, ItemID: id, Text: text, Logprobs: []struct{}{}}
	})
	s.emit("response.content_part.done", func(seq int) any {
		return responsesPartEvent{Type: "response.content_part.done", SequenceNumber: seq, ItemID: id, Part: outputText(text)}
	})
	s.emit("response.output_item.done", func(seq int) any {
		return responsesItemEvent{Type: "response.output_item.done", SequenceNumber: seq, Item: w.messageItem("completed", text)}
	})
	return true
}

// streamFunctionCall streams tool call i as output item i, its arguments
// in two or more fragments so clients must really concatenate.
func (w responsesWriter) streamFunctionCall(s *responsesStream, i int) {
	id, args := w.functionCallID(i), w.reply.toolCalls[i].args
	s.emit("response.output_item.added", func(seq int) any {
		return responsesItemEvent{Type: "response.output_item.added", SequenceNumber: seq, OutputIndex: i, Item: w.functionCallItem(i, "in_progress", "")}
	})
	for _, frag := range splitEven(args, max(2, (utf8.RuneCountInString(args)+7)/8)) {
		s.emit("response.function_call_arguments.delta", func(seq int) any {
			return responsesArgsDeltaEvent{Type: "response.function_call_arguments.delta", SequenceNumber: seq, ItemID: id, OutputIndex: i, Delta: frag}
		})
	}
	s.emit("response.function_call_arguments.done", func(seq int) any {
		return responsesArgsDoneEvent{Type: "response.function_call_arguments.done", SequenceNumber: seq, ItemID: id, OutputIndex: i, Arguments: args}
	})
	s.emit("response.output_item.done", func(seq int) any {
		return responsesItemEvent{Type: "response.output_item.done", SequenceNumber: seq, OutputIndex: i, Item: w.functionCallItem(i, "completed", args)}
	})
}

// writeSSE appends one named event whose data is v's JSON.
func writeSSE(buf *bytes.Buffer, name string, v any) error {
	b, err := encodeJSON(v)
	if err != nil {
		return err
	}
	buf.WriteString("event: ")
	buf.WriteString(name)
	buf.WriteString("\ndata: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	return nil
}
