package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3/responses"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// responsesStream builds a Responses event stream: every event named by
// its type and numbered in order, as OpenAI streams them.
type responsesStream struct {
	events []sseEvent
	err    error
}

func (s *responsesStream) add(typ string, members map[string]any) {
	if s.err != nil {
		return
	}
	members["type"] = typ
	members["sequence_number"] = json.Number(fmt.Sprint(len(s.events)))
	b, err := jsonvalue.Marshal(members)
	if err != nil {
		s.err = fmt.Errorf("%s event: %w", typ, err)
		return
	}
	s.events = append(s.events, sseEvent{name: typ, data: b})
}

// responsesStreamEvents renders a scripted response as a Responses event
// stream: response.created; for string content the message item added,
// its output_text part added, one response.output_text.delta per stream
// chunk (or the whole content), the text, part and item done; each tool
// call as a function_call item added, its arguments in one delta, done;
// then response.completed (response.incomplete for length and
// content_filter) carrying the whole response object. A truncated stream
// ends after its text deltas.
func responsesStreamEvents(n int, r Response) ([]sseEvent, bool, error) {
	final, err := responseObject(n, r)
	if err != nil {
		return nil, false, err
	}
	s := &responsesStream{}
	s.add("response.created", map[string]any{"response": map[string]any{
		"id": final["id"], "object": "response", "created_at": final["created_at"], "model": gatewayModelID,
		"status": "in_progress", "output": []any{},
	}})
	oi := 0
	if text, ok := r.Content.(string); ok {
		id := fmt.Sprintf("msg_ctk_%d", n)
		loc := func(m map[string]any) map[string]any {
			m["item_id"], m["output_index"], m["content_index"] = id, json.Number("0"), json.Number("0")
			return m
		}
		s.add("response.output_item.added", map[string]any{"output_index": json.Number("0"), "item": responseMessageItem(n, "", "in_progress")})
		s.add("response.content_part.added", loc(map[string]any{"part": responseTextPart("")}))
		for _, p := range streamParts(r) {
			s.add("response.output_text.delta", loc(map[string]any{"delta": p}))
		}
		if r.StreamTruncated {
			return s.events, true, s.err
		}
		s.add("response.output_text.done", loc(map[string]any{"text": text}))
		s.add("response.content_part.done", loc(map[string]any{"part": responseTextPart(text)}))
		s.add("response.output_item.done", map[string]any{"output_index": json.Number("0"), "item": responseMessageItem(n, text, "completed")})
		oi++
	} else if r.StreamTruncated {
		return s.events, true, s.err
	}
	for k, tc := range r.ToolCalls {
		added, err := responseCallItem(n, k, tc, "in_progress")
		if err != nil {
			return nil, false, err
		}
		done, err := responseCallItem(n, k, tc, "completed")
		if err != nil {
			return nil, false, err
		}
		at := json.Number(fmt.Sprint(oi))
		s.add("response.output_item.added", map[string]any{"output_index": at, "item": added})
		s.add("response.function_call_arguments.delta", map[string]any{"item_id": done["id"], "output_index": at, "delta": done["arguments"]})
		s.add("response.function_call_arguments.done", map[string]any{"item_id": done["id"], "output_index": at, "arguments": done["arguments"]})
		s.add("response.output_item.done", map[string]any{"output_index": at, "item": done})
		oi++
	}
	terminal := "response.completed"
	if final["status"] == "incomplete" {
		terminal = "response.incomplete"
	}
	s.add(terminal, map[string]any{"response": final})
	return s.events, false, s.err
}

// streamingResponsesModel is the Responses model seam over openai-go's
// streaming client (Responses.NewStreaming): the verdicted response is
// the terminal event's, the released text the output_text deltas the
// client received, and only that joins the transcript when a stream is
// blocked.
type streamingResponsesModel struct {
	responsesModel
	released strings.Builder
}

// call streams the response. An error event is the gateway ending the
// stream with a verdict; an error answer is one before it streamed.
func (m *streamingResponsesModel) call(ctx context.Context, i int) (enforcement.ModelResponse, error) {
	stream := m.client.Responses.NewStreaming(ctx, m.params())
	defer stream.Close()
	var partial strings.Builder
	var final *responses.Response
	for stream.Next() {
		switch ev := stream.Current(); ev.Type {
		case "response.output_text.delta":
			partial.WriteString(ev.Delta)
		case "response.completed", "response.incomplete":
			res := ev.Response
			final = &res
		}
	}
	m.released.WriteString(partial.String())
	if err := stream.Err(); err != nil {
		if partial.Len() > 0 {
			m.input = append(m.input, responses.ResponseInputItemParamOfMessage(partial.String(), responses.EasyInputMessageRoleAssistant))
		}
		return enforcement.ModelResponse{}, streamCallError(i, err)
	}
	if final == nil {
		return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: the gateway's stream ended without response.completed or response.incomplete", i)
	}
	return m.absorb(i, final)
}

// releasedOutput and persisted feed the RunRecord's incremental fields.
func (m *streamingResponsesModel) releasedOutput() string { return m.released.String() }

func (m *streamingResponsesModel) persisted() (string, error) {
	b, err := json.Marshal(m.input)
	return string(b), err
}
