package jsonvalue

import (
	"errors"
	"unicode/utf8"
)

// ErrDuplicateKey reports, from DecodeStrict, an object that names the same
// member twice (compared after unescaping, so "a" and "\u0061" collide).
var ErrDuplicateKey = errors.New("duplicate object key")

// Decode parses data, which must hold exactly one JSON value (RFC 8259)
// optionally surrounded by whitespace, into a value tree: map[string]any,
// []any, string, json.Number, bool and nil.
//
// The tree is exactly what encoding/json's Decoder with UseNumber produces
// for the same input: numbers are json.Number holding the token's bytes,
// strings are unescaped identically, empty containers are non-nil, and of
// duplicate object keys the last one wins. Decode accepts exactly the inputs
// that encoding/json accepts, except that it rejects what encoding/json would
// silently rewrite (spec §4.4): invalid UTF-8 bytes, and lone UTF-16
// surrogate escapes ("\ud800" not followed by a low-surrogate escape, or a
// low-surrogate escape without a preceding high one), both of which
// encoding/json turns into U+FFFD. Nesting deeper than 10000 arrays and
// objects is refused as encoding/json refuses it, before it can exhaust the
// stack.
//
// Errors wrap ErrInvalidString (invalid UTF-8, lone surrogate escape) or
// ErrSyntax (everything else: bad tokens, trailing data, empty input,
// excessive nesting) and name the byte offset of the problem, never the
// input itself. When an input has several problems the sentinel is chosen
// as if the checks ran one after the other over the whole input: invalid
// UTF-8 first, then syntax, then lone surrogates (the order the previous,
// encoding/json-based implementation reported them in).
//
// Decode applies no size limit; run Check on the result to enforce Limits.
func Decode(data []byte) (any, error) {
	return decode(data, false, 0)
}

// DecodeStrict is Decode, except that an object naming the same member
// twice anywhere in data is an error wrapping ErrDuplicateKey. JSON parsers
// disagree on which duplicate wins (encoding/json and Decode keep the last,
// others the first), so a gateway that judges one reading while the
// receiver acts on another must refuse such input instead of picking one.
//
// The error is a *PathError whose Path names the repeated member
// ($.choices[0].delta.content), never its value. Any other problem in data
// takes precedence, so DecodeStrict returns the same error as Decode
// whenever Decode fails. When several objects repeat keys, the error names
// the first repeated key of the object that closes first (innermost
// objects close before the objects containing them).
func DecodeStrict(data []byte) (any, error) {
	return decode(data, true, 0)
}

// DecodeStrictNested is DecodeStrict for data that is one value taken
// from inside outer open arrays and objects of a larger document (outer
// >= 0): the nesting limit counts them, so the value is refused exactly
// when decoding the whole document would refuse its nesting.
func DecodeStrictNested(data []byte, outer int) (any, error) {
	return decode(data, true, max(outer, 0))
}

// invalidUTF8Offset returns the offset of the first byte of data that does
// not start a valid UTF-8 sequence, or -1.
func invalidUTF8Offset(data []byte) int {
	for i := 0; i < len(data); {
		if c := data[i]; c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// escapeStart reports whether the backslash at data[at] begins an escape,
// i.e. is preceded by an even number of consecutive backslashes. data must
// be valid JSON and at inside a string.
func escapeStart(data []byte, at int) bool {
	n := 0
	for k := at - 1; k >= 0 && data[k] == '\\'; k-- {
		n++
	}
	return n%2 == 0
}

// Hex4 decodes the four hex digits of a \u escape at data[at:at+4]; ok
// is false when they are missing or not all hex digits.
func Hex4(data []byte, at int) (r rune, ok bool) {
	if at < 0 || at+4 > len(data) {
		return 0, false
	}
	for _, c := range data[at : at+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
