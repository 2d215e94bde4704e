package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

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
