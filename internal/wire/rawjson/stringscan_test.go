package rawjson

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The byte-at-a-time loops the fast string scanners replaced, kept as the
// reference they must agree with on every input.

func refStringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// stringInputs returns adversarial string bodies: runs of 1..6 backslashes
// before a quote, an escape at every position, unterminated and trailing
// backslash cases, multi-byte and invalid UTF-8, control bytes.
func stringInputs() [][]byte {
	var out [][]byte
	add := func(s string) { out = append(out, []byte(s)) }
	for n := 0; n <= 6; n++ {
		run := strings.Repeat(`\`, n)
		add(`"` + run + `"`)
		add(`"a` + run + `"b"`)
		add(`"` + run)
		add(`"abc` + run)
		add(`"x` + run + `"` + run + `"` + run + `"`)
		add(run + `"` + run + `"`)
	}
	base := "The quick brown fox jumps over the lazy dog, é€😀 \x01\x1f."
	for p := 0; p <= len(base); p++ {
		for _, esc := range []string{`\"`, `\\`, `\n`, `\u00e9`, `\uD83D\uDE00`, `\uDE00`, `\x`, `\u12`, "\x00", "\xff", `\`} {
			add(`"` + base[:p] + esc + base[p:] + `"`)
			add(`"` + base[:p] + esc)
		}
	}
	add("")
	add(`"`)
	add(`""`)
	add(`"` + strings.Repeat("a", 1000))
	add(`"` + strings.Repeat(`\"`, 100) + `"`)
	add(`"` + strings.Repeat(`\\`, 100) + `"`)
	return out
}

// randomString returns n random bytes drawn mostly from the bytes that
// matter to a string scanner.
func randomString(r *rand.Rand, n int) []byte {
	const alphabet = `"\\\\\\ab/u0E9fnrt` + "\x00\x1f\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xed\xa0\x80\xff"
	b := make([]byte, n)
	for i := range b {
		if r.IntN(4) == 0 {
			b[i] = byte(r.IntN(256))
		} else {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
	}
	return b
}

func TestStringEndMatchesReference(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		for i := -1; i <= len(b); i++ {
			if got, want := StringEnd(b, i), refStringEnd(b, i); got != want {
				t.Fatalf("StringEnd(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	}
	for _, b := range stringInputs() {
		check(b)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		check(randomString(r, r.IntN(40)))
	}
}

func FuzzStringEnd(f *testing.F) {
	for _, b := range stringInputs() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i := -1; i <= len(b); i++ {
			if got, want := StringEnd(b, i), refStringEnd(b, i); got != want {
				t.Fatalf("StringEnd(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	})
}

// Benchmark inputs: a 1 KiB prose string, a short key, a 1 KiB string
// with an escape about every 20 bytes, and the 2 KiB chat request.
func benchStrings() map[string][]byte {
	prose := strings.Repeat("Please summarise the quarterly report and list the open items. ", 17)[:1024]
	var esc strings.Builder
	for esc.Len() < 1024 {
		esc.WriteString(`line of text here\n`)
		esc.WriteString(`say \"hi\" now \u00e9 `)
	}
	return map[string][]byte{
		"prose1k":   []byte(`"` + prose + `"`),
		"key":       []byte(`"content"`),
		"escapes":   []byte(`"` + esc.String() + `"`),
		"utf8prose": []byte(`"` + strings.Repeat("Grüße aus Zürich — ça va? 😀 ", 40) + `"`),
	}
}

func BenchmarkStringEnd(b *testing.B) {
	for name, s := range benchStrings() {
		for _, impl := range []struct {
			name string
			fn   func([]byte, int) int
		}{{"old", refStringEnd}, {"new", StringEnd}} {
			b.Run(name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					if impl.fn(s, 0) != len(s) {
						b.Fatal("bad end")
					}
				}
			})
		}
	}
}

// BenchmarkValueEnd skips the gateway benchmark's 2 KiB chat request
// with ValueEnd over the old and the new StringEnd.
func BenchmarkValueEnd(b *testing.B) {
	body := chatRequest2KiB()
	for _, impl := range []struct {
		name string
		fn   func([]byte, int) int
	}{{"old", refStringEnd}, {"new", StringEnd}} {
		b.Run(impl.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if valueEndWith(body, 0, impl.fn) != len(body) {
					b.Fatal("bad end")
				}
			}
		})
	}
	b.Run("ValueEnd", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if ValueEnd(body, 0) != len(body) {
				b.Fatal("bad end")
			}
		}
	})
}

// valueEndWith is ValueEnd's object and array case with the string
// scanner as a parameter.
func valueEndWith(b []byte, i int, stringEnd func([]byte, int) int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i) - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(b)
}

// chatRequest2KiB is proxy's benchmark request (request2KiB).
func chatRequest2KiB() []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-test","messages":[{"role":"system","content":"You are a careful assistant."}`)
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&b, `,{"role":"user","content":"Question %d: summarise the quarterly report for the finance team please."}`, i)
		fmt.Fprintf(&b, `,{"role":"assistant","content":"Answer %d: revenue grew, costs fell, and the outlook is stable overall."}`, i)
	}
	b.WriteString(`,{"role":"user","content":"And what should we do next quarter?"}],"temperature":0.2,"stream":false}`)
	return []byte(b.String())
}
