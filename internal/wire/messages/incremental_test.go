package messages

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

const (
	evStart = `{"type":"message_start","message":{"id":"msg_p","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_read_input_tokens":4,"output_tokens":1}}}`
	evText0 = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	evStop0 = `{"type":"content_block_stop","index":0}`
	evEnd   = `{"type":"message_stop"}`
)

func textDelta(i, text string) string {
	return `{"type":"content_block_delta","index":` + i + `,"delta":{"type":"text_delta","text":` + string(mustMarshal(text)) + `}}`
}

// synthDelta is a text_delta event as the gateway renders it.
func synthDelta(text string) string {
	return `{"delta":{"text":` + string(mustMarshal(text)) + `,"type":"text_delta"},"index":0,"type":"content_block_delta"}`
}

func mustMarshal(v any) []byte {
	b, err := jsonvalue.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// plainEvents is a text-only answer: pings, several deltas (one empty,
// multi-byte characters) and a stop_reason.
var plainEvents = []string{
	"message_start", evStart,
	"content_block_start", evText0,
	"ping", `{"type": "ping"}`,
	"content_block_delta", textDelta("0", "Hello"),
	"content_block_delta", textDelta("0", ", wor"),
	"content_block_delta", textDelta("0", ""),
	"content_block_delta", textDelta("0", "ld! Ünï"),
	"content_block_delta", textDelta("0", "code ✓."),
	"content_block_stop", evStop0,
	"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":17}}`,
	"message_stop", evEnd,
}

// textThenBash opens an answer with a text block and a Bash tool_use
// block at index 1 (five events of plain text, then the tool call).
var textThenBash = []string{
	"message_start", evStart,
	"content_block_start", evText0,
	"content_block_delta", textDelta("0", "Let me "),
	"content_block_delta", textDelta("0", "look that up."),
	"content_block_stop", evStop0,
	"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}`,
}

// toolUseEnd ends an answer that stopped for tool use.
var toolUseEnd = []string{
	"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}`,
	"message_stop", evEnd,
}

// toolEvents is text, then two tool calls.
var toolEvents = slices.Concat(textThenBash, []string{
	"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"go"}}`,
	"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" version\"}"}}`,
	"content_block_stop", `{"type":"content_block_stop","index":1}`,
	"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"Read","input":{}}}`,
	"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\":\"go.mod\"}"}}`,
	"content_block_stop", `{"type":"content_block_stop","index":2}`,
}, toolUseEnd)

// citedEvents is text, a citation on the same block, more text.
var citedEvents = []string{
	"message_start", evStart,
	"content_block_start", evText0,
	"content_block_delta", textDelta("0", "Go 1.26 "),
	"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://go.dev/doc","title":"Go docs","encrypted_index":"Eo8=","cited_text":"Go 1.26 released"}}}`,
	"content_block_delta", textDelta("0", "is out."),
	"content_block_stop", evStop0,
	"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}`,
	"message_stop", evEnd,
}

// blocksEvents is text in three text blocks, the middle one empty.
var blocksEvents = []string{
	"message_start", evStart,
	"content_block_start", evText0,
	"content_block_delta", textDelta("0", "Hello, "),
	"content_block_delta", textDelta("0", "wor"),
	"content_block_stop", evStop0,
	"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
	"content_block_stop", `{"type":"content_block_stop","index":1}`,
	"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
	"ping", `{"type": "ping"}`,
	"content_block_delta", textDelta("2", "ld! Ü"),
	"content_block_delta", textDelta("2", "ber "),
	"content_block_delta", textDelta("2", "all."),
	"content_block_stop", `{"type":"content_block_stop","index":2}`,
	"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":17}}`,
	"message_stop", evEnd,
}

// textToolTextEvents is text, a tool call, and more text.
var textToolTextEvents = slices.Concat(textThenBash, []string{
	"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"go version\"}"}}`,
	"content_block_stop", `{"type":"content_block_stop","index":1}`,
	"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
	"content_block_delta", textDelta("2", " Running "),
	"content_block_delta", textDelta("2", "it now."),
	"content_block_stop", `{"type":"content_block_stop","index":2}`,
}, toolUseEnd)

