package jsonvalue

import (
	"math"
	"strconv"
	"strings"
)

// validNumber reports whether s is a JSON number token (RFC 8259 §6):
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(s string) bool {
	n := len(s)
	i := 0
	if i < n && s[i] == '-' {
		i++
	}
	switch {
	case i >= n:
		return false
	case s[i] == '0':
		i++
	case s[i] >= '1' && s[i] <= '9':
		i++
		for i < n && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < n && s[i] == '.' {
		i++
		if i >= n || !isDigit(s[i]) {
			return false
		}
		for i < n && isDigit(s[i]) {
			i++
		}
	}
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < n && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= n || !isDigit(s[i]) {
			return false
		}
		for i < n && isDigit(s[i]) {
			i++
		}
	}
	return i == n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// appendFloat writes f the way encoding/json does, so a float64 handed to
// FromGo or Marshal yields the same token a json.Marshal round trip would:
// shortest round-trip digits, plain decimal notation for magnitudes in
// [1e-6, 1e21) (so integral values read as integers, e.g. 200), exponent
// notation outside it with a two-digit exponent trimmed ("1e-07" -> "1e-7").
// strconv's 'g' format alone is not enough: it switches to exponent form at
// different magnitudes ("1e+06") than ECMAScript-style JSON encoders.
// The caller must have rejected NaN and ±Inf.
func appendFloat(dst []byte, f float64, bits int) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 {
		if bits == 32 {
			a32 := float32(a)
			if a32 < 1e-6 || a32 >= 1e21 {
				format = 'e'
			}
		} else if a < 1e-6 || a >= 1e21 {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

func nonFinite(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }

// floatToken returns the JSON token for f, or false for NaN/±Inf.
func floatToken(f float64, bits int) (string, bool) {
	if nonFinite(f) {
		return "", false
	}
	var buf [32]byte
	return string(appendFloat(buf[:0], f, bits)), true
}

// numKind is the serde_json classification the CTK's equality uses
// (CTK.md §5.2).
type numKind uint8

const (
	kindUint  numKind = iota // non-negative integer that fits uint64
	kindInt                  // negative integer that fits int64
	kindFloat                // fraction/exponent, out-of-range integer, or -0
)

type number struct {
	kind numKind
	u    uint64
	i    int64
	f    float64
}

// classify parses a JSON number token. ok is false for a token that is not
// valid JSON number syntax.
func classify(tok string) (n number, ok bool) {
	if !validNumber(tok) {
		return n, false
	}
	if strings.ContainsAny(tok, ".eE") || tok == "-0" {
		return classifyFloat(tok), true
	}
	if tok[0] == '-' {
		if v, err := strconv.ParseInt(tok, 10, 64); err == nil {
			return number{kind: kindInt, i: v}, true
		}
		return classifyFloat(tok), true
	}
	if v, err := strconv.ParseUint(tok, 10, 64); err == nil {
		return number{kind: kindUint, u: v}, true
	}
	return classifyFloat(tok), true
}

func classifyFloat(tok string) number {
	// A range error still yields the correctly rounded ±Inf or ±0, which
	// is the best double for comparing such tokens.
	f, _ := strconv.ParseFloat(tok, 64)
	return number{kind: kindFloat, f: f}
}

func (a number) equal(b number) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kindUint:
		return a.u == b.u
	case kindInt:
		return a.i == b.i
	default:
		return a.f == b.f
	}
}
