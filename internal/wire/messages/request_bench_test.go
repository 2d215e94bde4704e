package messages

import (
	"regexp"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// BenchmarkParseRequestClaudeCode measures the parse and projection of
// Claude Code's request shape, its thinking blobs sealed as the gateway
// handed them out (they are opened, and the body parsed again with them).
func BenchmarkParseRequestClaudeCode(b *testing.B) {
	s := New(Options{})
	body := sealedFixture(b, s)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.parse(body, wire.OpMessages); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseRequestNoBlobs is BenchmarkParseRequestClaudeCode without
// the assistant turns' thinking: one parse, nothing to open.
func BenchmarkParseRequestNoBlobs(b *testing.B) {
	body, err := readFixture()
	if err != nil {
		b.Fatal(err)
	}
	body = unthought.ReplaceAll(body, nil)
	s := New(Options{})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.parse(body, wire.OpMessages); err != nil {
			b.Fatal(err)
		}
	}
}

// unthought matches the fixture's thinking and redacted_thinking blocks.
var unthought = regexp.MustCompile(`\{"type": "(redacted_)?thinking", [^}]*\},\s*`)
