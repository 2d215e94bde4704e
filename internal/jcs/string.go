package jcs

import (
	"cmp"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/swar"
)

const hexDigits = "0123456789abcdef"

// appendString appends s as an RFC 8785 string literal: only '"', '\\' and
// the C0 controls are escaped (the five with short forms use them, the
// rest \u00xx in lowercase hex); everything else, including '/', "<>&",
// U+2028 and U+2029, is copied literally. It reports false if s is not
// valid UTF-8: such a string (an encoded lone surrogate, say) has no JSON
// representation, and substituting U+FFFD would silently rewrite the value.
func appendString(dst []byte, s string) ([]byte, bool) {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip plain ASCII eight bytes at a time: prose is mostly that.
		if i = swar.IndexStopOrHighString(s, i); i == len(s) {
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

// compareKeys orders valid UTF-8 strings by their UTF-16 code units, as
// RFC 8785 §3.2.3 requires for object members.
//
// UTF-8 byte order is code point order, and that agrees with UTF-16 order
// except between a supplementary character (a surrogate pair in UTF-16,
// first unit 0xD800-0xDBFF) and a character in U+E000-U+FFFF: UTF-16 puts
// the supplementary one first, UTF-8 last. Those are exactly the lead bytes
// 0xF0-0xF4 versus 0xEE-0xEF, so a byte comparison with that one pair of
// lead-byte classes swapped is exact, with no decoding.
//
// On arbitrary byte strings this is still a total order (lexicographic
// under a fixed permutation of byte values: 0x00-0xED, 0xF0-0xFF,
// 0xEE-0xEF), so sorting stays deterministic even before invalid UTF-8 is
// detected.
func compareKeys(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return cmp.Compare(len(a), len(b))
	}
	x, y := a[i], b[i]
	// In valid UTF-8, two strings with a common prefix differ either in two
	// lead bytes or in two continuation bytes (< 0xC0) of equally long
	// sequences, so both bytes being >= 0xEE means both are lead bytes.
	if x >= 0xEE && y >= 0xEE && (x >= 0xF0) != (y >= 0xF0) {
		if x >= 0xF0 {
			return -1
		}
		return 1
	}
	return cmp.Compare(x, y)
}
