package wire

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// LineEnd must agree with bytes.IndexAny(b, "\r\n") on every input.
func TestLineEndMatchesIndexAny(t *testing.T) {
	cases := []string{"", "a", "\n", "\r", "\r\n", "\n\r", "abc", "ab\ncd\r", "ab\rcd\n", "data: x\r\n\r\n", "x\x00\n", "é\r"}
	for _, c := range cases {
		if got, want := LineEnd([]byte(c)), bytes.IndexAny([]byte(c), "\r\n"); got != want {
			t.Errorf("LineEnd(%q) = %d, want %d", c, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab\r\n\xff ")
	for n := range 20000 {
		b := make([]byte, rng.IntN(40))
		if n%10 == 0 { // across window boundaries
			b = make([]byte, rng.IntN(4*lineEndWindow))
			alphabet = []byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n")
		} else {
			alphabet = []byte("ab\r\n\xff ")
		}
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if got, want := LineEnd(b), bytes.IndexAny(b, "\r\n"); got != want {
			t.Fatalf("LineEnd(%q) = %d, want %d", b, got, want)
		}
	}
}

func FuzzLineEnd(f *testing.F) {
	f.Add([]byte("data: {}\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := LineEnd(b), bytes.IndexAny(b, "\r\n"); got != want {
			t.Fatalf("LineEnd(%q) = %d, want %d", b, got, want)
		}
	})
}

// BenchmarkLineEnd scans a 200-chunk stream's lines, against IndexAny.
func BenchmarkLineEnd(b *testing.B) {
	line := []byte(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","choices":[{"index":0,"delta":{"content":"The report shows steady growth."},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	stream := bytes.Repeat(line, 200)
	for _, bc := range []struct {
		name string
		f    func([]byte) int
	}{{"LineEnd", LineEnd}, {"IndexAny", func(b []byte) int { return bytes.IndexAny(b, "\r\n") }}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				for pos := 0; pos < len(stream); {
					pos += bc.f(stream[pos:]) + 1
				}
			}
		})
	}
}
