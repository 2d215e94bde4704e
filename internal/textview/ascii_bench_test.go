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
