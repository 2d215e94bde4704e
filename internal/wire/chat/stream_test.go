package chat

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// countingReader counts the bytes a reader handed out.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// endless serves one event forever, like a runaway upstream.
type endless struct {
	event []byte
	at    int
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], e.event[e.at:])
		n += c
		e.at = (e.at + c) % len(e.event)
	}
	return n, nil
}

// sseToolOptions answer with sseToolStream's own id and model, so that a
// replay of it differs from the upstream's events only where the gateway
// edits them (system_fingerprint removed).
var sseToolOptions = ResponseOptions{id: "chatcmpl-S1", Model: "gpt-4o-2024-08-06"}

func mustStream(t testing.TB, s string) *Stream {
	t.Helper()
	st, err := ReadStream(strings.NewReader(s), 1<<20, sseToolOptions)
	if err != nil {
		t.Fatalf("ReadStream: %v", err)
	}
	return st
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
func cr(s string) string   { return strings.ReplaceAll(s, "\n", "\r") }

func TestReadStreamAssembles(t *testing.T) {
	tests := []struct {
		name, stream, want string
		usage              string
	}{
		{"fragmented tool calls", sseToolStream, sseToolProjection, `{"prompt_tokens":82,"completion_tokens":31}`},
		{"CRLF framing", crlf(sseToolStream), sseToolProjection, `{"prompt_tokens":82,"completion_tokens":31}`},
		{"CR framing", cr(sseToolStream), sseToolProjection, `{"prompt_tokens":82,"completion_tokens":31}`},
		{"BOM", "\xEF\xBB\xBF" + sseToolStream, sseToolProjection, `{"prompt_tokens":82,"completion_tokens":31}`},
		{"text", sseText("Hel", "lo ", "wor", "ld"), `{"content":"Hello world","tool_calls":[],"finish_reason":"stop"}`, ""},
		{
			name: "multi-line data, event and id fields, no space after colon",
			stream: "id: 1\nevent: message\nretry: 100\ndata:{\"choices\":[{\"index\":0,\n" +
				"data: \"delta\":{\"content\":\"a\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"length\"}]}\n\n" +
				"data: [DONE]\n\n",
			want: `{"content":"ab","tool_calls":[],"finish_reason":"length"}`,
		},
		{
			name: "role-only, empty choices, delta null, no finish_reason",
			stream: "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n" +
				"data: {\"choices\":[],\"prompt_filter_results\":[]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":null}]}\n\n" +
				"data: [DONE]\n\n",
			want: `{"content":null,"tool_calls":[],"finish_reason":"stop"}`,
		},
		{
			name: "refusal stream",
			stream: "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":\"\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I can't \"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"help.\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: [DONE]\n\n",
			want: `{"content":[{"type":"refusal","refusal":"I can't help."}],"tool_calls":[],"finish_reason":"stop"}`,
		},
		{
			name: "tool calls without index (fragment ids decide), raw arguments",
			stream: "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"x\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"y\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"g\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n" +
				"data: [DONE]",
			want: `{"content":null,"tool_calls":[{"id":"a","name":"f","args":{"raw_arguments":"xy"}},{"id":"b","name":"gg","args":{}}],"finish_reason":"tool_calls"}`,
		},
		{
			name: "index -1 and an unknown event type are still parsed",
			stream: "event: delta\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":-1,\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"n\\\":1}\"}}]}}]}\n\n" +
				"data: [DONE]\n",
			want: `{"content":null,"tool_calls":[{"id":"a","name":"f","args":{"n":1}}],"finish_reason":"stop"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// One byte at a time exercises every split point.
			st, err := ReadStream(iotest.OneByteReader(strings.NewReader(tc.stream)), 1<<20, ResponseOptions{})
			if err != nil {
				t.Fatalf("ReadStream: %v", err)
			}
			r := st.Response()
			if got := r.Project(); !jsonvalue.Equal(got, tree(t, tc.want)) {
				t.Errorf("Project = %s", mustJSON(t, got))
			}
			var wantUsage any
			if tc.usage != "" {
				wantUsage = tree(t, tc.usage)
			}
			if u := r.Usage(); !jsonvalue.Equal(u, wantUsage) {
				t.Errorf("Usage = %v", u)
			}
			if err := r.CheckWriteBack(r.Project()); err != nil {
				t.Errorf("projection fails CheckWriteBack: %v", err)
			}
			if _, err := r.Release(r.Project()); err == nil {
				t.Error("WriteBack on a streamed response must fail")
			}
		})
	}
}

func TestReadStreamMeta(t *testing.T) {
	st, err := ReadStream(strings.NewReader(sseToolStream), 1<<20, ResponseOptions{Model: "asked"})
	if err != nil {
		t.Fatal(err)
	}
	r := st.Response()
	if !strings.HasPrefix(r.ID(), "chatcmpl-") || r.ID() == "chatcmpl-S1" || r.Model() != "asked" || r.Created() != 1741570400 {
		t.Errorf("ID, Model, Created = %q, %q, %d", r.ID(), r.Model(), r.Created())
	}
	if st.BufferedBytes() != int64(len(sseToolStream)) {
		t.Errorf("BufferedBytes = %d, want %d", st.BufferedBytes(), len(sseToolStream))
	}
	args := r.Project()["tool_calls"].([]any)[1].(map[string]any)["args"].(map[string]any)
	if mustJSON(t, args["amount_cents"]) != "9007199254740993" {
		t.Errorf("amount_cents = %v", args["amount_cents"])
	}
}

// dataEvents keeps only the data events of an LF- or CRLF-framed stream,
// each as one "data:" line and a blank line, without sseToolStream's
// system_fingerprint: what Release replays of it under sseToolOptions.
func dataEvents(in string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.ReplaceAll(in, "\r\n", "\n"), "\n") {
		if strings.HasPrefix(l, "data: ") {
			b.WriteString(strings.Replace(l, `,"system_fingerprint":"fp_s"`, "", 1) + "\n\n")
		}
	}
	return b.String()
}

func TestReleaseReplaysDataEventsOnly(t *testing.T) {
	for _, framing := range []struct {
		name string
		f    func(string) string
	}{{"LF", func(s string) string { return s }}, {"CRLF", crlf}} {
		t.Run(framing.name, func(t *testing.T) {
			in := framing.f(sseToolStream)
			st := mustStream(t, in)
			if !st.Replayable() {
				t.Fatal("a clean stream is not replayable")
			}
			all, err := st.Release(nil, true)
			if err != nil {
				t.Fatal(err)
			}
			if want := dataEvents(in); string(all) != want {
				t.Errorf("Release(includeUsage) =\n%s\nwant\n%s", all, want)
			}
			stripped, err := st.Release(nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Replace(dataEvents(in), dataEvents(sseUsageEvent), "", 1); string(stripped) != want {
				t.Errorf("Release(!includeUsage) =\n%s\nwant\n%s", stripped, want)
			}
		})
	}
}

func TestReleaseStopsAtDone(t *testing.T) {
	// Bytes after [DONE] are neither awaited nor released.
	trailing := errors.New("must not be read")
	r := io.MultiReader(strings.NewReader(sseText("hi")), iotest.ErrReader(trailing))
	st, err := ReadStream(r, 1<<20, ResponseOptions{id: "chatcmpl-T", Model: "gpt-4o-mini"})
	if err != nil {
		t.Fatalf("ReadStream: %v", err)
	}
	out, err := st.Release(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != sseText("hi") {
		t.Errorf("Release = %q", out)
	}
	st = mustStream(t, sseText("hi")+"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"late\"}}]}\n\n")
	if st.Response().Project()["content"] != "hi" {
		t.Error("content after [DONE] was assembled")
	}
}

func TestReadStreamLimit(t *testing.T) {
	event := []byte(`data: {"choices":[{"index":0,"delta":{"content":"` + secret + `"}}]}` + "\n\n")
	for _, limit := range []int64{0, 1, 100, 4096, 100_000, 1 << 20} {
		cr := &countingReader{r: &endless{event: event}}
		_, err := ReadStream(cr, limit, ResponseOptions{})
		if !errors.Is(err, wire.ErrBufferLimit) {
			t.Fatalf("limit %d: err = %v, want ErrBufferLimit", limit, err)
		}
		if cr.n > limit+1 {
			t.Errorf("limit %d: read %d bytes; the reader must stop at limit+1", limit, cr.n)
		}
		noSecret(t, err)
	}
	// A stream that fits exactly is accepted, with or without the final
	// blank line.
	for _, s := range []string{sseText("ok"), strings.TrimSuffix(sseText("ok"), "\n\n")} {
		st, err := ReadStream(strings.NewReader(s), int64(len(s)), ResponseOptions{})
		if err != nil {
			t.Fatalf("exact fit: %v", err)
		}
		if st.BufferedBytes() != int64(len(s)) {
			t.Errorf("BufferedBytes = %d, want %d", st.BufferedBytes(), len(s))
		}
	}
	// One byte short: over the limit.
	s := sseText("ok")
	if _, err := ReadStream(strings.NewReader(s), int64(len(s)-1), ResponseOptions{}); !errors.Is(err, wire.ErrBufferLimit) {
		t.Errorf("one byte over: err = %v", err)
	}
}

func TestReadStreamErrors(t *testing.T) {
	chunk := func(s string) string { return "data: " + s + "\n\n" }
	okChunk := chunk(`{"choices":[{"index":0,"delta":{"content":"` + secret + `"}}]}`)
	tests := []struct {
		name   string
		stream string
		kind   error
		event  int
	}{
		{"empty", "", wire.ErrStreamCut, 0},
		{"EOF mid-event", okChunk + `data: {"choices":[`, wire.ErrStreamCut, 0},
		{"EOF without DONE", okChunk, wire.ErrStreamCut, 0},
		{"EOF after a complete chunk without blank line", strings.TrimSuffix(okChunk, "\n"), wire.ErrStreamCut, 0},
		{"error object", okChunk + chunk(`{"error":{"message":"`+secret+`","type":"server_error"}}`) + "data: [DONE]\n\n", wire.ErrUpstreamEvent, 2},
		{"error event type", okChunk + "event: error\ndata: " + secret + "\n\n", wire.ErrUpstreamEvent, 2},
		{"not JSON", okChunk + chunk(secret), wire.ErrResponseInvalid, 2},
		{"empty data", "data:\n\n", wire.ErrResponseInvalid, 1},
		{"not an object", chunk(`["` + secret + `"]`), wire.ErrResponseInvalid, 1},
		{"choice index 1", okChunk + chunk(`{"choices":[{"index":1,"delta":{"content":"x"}}]}`), wire.ErrResponseInvalid, 2},
		{"content number", chunk(`{"choices":[{"index":0,"delta":{"content":1}}]}`), wire.ErrResponseInvalid, 1},
		{"lone surrogate", chunk(`{"choices":[{"index":0,"delta":{"content":"\udc00` + secret + `"}}]}`), wire.ErrResponseInvalid, 1},
		{"function_call delta", chunk(`{"choices":[{"index":0,"delta":{"function_call":{"name":"f"}}}]}`), wire.ErrResponseInvalid, 1},
		{"audio delta", chunk(`{"choices":[{"index":0,"delta":{"audio":{"transcript":"` + secret + `"}}}]}`), wire.ErrResponseInvalid, 1},
		{"custom tool call", chunk(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"custom"}]}}]}`), wire.ErrResponseInvalid, 1},
		{"tool call index huge", chunk(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":99999999}]}}]}`), wire.ErrResponseInvalid, 1},
		{"case-colliding delta member", chunk(`{"choices":[{"index":0,"delta":{"content":"a","Content":"` + secret + `"}}]}`), wire.ErrResponseInvalid, 1},
		{"case-colliding chunk member", chunk(`{"Choices":[{"index":0,"delta":{"content":"` + secret + `"}}],"choices":[]}`), wire.ErrResponseInvalid, 1},
		{"arguments object", chunk(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":{}}}]}}]}`), wire.ErrResponseInvalid, 1},
		{"finish_reason number", chunk(`{"choices":[{"index":0,"delta":{},"finish_reason":1}]}`), wire.ErrResponseInvalid, 1},
		{"duplicate key", chunk(`{"choices":[{"index":0,"delta":{"content":"a","content":"` + secret + `"}}]}`), wire.ErrResponseInvalid, 1},
		{"usage string", chunk(`{"choices":[],"usage":"` + secret + `"}`), wire.ErrResponseInvalid, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadStream(strings.NewReader(tc.stream), 1<<20, ResponseOptions{})
			var se *wire.StreamError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *StreamError", err)
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("err = %v, want kind %v", err, tc.kind)
			}
			if se.Event != tc.event {
				t.Errorf("Event = %d, want %d", se.Event, tc.event)
			}
			noSecret(t, err)
		})
	}
}

func TestReadStreamReadError(t *testing.T) {
	cause := errors.New("connection reset by peer")
	r := io.MultiReader(strings.NewReader("data: {\"choices\":[]}\n\n"), iotest.ErrReader(cause))
	_, err := ReadStream(r, 1<<20, ResponseOptions{})
	if !errors.Is(err, wire.ErrStreamCut) || !errors.Is(err, cause) {
		t.Errorf("err = %v, want wire.ErrStreamCut wrapping the read error", err)
	}
}
