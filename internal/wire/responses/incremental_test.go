package responses

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// plainRequest asks for a streamed answer with one function tool.
const plainRequest = `{"model":"gpt-5","input":"hi","stream":true,"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}}]}`

// plainEvents is an upstream stream whose message (output index 0) has
// one output_text part arriving as deltas, optionally followed by a
// function call.
func plainEvents(deltas []string, call bool) []string {
	return numbered(plainRaw(deltas, call))
}

// plainRaw is plainEvents without sequence numbers.
func plainRaw(deltas []string, call bool) []string {
	return itemsRaw([][][]string{{deltas}}, call)
}

// itemsRaw is a stream of assistant message items, one after the other:
// items[i][j] are the deltas of part j of item i (an output_text part),
// optionally followed by a function call; no sequence numbers.
func itemsRaw(items [][][]string, call bool) []string {
	ev := []string{
		`{"type":"response.created","response":` + snap + `}`,
		`{"type":"response.in_progress","response":` + snap + `}`,
	}
	var output []string
	for i, parts := range items {
		id := "msg_" + itoa(i+1)
		loc := `"item_id":"` + id + `","output_index":` + itoa(i)
		ev = append(ev, `{"type":"response.output_item.added","output_index":`+itoa(i)+`,"item":{"id":"`+id+`","type":"message","role":"assistant","status":"in_progress","content":[]}}`)
		var content []string
		for j, deltas := range parts {
			q := string(appendString(nil, strings.Join(deltas, "")))
			ploc := loc + `,"content_index":` + itoa(j)
			ev = append(ev, `{"type":"response.content_part.added",`+ploc+`,"part":{"type":"output_text","text":"","annotations":[]}}`)
			for _, d := range deltas {
				ev = append(ev, `{"type":"response.output_text.delta",`+ploc+`,"delta":`+string(appendString(nil, d))+`,"obfuscation":"zz"}`)
			}
			part := `{"type":"output_text","text":` + q + `,"annotations":[]}`
			ev = append(ev,
				`{"type":"response.output_text.done",`+ploc+`,"text":`+q+`}`,
				`{"type":"response.content_part.done",`+ploc+`,"part":`+part+`}`)
			content = append(content, part)
		}
		done := `{"id":"` + id + `","type":"message","role":"assistant","status":"completed","content":[` + strings.Join(content, ",") + `]}`
		ev = append(ev, `{"type":"response.output_item.done","output_index":`+itoa(i)+`,"item":`+done+`}`)
		output = append(output, done)
	}
	if call {
		oi := itoa(len(items))
		fc := `{"id":"fc_1","type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","status":"completed"}`
		ev = append(ev,
			`{"type":"response.output_item.added","output_index":`+oi+`,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"exec_command","arguments":"","status":"in_progress"}}`,
			`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":`+oi+`,"delta":"{\"cmd\":\"ls\"}"}`,
			`{"type":"response.output_item.done","output_index":`+oi+`,"item":`+fc+`}`)
		output = append(output, fc)
	}
	ev = append(ev, `{"type":"response.completed","response":{"id":"resp_1","object":"response","created_at":1,"status":"completed","error":null,"incomplete_details":null,"model":"gpt-5","output":[`+strings.Join(output, ",")+`],"usage":{"input_tokens":5,"output_tokens":7,"total_tokens":12}}}`)
	return ev
}

// numbered gives events consecutive sequence numbers from 0.
func numbered(ev []string) []string {
	out := make([]string, len(ev))
	for i, e := range ev {
		out[i] = strings.Replace(e, `{"type":"`+typeOf(e)+`"`, `{"type":"`+typeOf(e)+`","sequence_number":`+itoa(i), 1)
	}
	return out
}

func typeOf(e string) string {
	t := e[strings.Index(e, `"type":"`)+8:]
	return t[:strings.IndexByte(t, '"')]
}

func itoa(i int) string { return strconv.Itoa(i) }

// readAll runs an incremental reader to its end and returns it with the
// Plain and Text it reported after each event.
func readAll(t *testing.T, s *Surface, req wire.Request, r io.Reader) (wire.StreamReader, []bool, []string, error) {
	t.Helper()
	rd := s.OpenStream(req, r, 1<<20)
	var plains []bool
	var texts []string
	for {
		done, err := rd.Next()
		if err != nil {
			return rd, plains, texts, err
		}
		plains = append(plains, rd.Plain())
		texts = append(texts, rd.Text())
		if done {
			return rd, plains, texts, nil
		}
	}
}

