package messages

import (
	"os"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// BenchmarkParseRequestClaudeCode measures the parse and projection of
// Claude Code's request shape.
func BenchmarkParseRequestClaudeCode(b *testing.B) {
	body, err := os.ReadFile("testdata/claude_code_request.json")
	if err != nil {
		b.Fatal(err)
	}
	s := New(Options{})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.parse(body, wire.OpMessages); err != nil {
			b.Fatal(err)
		}
	}
}
