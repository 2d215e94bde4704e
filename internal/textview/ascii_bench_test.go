package textview

import (
	"strings"
	"testing"
)

func BenchmarkOfASCII(b *testing.B) {
	s := strings.Repeat("Release 1.26.3 shipped on 2024-01-15 with 42 fixes; ", 1300)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if v := Of(s); !v.Same() {
			b.Fatal("not same")
		}
	}
}

// BenchmarkOfMostlyASCII: a coding agent's system prompt, ASCII prose
// with a few typographic characters, one of which (U+2026) NFKC changes:
// the view must be built, and nearly all of it is copied as it is.
func BenchmarkOfMostlyASCII(b *testing.B) {
	s := strings.Repeat("You are a coding agent. Don’t run `rm -rf`; ask first.\nRead the file, then edit it.\n", 250) + "Wait…"
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		if v := Of(s); v.Same() {
			b.Fatal("same")
		}
	}
}
