package responses

import (
	"strings"
	"testing"
)

// BenchmarkReadStream reads the Codex-shaped fixture stream whole.
func BenchmarkReadStream(b *testing.B) {
	s := New(Options{})
	req, err := s.ParseRequest([]byte(codexRequest), nil)
	if err != nil {
		b.Fatal(err)
	}
	body := sse(streamEvents("hello", "hello")...)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := s.ReadStream(req, strings.NewReader(body), 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}
