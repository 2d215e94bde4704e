package jcs

import (
	"math"
	"strconv"
)

// MaxSafeInteger is 2^53-1, the largest integer magnitude a double holds
// exactly and the bound of the I-JSON integer domain (spec §4.4, §10.2).
const MaxSafeInteger = 1<<53 - 1

// maxSafeDigits is MaxSafeInteger as a decimal token. Valid JSON integer
// tokens have no leading zeros, so comparing length and then bytes orders
// them by magnitude without parsing.
const maxSafeDigits = "9007199254740991"

// tokenKind classifies a JSON number token by its syntax.
type tokenKind uint8

const (
	tokenInvalid tokenKind = iota
	tokenInt               // no fraction and no exponent
	tokenFloat             // has '.', 'e' or 'E'
)

// scanNumber checks tok against the RFC 8259 number grammar
//
//	[ "-" ] ( "0" / digit1-9 *DIGIT ) [ "." 1*DIGIT ] [ ("e"/"E") ["+"/"-"] 1*DIGIT ]
//
// and classifies it. strconv.ParseFloat alone would accept far more
// (hex floats, underscores, "Inf", a leading '+').
func scanNumber(tok string) tokenKind {
	i, n := 0, len(tok)
	if i < n && tok[i] == '-' {
		i++
	}
	switch {
	case i == n:
		return tokenInvalid
	case tok[i] == '0':
		i++
	case '1' <= tok[i] && tok[i] <= '9':
		for i++; i < n && isDigit(tok[i]); i++ {
		}
	default:
		return tokenInvalid
	}
	kind := tokenInt
	if i < n && tok[i] == '.' {
		i++
		start := i
		for ; i < n && isDigit(tok[i]); i++ {
		}
		if i == start {
			return tokenInvalid
		}
		kind = tokenFloat
	}
	if i < n && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		if i < n && (tok[i] == '+' || tok[i] == '-') {
			i++
		}
		start := i
		for ; i < n && isDigit(tok[i]); i++ {
		}
		if i == start {
			return tokenInvalid
		}
		kind = tokenFloat
	}
	if i != n {
		return tokenInvalid
	}
	return kind
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// intTokenUnsafe reports whether a valid integer-syntax token has magnitude
// above 2^53-1. It works for tokens of any length, including ones beyond
// the uint64 range.
func intTokenUnsafe(tok string) bool {
	d := tok
	if d[0] == '-' {
		d = d[1:]
	}
	return len(d) > len(maxSafeDigits) || len(d) == len(maxSafeDigits) && d > maxSafeDigits
}

// appendNumberToken appends the canonical form of a number token. An
// integer-syntax token within ±(2^53-1) is its own canonical form (bar
// "-0"); any other token is canonicalized as the correctly rounded double
// it denotes, like every RFC 8785 implementation. When checkInts is set an
// integer-syntax token beyond ±(2^53-1) is rejected instead.
func appendNumberToken(dst []byte, tok string, checkInts bool) ([]byte, error) {
	kind := scanNumber(tok)
	if kind == tokenInvalid {
		return dst, ErrInvalidNumber
	}
	if kind == tokenInt {
		if !intTokenUnsafe(tok) {
			if tok == "-0" {
				return append(dst, '0'), nil
			}
			return append(dst, tok...), nil
		}
		if checkInts {
			return dst, ErrIntegerRange
		}
	}
	// The grammar was checked above, so the only possible error is
	// ErrRange, for which ParseFloat returns ±Inf (underflow yields 0 and
	// no error).
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		return dst, ErrNonFinite
	}
	return appendFloat(dst, f)
}

// appendFloat appends f as ECMAScript Number.prototype.toString renders it
// (RFC 8785 §3.2.2.3).
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, ErrNonFinite
	}
	if f == 0 {
		return append(dst, '0'), nil // also -0
	}
	// Integral doubles below 2^53 print as their exact integer digits; this
	// is what the layout below produces, reached without shortest-digit
	// formatting.
	if math.Abs(f) <= MaxSafeInteger && f == math.Trunc(f) {
		return strconv.AppendInt(dst, int64(f), 10), nil
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// 'e' with precision -1 gives the shortest round-trip digits as
	// d[.ddd]e±XX; ECMAScript lays them out differently from Go's 'g'.
	var scratch [32]byte
	s := strconv.AppendFloat(scratch[:0], f, 'e', -1, 64)
	e := len(s) - 4 // exponent has at least two digits: "e+XX"
	for s[e] != 'e' {
		e--
	}
	first, rest := s[0], s[min(2, e):e] // digits are first followed by rest
	exp := 0
	for _, c := range s[e+2:] {
		exp = exp*10 + int(c-'0')
	}
	if s[e+1] == '-' {
		exp = -exp
	}
	n := 1 + len(rest) // number of significant digits
	k := exp + 1       // the value is 0.<digits> × 10^k
	switch {
	case n <= k && k <= 21:
		dst = append(dst, first)
		dst = append(dst, rest...)
		for range k - n {
			dst = append(dst, '0')
		}
	case 0 < k && k <= 21:
		dst = append(dst, first)
		dst = append(dst, rest[:k-1]...)
		dst = append(dst, '.')
		dst = append(dst, rest[k-1:]...)
	case -6 < k && k <= 0:
		dst = append(dst, '0', '.')
		for range -k {
			dst = append(dst, '0')
		}
		dst = append(dst, first)
		dst = append(dst, rest...)
	default:
		dst = append(dst, first)
		if len(rest) > 0 {
			dst = append(dst, '.')
			dst = append(dst, rest...)
		}
		dst = append(dst, 'e')
		if k-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(k-1), 10)
	}
	return dst, nil
}
