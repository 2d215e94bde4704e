package rawjson

import (
	"math/bits"

	"github.com/hooks-gateway/hooks-gateway/internal/swar"
)

// plainRun returns the offset of the first byte at or after i that a
// string checker must look at ('"', '\\' or a control byte), or len(b).
func plainRun(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := swar.Stops(swar.Load(b, i)); m != 0 {
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
		if m := swar.StopsOrHigh(swar.Load(b, i)); m != 0 {
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
