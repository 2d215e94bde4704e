package jcs

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/cputime"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonmutate"
	"github.com/hooks-gateway/hooks-gateway/internal/swar"
)

// refAppendString is appendString before it jumped to the first byte
// that is not plain, kept as the reference it must agree with.
func refAppendString(dst []byte, s string) ([]byte, bool) {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && refPlainASCII8(swar.LoadString(s, i)) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return dst, false
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), true
}

func refPlainASCII8(x uint64) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	quote := x ^ (ones * '"')
	bslash := x ^ (ones * '\\')
	flags := x | (x - ones*0x20) | (quote-ones)&^quote | (bslash-ones)&^bslash
	return flags&highs == 0
}

func sameAppendString(t *testing.T, s string) {
	t.Helper()
	got, gok := appendString([]byte("x"), s)
	want, wok := refAppendString([]byte("x"), s)
	if gok != wok || gok && !bytes.Equal(got, want) {
		t.Fatalf("appendString(%+q) = %+q, %v; old: %+q, %v", s, got, gok, want, wok)
	}
}

// stringCases: every special byte class at every position of strings
// around the word size, multi-byte and invalid UTF-8, runs of backslashes.
func stringCases() []string {
	var out []string
	specials := []string{`"`, `\`, "\x00", "\x1f", "\n", "\t", " ", "\x7f", "é", "€", "😀", "\u2028",
		"\xff", "\xc3", "\xed\xa0\x80", "\xf0\x9f\x98", `\\\"`}
	for n := 0; n < 20; n++ {
		for _, sp := range specials {
			for at := 0; at <= n; at++ {
				p := strings.Repeat("a", n)
				out = append(out, p[:at]+sp+p[at:], p[:at]+sp+sp+p[at:])
			}
		}
	}
	for k := 1; k <= 6; k++ {
		out = append(out, strings.Repeat(`\`, k)+`"`, "abc"+strings.Repeat(`\`, k))
	}
	return out
}

func TestAppendStringMatchesReference(t *testing.T) {
	for _, s := range stringCases() {
		sameAppendString(t, s)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 50000 {
		sameAppendString(t, string(jsonmutate.StringBytes(r, r.IntN(40))))
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringCases() {
		f.Add(s)
	}
	f.Fuzz(sameAppendString)
}

// BenchmarkAppendString escapes the shared benchmark texts
// (jsonmutate.Texts) and one chat message's content, with the old and the
// new loop.
func BenchmarkAppendString(b *testing.B) {
	inputs := append(jsonmutate.Texts(), jsonmutate.Text{Name: "chat", S: "Question 3: summarise the quarterly report for the finance team please."})
	for _, in := range inputs {
		for _, impl := range []struct {
			name string
			fn   func([]byte, string) ([]byte, bool)
		}{{"old", refAppendString}, {"new", appendString}} {
			b.Run(in.Name+"/"+impl.name, func(b *testing.B) {
				buf := make([]byte, 0, 4096)
				cpu0 := cputime.Process()
				for b.Loop() {
					buf, _ = impl.fn(buf[:0], in.S)
				}
				cputime.ReportPerOp(b, cpu0)
			})
		}
	}
}
