package rawjson

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/cputime"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonmutate"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
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
		check(jsonmutate.StringBytes(r, r.IntN(40)))
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
				cpu0 := cputime.Process()
				for b.Loop() {
					if impl.fn(s, 0) != len(s) {
						b.Fatal("bad end")
					}
				}
				cputime.ReportPerOp(b, cpu0)
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
			cpu0 := cputime.Process()
			for b.Loop() {
				if valueEndWith(body, 0, impl.fn) != len(body) {
					b.Fatal("bad end")
				}
			}
			cputime.ReportPerOp(b, cpu0)
		})
	}
	b.Run("ValueEnd", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		cpu0 := cputime.Process()
		for b.Loop() {
			if ValueEnd(body, 0) != len(body) {
				b.Fatal("bad end")
			}
		}
		cputime.ReportPerOp(b, cpu0)
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

// refCheckStr is checker.str's old byte loop.
func refCheckStr(b []byte, i int) (end int, escaped, ok bool) {
	for i++; i < len(b); i++ {
		switch ch := b[i]; {
		case ch == '"':
			return i + 1, escaped, true
		case ch < 0x20:
			return 0, false, false
		case ch == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(b) || !isHex(b[k]) {
						return 0, false, false
					}
				}
				i += 5
			default:
				return 0, false, false
			}
		}
	}
	return 0, false, false
}

// refStrictString is StrictString's old byte loop.
func refStrictString(b []byte, i int) (end int, escaped, ok bool) {
	for i++; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, escaped, true
		case c < 0x20:
			return 0, false, false
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				r, ok := jsonvalue.Hex4(b, i+2)
				if !ok || r >= 0xDC00 && r <= 0xDFFF {
					return 0, false, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+1 >= len(b) || b[i] != '\\' || b[i+1] != 'u' {
						return 0, false, false
					}
					r2, ok := jsonvalue.Hex4(b, i+2)
					if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
						return 0, false, false
					}
					i += 6
				}
			default:
				return 0, false, false
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, false
			}
			i += size
		}
	}
	return 0, false, false
}

type strScanner func([]byte, int) (int, bool, bool)

func checkStr(b []byte, i int) (int, bool, bool) { return (&checker{b: b}).str(i) }

// sameStringChecks compares the string checkers with their old loops at
// every start offset of b.
func sameStringChecks(t *testing.T, b []byte) {
	t.Helper()
	for _, p := range []struct {
		name     string
		got, ref strScanner
	}{{"checker.str", checkStr, refCheckStr}, {"StrictString", StrictString, refStrictString}} {
		for i := -1; i < len(b); i++ {
			e1, x1, ok1 := p.got(b, i)
			e2, x2, ok2 := p.ref(b, i)
			if e1 != e2 || x1 != x2 || ok1 != ok2 {
				t.Fatalf("%s(%q, %d) = %d, %v, %v; old loop: %d, %v, %v", p.name, b, i, e1, x1, ok1, e2, x2, ok2)
			}
		}
	}
}

func TestStringChecksMatchReference(t *testing.T) {
	for _, b := range stringInputs() {
		sameStringChecks(t, b)
	}
	for _, s := range benchStrings() {
		sameStringChecks(t, s)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		sameStringChecks(t, jsonmutate.StringBytes(r, r.IntN(40)))
	}
	// Long plain runs around the word boundaries, with one flagged byte.
	for n := 0; n < 24; n++ {
		for _, c := range []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xe9, 0xff} {
			for at := 0; at <= n; at++ {
				b := []byte(`"` + strings.Repeat("a", n) + `"`)
				b = append(b[:1+at], append([]byte{c}, b[1+at:]...)...)
				sameStringChecks(t, b)
			}
		}
	}
}

func FuzzStringChecks(f *testing.F) {
	for _, b := range stringInputs() {
		f.Add(b)
	}
	f.Fuzz(sameStringChecks)
}

func BenchmarkStringChecks(b *testing.B) {
	for name, s := range benchStrings() {
		for _, impl := range []struct {
			name string
			fn   strScanner
		}{{"checker.str/old", refCheckStr}, {"checker.str/new", checkStr},
			{"StrictString/old", refStrictString}, {"StrictString/new", StrictString}} {
			b.Run(name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				cpu0 := cputime.Process()
				for b.Loop() {
					if end, _, ok := impl.fn(s, 0); !ok || end != len(s) {
						b.Fatal("refused")
					}
				}
				cputime.ReportPerOp(b, cpu0)
			})
		}
	}
}

// BenchmarkCheckDocument checks the gateway benchmark's 2 KiB chat request.
func BenchmarkCheckDocument(b *testing.B) {
	body := chatRequest2KiB()
	b.SetBytes(int64(len(body)))
	cpu0 := cputime.Process()
	for b.Loop() {
		if _, ok, _ := CheckDocument(body); !ok {
			b.Fatal("refused")
		}
	}
	cputime.ReportPerOp(b, cpu0)
}
