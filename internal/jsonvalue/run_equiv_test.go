package jsonvalue

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/cputime"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonmutate"
	"github.com/hooks-gateway/hooks-gateway/internal/swar"
)

// refPlainRun is the run scan (swar.IndexStopOrHighString) before it went straight to the flagged byte of
// a word, kept as the reference it must agree with.
func refPlainRun(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		w := swar.LoadString(s, i)
		q := w ^ (0x0101010101010101 * '"')
		b := w ^ (0x0101010101010101 * '\\')
		if (w|(w-0x0101010101010101*0x20)&^w|(q-0x0101010101010101)&^q|(b-0x0101010101010101)&^b)&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// sameRuns compares swar.IndexStopOrHighString with the old loop at every start offset of
// b (quotedLen and appendQuoted depend on b only through it).
func sameRuns(t *testing.T, b []byte) {
	t.Helper()
	for i := 0; i <= len(b); i++ {
		if got, want := swar.IndexStopOrHighString(string(b), i), refPlainRun(string(b), i); got != want {
			t.Fatalf("IndexStopOrHighString(%q, %d) = %d; old: %d", b, i, got, want)
		}
	}
}

// runCases: every byte class at every position of runs around the word
// size, doubled, and runs of backslashes before a quote.
func runCases() [][]byte {
	var out [][]byte
	specials := []string{`"`, `\`, "\x00", "\x1f", "\n", " ", "\x7f", "é", "😀", "\u2028", "\xff", "\xc3", `\\\"`}
	for n := 0; n < 20; n++ {
		for _, sp := range specials {
			for at := 0; at <= n; at++ {
				p := strings.Repeat("a", n)
				out = append(out, []byte(p[:at]+sp+p[at:]), []byte(p[:at]+sp+sp+p[at:]))
			}
		}
	}
	for c := range 256 {
		out = append(out, append(append([]byte(strings.Repeat("a", 9)), byte(c)), "bcdefgh"...))
	}
	return out
}

// refQuotedLen is quotedLen before it counted a word's escapes in place,
// kept as the reference it must agree with.
func refQuotedLen(s string) (int, bool) {
	n := len(s) + 2
	for i := swar.IndexStopOrHighString(s, 0); i < len(s); i = swar.IndexStopOrHighString(s, i) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\', '\b', '\f', '\n', '\r', '\t':
				n++
			default:
				n += 5
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return 0, false
		}
		if r == '\u2028' || r == '\u2029' {
			n += 3
		}
		i += size
	}
	return n, true
}

// sameQuotedLen compares quotedLen with the reference on b and every
// suffix of it (so every class of byte sits at every word offset).
func sameQuotedLen(t *testing.T, b []byte) {
	t.Helper()
	for i := 0; i <= len(b); i++ {
		s := string(b[i:])
		gn, gok := quotedLen(s)
		wn, wok := refQuotedLen(s)
		if gok != wok || gok && gn != wn {
			t.Fatalf("quotedLen(%q) = %d, %v; old: %d, %v", s, gn, gok, wn, wok)
		}
	}
}

func TestQuotedLenMatchesReference(t *testing.T) {
	for _, b := range runCases() {
		sameQuotedLen(t, b)
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 30000 {
		sameQuotedLen(t, jsonmutate.StringBytes(r, r.IntN(40)))
	}
}

func FuzzQuotedLen(f *testing.F) {
	for _, b := range runCases() {
		f.Add(b)
	}
	f.Fuzz(sameQuotedLen)
}

func TestPlainRunMatchesReference(t *testing.T) {
	for _, b := range runCases() {
		sameRuns(t, b)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 30000 {
		sameRuns(t, jsonmutate.StringBytes(r, r.IntN(40)))
	}
}

func FuzzPlainRun(f *testing.F) {
	for _, b := range runCases() {
		f.Add(b)
	}
	f.Fuzz(sameRuns)
}

// BenchmarkQuote sizes (quotedLen, and the reference it replaced) and
// writes (appendQuoted) the shared benchmark texts (jsonmutate.Texts), in
// process cpu-ns/op (steadier than wall time on a shared machine).
func BenchmarkQuote(b *testing.B) {
	for _, in := range jsonmutate.Texts() {
		for _, impl := range []struct {
			name string
			fn   func(string) (int, bool)
		}{{"quotedLen", quotedLen}, {"quotedLenOld", refQuotedLen}} {
			b.Run(impl.name+"/"+in.Name, func(b *testing.B) {
				cpu0 := cputime.Process()
				for b.Loop() {
					if _, ok := impl.fn(in.S); !ok {
						b.Fatal("refused")
					}
				}
				cputime.ReportPerOp(b, cpu0)
			})
		}
		b.Run("appendQuoted/"+in.Name, func(b *testing.B) {
			buf := make([]byte, 0, 4096)
			cpu0 := cputime.Process()
			for b.Loop() {
				buf, _ = appendQuoted(buf[:0], in.S)
			}
			cputime.ReportPerOp(b, cpu0)
		})
	}
}
