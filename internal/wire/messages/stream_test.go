package messages

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// sse frames (event, data) pairs as the API sends them.
func sse(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString("event: " + pairs[i] + "\ndata: " + pairs[i+1] + "\n\n")
	}
	return b.String()
}

// streamEvents is the stream of answerJSON, as the API sends it (pings,
// split deltas, CRLF-free framing).
var streamEvents = []string{
	"message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":3,"cache_read_input_tokens":100,"output_tokens":1,"service_tier":"standard"}}}`,
	"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
	"ping", `{"type": "ping"}`,
	"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}`,
	"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"check."}}`,
	"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig=="}}`,
	"content_block_stop", `{"type":"content_block_stop","index":0}`,
	"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
	"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://go.dev/doc","title":"Go docs","encrypted_index":"Eo8=","cited_text":"Go 1.26 released"}}}`,
	"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Go 1.26 "}}`,
	"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"is out."}}`,
	"content_block_stop", `{"type":"content_block_stop","index":1}`,
	"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}`,
	"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`,
	"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"go"}}`,
	"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":" version\"}"}}`,
	"content_block_stop", `{"type":"content_block_stop","index":2}`,
	"content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_2","name":"Read","input":{}}}`,
	"content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\":\"go.mod\"}"}}`,
	"content_block_stop", `{"type":"content_block_stop","index":3}`,
	"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}`,
	"message_stop", `{"type":"message_stop"}`,
}

func readStream(t *testing.T, opts Options, s string) *Stream {
	t.Helper()
	st, err := New(opts).ReadStream(nil, iotest.HalfReader(strings.NewReader(s)), 1<<20)
	if err != nil {
		t.Fatalf("ReadStream: %v", err)
	}
	return st.(*Stream)
}

func TestStreamAssemblesAsTheJSONAnswer(t *testing.T) {
	st := readStream(t, Options{}, sse(streamEvents...))
	want := parseAnswer(t, Options{}, answerJSON).Project()
	if got := st.Response().Project(); !jsonvalue.Equal(any(got), any(want)) {
		g, _ := jsonvalue.Marshal(got)
		t.Errorf("assembled projection = %s", g)
	}
	if u := st.Response().Usage(); !jsonvalue.Equal(any(u), mustJSON(t, `{"prompt_tokens":113,"completion_tokens":42}`)) {
		t.Errorf("usage = %v", u)
	}
	out, err := st.Release(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The upstream's block events are replayed, re-framed, pings dropped,
	// the blobs they carry sealed; message_start and message_delta are
	// the released message's.
	var blocks []string
	for i := 0; i < len(streamEvents); i += 2 {
		switch streamEvents[i] {
		case "ping", "message_start", "message_delta", "message_stop":
		default:
			blocks = append(blocks, streamEvents[i], streamEvents[i+1])
		}
	}
	released := splitSSE(t, string(unsealed(t, st.resp.s, out)))
	if got := sse(released[2 : len(released)-4]...); got != sse(blocks...) {
		t.Errorf("the block events are not the upstream's re-framed:\n%s", got)
	}
	if bytes.Contains(out, []byte("sig==")) || bytes.Contains(out, []byte("Eo8=")) {
		t.Errorf("a blob is replayed unsealed:\n%s", out)
	}
	start := obj(obj(mustJSON(t, released[1]))["message"])
	if released[0] != "message_start" || start["id"] != st.resp.ac.id || !strings.HasPrefix(start["id"].(string), "msg_") {
		t.Errorf("message_start = %s", released[1])
	}
	if released[len(released)-4] != "message_delta" || released[len(released)-2] != "message_stop" {
		t.Errorf("the stream ends with %v", released[len(released)-4:])
	}
	if again := readStream(t, Options{}, string(out)); !jsonvalue.Equal(any(again.Response().Project()), any(want)) {
		t.Errorf("the released stream assembles differently")
	}
	if st.BufferedBytes() != int64(len(sse(streamEvents...))) {
		t.Errorf("BufferedBytes = %d", st.BufferedBytes())
	}
}

// splitSSE splits a stream the gateway released into (event, data)
// pairs, checking its framing.
func splitSSE(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
		name, data, ok := strings.Cut(ev, "\ndata: ")
		if !ok || !strings.HasPrefix(name, "event: ") || strings.Contains(data, "\n") {
			t.Fatalf("bad framing: %q", ev)
		}
		out = append(out, strings.TrimPrefix(name, "event: "), data)
	}
	return out
}