// joinedText is a projected content's text as the client shows it: a
// string, or its text parts one after the other.
func joinedText(content any) string {
	if s, ok := content.(string); ok {
		return s
	}
	var b strings.Builder
	list, _ := content.([]any)
	for _, e := range list {
		if p := obj(e); p["type"] == "text" {
			s, _ := p["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// with returns events with the pair at i replaced by name, data (or
// inserted before i when insert is set).
func with(events []string, i int, insert bool, pairs ...string) []string {
	out := append([]string(nil), events[:2*i]...)
	out = append(out, pairs...)
	if !insert {
		i++
	}
	return append(out, events[2*i:]...)
}

type step struct {
	plain bool
	text  string
}

// drive reads a stream through OpenStream, recording Plain and Text after
// every event.
func drive(t *testing.T, opts Options, data string) (wire.StreamReader, []step) {
	t.Helper()
	r := New(opts).OpenStream(nil, iotest.HalfReader(strings.NewReader(data)), 1<<20)
	var steps []step
	for {
		done, err := r.Next()
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		steps = append(steps, step{r.Plain(), r.Text()})
		if done {
			return r, steps
		}
	}
}

func mustStream(t *testing.T, r wire.StreamReader) wire.Stream {
	t.Helper()
	st, err := r.Stream()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Next returns after each event even when the upstream sends nothing
// more: it never waits for bytes the event does not need.
func TestIncrementalNextIsEventByEvent(t *testing.T) {
	pr, pw := io.Pipe()
	r := New(Options{}).OpenStream(nil, pr, 1<<20)
	type result struct {
		done bool
		err  error
	}
	results := make(chan result)
	for i := 0; i+1 < len(plainEvents); i += 2 {
		go func() {
			_, _ = pw.Write([]byte(sse(plainEvents[i], plainEvents[i+1])))
		}()
		go func() {
			done, err := r.Next()
			results <- result{done, err}
		}()
		select {
		case res := <-results:
			if res.err != nil {
				t.Fatalf("event %d: %v", i/2, res.err)
			}
			if res.done != (plainEvents[i] == "message_stop") {
				t.Fatalf("event %d: done = %v", i/2, res.done)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Next did not return after event %d (%s) with the writer blocked", i/2, plainEvents[i])
		}
		if !r.Plain() {
			t.Fatalf("event %d: not plain", i/2)
		}
	}
	_ = pw.Close()
	if got := r.Text(); got != "Hello, world! Ünïcode ✓." {
		t.Errorf("Text = %q", got)
	}
}

func TestIncrementalPlainTransitions(t *testing.T) {
	cases := []struct {
		name   string
		opts   Options
		events []string
		// until is the number of events after which Plain is still
		// true; -1 for the whole stream.
		until int
	}{
		{name: "text only", events: plainEvents, until: -1},
		{name: "tool call after text", events: toolEvents, until: 5},
		{name: "thinking first", events: streamEvents, until: 1},
		{name: "citation", events: citedEvents, until: 3},
		{name: "second text block before the first stopped", events: with(plainEvents, 8, true,
			"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
			"content_block_stop", `{"type":"content_block_stop","index":1}`), until: 8},
		{name: "several text blocks", events: blocksEvents, until: -1},
		{name: "text, tool_use, text", events: textToolTextEvents, until: 5},
		{name: "citation in the second block", events: with(blocksEvents, 6, true,
			"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x","document_index":0,"start_char_index":0,"end_char_index":1}}}`), until: 6},
		{name: "redacted thinking after text", events: with(plainEvents, 9, true,
			"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwK"}}`,
			"content_block_stop", `{"type":"content_block_stop","index":1}`), until: 9},
		{name: "server tool first", opts: Options{AllowServerTools: true}, events: with(plainEvents, 1, true,
			"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
			"content_block_stop", `{"type":"content_block_stop","index":0}`)[:4], until: 1},
		{name: "refusal", events: with(plainEvents, 9, false,
			"message_delta", `{"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null},"usage":{"output_tokens":3}}`), until: 9},
		{name: "text in the block start", events: with(plainEvents, 1, false,
			"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi"}}`), until: 1},
		{name: "unknown block member", events: with(plainEvents, 1, false,
			"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","note":"x"}}`), until: 1},
		{name: "cited block start", events: with(plainEvents, 1, false,
			"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","citations":[{"type":"char_location","cited_text":"x","document_index":0,"start_char_index":0,"end_char_index":1}]}}`), until: 1},
		{name: "content in message_start", events: with(plainEvents, 0, false,
			"message_start", strings.Replace(evStart, `"content":[]`, `"content":[{"type":"text","text":"early"}]`, 1))[:2], until: 0},
		{name: "allowed extra member", opts: Options{AllowResponseMembers: []string{"x_trace"}}, events: with(plainEvents, 0, false,
			"message_start", strings.Replace(evStart, `"content":[]`, `"content":[],"x_trace":"t"`, 1)), until: 0},
		{name: "bad message role", events: with(plainEvents, 0, false,
			"message_start", strings.Replace(evStart, `"assistant"`, `"user"`, 1))[:2], until: 0},
		{name: "judged extra member", events: with(plainEvents, 0, false,
			"message_start", strings.Replace(evStart, `"content":[]`, `"content":[],"x_trace":"t"`, 1)), until: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := sse(c.events...)
			if c.events[len(c.events)-2] != "message_stop" {
				// A prefix: read what it holds, then the cut.
				r := New(c.opts).OpenStream(nil, strings.NewReader(data), 1<<20)
				for i := 0; ; i++ {
					if _, err := r.Next(); err != nil {
						break
					}
					if r.Plain() != (c.until < 0 || i < c.until) {
						t.Fatalf("after event %d Plain = %v", i+1, r.Plain())
					}
				}
				return
			}
			r, steps := drive(t, c.opts, data)
			final := mustStream(t, r).Response().Project()["content"]
			for i, s := range steps {
				want := c.until < 0 || i < c.until
				if s.plain != want {
					t.Fatalf("after event %d Plain = %v, want %v", i+1, s.plain, want)
				}
				if s.plain {
					// The text parts joined: the answer's text as the
					// client shows it.
					if str := joinedText(final); s.text != "" && !strings.HasPrefix(str, s.text) {
						t.Fatalf("after event %d Text %q is not a prefix of the content %v", i+1, s.text, final)
					}
				} else if s.text != steps[c.until].text {
					t.Fatalf("Text changed after Plain turned false: %q", s.text)
				}
			}
		})
	}
}

// release writes Head, a Delta per cut of released and Tail, as the
// pipeline does.
func release(t *testing.T, r wire.StreamReader, cuts []int, target any) []byte {
	t.Helper()
	text := r.Text()
	out, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	prev := 0
	for _, c := range cuts {
		d, err := r.Delta(prev, text[prev:c])
		if err != nil {
			t.Fatalf("Delta(%d, %q): %v", prev, text[prev:c], err)
		}
		out = append(out, d...)
		prev = c
	}
	tail, err := r.Tail(mustStream(t, r), target, text[:prev])
	if err != nil {
		t.Fatalf("Tail: %v", err)
	}
	return append(out, tail...)
}

// Head+Deltas+Tail, assembled by anthropic-sdk-go, is the verdicted
// answer, however the released text was cut.
func TestIncrementalClientAssemblesTheVerdict(t *testing.T) {
	splits := map[string][]int{
		"nothing":             {},
		"one delta":           {5},
		"event boundaries":    {5, 10, 19},
		"straddling":          {3, 7, 12, 20},
		"all":                 {-1},
		"all, in two pieces":  {11, -1},
		"byte by byte, start": {1, 2, 3, 4, 5, 6},
	}
	cases := []struct {
		name   string
		events []string
		edit   func(p map[string]any, released string)
	}{
		{name: "text allowed", events: plainEvents},
		{name: "text transformed", events: plainEvents, edit: func(p map[string]any, released string) {
			p["content"] = released + "[the rest, rewritten]"
		}},
		{name: "text cut short, finish changed", events: plainEvents, edit: func(p map[string]any, released string) {
			p["content"], p["finish_reason"] = released, "length"
		}},
		{name: "tool calls allowed", events: toolEvents},
		{name: "tool call dropped, args rewritten", events: toolEvents, edit: func(p map[string]any, released string) {
			p["content"] = released + " (edited)"
			p["tool_calls"] = []any{map[string]any{"id": "toolu_2", "name": "Read", "args": map[string]any{"file_path": "README.md"}}}
			p["finish_reason"] = "tool_calls"
		}},
		{name: "tool calls removed", events: toolEvents, edit: func(p map[string]any, released string) {
			p["tool_calls"], p["finish_reason"] = []any{}, "stop"
		}},
		{name: "citation after release", events: citedEvents},
	}
	for _, c := range cases {
		for sname, cuts := range splits {
			t.Run(c.name+"/"+sname, func(t *testing.T) {
				r, _ := drive(t, Options{}, sse(c.events...))
				text := r.Text()
				var cs []int
				for _, x := range cuts {
					if x < 0 {
						x = len(text)
					}
					if x <= len(text) {
						cs = append(cs, x)
					}
				}
				released := ""
				if len(cs) > 0 {
					released = text[:cs[len(cs)-1]]
				}
				target := mustStream(t, r).Response().Project()
				var tgt any // nil: the stream's own projection
				if c.edit != nil {
					c.edit(target, released)
					tgt = target
				}
				out := release(t, r, cs, tgt)
				judged(t, Options{}, sdkAccumulate(t, out), target)
				// The gateway's own reader agrees.
				again := readStream(t, Options{}, string(out))
				if !jsonvalue.Equal(any(again.Response().Project()), any(target)) {
					t.Errorf("the released stream reads back differently")
				}
				if u := again.Response().Usage(); !jsonvalue.Equal(any(u), any(mustStream(t, r).Response().Usage())) {
					t.Errorf("usage = %v", u)
				}
			})
		}
	}
}

// Deltas cut on the upstream's own event boundaries replay its events.
func TestIncrementalDeltaReplaysWholeEvents(t *testing.T) {
	r, _ := drive(t, Options{}, sse(plainEvents...))
	mustHead(t, r)
	out, err := r.Delta(0, "Hello, wor")
	if err != nil {
		t.Fatal(err)
	}
	if want := sse("content_block_delta", plainEvents[7], "content_block_delta", plainEvents[9]); string(out) != want {
		t.Errorf("Delta =\n%s\nwant the upstream events\n%s", out, want)
	}
	r, _ = drive(t, Options{}, sse(plainEvents...))
	mustHead(t, r)
	if _, err := r.Delta(0, "Hel"); err != nil {
		t.Fatal(err)
	}
	out, err = r.Delta(3, "lo, w")
	if err != nil {
		t.Fatal(err)
	}
	if want := sse("content_block_delta", synthDelta("lo, w")); string(out) != want {
		t.Errorf("straddling Delta =\n%s", out)
	}
	// An upstream event with an unknown member is re-synthesized.
	r, _ = drive(t, Options{}, sse(with(plainEvents, 3, false, "content_block_delta", strings.Replace(textDelta("0", "Hello"), `{"type"`, `{"trace":"x","type"`, 1))...))
	mustHead(t, r)
	out, err = r.Delta(0, "Hello")
	if err != nil || string(out) != sse("content_block_delta", synthDelta("Hello")) {
		t.Errorf("Delta = %s (%v)", out, err)
	}
	r, _ = drive(t, Options{}, sse(plainEvents...))
	if _, err := r.Delta(0, "Hello"); err == nil {
		t.Error("Delta rendered text before Head")
	}
	mustHead(t, r)
	for _, bad := range []struct {
		from int
		text string
	}{{0, "Hellx"}, {1, "Hello"}, {-1, "H"}, {0, strings.Repeat("x", 100)}, {14, "Ü"[:1]}} {
		if bad.from == 14 {
			if _, err := r.Delta(0, r.Text()[:14]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.Delta(bad.from, bad.text); err == nil {
			t.Errorf("Delta(%d, %q) rendered text that is not the answer's", bad.from, bad.text)
		}
	}
}

func mustHead(t *testing.T, r wire.StreamReader) {
	t.Helper()
	if _, err := r.Head(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Head(); err == nil {
		t.Fatal("Head rendered the stream's opening twice")
	}
}

// Head opens the client's stream with the upstream's metadata (closed
// world applied) and an empty text block.
func TestIncrementalHead(t *testing.T) {
	start := strings.Replace(evStart, `"usage":{`, `"debug":"hidden","usage":{"note":"hidden",`, 1)
	r, _ := drive(t, Options{StrictMembers: true}, sse(with(plainEvents, 0, false, "message_start", start)...))
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(head, []byte("hidden")) {
		t.Errorf("Head carries members the gateway removes: %s", head)
	}
	if !bytes.HasPrefix(head, []byte("event: message_start\n")) || !bytes.HasSuffix(head, []byte(sse("content_block_start", `{"content_block":{"text":"","type":"text"},"index":0,"type":"content_block_start"}`))) {
		t.Errorf("Head = %s", head)
	}
	r, _ = drive(t, Options{}, sse(streamEvents...))
	if _, err := r.Head(); err == nil {
		t.Error("Head opened a text block on an answer that starts with thinking")
	}
}

func TestIncrementalTailRefusesRewritingReleasedText(t *testing.T) {
	r, _ := drive(t, Options{}, sse(toolEvents...))
	st := mustStream(t, r)
	released := "Let me look"
	if _, err := r.Tail(st, nil, ""); err == nil {
		t.Error("Tail continued a stream Head did not open")
	}
	mustHead(t, r)
	if _, err := r.Delta(0, released); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(p map[string]any){
		"different text":  func(p map[string]any) { p["content"] = "Let me not look that up." },
		"shorter text":    func(p map[string]any) { p["content"] = "Let me" },
		"no text":         func(p map[string]any) { p["content"] = nil },
		"reasoning first": func(p map[string]any) { p["content"] = []any{map[string]any{"type": "reasoning", "text": "x"}} },
		"call added": func(p map[string]any) {
			p["tool_calls"] = append(p["tool_calls"].([]any), map[string]any{"id": "toolu_9", "name": "f", "args": map[string]any{}})
		},
		"not a target":     func(p map[string]any) { p["extra"] = true },
		"text part edited": func(p map[string]any) { p["content"] = []any{map[string]any{"type": "text", "text": "Let me"}} },
	} {
		t.Run(name, func(t *testing.T) {
			target := st.Response().Project()
			edit(target)
			_, err := r.Tail(st, target, released)
			var wb *wire.WriteBackError
			if !errors.As(err, &wb) {
				t.Fatalf("err = %v, want a WriteBackError", err)
			}
		})
	}
	if _, err := r.Tail(st, nil, "Let me look that up. And more"); err == nil {
		t.Error("Tail accepted released text longer than the answer's")
	}
	if _, err := r.Tail(st, nil, "Let me look that up."[:7]+"\xff"); err == nil {
		t.Error("Tail accepted released text that is not UTF-8")
	}
	for _, other := range []string{"Let me", "", "Let me lo0k"} {
		if _, err := r.Tail(st, nil, other); err == nil {
			t.Errorf("Tail accepted released %q, not the text Head and Delta rendered", other)
		}
	}
	if _, err := r.Tail(st, nil, released); err != nil {
		t.Errorf("Tail refused the text rendered: %v", err)
	}
}

// Stream after done is what ReadStream returns for the same bytes, and
// failures are the same kinds.
func TestIncrementalStreamIsReadStream(t *testing.T) {
	fixtures := map[string]string{
		"plain":     sse(plainEvents...),
		"tools":     sse(toolEvents...),
		"cited":     sse(citedEvents...),
		"answer":    sse(streamEvents...),
		"crlf":      strings.ReplaceAll(sse(streamEvents...), "\n", "\r\n"),
		"bench":     string(stream200()),
		"removals":  sse(with(plainEvents, 9, false, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":42},"debug":"hidden"}`)...),
		"trailing":  sse(plainEvents...) + sse("content_block_delta", textDelta("0", "LATE")),
		"cut":       sse(plainEvents[:12]...),
		"error":     sse(plainEvents[0], plainEvents[1], "error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		"invalid":   sse(plainEvents[0], plainEvents[1], "content_block_delta", textDelta("0", "x")),
		"bad input": sse(with(toolEvents, 6, false, "content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"[1"}}`)...),
	}
	for name, data := range fixtures {
		for _, limit := range []int64{1 << 20, 200} {
			t.Run(name, func(t *testing.T) {
				want, wantErr := New(Options{}).ReadStream(nil, iotest.OneByteReader(strings.NewReader(data)), limit)
				r := New(Options{}).OpenStream(nil, iotest.OneByteReader(strings.NewReader(data)), limit)
				var err error
				for done := false; !done && err == nil; {
					done, err = r.Next()
				}
				if (err == nil) != (wantErr == nil) || (err != nil && !sameKind(err, wantErr)) {
					t.Fatalf("OpenStream err = %v, ReadStream err = %v", err, wantErr)
				}
				if err != nil {
					if _, err := r.Next(); err == nil {
						t.Error("Next after an error did not fail")
					}
					return
				}
				got := mustStream(t, r)
				if !jsonvalue.Equal(any(got.Response().Project()), any(want.Response().Project())) ||
					!jsonvalue.Equal(any(got.Response().Usage()), any(want.Response().Usage())) {
					t.Error("OpenStream assembles differently from ReadStream")
				}
				if got.BufferedBytes() != want.BufferedBytes() || r.BufferedBytes() != got.BufferedBytes() {
					t.Errorf("BufferedBytes = %d (reader %d), ReadStream's %d", got.BufferedBytes(), r.BufferedBytes(), want.BufferedBytes())
				}
				g, err1 := got.Release(nil)
				w, err2 := want.Release(nil)
				if err1 != nil || err2 != nil || !bytes.Equal(normalized(t, got, g), normalized(t, want, w)) {
					t.Errorf("releases differ (%v, %v)", err1, err2)
				}
			})
		}
	}
}

func sameKind(a, b error) bool {
	for _, k := range []error{wire.ErrBufferLimit, wire.ErrStreamCut, wire.ErrUpstreamEvent, wire.ErrResponseInvalid} {
		if errors.Is(a, k) != errors.Is(b, k) {
			return false
		}
	}
	var sa, sb *wire.StreamError
	return errors.As(a, &sa) && errors.As(b, &sb)
}

// A transformed rest replaces the upstream's: none of its text is
// rendered, not even as a replayed event.
func TestIncrementalTransformedTailLeaksNothing(t *testing.T) {
	r, _ := drive(t, Options{}, sse(plainEvents...))
	target := mustStream(t, r).Response().Project()
	target["content"] = "Hello [redacted]"
	out := release(t, r, []int{5}, target)
	for _, s := range []string{"wor", "code", `\u00dc`, "Ü"} {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("the released stream holds %q of the withheld text:\n%s", s, out)
		}
	}
	judged(t, Options{}, sdkAccumulate(t, out), target)
}

// The reader's limits and failures are ReadStream's, event by event.
func TestIncrementalLimitsAndFailures(t *testing.T) {
	for _, c := range []struct {
		name  string
		data  string
		limit int64
		kind  error
		after int // events Next reports before failing
	}{
		{"buffer limit", sse(plainEvents...), 400, wire.ErrBufferLimit, 2},
		{"cut", sse(plainEvents[:14]...), 1 << 20, wire.ErrStreamCut, 7},
		{"upstream error", sse(plainEvents[0], plainEvents[1], "error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), 1 << 20, wire.ErrUpstreamEvent, 1},
		{"invalid event", sse(plainEvents[0], plainEvents[1], plainEvents[2], plainEvents[3], "content_block_delta", textDelta("1", "x")), 1 << 20, wire.ErrResponseInvalid, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := New(Options{}).OpenStream(nil, iotest.OneByteReader(strings.NewReader(c.data)), c.limit)
			var err error
			n := 0
			for ; err == nil; n++ {
				_, err = r.Next()
			}
			var se *wire.StreamError
			if !errors.As(err, &se) || !errors.Is(err, c.kind) || n-1 != c.after {
				t.Fatalf("after %d events err = %v, want %v after %d", n-1, err, c.kind, c.after)
			}
			if _, err := r.Stream(); err == nil {
				t.Error("Stream after a failure returned a stream")
			}
			if _, err := r.Next(); err == nil {
				t.Error("Next after a failure read on")
			}
		})
	}
}

// An answer whose text goes on in further text blocks is released block
// by block: wherever the released text is cut, the blocks before stop and
// the next start at their own index, and anthropic-sdk-go (and the
// package's own reader) assemble the verdicted answer; after a tool_use
// the rest arrives in the tail.
func TestIncrementalClientAssemblesSeveralBlocks(t *testing.T) {
	for name, events := range map[string][]string{"three text blocks": blocksEvents, "text, tool_use, text": textToolTextEvents} {
		r0, _ := drive(t, Options{}, sse(events...))
		n := len(r0.Text())
		var cutSets [][]int
		for w := 1; w <= n; w++ {
			cutSets = append(cutSets, []int{w})
		}
		cutSets = append(cutSets, []int{3, 9, 10, 14}, []int{7, 10}, []int{10, n})
		edits := map[string]func(p map[string]any, released string){
			"allowed": nil,
			"last block rewritten": func(p map[string]any, released string) {
				parts := p["content"].([]any)
				last := obj(parts[len(parts)-1])
				start := len(joinedText(parts)) - len(last["text"].(string))
				if start < len(released) {
					last["text"] = released[start:] + "[rest rewritten]"
				} else {
					last["text"] = "[rewritten]"
				}
			},
		}
		for _, cuts := range cutSets {
			if cuts[len(cuts)-1] > n {
				continue
			}
			for ename, edit := range edits {
				t.Run(fmt.Sprintf("%s/%v/%s", name, cuts, ename), func(t *testing.T) {
					r, _ := drive(t, Options{}, sse(events...))
					text := r.Text()
					if !utf8.ValidString(text[:cuts[len(cuts)-1]]) || !utf8.ValidString(text[:cuts[0]]) {
						t.Skip("a cut inside a character")
					}
					target := mustStream(t, r).Response().Project()
					var tgt any
					if edit != nil {
						edit(target, text[:cuts[len(cuts)-1]])
						tgt = target
					}
					out := release(t, r, cuts, tgt)
					judged(t, Options{}, sdkAccumulate(t, out), target)
					again := readStream(t, Options{}, string(out))
					if !jsonvalue.Equal(any(again.Response().Project()), any(target)) {
						t.Errorf("the released stream reads back differently")
					}
				})
			}
		}
	}
}

// Tail refuses a verdict that changes a block the client already holds
// whole, or moves the boundary between released blocks.
func TestIncrementalTailRefusesRewritingStoppedBlocks(t *testing.T) {
	for name, edit := range map[string]func(parts []any) []any{
		"stopped block rewritten": func(parts []any) []any { obj(parts[0])["text"] = "Hi, wor"; return parts },
		"boundary moved": func(parts []any) []any {
			obj(parts[0])["text"], obj(parts[2])["text"] = "Hello, world", "! Über all."
			return parts
		},
		"empty block filled":    func(parts []any) []any { obj(parts[1])["text"] = "x"; return parts },
		"stopped block removed": func(parts []any) []any { return parts[1:] },
		"open block rewritten":  func(parts []any) []any { obj(parts[2])["text"] = "LD! Über all."; return parts },
	} {
		t.Run(name, func(t *testing.T) {
			r, _ := drive(t, Options{}, sse(blocksEvents...))
			st := mustStream(t, r)
			mustHead(t, r)
			// "Hello, world" released: block 0 stopped, block 2 open.
			if _, err := r.Delta(0, "Hello, world"); err != nil {
				t.Fatal(err)
			}
			target := st.Response().Project()
			target["content"] = edit(target["content"].([]any))
			_, err := r.Tail(st, target, "Hello, world")
			if !errors.As(err, new(*wire.WriteBackError)) {
				t.Fatalf("err = %v, want a WriteBackError", err)
			}
		})
	}
}