// Next returns after each event even when the upstream has sent nothing
// more: the writer blocks after every event until Next has returned.
func TestIncrementalNextReturnsPerEvent(t *testing.T) {
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, plainRequest)
	for name, sep := range map[string]string{"LF": "\n", "CRLF": "\r\n", "CR": "\r"} {
		t.Run(name, func(t *testing.T) {
			events := plainEvents([]string{"Hel", "lo ", "world"}, true)
			pr, pw := io.Pipe()
			step := make(chan struct{})
			go func() {
				for _, e := range events {
					frame := strings.ReplaceAll("event: "+typeOf(e)+"\ndata: "+e+"\n\n", "\n", sep)
					if _, err := pw.Write([]byte(frame)); err != nil {
						return
					}
					if _, ok := <-step; !ok {
						return
					}
				}
				pw.Close()
			}()
			defer close(step)
			rd := s.OpenStream(req, pr, 1<<20)
			for i := range events {
				res := make(chan error, 1)
				var done bool
				go func() {
					var err error
					done, err = rd.Next()
					res <- err
				}()
				select {
				case err := <-res:
					if err != nil {
						t.Fatalf("event %d: %v", i, err)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("Next did not return after event %d was written", i)
				}
				if done != (i == len(events)-1) {
					t.Fatalf("event %d: done %v", i, done)
				}
				if i < len(events)-1 {
					step <- struct{}{}
				}
			}
			if rd.Text() != "Hello world" || rd.Plain() {
				t.Fatalf("text %q plain %v after a tool call", rd.Text(), rd.Plain())
			}
		})
	}
}

// Plain holds through one output_text part and turns false, for good, at
// the first event of anything else; Text stops there.
func TestIncrementalPlainTransitions(t *testing.T) {
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, plainRequest)
	plain := plainRaw([]string{"Hel", "lo"}, false)
	withCall := plainRaw([]string{"Hel", "lo"}, true)
	replace := func(ev []string, i int, old, new string) []string {
		out := append([]string{}, ev...)
		if !strings.Contains(out[i], old) {
			t.Fatalf("fixture %d lacks %s", i, old)
		}
		out[i] = strings.Replace(out[i], old, new, 1)
		return out
	}
	insert := func(ev []string, i int, e string) []string {
		return append(append(append([]string{}, ev[:i]...), e), ev[i:]...)
	}
	const ann = `"annotations":[{"type":"url_citation","url":"u","title":"t","start_index":0,"end_index":1}]`
	annotated := replace(replace(replace(plain, 7, `"annotations":[]`, ann), 8, `"annotations":[]`, ann), 9, `"annotations":[]`, ann)
	twoItems := itemsRaw([][][]string{{{"Hel", "lo"}}, {{" wor", "ld"}}}, false)
	const part1 = `{"type":"response.content_part.added","item_id":"msg_1","output_index":0,"content_index":1,"part":{"type":"output_text","text":"","annotations":[]}}`
	cases := []struct {
		name    string
		events  []string
		falseAt int // index of the first event after which Plain is false; -1 never
		text    string
		invalid bool // the stream itself is refused
	}{
		{"plain", plain, -1, "Hello", false},
		{"tool call after the text", withCall, 9, "Hello", false},
		{"reasoning first", streamRaw(), 1, "", false},
		{"annotation on the done part", annotated, 7, "Hello", false},
		{"annotation event", insert(plain, 6, `{"type":"response.output_text.annotation.added","item_id":"msg_1","output_index":0,"content_index":0,"annotation_index":0,"annotation":{"type":"url_citation","url":"u","title":"t","start_index":0,"end_index":1}}`), 6, "Hello", false},
		{"refusal part", replace(plain, 3, `{"type":"output_text","text":"","annotations":[]}`, `{"type":"refusal","refusal":""}`), 3, "", false},
		{"second content part", itemsRaw([][][]string{{{"Hel", "lo"}, {" wor", "ld"}}}, false), -1, "Hello world", false},
		{"second message item", twoItems, -1, "Hello world", false},
		{"empty items and parts between", itemsRaw([][][]string{{{"Hel"}, {}}, {}, {{}, {"lo"}}}, false), -1, "Hello", false},
		{"refusal in the second item", replace(twoItems, 10, `{"type":"output_text","text":"","annotations":[]}`, `{"type":"refusal","refusal":""}`), 10, "Hello", true},
		{"second part before the first is done", insert(plain, 6, part1), 6, "Hello", true},
		{"second item before the first is done", insert(plain, 8, `{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_2","type":"message","role":"assistant","status":"in_progress","content":[]}}`), 8, "Hello", true},
		{"a part done out of its order", insert(replace(plain, 7, `"content_index":0`, `"content_index":1`), 7, part1), 7, "Hello", true},
		{"unfinished status", replace(plain, 8, `"status":"completed"`, `"status":"in_progress"`), 8, "Hello", true},
		{"text before its part", append(plain[:3:3], plain[4:]...), 3, "", true},
		{"message not first", replace(plain, 2, `"content":[]`, `"content":[{"type":"output_text","text":"x","annotations":[]}]`), 2, "", true},
		{"no snapshot", plain[2:], 0, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, plains, texts, err := readAll(t, s, req, strings.NewReader(sse(numbered(c.events)...)))
			if err != nil && !c.invalid {
				t.Fatalf("read: %v", err)
			}
			for i, p := range plains {
				want := c.falseAt < 0 || i < c.falseAt
				if p != want {
					t.Fatalf("after event %d plain %v, want %v", i, p, want)
				}
			}
			if err == nil && texts[len(texts)-1] != c.text {
				t.Fatalf("text %q, want %q", texts[len(texts)-1], c.text)
			}
		})
	}
}

