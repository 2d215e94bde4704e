// Package swar finds the bytes a JSON string scanner must stop at, eight
// bytes at a time (SIMD within a register): the string scanners of
// rawjson, jsonvalue and jcs share these word tests.
//
// The tests are the classic "has a zero byte" and "has a byte below n".
// Each flags, in the high bit of a byte, every byte it looks for, and may
// also flag a byte above one of those (a borrow) but never one below, so
// the lowest flagged byte of a word is exactly the first byte looked for;
// higher flags are only hints.
package swar

import (
	"encoding/binary"
	"math/bits"
)

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// Stops flags '"', '\\' and the control bytes (below 0x20) among the
// eight bytes of w (little-endian: byte 0 is the first).
func Stops(w uint64) uint64 {
	q := w ^ (lsb * '"')
	s := w ^ (lsb * '\\')
	return ((w-lsb*0x20)&^w | (q-lsb)&^q | (s-lsb)&^s) & msb
}

// StopsBelowHigh is Stops without the borrows: it flags exactly the
// stop bytes ('"', '\\' and the controls) that lie below the first byte
// >= 0x80 of w (all of them when w has none), so a caller can count them
// or visit each. The sums below carry only out of bytes >= 0x80, into
// the bytes above them, which the last step clears.
func StopsBelowHigh(w uint64) uint64 {
	q := w ^ (lsb * '"')
	s := w ^ (lsb * '\\')
	// A byte b < 0x80 keeps its high bit through +0x60 when b >= 0x20, and
	// q or s through +0x7f when they are not 0 (b is not '"' or '\\').
	m := ^((w + lsb*0x60) & (q + lsb*0x7f) & (s + lsb*0x7f)) & msb
	if h := High(w); h != 0 {
		m &= h&-h - 1 // the bytes below the lowest high byte
	}
	return m
}

// StopsOrHigh is Stops with the bytes >= 0x80 flagged too: the bytes that
// need escaping or UTF-8 validation.
func StopsOrHigh(w uint64) uint64 { return Stops(w) | w&msb }

// High flags the bytes >= 0x80 of w.
func High(w uint64) uint64 { return w & msb }

// Load reads b[i:i+8] little-endian.
func Load(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

// LoadString reads s[i:i+8] little-endian; the compiler makes it one load.
func LoadString(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// IndexStop returns the index of the first byte of b at or after i that
// Stops flags ('"', '\\' or a control byte), or len(b).
func IndexStop(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := Stops(Load(b, i)); m != 0 {
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

// IndexStopOrHigh is IndexStop with the bytes >= 0x80 stopped at too.
func IndexStopOrHigh(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := StopsOrHigh(Load(b, i)); m != 0 {
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

// IndexHighString returns the index of the first byte of s at or after i
// that is >= 0x80 (the first byte of a non-ASCII code point or an invalid
// byte), or len(s).
func IndexHighString(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		if m := High(LoadString(s, i)); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			break
		}
	}
	return i
}

// IndexStopOrHighString is IndexStopOrHigh over a string.
func IndexStopOrHighString(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		if m := StopsOrHigh(LoadString(s, i)); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			break
		}
	}
	return i
}