func TestStreamSynthesisOnTransform(t *testing.T) {
	st := readStream(t, Options{}, sse(streamEvents...))
	target := st.Response().Project()
	obj(target["content"].([]any)[1])["text"] = "[redacted]"
	target["tool_calls"] = target["tool_calls"].([]any)[:1]
	out, err := st.Release(target)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("is out")) || bytes.Contains(out, []byte("toolu_2")) {
		t.Fatalf("synthesized stream leaks the original: %s", out)
	}
	again := readStream(t, Options{}, string(out))
	if !jsonvalue.Equal(any(again.Response().Project()), any(target)) {
		g, _ := jsonvalue.Marshal(again.Response().Project())
		t.Errorf("synthesized stream assembles as %s", g)
	}
}

func TestStreamFailures(t *testing.T) {
	ev := func(pairs ...string) string { return sse(pairs...) }
	start := []string{"message_start", `{"type":"message_start","message":{"type":"message","role":"assistant","content":[],"stop_reason":null}}`}
	text := []string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`}
	stop0 := []string{"content_block_stop", `{"type":"content_block_stop","index":0}`}
	end := []string{"message_stop", `{"type":"message_stop"}`}
	cat := func(parts ...[]string) string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return ev(all...)
	}
	cases := []struct {
		name   string
		stream string
		kind   error
	}{
		{"upstream error", cat(start, []string{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}), wire.ErrUpstreamEvent},
		{"cut", cat(start, text), wire.ErrStreamCut},
		{"delta without its member", cat(start, text, []string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","body":"x"}}`}, stop0, end), wire.ErrResponseInvalid},
		{"name differs from type", cat(start, []string{"message_stop", `{"type":"ping"}`}, end), wire.ErrResponseInvalid},
		{"delta for unopened block", cat(start, []string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`}, end), wire.ErrResponseInvalid},
		{"delta after stop", cat(start, text, stop0, []string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`}, end), wire.ErrResponseInvalid},
		{"unknown delta", cat(start, text, []string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"audio_delta","audio":"x"}}`}, stop0, end), wire.ErrResponseInvalid},
		{"delta does not fit block", cat(start, text, []string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"x"}}`}, stop0, end), wire.ErrResponseInvalid},
		{"block index gap", cat(start, []string{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`}, end), wire.ErrResponseInvalid},
		{"unknown block", cat(start, []string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"hologram"}}`}, stop0, end), wire.ErrResponseInvalid},
		{"input not an object", cat(start, []string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"f","input":{}}}`,
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"[1,2]"}}`}, stop0, end), wire.ErrResponseInvalid},
		{"input start not {}", cat(start, []string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"f","input":{ }}}`,
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}`}, stop0, end), wire.ErrResponseInvalid},
		{"duplicate keys", cat(start, []string{"content_block_start", `{"type":"content_block_start","index":0,"index":0,"content_block":{"type":"text","text":""}}`}, stop0, end), wire.ErrResponseInvalid},
		{"case collision", cat(start, text, []string{"content_block_stop", `{"type":"content_block_stop","index":0,"Index":1}`}, end), wire.ErrResponseInvalid},
		{"second signature", cat(start, []string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"a"}}`,
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"b"}}`}, stop0, end), wire.ErrResponseInvalid},
		{"second message_start", cat(start, start, end), wire.ErrResponseInvalid},
		{"open block at stop", cat(start, text, end), wire.ErrResponseInvalid},
		{"event before start", cat(text, stop0, end), wire.ErrResponseInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(Options{}).ReadStream(nil, strings.NewReader(c.stream), 1<<20)
			var se *wire.StreamError
			if !errors.As(err, &se) || !errors.Is(err, c.kind) {
				t.Fatalf("err = %v, want a StreamError of kind %v", err, c.kind)
			}
		})
	}
	t.Run("buffer limit", func(t *testing.T) {
		_, err := New(Options{}).ReadStream(nil, strings.NewReader(sse(streamEvents...)), 100)
		if !errors.Is(err, wire.ErrBufferLimit) {
			t.Fatalf("err = %v", err)
		}
	})
	// Exactly the limit is read, a byte more refused, however the reads
	// fall across the buffer's growth.
	t.Run("exactly the limit", func(t *testing.T) {
		body := sse(streamEvents...)
		for _, r := range []func() io.Reader{
			func() io.Reader { return strings.NewReader(body) },
			func() io.Reader { return iotest.OneByteReader(strings.NewReader(body)) },
		} {
			if _, err := New(Options{}).ReadStream(nil, r(), int64(len(body))); err != nil {
				t.Fatalf("a stream of exactly the limit: %v", err)
			}
			if _, err := New(Options{}).ReadStream(nil, r(), int64(len(body)-1)); !errors.Is(err, wire.ErrBufferLimit) {
				t.Fatalf("a byte past the limit: %v", err)
			}
		}
	})
}

