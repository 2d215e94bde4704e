package responses

import (
	"bytes"
	"strings"
	"testing"
)

// A message part type newer than the gateway is removed from the answer,
// JSON and streamed, not refused: openai-go's OutputText reads output_text
// parts only, and nothing of the part is released unjudged.
func TestNewMessagePartTypeRemoved(t *testing.T) {
	const secret = "sk-proj-abcdefghijklmnopqrstuvwx"
	newPart := `{"type":"output_audio","data":"` + secret + `","transcript":"` + secret + `"}`
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, codexRequest)

	body := strings.Replace(jsonAnswer, `"content":[{"type":"output_text","text":"hello","annotations":[]}]`,
		`"content":[{"type":"output_text","text":"hello","annotations":[]},`+newPart+`]`, 1)
	resp, err := s.ParseResponse(req, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	out, err := resp.Release(nil)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(secret)) || bytes.Contains(out, []byte("output_audio")) || !bytes.Contains(out, []byte("hello")) {
		t.Fatalf("released %s", out)
	}

	events := streamEvents("hello", "hello")
	for i, e := range events {
		if strings.Contains(e, `"type":"response.output_item.done","sequence_number":7`) || strings.Contains(e, `"type":"response.completed"`) {
			events[i] = strings.Replace(e, `"annotations":[]}]`, `"annotations":[]},`+newPart+`]`, 1)
		}
	}
	// The part's own events, between the text's done and the item's done.
	events = append(events[:7], append([]string{
		`{"type":"response.content_part.added","sequence_number":7,"item_id":"msg_1","output_index":1,"content_index":1,"part":{"type":"output_audio"}}`,
		`{"type":"response.output_audio.delta","sequence_number":7,"item_id":"msg_1","output_index":1,"content_index":1,"delta":"` + secret + `"}`,
		`{"type":"response.content_part.done","sequence_number":7,"item_id":"msg_1","output_index":1,"content_index":1,"part":` + newPart + `}`,
	}, events[7:]...)...)
	for i := range events { // renumber
		events[i] = renumber(events[i], i)
	}
	st, err := s.ReadStream(req, strings.NewReader(sse(events...)), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	out, err = st.Release(nil)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(secret)) || bytes.Contains(out, []byte("output_audio")) || !bytes.Contains(out, []byte("hello")) {
		t.Fatalf("released %s", out)
	}
	if _, err := clientSees(t, out); err != nil {
		t.Fatal(err)
	}
}

// renumber sets an event's sequence_number to n.
func renumber(event string, n int) string {
	i := strings.Index(event, `"sequence_number":`)
	j := i + len(`"sequence_number":`)
	k := j
	for k < len(event) && event[k] >= '0' && event[k] <= '9' {
		k++
	}
	return event[:j] + itoa(n) + event[k:]
}
