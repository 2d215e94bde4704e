// Package jsonmutate makes random edits to JSON documents for the
// equivalence tests of the fast parsers: each fast path must answer a
// mutated document exactly as the slower path it replaced.
package jsonmutate

import "math/rand/v2"

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