// streamRaw is the Codex fixture stream without sequence numbers.
func streamRaw() []string {
	ev := streamEvents("hello", "hello")
	for i, e := range ev {
		ev[i] = strings.Replace(e, `,"sequence_number":`+itoa(i), "", 1)
	}
	return ev
}

// release writes what the pipeline writes: Head at the first release,
// then one Delta per cut (byte offsets into the final Text), then Tail.
func release(t *testing.T, rd wire.StreamReader, cuts []int, target any) ([]byte, string, error) {
	t.Helper()
	text := rd.Text()
	head, err := rd.Head()
	if err != nil {
		t.Fatalf("head: %v", err)
	}
	out := append([]byte{}, head...)
	from := 0
	for _, w := range cuts {
		d, err := rd.Delta(from, text[from:w])
		if err != nil {
			t.Fatalf("delta [%d,%d): %v", from, w, err)
		}
		out = append(out, d...)
		from = w
	}
	st, err := rd.Stream()
	if err != nil {
		t.Fatal(err)
	}
	tail, err := rd.Tail(st, target, text[:from])
	return append(out, tail...), text[:from], err
}

// clientText is the text a client shows from the output_text deltas.
func clientText(t *testing.T, out []byte) string {
	t.Helper()
	var b strings.Builder
	for line := range strings.Lines(string(out)) {
		data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: ")
		if !ok || !strings.Contains(data, `"response.output_text.delta"`) {
			continue
		}
		v, err := jsonvalue.Decode([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(v.(map[string]any)["delta"].(string))
	}
	return b.String()
}

// Head, Deltas and Tail decode with openai-go to the verdicted answer,
// however the released text is cut, with and without a tool call after
// the text, for the projection and for transformed targets.
func TestIncrementalClientAssemblesVerdict(t *testing.T) {
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, plainRequest)
	deltas := []string{"The ", "answer ", "is ", "forty-two", "."}
	for _, call := range []bool{false, true} {
		body := sse(plainEvents(deltas, call)...)
		targets := map[string]func(map[string]any, string) map[string]any{
			"own projection": nil,
			"projection":     func(p map[string]any, _ string) map[string]any { return p },
			"rest rewritten": func(p map[string]any, released string) map[string]any {
				p["content"] = released + "[redacted]"
				return p
			},
			"rest removed": func(p map[string]any, released string) map[string]any {
				p["content"] = released
				return p
			},
			"length": func(p map[string]any, _ string) map[string]any {
				p["finish_reason"] = "length"
				p["tool_calls"] = []any{}
				return p
			},
		}
		if call {
			targets["call rewritten"] = func(p map[string]any, _ string) map[string]any {
				p["tool_calls"].([]any)[0].(map[string]any)["args"] = map[string]any{"cmd": "pwd"}
				return p
			}
			targets["call dropped"] = func(p map[string]any, _ string) map[string]any {
				p["tool_calls"], p["finish_reason"] = []any{}, "stop"
				return p
			}
		}
		for _, cuts := range [][]int{{1}, {4}, {4, 11}, {1, 2, 3, 10, 20}, {23}, {24}} {
			for name, mk := range targets {
				rd, _, _, err := readAll(t, s, req, strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				st, _ := rd.Stream()
				released := rd.Text()[:cuts[len(cuts)-1]]
				var target any
				if mk != nil {
					target = mk(st.Response().Project(), released)
				}
				out, _, err := release(t, rd, cuts, target)
				if err != nil {
					t.Fatalf("call %v cuts %v %s: tail: %v", call, cuts, name, err)
				}
				want := st.Response().Project()
				if target != nil {
					want = target.(map[string]any)
				}
				final, err := clientSees(t, out)
				if err != nil {
					t.Fatalf("call %v cuts %v %s: openai-go: %v", call, cuts, name, err)
				}
				if got := projectionOf(t, s, req, final); !jsonvalue.Equal(got, want) {
					t.Fatalf("call %v cuts %v %s: client holds %v, verdict %v", call, cuts, name, got, want)
				}
				if got := clientText(t, out); got != want["content"] {
					t.Fatalf("call %v cuts %v %s: deltas show %q, verdict %v", call, cuts, name, got, want["content"])
				}
				if u := final.Usage; u.InputTokens != 5 || u.OutputTokens != 7 {
					t.Fatalf("usage %+v", u)
				}
				// The gateway's own strict reader accepts the stream too.
				again, err := s.ReadStream(req, bytes.NewReader(out), 1<<20)
				if err != nil || !jsonvalue.Equal(again.Response().Project(), want) {
					t.Fatalf("call %v cuts %v %s: re-read: %v", call, cuts, name, err)
				}
				if c, _ := want["content"].(string); !strings.Contains(c, "forty-two.") && bytes.Contains(out, []byte("forty-two.")) {
					t.Fatalf("the withheld rest reached the client")
				}
			}
		}
	}
}

// Releasing while reading, as the pipeline does: each Delta right after
// the event that brought the text, the last byte held back until done.
func TestIncrementalInterleaved(t *testing.T) {
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, plainRequest)
	rd := s.OpenStream(req, iotest.OneByteReader(strings.NewReader(sse(plainEvents([]string{"a", "bc", "def"}, true)...))), 1<<20)
	var out []byte
	released := 0
	for {
		done, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		if w := len(rd.Text()) - 1; rd.Plain() && w > released {
			if released == 0 {
				h, err := rd.Head()
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, h...)
			}
			d, err := rd.Delta(released, rd.Text()[released:w])
			if err != nil {
				t.Fatal(err)
			}
			out, released = append(out, d...), w
		}
	}
	st, _ := rd.Stream()
	tail, err := rd.Tail(st, nil, rd.Text()[:released])
	if err != nil {
		t.Fatal(err)
	}
	final, err := clientSees(t, append(out, tail...))
	if err != nil {
		t.Fatal(err)
	}
	if got := projectionOf(t, s, req, final); !jsonvalue.Equal(got, st.Response().Project()) {
		t.Fatalf("client holds %v", got)
	}
}

