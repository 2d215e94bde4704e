package chat

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// FuzzReadStream: ReadStream never panics and never reads past limit+1
// bytes; an accepted stream replays as a prefix of its input, and its
// projection survives Synthesize → ReadStream unchanged.
func FuzzReadStream(f *testing.F) {
	for _, s := range []string{
		sseToolStream, crlf(sseToolStream), cr(sseToolStream), sseText("a", "b"), sseText(),
		"data: [DONE]", ": only a comment\n\n", "data: {}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"\"}},{\"function\":{\"arguments\":\"x\"}}]}}]}\n\ndata: [DONE]\n\n",
		"data: {\"error\":{\"message\":\"x\"}}\n\n", "\xEF\xBB\xBFdata: [DONE]\r\n\r\n",
	} {
		f.Add([]byte(s), uint32(len(s)))
		f.Add([]byte(s), uint32(len(s)/2))
	}
	f.Fuzz(func(t *testing.T, data []byte, lim uint32) {
		limit := int64(lim % (1 << 20))
		cr := &countingReader{r: bytes.NewReader(data)}
		st, err := ReadStream(cr, limit, ResponseOptions{})
		if cr.n > limit+1 {
			t.Fatalf("read %d bytes with limit %d", cr.n, limit)
		}
		if err != nil {
			return
		}
		if st.BufferedBytes() > limit {
			t.Fatalf("buffered %d bytes with limit %d", st.BufferedBytes(), limit)
		}
		proj := st.Response().Project()
		for _, usage := range []bool{true, false} {
			// Whatever is released assembles to exactly what was verdicted.
			out, err := st.Release(nil, usage)
			if err != nil {
				t.Fatal(err)
			}
			again, err := ReadStream(bytes.NewReader(out), int64(len(out)), ResponseOptions{})
			if err != nil {
				t.Fatalf("released stream does not parse: %v", err)
			}
			if got := again.Response().Project(); !jsonvalue.Equal(got, proj) {
				t.Fatalf("released stream assembles to %s, verdicted %s", mustJSON(t, got), mustJSON(t, proj))
			}
		}
		if err := st.Response().CheckWriteBack(proj); err != nil {
			t.Fatalf("projection fails CheckWriteBack: %v", err)
		}
		sse, err := st.Synthesize(proj, true)
		if err != nil {
			t.Fatalf("Synthesize(projection): %v", err)
		}
		again, err := ReadStream(bytes.NewReader(sse), int64(len(sse)), ResponseOptions{})
		if err != nil {
			t.Fatalf("synthesized stream does not parse: %v", err)
		}
		if got := again.Response().Project(); !jsonvalue.Equal(got, proj) {
			t.Fatalf("round trip: %s != %s", mustJSON(t, got), mustJSON(t, proj))
		}
	})
}

// FuzzParseRequest: ParseRequest never panics; an accepted body comes back
// unchanged from UpstreamBody with its own projection, and forcing usage
// keeps it a valid request with the same messages.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		requestBody,
		`{"model":"m","messages":[{"role":"user","content":"a"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"a"}],"stream_options":{"include_usage":false}}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[]}],"stream_options":{}}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"\u00e9"}]}],"n":1}`,
		`{"model":"m","messages":[{"role":"user","content":"a"}],"n":2}`,
		`{"\u006dodel":"m","messages":[{"role":"user","content":"a"}]}`,
		`[]`, `{`, `{"model":"m","messages":[{"role":"user","content":"\ud800"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRequest(body)
		if err != nil {
			return
		}
		msgs := r.Messages()
		if err := ValidateMessages(msgs); err != nil {
			t.Fatalf("own projection fails ValidateMessages: %v", err)
		}
		same, err := r.UpstreamBody(msgs, false)
		if err != nil || !bytes.Equal(same, body) {
			t.Fatalf("UpstreamBody(projection) changed the body (err %v)", err)
		}
		forced, err := r.UpstreamBody(msgs, true)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := ParseRequest(forced)
		if err != nil {
			t.Fatalf("forced body does not parse: %v\n%s", err, forced)
		}
		msgs2 := r2.Messages()
		if !r2.IncludeUsage() || !jsonvalue.Equal(any(msgs2), any(msgs)) {
			t.Fatal("forcing usage changed the messages or did not set include_usage")
		}
		// Dropping the first message keeps the rest byte-identical.
		if len(msgs) > 1 {
			dropped, err := r.UpstreamBody(msgs[1:], false)
			if err != nil {
				t.Fatal(err)
			}
			r3, err := ParseRequest(dropped)
			if err != nil {
				t.Fatalf("body without the first message does not parse: %v", err)
			}
			msgs3 := r3.Messages()
			if !jsonvalue.Equal(any(msgs3), any(msgs[1:])) {
				t.Fatal("dropping a message changed the others")
			}
		}
	})
}

// FuzzParseResponse: ParseResponse never panics; an unchanged projection
// is released with the gateway's id and model and no fingerprint, and a
// changed content is released as exactly that content.
func FuzzParseResponse(f *testing.F) {
	for _, s := range []string{toolCallResponse, textResponse, refusalResponse, rawArgsResponse,
		`{"choices":[{"message":{}}]}`, `{"choices":[{"message":{"role":"assistant","tool_calls":null}}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseResponse(body, ResponseOptions{})
		if err != nil {
			return
		}
		proj := r.Project()
		out, err := r.Release(proj)
		if err != nil {
			t.Fatal(err)
		}
		checkReleasedMeta(t, out, r.ID(), "")
		if again, err := ParseResponse(out, ResponseOptions{}); err != nil || !jsonvalue.Equal(again.Project(), proj) {
			t.Fatalf("the released body does not project to the verdicted one (err %v)", err)
		}
		proj["content"] = "redacted"
		proj["finish_reason"] = "stop"
		if len(proj["tool_calls"].([]any)) > 0 && r.uniqueIDs() {
			proj["tool_calls"] = proj["tool_calls"].([]any)[1:]
		}
		out, err = r.Release(proj)
		if err != nil {
			t.Fatalf("WriteBack: %v", err)
		}
		if !json.Valid(out) {
			t.Fatal("write-back produced invalid JSON")
		}
		again, err := ParseResponse(out, ResponseOptions{})
		if err != nil {
			t.Fatalf("written body does not parse: %v", err)
		}
		if got := again.Project(); !jsonvalue.Equal(got, proj) {
			t.Fatalf("released %s, verdicted %s", mustJSON(t, got), mustJSON(t, proj))
		}
	})
}
