package messages

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// Whatever stream is accepted, its release (replayed or synthesized)
// assembles to the projection the policy judged, and a release never
// carries an event the gateway did not assemble.
func FuzzStreamRelease(f *testing.F) {
	f.Add([]byte(sse(streamEvents...)))
	f.Add([]byte(strings.ReplaceAll(sse(streamEvents...), "\n", "\r\n")))
	f.Add([]byte(":comment\n\n" + sse(streamEvents[:4]...) + "id: 1\nretry: 5\n" + sse(streamEvents[4:]...)))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := New(Options{AllowServerTools: true}).ReadStream(nil, bytes.NewReader(data), 1<<16)
		if err != nil {
			return
		}
		want := st.Response().Project()
		out, err := st.Release(nil)
		if err != nil {
			t.Fatalf("an accepted stream cannot be released: %v", err)
		}
		again, err := New(Options{AllowServerTools: true}).ReadStream(nil, bytes.NewReader(out), 1<<20)
		if err != nil {
			t.Fatalf("the released stream does not read back: %v\n%s", err, out)
		}
		if !jsonvalue.Equal(any(again.Response().Project()), any(want)) {
			t.Fatalf("the released stream assembles differently")
		}
	})
}

// Whatever request is accepted round-trips untouched byte for byte.
func FuzzRequestRoundTrip(f *testing.F) {
	f.Add(claudeCodeBodyF(f))
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"},{"type":"text","text":"x"}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := New(Options{AllowServerTools: true}).ParseRequest(body, nil)
		if err != nil {
			return
		}
		out, err := r.UpstreamBody(r.Messages())
		if err != nil || !bytes.Equal(out, body) {
			t.Fatalf("untouched projection does not round-trip (%v)", err)
		}
	})
}

func claudeCodeBodyF(f *testing.F) []byte {
	f.Helper()
	b, err := readFixture()
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// Whatever the upstream sends, the incremental reader assembles what
// ReadStream assembles (or fails the same way); while Plain its Text is a
// prefix of the final answer's text; and Head, Deltas and Tail over the
// text read back to the judged projection.
func FuzzIncrementalStream(f *testing.F) {
	for _, evs := range [][]string{plainEvents, toolEvents, citedEvents, streamEvents} {
		f.Add([]byte(sse(evs...)))
	}
	f.Add([]byte(strings.ReplaceAll(sse(plainEvents...), "\n", "\r\n")))
	f.Add([]byte(sse(plainEvents[:10]...)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := New(Options{AllowServerTools: true})
		want, wantErr := s.ReadStream(nil, bytes.NewReader(data), 1<<16)
		r := s.OpenStream(nil, bytes.NewReader(data), 1<<16)
		var texts []string
		wasPlain := true
		var err error
		for done := false; !done && err == nil; {
			done, err = r.Next()
			if r.Plain() && !wasPlain {
				t.Fatal("Plain turned true again")
			}
			wasPlain = r.Plain()
			if r.Plain() {
				texts = append(texts, r.Text())
			}
		}
		if (err == nil) != (wantErr == nil) || (err != nil && !sameKind(err, wantErr)) {
			t.Fatalf("OpenStream err = %v, ReadStream err = %v", err, wantErr)
		}
		if err != nil {
			return
		}
		st, _ := r.Stream()
		proj := st.Response().Project()
		if !jsonvalue.Equal(any(proj), any(want.Response().Project())) {
			t.Fatal("OpenStream assembles differently from ReadStream")
		}
		content, _ := proj["content"].(string)
		if parts, ok := proj["content"].([]any); ok && len(parts) > 0 {
			p, _ := parts[0].(map[string]any)
			content, _ = p["text"].(string)
		}
		for _, x := range texts {
			if !strings.HasPrefix(content, x) {
				t.Fatalf("Text %q while plain is not a prefix of the answer's text", x)
			}
		}
		text := r.Text()
		if text == "" {
			return
		}
		half := len(text) / 2
		for half > 0 && !utf8.RuneStart(text[half]) {
			half--
		}
		out, err := r.Head()
		if err != nil {
			t.Fatalf("Head: %v", err)
		}
		for _, part := range [][2]int{{0, half}, {half, len(text)}} {
			d, err := r.Delta(part[0], text[part[0]:part[1]])
			if err != nil {
				t.Fatalf("Delta: %v", err)
			}
			out = append(out, d...)
		}
		tail, err := r.Tail(st, nil, text)
		if err != nil {
			t.Fatalf("Tail: %v", err)
		}
		again, err := s.ReadStream(nil, bytes.NewReader(append(out, tail...)), 1<<20)
		if err != nil {
			t.Fatalf("the incremental release does not read back: %v", err)
		}
		if !jsonvalue.Equal(any(again.Response().Project()), any(proj)) {
			t.Fatal("the incremental release assembles differently")
		}
	})
}