// Tail refuses a target that does not continue the released text, and
// the renderings refuse calls out of order.
func TestIncrementalRefusals(t *testing.T) {
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, plainRequest)
	body := sse(plainEvents([]string{"Hello ", "world"}, true)...)
	for name, mk := range map[string]func(map[string]any) any{
		"different text": func(p map[string]any) any { p["content"] = "Goodbye"; return p },
		"shorter":        func(p map[string]any) any { p["content"] = "Hel"; return p },
		"no content":     func(p map[string]any) any { p["content"] = nil; return p },
		"refusal first": func(p map[string]any) any {
			p["content"] = []any{map[string]any{"type": "refusal", "refusal": "no"}, map[string]any{"type": "text", "text": "Hello world"}}
			return p
		},
		"not an object": func(map[string]any) any { return "x" },
	} {
		rd, _, _, err := readAll(t, s, req, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := rd.Stream()
		if _, _, err := release(t, rd, []int{6}, mk(st.Response().Project())); !errors.As(err, new(*wire.WriteBackError)) {
			t.Errorf("%s: tail %v, want a WriteBackError", name, err)
		}
	}
	rd, _, _, _ := readAll(t, s, req, strings.NewReader(body))
	if _, err := rd.Delta(0, "Hello"); err == nil {
		t.Error("Delta before Head")
	}
	if _, err := rd.Head(); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Head(); err == nil {
		t.Error("Head twice")
	}
	for _, c := range []struct {
		from int
		text string
	}{{1, "ello"}, {0, "Hellx"}, {0, "Hello world!"}} {
		if _, err := rd.Delta(c.from, c.text); err == nil {
			t.Errorf("Delta(%d, %q) accepted", c.from, c.text)
		}
	}
	st, _ := rd.Stream()
	if _, err := rd.Tail(st, nil, "Hello"); err == nil {
		t.Error("Tail with more released than written")
	}
	other, _ := s.ReadStream(req, strings.NewReader(body), 1<<20)
	if _, err := rd.Tail(other, nil, ""); err == nil {
		t.Error("Tail of a stream another reader read")
	}
	// Nothing plain: no head.
	rd, _, _, _ = readAll(t, s, mustParse(t, s, codexRequest), strings.NewReader(sse(streamEvents("hello", "hello")...)))
	if _, err := rd.Head(); err == nil {
		t.Error("Head without plain text")
	}
}