// What follows message_stop is never read nor released; unnamed events
// are skipped as the SDKs skip them; an event with an unknown member is
// not replayed but synthesized without it.
func TestStreamRemovals(t *testing.T) {
	evs := append([]string(nil), streamEvents...)
	s := sse(evs...) + "data: {\"type\":\"content_block_start\",\"index\":9}\n\n" + sse("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"LATE"}}`)
	s = strings.Replace(s, "event: ping\n", "", 1) // an unnamed event
	st := readStream(t, Options{}, s)
	out, _ := st.Release(nil)
	if bytes.Contains(out, []byte("LATE")) || bytes.Contains(out, []byte("ping")) {
		t.Errorf("released bytes hold what was not assembled")
	}
	for _, c := range []struct {
		md     string
		judged bool // judged (projected) by default; removed under StrictMembers
	}{
		{`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42},"debug":"hidden"}`, true},
		{`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null,"note":"hidden"},"usage":{"output_tokens":42}}`, true},
		{`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null,"content":[{"type":"text","text":"hidden"}]},"usage":{"output_tokens":42}}`, false},
		{`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42},"model":"hidden"}`, false},
		{`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42,"note":"hidden"}}`, true},
	} {
		evs[len(evs)-3] = c.md
		for _, opts := range []Options{{}, {StrictMembers: true}} {
			st = readStream(t, opts, sse(evs...))
			out, err := st.Release(nil)
			if err != nil {
				t.Fatal(err)
			}
			projected, _ := jsonvalue.Marshal(st.Response().Project())
			if judged := c.judged && !opts.StrictMembers; judged != bytes.Contains(projected, []byte("hidden")) || judged != bytes.Contains(out, []byte("hidden")) {
				t.Errorf("%s (strict %v): judged %v, projected %s, released:\n%s", c.md, opts.StrictMembers, judged, projected, out)
			}
			if !jsonvalue.Equal(any(readStream(t, opts, string(out)).Response().Project()), any(st.Response().Project())) {
				t.Error("the synthesized stream assembles differently")
			}
		}
	}
}

// An event type or a delta member newer than the gateway is read, not
// refused, and never released: both SDKs pass over events they do not
// know and assemble a block from its delta's known member alone, so the
// stream is synthesized without them.
func TestStreamNewEventsAndDeltaMembers(t *testing.T) {
	const secret = "sk-proj-abcdefghijklmnopqrstuvwx"
	stream := sse(
		"message_start", `{"type":"message_start","message":{"type":"message","role":"assistant","content":[],"stop_reason":null}}`,
		"telemetry", `{"type":"telemetry","note":"`+secret+`"}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello","note":"`+secret+`"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`,
		"message_stop", `{"type":"message_stop"}`,
	)
	for _, strict := range []bool{false, true} {
		st := readStream(t, Options{StrictMembers: strict}, stream)
		if c := st.Response().Project()["content"]; c != "Hello" {
			t.Fatalf("strict %v: content %v", strict, c)
		}
		out, err := st.Release(nil)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(out, []byte(secret)) || bytes.Contains(out, []byte("telemetry")) || !bytes.Contains(out, []byte("Hello")) {
			t.Fatalf("strict %v: released %s", strict, out)
		}
	}
}
