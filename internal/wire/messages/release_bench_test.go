package messages

import (
	"bytes"
	"testing"
)

// BenchmarkReleaseJSON measures an answer's parse, projection and release
// (thinking with a signature, a cited text block, two tool calls).
func BenchmarkReleaseJSON(b *testing.B) {
	body := []byte(answerJSON)
	s := New(Options{})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := s.ParseResponse(nil, body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Release(nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReleaseStream200Deltas measures the read, assembly and release
// of a 200-delta stream.
func BenchmarkReleaseStream200Deltas(b *testing.B) {
	data := stream200()
	s := New(Options{})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		st, err := s.ReadStream(nil, bytes.NewReader(data), 8<<20)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.Release(nil); err != nil {
			b.Fatal(err)
		}
	}
}
