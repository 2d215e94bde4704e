package swar

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// The lowest byte each test flags is exactly the first byte it looks for,
// and a word without such a byte is not flagged: over every byte value at
// every position, and random words.
func TestFirstFlaggedIsExact(t *testing.T) {
	stop := func(c byte) bool { return c < 0x20 || c == '"' || c == '\\' }
	stopOrHigh := func(c byte) bool { return stop(c) || c >= 0x80 }
	check := func(b [8]byte) {
		w := Load(b[:], 0)
		if w != LoadString(string(b[:]), 0) {
			t.Fatalf("Load and LoadString differ on % x", b)
		}
		for _, tc := range []struct {
			name string
			mask uint64
			is   func(byte) bool
		}{{"Stops", Stops(w), stop}, {"StopsOrHigh", StopsOrHigh(w), stopOrHigh}} {
			want := 8
			for i, c := range b {
				if tc.is(c) {
					want = i
					break
				}
			}
			got := 8
			if tc.mask != 0 {
				got = bits.TrailingZeros64(tc.mask) / 8
			}
			if got != want {
				t.Fatalf("%s(% x): first flagged byte %d, want %d", tc.name, b, got, want)
			}
		}
	}
	var b [8]byte
	for i := range b {
		b[i] = 'a'
	}
	for pos := range 8 {
		for c := range 256 {
			w := b
			w[pos] = byte(c)
			check(w)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var w [8]byte
		for i := range w {
			w[i] = byte(r.IntN(256))
		}
		check(w)
	}
	if High(Load([]byte("abc\x80defg"), 0)) == 0 || High(LoadString("abcdefgh", 0)) != 0 {
		t.Error("High")
	}
}

// The index scans agree with a byte-at-a-time loop from every offset, and
// the byte and string forms with each other, over random bytes biased to
// the bytes they stop at.
func TestIndexMatchesByteLoop(t *testing.T) {
	stop := func(c byte) bool { return c < 0x20 || c == '"' || c == '\\' }
	stopOrHigh := func(c byte) bool { return stop(c) || c >= 0x80 }
	high := func(c byte) bool { return c >= 0x80 }
	ref := func(b []byte, i int, is func(byte) bool) int {
		for ; i < len(b) && !is(b[i]); i++ {
		}
		return i
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = 'a' + byte(r.IntN(26))
			if r.IntN(12) == 0 {
				b[i] = byte(r.IntN(256))
			}
		}
		for i := 0; i <= len(b); i++ {
			if got, want := IndexStop(b, i), ref(b, i, stop); got != want {
				t.Fatalf("IndexStop(%q, %d) = %d, want %d", b, i, got, want)
			}
			want := ref(b, i, stopOrHigh)
			if got := IndexStopOrHigh(b, i); got != want {
				t.Fatalf("IndexStopOrHigh(%q, %d) = %d, want %d", b, i, got, want)
			}
			if got := IndexStopOrHighString(string(b), i); got != want {
				t.Fatalf("IndexStopOrHighString(%q, %d) = %d, want %d", b, i, got, want)
			}
			if got, want := IndexHighString(string(b), i), ref(b, i, high); got != want {
				t.Fatalf("IndexHighString(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	}
}

// StopsBelowHigh flags exactly the stop bytes below the first high byte,
// over every byte value at every position of words of plain bytes, words
// mixing every class, and random words.
func TestStopsBelowHighIsExact(t *testing.T) {
	stop := func(c byte) bool { return c < 0x20 || c == '"' || c == '\\' }
	check := func(b [8]byte) {
		var want uint64
		for i, c := range b {
			if c >= 0x80 {
				break
			}
			if stop(c) {
				want |= 0x80 << (8 * i)
			}
		}
		if got := StopsBelowHigh(Load(b[:], 0)); got != want {
			t.Fatalf("StopsBelowHigh(% x) = %#x, want %#x", b, got, want)
		}
	}
	for c := range 256 {
		for at := range 8 {
			for _, fill := range []byte{'a', '"', '\n', 0x80, 0xff} {
				b := [8]byte{fill, fill, fill, fill, fill, fill, fill, fill}
				b[at] = byte(c)
				check(b)
			}
		}
	}
	r := rand.New(rand.NewPCG(9, 10))
	classes := []byte{'a', ' ', '"', '\\', 0, '\n', 0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xff, '!', '#', '[', ']'}
	for range 200000 {
		var b [8]byte
		for i := range b {
			if r.IntN(2) == 0 {
				b[i] = classes[r.IntN(len(classes))]
			} else {
				b[i] = byte(r.IntN(256))
			}
		}
		check(b)
	}
}
