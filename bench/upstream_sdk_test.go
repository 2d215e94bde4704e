package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicsse "github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
)

// sseResponse wraps a stream body as the HTTP answer the SDK decodes.
func sseResponse(body []byte) *http.Response {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": []string{"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(body))}
}

// The mock's Responses answers read in openai-go as OpenAI's do: the JSON
// object's output text, and a stream whose events are numbered in order,
// whose deltas add up to the done text and whose response.completed
// carries the whole output.
func TestResponsesAnswersReadInOpenAIGo(t *testing.T) {
	o := upstreamOptions{contentBytes: 1024, chunks: 200}
	var resp responses.Response
	if err := json.Unmarshal(responsesJSON(o), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != filler(1024) || resp.Usage.OutputTokens != 200 || resp.Status != "completed" {
		t.Errorf("JSON answer reads as %q… status %q usage %+v", resp.OutputText()[:min(40, len(resp.OutputText()))], resp.Status, resp.Usage)
	}

	st := ssestream.NewStream[responses.ResponseStreamEventUnion](ssestream.NewDecoder(sseResponse(joinEvents(responsesSSE(o)))), nil)
	var deltas strings.Builder
	var types []string
	var completed string
	for i := int64(0); st.Next(); i++ {
		ev := st.Current()
		if ev.SequenceNumber != i {
			t.Fatalf("event %d (%s) has sequence_number %d", i, ev.Type, ev.SequenceNumber)
		}
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			deltas.WriteString(ev.AsResponseOutputTextDelta().Delta)
		case "response.output_text.done":
			if ev.Text != deltas.String() {
				t.Errorf("done text differs from the deltas")
			}
		case "response.completed":
			completed = ev.AsResponseCompleted().Response.OutputText()
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added", "response.output_text.delta"}
	if len(types) != 208 || !slices.Equal(types[:5], want) || types[len(types)-1] != "response.completed" {
		t.Errorf("%d events: %v … %v", len(types), types[:min(5, len(types))], types[max(0, len(types)-4):])
	}
	if completed != deltas.String() || !strings.HasSuffix(completed, "tok199 ") {
		t.Errorf("response.completed output %.40q…, deltas %.40q…", completed, deltas.String())
	}
}

// The mock's Messages answers read in anthropic-sdk-go as Anthropic's do:
// the JSON message's text block and usage, a tool_use block's input, and
// a stream the SDK's accumulator assembles to the same text.
func TestMessagesAnswersReadInAnthropicSDK(t *testing.T) {
	o := upstreamOptions{contentBytes: 1024, chunks: 200}
	var m anthropic.Message
	if err := json.Unmarshal(messagesJSON(o), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Content) != 1 || m.Content[0].Text != filler(1024) || m.StopReason != anthropic.StopReasonEndTurn || m.Usage.OutputTokens != 200 {
		t.Errorf("JSON answer reads as %+v", m)
	}
	var tool anthropic.Message
	if err := json.Unmarshal(messagesJSON(upstreamOptions{toolCall: true}), &tool); err != nil {
		t.Fatal(err)
	}
	if len(tool.Content) != 1 || tool.Content[0].Type != "tool_use" || tool.Content[0].Name != "send_email" ||
		string(tool.Content[0].Input) != toolArguments || tool.StopReason != anthropic.StopReasonToolUse {
		t.Errorf("tool-call answer reads as %+v", tool)
	}

	st := anthropicsse.NewStream[anthropic.MessageStreamEventUnion](anthropicsse.NewDecoder(sseResponse(joinEvents(messagesSSE(o)))), nil)
	var acc anthropic.Message
	var types []string
	for st.Next() {
		ev := st.Current()
		types = append(types, ev.Type)
		if err := acc.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"message_start", "content_block_start", "content_block_delta"}
	if len(types) != 205 || !slices.Equal(types[:3], want) || !slices.Equal(types[len(types)-3:], []string{"content_block_stop", "message_delta", "message_stop"}) {
		t.Errorf("%d events: %v … %v", len(types), types[:min(3, len(types))], types[max(0, len(types)-3):])
	}
	if len(acc.Content) != 1 || !strings.HasPrefix(acc.Content[0].Text, "tok0 tok1 ") || !strings.HasSuffix(acc.Content[0].Text, "tok199 ") ||
		acc.StopReason != anthropic.StopReasonEndTurn || acc.Usage.OutputTokens != 200 {
		t.Errorf("stream accumulates to %+v", acc)
	}
}