// incrementalFixtures are streams of every shape the package's tests use.
func incrementalFixtures() []string {
	synth, _ := synthesize([]byte(fixedAnswer))
	ev := streamEvents("hello", "hello")
	obf := append([]string{}, ev...)
	obf[5] = strings.Replace(obf[5], `"delta":"hello"`, `"delta":"hello","obfuscation":"zzz"`, 1)
	return []string{
		sse(ev...), string(synth), sse(obf...),
		sse(plainEvents([]string{"Hel", "lo"}, false)...), sse(plainEvents([]string{"a", "b"}, true)...),
		sse(numbered(itemsRaw([][][]string{{{"Hel", "lo "}, {"wor"}}, {}, {{"ld", "!"}}}, true))...),
		strings.ReplaceAll(sse(plainEvents([]string{"x"}, true)...), "\n", "\r\n"),
		"\xEF\xBB\xBF: keep-alive\n\n" + sse(ev...) + ": trailing\n\n",
		strings.TrimSuffix(sse(ev...), "\n\n"), // terminal event ended by EOF
		sse(streamEvents("hello", "evil")...), sse(ev[:11]...), sse(ev[:3]...) + "event: error\ndata: {\"type\":\"error\",\"sequence_number\":3}\n\n",
		sse(ev[0], `{"type":"response.mystery","sequence_number":1}`),
	}
}

// Stream after done is what ReadStream returns for the same bytes, and
// an error is the same error, whatever the read sizes.
func TestIncrementalMatchesReadStream(t *testing.T) {
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, codexRequest)
	for i, body := range incrementalFixtures() {
		for _, limit := range []int64{1 << 20, 200} {
			checkDifferential(t, s, req, []byte(body), limit, i)
		}
	}
}

func checkDifferential(t *testing.T, s *Surface, req wire.Request, body []byte, limit int64, i int) {
	t.Helper()
	// ReadStream reads through the terminal event as Next does: the same
	// read sizes hold the same bytes.
	want, werr := s.ReadStream(req, iotest.OneByteReader(bytes.NewReader(body)), limit)
	whole, _ := s.ReadStream(req, bytes.NewReader(body), limit)
	rd := s.OpenStream(req, iotest.OneByteReader(bytes.NewReader(body)), limit)
	var gerr error
	var plainTexts []string
	for {
		done, err := rd.Next()
		if err != nil || done {
			gerr = err
			break
		}
		if rd.Plain() {
			plainTexts = append(plainTexts, rd.Text())
		}
	}
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("fixture %d limit %d: ReadStream %v, incremental %v", i, limit, werr, gerr)
	}
	if werr != nil {
		return
	}
	for _, text := range plainTexts {
		if !strings.HasPrefix(finalContent(want), text) {
			t.Fatalf("fixture %d: plain text %q is not a prefix of the final content", i, text)
		}
	}
	got, err := rd.Stream()
	if err != nil {
		t.Fatal(err)
	}
	wr, _ := want.Release(nil)
	gr, _ := got.Release(nil)
	if !sameAnswer(got.Response().Project(), want.Response().Project()) || withoutMade(wr) != withoutMade(gr) ||
		got.BufferedBytes() != want.BufferedBytes() || rd.BufferedBytes() != got.BufferedBytes() ||
		whole == nil || !sameAnswer(whole.Response().Project(), got.Response().Project()) {
		t.Fatalf("fixture %d: incremental stream differs from ReadStream's: buffered %d/%d/%d of %d\n%s\n%s", i, got.BufferedBytes(), want.BufferedBytes(), rd.BufferedBytes(), len(body), gr, wr)
	}
}

