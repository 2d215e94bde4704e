package chat

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// streamRequest is a streamed chat request; usage asks for the usage chunk.
func streamRequest(t testing.TB, usage bool) wire.Request {
	t.Helper()
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true}`
	if usage {
		body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`
	}
	req, err := New(Options{}).ParseRequest([]byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// step is what the reader showed after one event.
type step struct {
	plain bool
	text  string
}

// readAll runs a reader to its end, recording Plain and Text after each
// event.
func readAll(t testing.TB, sr wire.StreamReader) ([]step, error) {
	t.Helper()
	var steps []step
	for range 1 << 20 {
		done, err := sr.Next()
		if err != nil || done {
			return steps, err
		}
		steps = append(steps, step{sr.Plain(), sr.Text()})
	}
	t.Fatal("Next never reported done")
	return nil, nil
}

func openText(t testing.TB, s string, usage bool) *streamReader {
	t.Helper()
	return New(Options{}).OpenStream(streamRequest(t, usage), strings.NewReader(s), 1<<20).(*streamReader)
}

func TestIncrementalNextReturnsPerEvent(t *testing.T) {
	// One write per chunk event, comments joined to the event they precede.
	var events []string
	var pending string
	for _, seg := range strings.SplitAfter(sseToolStream, "\n\n") {
		pending += seg
		if strings.Contains(seg, "data:") {
			events, pending = append(events, pending), ""
		}
	}
	pr, pw := io.Pipe()
	gate := make(chan struct{})
	go func() {
		defer pw.Close()
		for i, ev := range events {
			if i > 0 {
				if _, ok := <-gate; !ok {
					return
				}
			}
			if _, err := pw.Write([]byte(ev)); err != nil {
				return
			}
		}
	}()
	defer close(gate)
	sr := New(Options{}).OpenStream(streamRequest(t, false), pr, 1<<20)
	next := func() (bool, error) {
		type res struct {
			done bool
			err  error
		}
		ch := make(chan res, 1)
		go func() { d, err := sr.Next(); ch <- res{d, err} }()
		select {
		case r := <-ch:
			return r.done, r.err
		case <-time.After(5 * time.Second):
			pr.CloseWithError(errors.New("test timed out"))
			t.Fatal("Next waits for more than one event's bytes")
			return false, nil
		}
	}
	var texts []string
	for {
		done, err := next()
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		texts = append(texts, sr.Text())
		gate <- struct{}{}
	}
	if want := []string{"", "Checking ", "Checking now."}; len(texts) < 3 || !equalStrings(texts[:3], want) {
		t.Errorf("text after each event: %q, want to start %q", texts, want)
	}
	if len(texts) != len(events)-1 {
		t.Errorf("%d events dispatched, want %d", len(texts), len(events)-1)
	}
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

// TestIncrementalPlain: Plain turns false at the first event carrying
// anything but content, and stays false.
func TestIncrementalPlain(t *testing.T) {
	head := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`
	ev := func(delta string) string { return head + delta + `,"finish_reason":null}]}` + "\n\n" }
	end := head + `{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	tests := []struct {
		name   string
		stream string
		opts   Options
		plain  int // events after which Plain is still true
	}{
		{"text only", sseText("a", "b", "c"), Options{}, 5},
		{"tool call after text", sseToolStream, Options{}, 3},
		{"refusal", ev(`{"content":"a"}`) + ev(`{"refusal":"no"}`) + ev(`{"content":"b"}`) + end, Options{}, 1},
		{"empty refusal", ev(`{"content":"a"}`) + ev(`{"refusal":""}`) + end, Options{}, 1},
		{"null refusal stays plain", ev(`{"content":"a","refusal":null}`) + end, Options{}, 2},
		{"reasoning_content", ev(`{"content":"a"}`) + ev(`{"reasoning_content":"think"}`) + end, Options{}, 1},
		{"reasoning first", ev(`{"reasoning":"think"}`) + ev(`{"content":"a"}`) + end, Options{}, 0},
		{"reasoning_details", ev(`{"content":"a"}`) + ev(`{"reasoning_details":[{"type":"reasoning.text","text":"t"}]}`) + end, Options{}, 1},
		{"annotations", ev(`{"content":"a"}`) + ev(`{"annotations":[{"type":"url_citation","url_citation":{"url":"https://x","title":"x"}}]}`) + end, Options{}, 1},
		{"empty annotations stay plain", ev(`{"content":"a","annotations":[]}`) + end, Options{}, 2},
		{"allowed extra member", ev(`{"content":"a"}`) + ev(`{"x_note":"n"}`) + end, Options{AllowResponseMembers: []string{"x_note"}}, 1},
		{"tool call in the text chunk", ev(`{"content":"a","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`) + end, Options{}, 0},
		{"text after a tool call", ev(`{"content":"a"}`) + ev(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`) + ev(`{"content":"b"}`) + end, Options{}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.opts)
			sr := s.OpenStream(streamRequest(t, false), strings.NewReader(tc.stream), 1<<20)
			steps, err := readAll(t, sr)
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range steps {
				if want := i < tc.plain; st.plain != want {
					t.Errorf("after event %d: Plain %v, want %v", i+1, st.plain, want)
				}
			}
			checkTextPrefixes(t, sr, steps)
		})
	}
}

// checkTextPrefixes: while Plain, Text is a prefix of the final text (the
// content string, or its text part when something else came later); an
// answer still plain at the end projects as a string (or null) with no
// tool call.
func checkTextPrefixes(t *testing.T, sr wire.StreamReader, steps []step) {
	t.Helper()
	st, err := sr.Stream()
	if err != nil {
		t.Fatal(err)
	}
	proj := st.Response().Project()
	content := proj["content"]
	for i, x := range steps {
		if !x.plain {
			continue
		}
		if i > 0 && !steps[i-1].plain {
			t.Fatalf("Plain turned true again after event %d", i+1)
		}
		if !strings.HasPrefix(textOf(content), x.text) {
			t.Fatalf("after event %d Text is %q while plain, the final content is %s", i+1, x.text, mustJSON(t, content))
		}
	}
	if len(steps) > 0 && steps[len(steps)-1].plain != sr.Plain() {
		t.Fatal("Plain changed after the last event")
	}
	if _, isArray := content.([]any); sr.Plain() && (isArray || len(proj["tool_calls"].([]any)) > 0) {
		t.Fatalf("the answer ends plain but projects %s", mustJSON(t, proj))
	}
}

// TestIncrementalMatchesReadStream: over the corpus and the fixtures, at
// several limits and read sizes, the reader ends with exactly
// ReadStream's result.
func TestIncrementalMatchesReadStream(t *testing.T) {
	files, raws := readCorpus(t)
	for _, s := range []string{sseToolStream, crlf(sseToolStream), cr(sseToolStream), sseText("a", "é", "b"), "data: [DONE]", ""} {
		files, raws = append(files, "fixture"), append(raws, []byte(s))
	}
	for i, raw := range raws {
		for _, limit := range []int64{1 << 20, int64(len(raw)), int64(len(raw)) - 1, int64(len(raw)) / 2, 0} {
			for _, oneByte := range []bool{false, true} {
				differential(t, files[i], raw, limit, oneByte)
			}
		}
	}
}

func differential(t *testing.T, name string, raw []byte, limit int64, oneByte bool) {
	t.Helper()
	reader := func() io.Reader {
		if oneByte {
			return iotest.OneByteReader(bytes.NewReader(raw))
		}
		return bytes.NewReader(raw)
	}
	opts := ResponseOptions{id: testID, Model: "asked"}
	want, werr := ReadStream(reader(), limit, opts)
	sr := openStream(reader(), limit, opts, true)
	steps, gerr := readAll(t, sr)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%s (limit %d): ReadStream error %v, reader error %v", name, limit, werr, gerr)
	}
	if werr != nil {
		for _, kind := range []error{wire.ErrBufferLimit, wire.ErrStreamCut, wire.ErrUpstreamEvent, wire.ErrResponseInvalid} {
			if errors.Is(werr, kind) != errors.Is(gerr, kind) {
				t.Fatalf("%s: error kinds differ: %v, %v", name, werr, gerr)
			}
		}
		var se *wire.StreamError
		if !errors.As(gerr, &se) {
			t.Fatalf("%s: reader error %T is not a *wire.StreamError", name, gerr)
		}
		return
	}
	ws, err := sr.Stream()
	if err != nil {
		t.Fatal(err)
	}
	got := ws.(surfaceStream).Stream
	if !jsonvalue.Equal(got.Response().Project(), want.Response().Project()) ||
		!jsonvalue.Equal(got.Response().Usage(), want.Response().Usage()) ||
		got.Replayable() != want.Replayable() || got.BufferedBytes() != want.BufferedBytes() {
		t.Fatalf("%s (limit %d): the reader's stream differs from ReadStream's", name, limit)
	}
	for _, usage := range []bool{true, false} {
		a, err1 := got.Release(nil, usage)
		b, err2 := want.Release(nil, usage)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s: releases differ (%v, %v)", name, err1, err2)
		}
	}
	checkTextPrefixes(t, sr, steps)
}

// release plays the pipeline: after each event it releases the plain text
// up to the next cut (byte offsets into the final text, at rune
// boundaries), then renders the tail for target.
func release(t *testing.T, sr *streamReader, cuts []int, target func(wire.Stream) any) ([]byte, error) {
	t.Helper()
	var out []byte
	released := 0
	for {
		done, err := sr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		if !sr.Plain() {
			continue
		}
		text := sr.Text()
		w := released
		for _, c := range cuts {
			if c <= len(text) && c > w {
				w = c
			}
		}
		if w == released {
			continue
		}
		if released == 0 {
			h, err := sr.Head()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, h...)
		}
		d, err := sr.Delta(released, text[released:w])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d...)
		released = w
	}
	st, err := sr.Stream()
	if err != nil {
		t.Fatal(err)
	}
	var tgt any
	if target != nil {
		tgt = target(st)
	}
	if released == 0 {
		return st.Release(tgt)
	}
	tail, err := sr.Tail(st, tgt, sr.Text()[:released])
	if err != nil {
		return nil, err
	}
	return append(out, tail...), nil
}

// cutPlans are ways to split the released text: everything at once, each
// rune, halves, and a cut inside every other upstream chunk.
func cutPlans(text string) map[string][]int {
	plans := map[string][]int{"all": {len(text)}, "none": nil}
	var runes []int
	for i := range text {
		if i > 0 {
			runes = append(runes, i)
		}
	}
	plans["every rune"] = append(runes, len(text))
	half := len(text) / 2
	for half > 0 && half < len(text) && !utf8.RuneStart(text[half]) {
		half++
	}
	plans["halves"] = []int{half, len(text)}
	plans["prefix only"] = []int{half}
	return plans
}

// relCase is one incremental release: the bytes Head, Deltas and Tail
// wrote, and the verdicted target.
type relCase struct {
	name  string
	out   []byte
	want  map[string]any
	usage bool
	sr    *streamReader
}

// releaseCases plays the pipeline over text and tool-call streams, for
// several ways of cutting the released text, with the upstream's own
// projection and a transformed target (content = released + a different
// rest), with and without include_usage.
func releaseCases(t *testing.T) []relCase {
	withUsage := strings.Replace(sseText("Héllo", ", ", "wörld", "! ", "Done."), "data: [DONE]",
		`data: {"id":"chatcmpl-T","object":"chat.completion.chunk","created":1741570500,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}`+"\n\ndata: [DONE]", 1)
	streams := map[string]string{
		"text":            sseText("Héllo", ", ", "wörld", "! ", "Done."),
		"text_with_usage": withUsage,
		"text_then_calls": sseToolStream,
		"text_then_refusal": strings.Replace(sseText("Partial ", "answer"),
			`{},"finish_reason":"stop"`, `{"refusal":"no more"},"finish_reason":"stop"`, 1),
	}
	targets := map[string]func(wire.Stream) any{
		"projection": nil,
		"transformed": func(st wire.Stream) any {
			p := st.Response().Project()
			switch c := p["content"].(type) {
			case string:
				p["content"] = c + " [checked]"
			case []any:
				for _, part := range c {
					if m := part.(map[string]any); m["type"] == "text" {
						m["text"] = m["text"].(string) + " [checked]"
					}
				}
			}
			for _, c := range p["tool_calls"].([]any) {
				c.(map[string]any)["args"].(map[string]any)["checked"] = true
			}
			return p
		},
	}
	var cases []relCase
	for name, s := range streams {
		full := mustStream(t, s).Response().Project()
		for plan, cuts := range cutPlans(textOf(full["content"])) {
			for tname, target := range targets {
				for _, usage := range []bool{false, true} {
					c := relCase{name: name + "-" + strings.ReplaceAll(plan, " ", "_") + "-" + tname, usage: usage, want: full}
					if usage {
						c.name += "-usage"
					}
					c.sr = openText(t, s, usage)
					out, err := release(t, c.sr, cuts, target)
					if err != nil {
						t.Fatalf("%s: %v", c.name, err)
					}
					if target != nil {
						st, _ := c.sr.Stream()
						c.want = target(st).(map[string]any)
					}
					c.out = out
					cases = append(cases, c)
				}
			}
		}
	}
	return cases
}

// TestIncrementalReleaseDecodedByOpenAIGo: Head, Deltas and Tail are one
// stream openai-go's decoder and accumulator assemble to exactly the
// verdicted answer, and ReadStream assembles to the verdicted projection.
func TestIncrementalReleaseDecodedByOpenAIGo(t *testing.T) {
	for _, c := range releaseCases(t) {
		checkClientView(t, c.name, c.out, c.want, c.usage, c.sr)
	}
}

// TestIncrementalReleaseDecodedByOpenAIJS: the openai JS SDK's decoder and
// ChatCompletionStream assemble the same releases to the verdicted answer
// (skipped without node and e2e/node/node_modules, except under CI).
func TestIncrementalReleaseDecodedByOpenAIJS(t *testing.T) {
	cases := releaseCases(t)
	released := make(map[string][]byte, len(cases))
	for _, c := range cases {
		released[c.name+".sse"] = c.out
	}
	views := runJSHarness(t, writeReleased(t, released))
	if views == nil {
		t.Skip("no JS SDK")
	}
	for _, c := range cases {
		v, ok := views[c.name+".sse"]
		switch {
		case !ok:
			t.Fatalf("%s: the node harness reported nothing", c.name)
		case v.failed():
			t.Fatalf("%s: the JS SDK failed: %s", c.name, v.Error)
		}
		want := textOf(c.want["content"])
		if !eqText(v.Content, nonEmpty(want)) || !eqText(v.Streamed.Content, nonEmpty(want)) || !eqText(v.FinishReason, nonEmpty(c.want["finish_reason"].(string))) {
			t.Errorf("%s: the JS SDK shows %s, verdicted %s", c.name, dump(v), mustJSON(t, c.want))
		}
		calls := c.want["tool_calls"].([]any)
		if len(v.ToolCalls) != len(calls) {
			t.Fatalf("%s: the JS SDK assembled %d tool calls, verdicted %d", c.name, len(v.ToolCalls), len(calls))
		}
		for i, call := range calls {
			call := call.(map[string]any)
			args, err := jsonvalue.DecodeStrict([]byte(v.ToolCalls[i].Arguments))
			if err != nil || v.ToolCalls[i].ID != call["id"] || v.ToolCalls[i].Name != call["name"] || !jsonvalue.Equal(args, call["args"]) {
				t.Errorf("%s: the JS SDK's tool call %d differs from the verdicted one", c.name, i)
			}
		}
	}
}

// textOf is the text of a projected content value.
func textOf(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		for _, p := range v {
			if m := p.(map[string]any); m["type"] == "text" {
				return m["text"].(string)
			}
		}
	}
	return ""
}

func checkClientView(t *testing.T, name string, out []byte, want map[string]any, usage bool, sr *streamReader) {
	t.Helper()
	again, err := ReadStream(bytes.NewReader(out), int64(len(out)), ResponseOptions{})
	if err != nil {
		t.Fatalf("%s: the released stream does not parse: %v", name, err)
	}
	if got := again.Response().Project(); !jsonvalue.Equal(got, want) {
		t.Fatalf("%s: released stream assembles to %s, verdicted %s", name, mustJSON(t, got), mustJSON(t, want))
	}
	st, _ := sr.Stream()
	if u := st.Response().Usage(); usage && !jsonvalue.Equal(again.Response().Usage(), u) || !usage && again.Response().Usage() != nil {
		t.Fatalf("%s: usage %v released, upstream %v, asked %v", name, again.Response().Usage(), u, usage)
	}
	acc := accumulate(t, out)
	if len(acc.Choices) != 1 {
		t.Fatalf("%s: openai-go assembled %d choices", name, len(acc.Choices))
	}
	msg := acc.Choices[0].Message
	if msg.Content != textOf(want["content"]) || acc.Choices[0].FinishReason != want["finish_reason"] {
		t.Fatalf("%s: openai-go shows %q (finish %q), verdicted %s", name, msg.Content, acc.Choices[0].FinishReason, mustJSON(t, want))
	}
	calls := want["tool_calls"].([]any)
	if len(msg.ToolCalls) != len(calls) {
		t.Fatalf("%s: openai-go assembled %d tool calls, verdicted %d", name, len(msg.ToolCalls), len(calls))
	}
	for i, c := range calls {
		c := c.(map[string]any)
		args, err := jsonvalue.DecodeStrict([]byte(msg.ToolCalls[i].Function.Arguments))
		if err != nil || msg.ToolCalls[i].ID != c["id"] || msg.ToolCalls[i].Function.Name != c["name"] || !jsonvalue.Equal(args, c["args"]) {
			t.Fatalf("%s: openai-go tool call %d differs from the verdicted one", name, i)
		}
	}
	if usage && st.Response().Usage() != nil && acc.Usage.TotalTokens == 0 {
		t.Fatalf("%s: openai-go saw no usage", name)
	}
}

// TestIncrementalDeltaReplaysWholeChunks: a chunk wholly inside the range
// is the upstream's own bytes; a straddling one is split and synthesized.
func TestIncrementalDeltaReplaysWholeChunks(t *testing.T) {
	s := sseText("Hello", ", wor", "ld")
	events := strings.SplitAfter(s, "\n\n")
	sr := openText(t, s, false)
	for range 3 { // role chunk, "Hello", ", wor"
		if done, err := sr.Next(); done || err != nil {
			t.Fatal(done, err)
		}
	}
	if _, err := sr.Head(); err != nil {
		t.Fatal(err)
	}
	d, err := sr.Delta(0, "Hello, w")
	if err != nil {
		t.Fatal(err)
	}
	head := string(sr.head)
	want := replayedBy(sr, events[1]) + "data: " + head + `,"choices":[{"index":0,"delta":{"content":", w"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	if string(d) != want {
		t.Fatalf("Delta =\n%s\nwant\n%s", d, want)
	}
	if _, err := sr.Next(); err != nil { // "ld"
		t.Fatal(err)
	}
	d, err = sr.Delta(len("Hello, w"), "orld")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(d), "data: "+head) || !strings.HasSuffix(string(d), replayedBy(sr, events[3])) {
		t.Fatalf("Delta = %s: want the straddling part synthesized, then the last chunk replayed", d)
	}

	// A chunk without a choice index is synthesized (the JS SDK throws on
	// it), its neighbours replayed.
	noIndex := strings.Replace(s, `"choices":[{"index":0,"delta":{"content":", wor"}`, `"choices":[{"delta":{"content":", wor"}`, 1)
	sr = openText(t, noIndex, false)
	for range 4 {
		if _, err := sr.Next(); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = sr.Head()
	d, err = sr.Delta(0, "Hello, world")
	if err != nil {
		t.Fatal(err)
	}
	want = replayedBy(sr, events[1]) + "data: " + string(sr.head) + `,"choices":[{"index":0,"delta":{"content":", wor"},"logprobs":null,"finish_reason":null}]}` + "\n\n" + replayedBy(sr, events[3])
	if string(d) != want {
		t.Fatalf("Delta =\n%s\nwant\n%s", d, want)
	}

	// A stream that is not replayable (logprobs) is synthesized throughout.
	lp := strings.ReplaceAll(s, `{"content":"Hello"},"finish_reason":null`, `{"content":"Hello"},"logprobs":{"content":[]},"finish_reason":null`)
	sr = openText(t, lp, false)
	for range 3 {
		if _, err := sr.Next(); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = sr.Head()
	d, err = sr.Delta(0, "Hello, wor")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(d), "logprobs\":{") || strings.Count(string(d), "data: ") != 1 {
		t.Fatalf("Delta of a non-replayable stream = %s", d)
	}

	// Escaped content is compared by its text: a chunk holding the
	// released text is replayed, escapes and all.
	esc := strings.Replace(s, `{"content":"Hello"}`, `{"content":"Hel\u006co"}`, 1)
	escEvents := strings.SplitAfter(esc, "\n\n")
	sr = openText(t, esc, false)
	for range 2 {
		if _, err := sr.Next(); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = sr.Head()
	d, err = sr.Delta(0, "Hello")
	if err != nil {
		t.Fatal(err)
	}
	if string(d) != replayedBy(sr, escEvents[1]) {
		t.Fatalf("Delta of an escaped chunk = %s, want it replayed", d)
	}
}

// replayedBy is an sseText event as sr replays it: the upstream's bytes
// with its id replaced by sr's head.
func replayedBy(sr *streamReader, event string) string {
	return strings.Replace(event, `{"id":"chatcmpl-T"`, `{"id":"`+sr.p.asm.meta.id+`"`, 1)
}

// TestIncrementalHeadFixesMetadata: metadata first seen after Head does
// not reach later chunks, so openai-go keeps every chunk (it drops one
// whose id changes).
func TestIncrementalHeadFixesMetadata(t *testing.T) {
	s := `data: {"object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ab"},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"late","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"cd"},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"late","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	sr := openText(t, s, false)
	out, err := release(t, sr, []int{1, 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(`"late"`)) {
		t.Fatalf("a chunk carries metadata the head did not: %s", out)
	}
	if acc := accumulate(t, out); acc.Choices[0].Message.Content != "abcd" {
		t.Fatalf("openai-go shows %q", acc.Choices[0].Message.Content)
	}
}

func TestIncrementalTailRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content any
	}{
		{"different text", "Checking later."},
		{"shorter text", "Check"},
		{"null", nil},
		{"parts without the text", []any{map[string]any{"type": "refusal", "refusal": "no"}}},
	} {
		sr := openText(t, sseToolStream, false)
		var target map[string]any
		_, err := release(t, sr, []int{len("Checking no")}, func(st wire.Stream) any {
			target = st.Response().Project()
			target["content"] = tc.content
			return target
		})
		var wb *wire.WriteBackError
		if !errors.As(err, &wb) {
			t.Errorf("%s: Tail returned %v, want a *wire.WriteBackError", tc.name, err)
		}
		noSecret(t, err)
	}
	// A target CheckWriteBack refuses is refused too.
	sr := openText(t, sseToolStream, false)
	_, err := release(t, sr, []int{3}, func(st wire.Stream) any {
		p := st.Response().Project()
		p["tool_calls"] = []any{map[string]any{"id": "call_new", "name": "x", "args": map[string]any{}}}
		return p
	})
	var wb *wire.WriteBackError
	if !errors.As(err, &wb) {
		t.Errorf("added tool call: Tail returned %v, want a *wire.WriteBackError", err)
	}
}

func TestIncrementalMisuse(t *testing.T) {
	unopened := openText(t, sseText("ab", "cé", "tool"), false)
	if _, err := readAll(t, unopened); err != nil {
		t.Fatal(err)
	}
	if st, err := unopened.Stream(); err != nil {
		t.Fatal(err)
	} else if _, err := unopened.Tail(st, nil, ""); err == nil {
		t.Error("Tail before Head succeeded")
	}
	sr := openText(t, sseText("ab", "cé", "tool"), false)
	if _, err := sr.Head(); err == nil {
		t.Error("Head before any text succeeded")
	}
	for range 3 {
		if _, err := sr.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sr.Delta(0, "ab"); err == nil {
		t.Error("Delta before Head succeeded")
	}
	if _, err := sr.Head(); err != nil {
		t.Fatal(err)
	}
	if _, err := sr.Head(); err == nil {
		t.Error("a second Head succeeded")
	}
	for _, bad := range []struct {
		from int
		text string
	}{{1, "b"}, {0, "xy"}, {0, "abcé!"}, {0, "abc\xc3"}} {
		if _, err := sr.Delta(bad.from, bad.text); err == nil {
			t.Errorf("Delta(%d, %q) succeeded", bad.from, bad.text)
		}
	}
	if _, err := sr.Stream(); err == nil {
		t.Error("Stream before done succeeded")
	}
	if _, err := sr.Delta(0, "ab"); err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, sr); err != nil {
		t.Fatal(err)
	}
	st, _ := sr.Stream()
	if _, err := sr.Tail(st, nil, "a"); err == nil {
		t.Error("Tail with a released text other than the rendered one succeeded")
	}
	if _, err := sr.Tail(nil, nil, "ab"); err == nil {
		t.Error("Tail without the stream succeeded")
	}
	if done, err := sr.Next(); !done || err != nil {
		t.Errorf("Next after done = %v, %v", done, err)
	}
}

func TestIncrementalLimitsAndErrors(t *testing.T) {
	ev := []byte(`data: {"choices":[{"index":0,"delta":{"content":"x"}}]}` + "\n\n")
	cr := &countingReader{r: &endless{event: ev}}
	sr := openStream(cr, 4096, ResponseOptions{}, false)
	_, err := readAll(t, sr)
	if !errors.Is(err, wire.ErrBufferLimit) || cr.n > 4097 || sr.BufferedBytes() > 4096 {
		t.Fatalf("endless stream: %v after %d bytes", err, cr.n)
	}
	if _, err2 := sr.Next(); err2 != err {
		t.Errorf("Next after an error = %v", err2)
	}
	for _, tc := range []struct {
		stream string
		kind   error
	}{
		{sseText("a")[:40], wire.ErrStreamCut},
		{"data: {\"error\":{\"message\":\"boom\"}}\n\n", wire.ErrUpstreamEvent},
		{"event: error\ndata: {}\n\n", wire.ErrUpstreamEvent},
		{"data: {nope\n\n", wire.ErrResponseInvalid},
		{`data: {"choices":[{"index":1,"delta":{"content":"x"}}]}` + "\n\n", wire.ErrResponseInvalid},
	} {
		if _, err := readAll(t, openText(t, tc.stream, false)); !errors.Is(err, tc.kind) {
			t.Errorf("%q: %v, want %v", tc.stream, err, tc.kind)
		}
	}
	rerr := errors.New("reset")
	_, err = readAll(t, openStream(io.MultiReader(strings.NewReader(sseText("a")[:60]), iotest.ErrReader(rerr)), 1<<20, ResponseOptions{}, false))
	if !errors.Is(err, wire.ErrStreamCut) || !errors.Is(err, rerr) {
		t.Errorf("read error: %v", err)
	}
}

// FuzzIncremental: the reader agrees with ReadStream on any input, and a
// release cut at any rune boundary assembles to the projection.
func FuzzIncremental(f *testing.F) {
	for _, s := range []string{
		sseToolStream, crlf(sseToolStream), sseText("a", "bé", "c"), sseText(), "data: [DONE]",
		`data: {"choices":[{"index":0,"delta":{"content":"a","reasoning":"r"}}]}` + "\n\ndata: [DONE]\n\n",
		`data: {"id":"x","choices":[{"index":0,"delta":{"content":"a"}},{"index":0,"delta":{"content":"b"}}]}` + "\n\ndata: [DONE]\n\n",
	} {
		f.Add([]byte(s), uint32(len(s)), uint16(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, lim uint32, cut uint16) {
		limit := int64(lim % (1 << 20))
		want, werr := ReadStream(bytes.NewReader(data), limit, ResponseOptions{})
		sr := openStream(bytes.NewReader(data), limit, ResponseOptions{}, true)
		var out []byte
		released := 0
		for {
			done, err := sr.Next()
			if err != nil || done {
				if (err != nil) != (werr != nil) || err != nil && err.Error() != werr.Error() {
					t.Fatalf("ReadStream error %v, reader error %v", werr, err)
				}
				if err != nil {
					return
				}
				break
			}
			text := sr.Text()
			if !sr.Plain() || released > 0 || text == "" {
				continue
			}
			w := int(cut)%len(text) + 1
			if w < len(text) && !utf8.RuneStart(text[w]) {
				continue
			}
			h, err := sr.Head()
			if err != nil {
				t.Fatal(err)
			}
			d, err := sr.Delta(0, text[:w])
			if err != nil {
				t.Fatal(err)
			}
			out = append(append(out, h...), d...)
			released = w
		}
		st, err := sr.Stream()
		if err != nil {
			t.Fatal(err)
		}
		if !jsonvalue.Equal(st.Response().Project(), want.Response().Project()) {
			t.Fatal("projections differ")
		}
		if released == 0 {
			return
		}
		tail, err := sr.Tail(st, nil, sr.Text()[:released])
		if err != nil {
			t.Fatalf("Tail(projection): %v", err)
		}
		out = append(out, tail...)
		again, err := ReadStream(bytes.NewReader(out), int64(len(out)), ResponseOptions{})
		if err != nil {
			t.Fatalf("released stream does not parse: %v", err)
		}
		if !jsonvalue.Equal(again.Response().Project(), want.Response().Project()) {
			t.Fatalf("released stream assembles to %s, upstream %s", mustJSON(t, again.Response().Project()), mustJSON(t, want.Response().Project()))
		}
	})
}
