// Package jsonmutate makes random edits to JSON documents for the
// equivalence tests of the fast parsers: each fast path must answer a
// mutated document exactly as the slower path it replaced.
package jsonmutate

import (
	"math/rand/v2"
	"strings"
)

// alphabet is what an edit inserts or writes: JSON's syntax, the letters
// of its literals and escapes, digits and number signs, and bytes a
// string may not hold raw (NUL, a control byte, invalid UTF-8).
const alphabet = "{}[]\":,\\ tfnrue0123456789.-+Eaxu\x00\x1f\xff"

// Bytes returns a copy of b with one to three random byte edits (an
// insertion, an overwrite or a deletion each), biased to JSON syntax. b is
// not changed.
func Bytes(rng *rand.Rand, b []byte) []byte {
	out := append([]byte(nil), b...)
	for range 1 + rng.IntN(3) {
		c := alphabet[rng.IntN(len(alphabet))]
		switch k := rng.IntN(3); {
		case len(out) == 0 || k == 0:
			at := rng.IntN(len(out) + 1)
			out = append(out[:at], append([]byte{c}, out[at:]...)...)
		case k == 1:
			out[rng.IntN(len(out))] = c
		default:
			at := rng.IntN(len(out))
			out = append(out[:at], out[at+1:]...)
		}
	}
	return out
}

// stringAlphabet is what a string scanner must get right: quotes,
// backslashes and escape letters, plain ASCII, controls and DEL, and UTF-8
// of every length (é, U+2028, €, an emoji), an encoded surrogate and a
// byte no UTF-8 holds.
const stringAlphabet = "ab /\"\\\\\\u0E9fnrt\n\t\x00\x1f\x7f\xc3\xa9\xe2\x80\xa8\xe2\x82\xac\xf0\x9f\x98\x80\xed\xa0\x80\xff"

// StringBytes returns n random bytes for string scanners' equivalence
// tests: three in four from stringAlphabet, the rest any byte.
func StringBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		if rng.IntN(4) == 0 {
			b[i] = byte(rng.IntN(256))
		} else {
			b[i] = stringAlphabet[rng.IntN(len(stringAlphabet))]
		}
	}
	return b
}

// Text is a named benchmark input.
type Text struct{ Name, S string }

// Texts are the strings the string scanners' and escapers' benchmarks
// share: a 1 KiB prose string, a short key, a 1 KiB string with an escape
// about every 20 bytes and a non-ASCII prose string.
func Texts() []Text {
	var esc strings.Builder
	for esc.Len() < 1024 {
		esc.WriteString("line of text here\n")
		esc.WriteString(`say "hi" now é `)
	}
	return []Text{
		{"prose1k", strings.Repeat("Please summarise the quarterly report and list the open items. ", 17)[:1024]},
		{"key", "content"},
		{"escapes1k", esc.String()},
		{"utf8prose", strings.Repeat("Grüße aus Zürich — ça va? 😀 ", 40)},
	}
}