// finalContent is the text of a stream's projection, or "".
func finalContent(st wire.Stream) string {
	if st == nil {
		return ""
	}
	return joinedText(st.Response().Project()["content"])
}

// A stream of exactly the limit reads as under a larger one, its last
// event dispatched at EOF (no blank line after it), as chat and messages
// read it.
func TestStreamOfExactlyTheLimit(t *testing.T) {
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, plainRequest)
	body := strings.TrimSuffix(sse(plainEvents([]string{"Hello"}, false)...), "\n")
	want, err := s.ReadStream(req, strings.NewReader(body), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadStream(req, iotest.OneByteReader(strings.NewReader(body)), int64(len(body)))
	if err != nil {
		t.Fatalf("a stream of exactly the limit: %v", err)
	}
	if !jsonvalue.Equal(any(got.Response().Project()), any(want.Response().Project())) {
		t.Error("a stream of exactly the limit assembles differently")
	}
	if _, err := s.ReadStream(req, strings.NewReader(body+"\n"), int64(len(body))); !errors.Is(err, wire.ErrBufferLimit) {
		t.Errorf("one byte past the limit: %v", err)
	}
}

func TestIncrementalLimitsAndErrors(t *testing.T) {
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, plainRequest)
	ev := plainEvents([]string{"Hello"}, false)
	for name, c := range map[string]struct {
		body  string
		limit int64
		kind  error
	}{
		"limit":       {sse(ev...), 300, wire.ErrBufferLimit},
		"cut":         {sse(ev[:len(ev)-1]...), 1 << 20, wire.ErrStreamCut},
		"error event": {sse(ev[:5]...) + "event: error\ndata: {\"type\":\"error\",\"sequence_number\":5}\n\n", 1 << 20, wire.ErrUpstreamEvent},
		"disagreeing": {sse(ev[:6]...) + sse(strings.Replace(ev[6], `"text":"Hello"`, `"text":"Hellx"`, 1)), 1 << 20, wire.ErrResponseInvalid},
	} {
		rd := s.OpenStream(req, strings.NewReader(c.body), c.limit)
		var err error
		for {
			var done bool
			if done, err = rd.Next(); err != nil || done {
				break
			}
		}
		var se *wire.StreamError
		if !errors.Is(err, c.kind) || !errors.As(err, &se) {
			t.Errorf("%s: %v, want %v", name, err, c.kind)
		}
		if rd.Plain() {
			t.Errorf("%s: still plain after an error", name)
		}
		if _, serr := rd.Stream(); serr == nil {
			t.Errorf("%s: a stream after an error", name)
		}
	}
	rd := s.OpenStream(mustParse(t, New(Options{Seal: testKeys}), plainRequest), strings.NewReader(""), 10)
	if _, err := rd.Next(); !errors.Is(err, wire.ErrStreamCut) {
		t.Errorf("empty stream: %v", err)
	}
}

