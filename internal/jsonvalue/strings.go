package jsonvalue

import (
	"math/bits"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/swar"
)

const hexDigits = "0123456789abcdef"

// The string escaping below reproduces encoding/json with SetEscapeHTML(false)
// byte for byte: '"' and '\\' get a backslash, \b \f \n \r \t their short
// escapes, other C0 controls \u00XX, and U+2028/U+2029 \u2028/\u2029 (they
// break JavaScript string literals). Everything else, including DEL and
// '<' '>' '&', is written raw. Invalid UTF-8 is reported instead of being
// replaced by U+FFFD (spec §4.4: nothing is silently rewritten).

// quotedLen returns the length of s once quoted and escaped, and whether s is
// valid UTF-8. It counts the escapes of a word of ASCII eight bytes at a
// time, however many it holds (text and code have a newline or a quote
// every few dozen bytes), and decodes only non-ASCII code points.
func quotedLen(s string) (int, bool) {
	n := len(s) + 2
	i := 0
	for i+8 <= len(s) {
		w := swar.LoadString(s, i)
		for m := swar.StopsBelowHigh(w); m != 0; m &= m - 1 {
			n += escapeGrowth(byte(w >> (bits.TrailingZeros64(m) - 7)))
		}
		h := swar.High(w)
		if h == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(h) / 8 // the stops below it are counted
		grow, size, ok := runeGrowth(s[i:])
		if !ok {
			return 0, false
		}
		n += grow
		i += size
	}
	for i < len(s) {
		// The tail, and short strings (object keys) whole.
		if c := s[i]; c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' {
				n += escapeGrowth(c)
			}
			i++
			continue
		}
		grow, size, ok := runeGrowth(s[i:])
		if !ok {
			return 0, false
		}
		n += grow
		i += size
	}
	return n, true
}

// escapeGrowth is what escaping adds to an ASCII byte: one byte for '"',
// '\\' and the controls with a short escape, five for the other controls
// (\u00XX), none for the rest.
func escapeGrowth(c byte) int {
	switch c {
	case '"', '\\', '\b', '\f', '\n', '\r', '\t':
		return 1
	}
	if c < 0x20 {
		return 5
	}
	return 0
}

// runeGrowth decodes the code point s starts with, a non-ASCII one, and
// returns what escaping adds to it (three bytes for U+2028 and U+2029,
// written \u2028 and \u2029), its size, and false when s starts with
// invalid UTF-8.
func runeGrowth(s string) (grow, size int, ok bool) {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 {
		return 0, 0, false
	}
	if r == '\u2028' || r == '\u2029' {
		return 3, size, true
	}
	return 0, size, true
}

// AppendString appends s as a JSON string, escaped as AppendCompact
// escapes it, without the encoder AppendCompact sets up (a renderer writing
// many strings pays nothing per string). ok is false when s is not valid
// UTF-8; dst is then unspecified.
func AppendString(dst []byte, s string) ([]byte, bool) { return appendQuoted(dst, s) }

// appendQuoted appends s as a JSON string. ok is false when s is not valid
// UTF-8; dst is then unspecified.
func appendQuoted(dst []byte, s string) ([]byte, bool) {
	dst = append(dst, '"')
	start := 0
	for i := swar.IndexStopOrHighString(s, 0); i < len(s); i = swar.IndexStopOrHighString(s, i) {
		c := s[i]
		if c < utf8.RuneSelf {
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
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return dst, false
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), true
}
