package messages

import (
	"bytes"
	"strings"
	"testing"

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
