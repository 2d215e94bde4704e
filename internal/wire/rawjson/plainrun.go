package rawjson

import (
	"encoding/binary"
	"math/bits"
)

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// The runs below test eight bytes at a time with the "has a zero byte" and
// "has a byte below n" word tests. Each test flags every byte it looks for
// and may also flag bytes above one of those (a borrow), never below, so
// the lowest flagged byte of a word is exactly the first byte looked for.

// stopBytes flags, in the high bit of each byte of w, '"', '\\' and the
// control bytes (bytes >= 0x80 are not flagged).
func stopBytes(w uint64) uint64 {
	q := w ^ (lsb * '"')
	s := w ^ (lsb * '\\')
	return ((w-lsb*0x20)&^w | (q-lsb)&^q | (s-lsb)&^s) & msb
}

// plainRun returns the offset of the first byte at or after i that a
// string checker must look at ('"', '\\' or a control byte), or len(b).
func plainRun(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := stopBytes(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' {
			break
		}
	}
	return i
}

// asciiRun returns the offset of the first byte at or after i that is
// '"', '\\', a control byte or >= 0x80, or len(b).
func asciiRun(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if m := stopBytes(w) | w&msb; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			break
		}
	}
	return i
}
