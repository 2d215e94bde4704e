package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// messagesStream builds a Messages event stream: every event named by
// its type, as Anthropic streams them (the SDKs skip unnamed events).
type messagesStream struct {
	events []sseEvent
	err    error
}

func (s *messagesStream) add(typ string, members map[string]any) {
	if s.err != nil {
		return
	}
	members["type"] = typ
	b, err := jsonvalue.Marshal(members)
	if err != nil {
		s.err = fmt.Errorf("%s event: %w", typ, err)
		return
	}
	s.events = append(s.events, sseEvent{name: typ, data: b})
}

// messagesStreamEvents renders a scripted response as a Messages event
// stream: message_start with no content; for string content a text block
// started, one text_delta per stream chunk (or the whole content),
// stopped; each tool call as a tool_use block whose input arrives as one
// input_json_delta of the args' exact JSON text; then message_delta with
// the stop reason and message_stop. A truncated stream ends after its
// text deltas.
func messagesStreamEvents(n int, r Response) ([]sseEvent, bool, error) {
	stop, err := messagesStopReason(r.FinishReason)
	if err != nil {
		return nil, false, err
	}
	s := &messagesStream{}
	s.add("message_start", map[string]any{"message": map[string]any{
		"id": fmt.Sprintf("msg_ctk_%d", n), "type": "message", "role": "assistant", "model": gatewayModelID,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": json.Number("0"), "output_tokens": json.Number("0")},
	}})
	index := 0
	block := func(start map[string]any, deltas []map[string]any) {
		at := json.Number(fmt.Sprint(index))
		s.add("content_block_start", map[string]any{"index": at, "content_block": start})
		for _, d := range deltas {
			s.add("content_block_delta", map[string]any{"index": at, "delta": d})
		}
	}
	if _, ok := r.Content.(string); ok {
		var deltas []map[string]any
		for _, p := range streamParts(r) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": p})
		}
		block(map[string]any{"type": "text", "text": ""}, deltas)
		if r.StreamTruncated {
			return s.events, true, s.err
		}
		s.add("content_block_stop", map[string]any{"index": json.Number(fmt.Sprint(index))})
		index++
	} else if r.StreamTruncated {
		return s.events, true, s.err
	}
	for _, tc := range r.ToolCalls {
		text, err := scriptedArgs(tc)
		if err != nil {
			return nil, false, err
		}
		block(map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}},
			[]map[string]any{{"type": "input_json_delta", "partial_json": string(text)}})
		s.add("content_block_stop", map[string]any{"index": json.Number(fmt.Sprint(index))})
		index++
	}
	s.add("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": json.Number("0")},
	})
	s.add("message_stop", map[string]any{})
	return s.events, false, s.err
}

// streamingMessagesModel is the Messages model seam over
// anthropic-sdk-go's streaming client (Messages.NewStreaming, assembled
// with Message.Accumulate): the released text is the text deltas the
// client received, and only that joins the transcript when a stream is
// blocked.
type streamingMessagesModel struct {
	messagesModel
	released strings.Builder
}

// call streams the message. An error event is the gateway ending the
// stream with a verdict; an error answer is one before it streamed.
func (m *streamingMessagesModel) call(ctx context.Context, i int) (enforcement.ModelResponse, error) {
	stream := m.client.Messages.NewStreaming(ctx, m.params())
	defer stream.Close()
	var msg anthropic.Message
	var partial strings.Builder
	var accErr error
	stopped := false
	for accErr == nil && stream.Next() {
		ev := stream.Current()
		accErr = msg.Accumulate(ev)
		switch {
		case ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta":
			partial.WriteString(ev.Delta.Text)
		case ev.Type == "message_stop":
			stopped = true
		}
	}
	m.released.WriteString(partial.String())
	if err := stream.Err(); err != nil {
		if partial.Len() > 0 {
			m.messages = append(m.messages, anthropic.NewAssistantMessage(anthropic.NewTextBlock(partial.String())))
		}
		return enforcement.ModelResponse{}, anthropicCallError(i, err)
	}
	switch {
	case accErr != nil:
		return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: the gateway's stream does not assemble: %w", i, accErr)
	case !stopped:
		return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: the gateway's stream ended without message_stop", i)
	}
	return m.absorb(i, &msg)
}

// releasedOutput and persisted feed the RunRecord's incremental fields.
func (m *streamingMessagesModel) releasedOutput() string { return m.released.String() }

func (m *streamingMessagesModel) persisted() (string, error) {
	b, err := json.Marshal(struct {
		System   []anthropic.TextBlockParam `json:"system,omitempty"`
		Messages []anthropic.MessageParam   `json:"messages"`
	}{m.system, m.messages})
	return string(b), err
}