// FuzzIncrementalMatchesReadStream: for any bytes, the incremental reader
// ends as ReadStream does; while plain its text is a prefix of the final
// content; a plain answer released whole through Head, Delta and Tail is
// a stream the package reads back to the same projection.
func FuzzIncrementalMatchesReadStream(f *testing.F) {
	for _, b := range incrementalFixtures() {
		f.Add([]byte(b))
	}
	s := New(Options{Seal: testKeys})
	req, err := s.ParseRequest([]byte(codexRequest), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkDifferential(t, s, req, body, 1<<16, 0)
		rd := s.OpenStream(req, bytes.NewReader(body), 1<<16)
		for {
			done, err := rd.Next()
			if err != nil {
				return
			}
			if done {
				break
			}
		}
		if !rd.Plain() || rd.Text() == "" {
			return
		}
		h, err := rd.Head()
		if err != nil {
			t.Fatal(err)
		}
		d, err := rd.Delta(0, rd.Text())
		if err != nil {
			t.Fatal(err)
		}
		st, _ := rd.Stream()
		tail, err := rd.Tail(st, nil, rd.Text())
		if err != nil {
			t.Fatal(err)
		}
		again, err := s.ReadStream(req, bytes.NewReader(append(append(h, d...), tail...)), 1<<20)
		if err != nil || !jsonvalue.Equal(again.Response().Project(), st.Response().Project()) {
			t.Fatalf("the incremental release does not read back: %v", err)
		}
	})
}

// Text released before the answer stopped being plain still ends in the
// verdicted answer: an annotation on the released part, and a reasoning
// item and a second message part after it.
func TestIncrementalTailAfterPlainEnded(t *testing.T) {
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, plainRequest)
	const ann = `"annotations":[{"type":"url_citation","url":"https://a.test/","title":"A","start_index":0,"end_index":3}]`
	annotated := plainRaw([]string{"Hel", "lo"}, false)
	for _, i := range []int{7, 8, 9} {
		annotated[i] = strings.Replace(annotated[i], `"annotations":[]`, ann, 1)
	}
	const rs = `{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"why"}],"encrypted_content":"E"}`
	withReasoning := plainRaw([]string{"Hel", "lo"}, false)
	last := len(withReasoning) - 1
	withReasoning[last] = strings.Replace(withReasoning[last], `]}],"usage"`, `]},`+rs+`],"usage"`, 1)
	withReasoning = append(withReasoning[:last:last],
		`{"type":"response.output_item.added","output_index":1,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
		`{"type":"response.output_item.done","output_index":1,"item":`+rs+`}`,
		withReasoning[last])
	twoParts := plainRaw([]string{"Hel", "lo"}, false)
	for _, i := range []int{8, 9} {
		twoParts[i] = strings.Replace(twoParts[i], `"annotations":[]}]`, `"annotations":[]},{"type":"refusal","refusal":"no more"}]`, 1)
	}
	for name, ev := range map[string][]string{"annotation": annotated, "reasoning after": withReasoning, "refusal part after": twoParts} {
		rd, plains, _, err := readAll(t, s, req, strings.NewReader(sse(numbered(ev)...)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rd.Plain() || !plains[5] {
			t.Fatalf("%s: plain %v", name, plains)
		}
		st, _ := rd.Stream()
		out, _, err := release(t, rd, []int{3}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		final, err := clientSees(t, out)
		if err != nil {
			t.Fatal(err)
		}
		if got := projectionOf(t, s, req, final); !jsonvalue.Equal(got, st.Response().Project()) {
			t.Fatalf("%s: client holds %v, verdict %v", name, got, st.Response().Project())
		}
	}
}

// joinedText is the text of a projection's content as the client joins
// it: a string, or its text parts one after the other.
func joinedText(content any) string {
	if s, ok := content.(string); ok {
		return s
	}
	var b strings.Builder
	list, _ := content.([]any)
	for _, e := range list {
		if p, _ := e.(map[string]any); p["type"] == "text" {
			s, _ := p["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// An answer whose text goes on in further parts and message items is
// released part by part: wherever the released text is cut, the parts
// before close and the next open in order, and openai-go (and the
// package's own strict reader) assemble the verdicted answer.
func TestIncrementalClientAssemblesSeveralParts(t *testing.T) {
	s := New(Options{})
	req := mustParse(t, s, plainRequest)
	bodies := map[string][]string{
		"two items":                    itemsRaw([][][]string{{{"The ", "answer "}}, {{"is ", "forty-two", "."}}}, false),
		"two parts in the second item": itemsRaw([][][]string{{{"The ", "answer "}}, {{"is "}, {"forty-two", "."}}}, true),
		"empty item and part between":  itemsRaw([][][]string{{{"The ", "answer "}, {}}, {}, {{"is forty-two."}}}, true),
	}
	targets := map[string]func(map[string]any, string) map[string]any{
		"own projection": nil,
		"projection":     func(p map[string]any, _ string) map[string]any { return p },
		"last part rewritten": func(p map[string]any, released string) map[string]any {
			content := p["content"].([]any)
			start := 0
			for _, e := range content[:len(content)-1] {
				start += len(e.(map[string]any)["text"].(string))
			}
			last := content[len(content)-1].(map[string]any)
			if start < len(released) {
				last["text"] = released[start:] + "[redacted]"
			} else {
				last["text"] = "[redacted]"
			}
			return p
		},
	}
	for bname, events := range bodies {
		body := sse(numbered(events)...)
		text := "The answer is forty-two."
		var cutSets [][]int
		for w := 1; w <= len(text); w++ {
			cutSets = append(cutSets, []int{w})
		}
		cutSets = append(cutSets, []int{4, 11, 14, 23}, []int{11, 12}, []int{1, 2, 3, 10, 20})
		for _, cuts := range cutSets {
			for name, mk := range targets {
				rd, _, _, err := readAll(t, s, req, strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if rd.Text() != text { // Text stops where the answer stops being plain
					t.Fatalf("%s: text %q", bname, rd.Text())
				}
				st, _ := rd.Stream()
				released := text[:cuts[len(cuts)-1]]
				var target any
				if mk != nil {
					target = mk(st.Response().Project(), released)
				}
				out, _, err := release(t, rd, cuts, target)
				if errors.As(err, new(*wire.WriteBackError)) && target != nil && len(released) > len("The answer ") {
					// A changed text is written back into the first
					// message item: it cannot continue a stream whose
					// first item is closed, and fails closed.
					continue
				}
				if err != nil {
					t.Fatalf("%s cuts %v %s: tail: %v", bname, cuts, name, err)
				}
				want := st.Response().Project()
				if target != nil {
					want = target.(map[string]any)
				}
				final, err := clientSees(t, out)
				if err != nil {
					t.Fatalf("%s cuts %v %s: openai-go: %v", bname, cuts, name, err)
				}
				if got := projectionOf(t, s, req, final); !jsonvalue.Equal(got, want) {
					t.Fatalf("%s cuts %v %s: client holds %v, verdict %v", bname, cuts, name, got, want)
				}
				if got, w := clientText(t, out), joinedText(want["content"]); got != w || final.OutputText() != w {
					t.Fatalf("%s cuts %v %s: deltas show %q, output_text %q, verdict %q", bname, cuts, name, got, final.OutputText(), w)
				}
				again, err := s.ReadStream(req, bytes.NewReader(out), 1<<20)
				if err != nil || !jsonvalue.Equal(again.Response().Project(), want) {
					t.Fatalf("%s cuts %v %s: re-read: %v\n%s", bname, cuts, name, err, out)
				}
			}
		}
	}
}

// Tail refuses a verdict that changes a part the client already holds
// whole, or moves the boundary between released parts, even when the
// joined text still begins with the released text.
func TestIncrementalRefusesRewritingClosedParts(t *testing.T) {
	s := New(Options{})
	req := mustParse(t, s, plainRequest)
	body := sse(numbered(itemsRaw([][][]string{{{"The ", "answer "}}, {{"is ", "forty-two."}}}, false))...)
	setTexts := func(texts ...string) func(map[string]any) any {
		return func(p map[string]any) any {
			content := p["content"].([]any)
			for i, t := range texts {
				content[i].(map[string]any)["text"] = t
			}
			return p
		}
	}
	for name, mk := range map[string]func(map[string]any) any{
		"closed part rewritten": setTexts("The reply ", "is forty-two."),
		"boundary moved":        setTexts("The answer is ", "forty-two."),
		"closed part removed": func(p map[string]any) any {
			p["content"] = p["content"].([]any)[1:]
			return p
		},
		"open part rewritten": setTexts("The answer ", "was forty-two."),
	} {
		rd, _, _, err := readAll(t, s, req, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := rd.Stream()
		// "The answer is " released: the first item closed, the second open.
		if _, _, err := release(t, rd, []int{14}, mk(st.Response().Project())); !errors.As(err, new(*wire.WriteBackError)) {
			t.Errorf("%s: tail %v, want a WriteBackError", name, err)
		}
	}
}
