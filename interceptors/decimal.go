package interceptors

import (
	"encoding/json"
	"strconv"
	"strings"
)

// decimal is an exact JSON number: ±0.digits × 10^exp. Arguments arrive as
// json.Number text of any length, so bounds are compared on the digits, not
// through float64 (which would let 9007199254740993 pass a maximum of
// 9007199254740992) or math/big (whose cost grows with the exponent an
// untrusted model chose).
type decimal struct {
	neg    bool
	digits string // no leading or trailing zeros; "" for zero
	exp    int64
}

// maxDecimalExp saturates exponents: every configured bound is far inside
// it, so a saturated argument still compares correctly against them.
const maxDecimalExp = 1 << 40

// parseDecimal parses JSON number syntax; ok is false for anything else.
func parseDecimal(s string) (d decimal, ok bool) {
	if s == "" {
		return d, false
	}
	i := 0
	if s[0] == '-' {
		d.neg = true
		i++
	}
	intStart := i
	for i < len(s) && isASCIIDigit(s[i]) {
		i++
	}
	intPart := s[intStart:i]
	if intPart == "" || (len(intPart) > 1 && intPart[0] == '0') {
		return d, false
	}
	frac := ""
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isASCIIDigit(s[i]) {
			i++
		}
		if frac = s[start:i]; frac == "" {
			return d, false
		}
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		start := i
		for ; i < len(s) && isASCIIDigit(s[i]); i++ {
			if exp < maxDecimalExp {
				exp = exp*10 + int64(s[i]-'0')
			}
		}
		if i == start {
			return d, false
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, false
	}
	// value = 0.(intPart frac) × 10^(len(intPart)+exp), then normalised.
	all := intPart + frac
	exp += int64(len(intPart))
	trimmed := strings.TrimLeft(all, "0")
	exp -= int64(len(all) - len(trimmed))
	d.digits = strings.TrimRight(trimmed, "0")
	d.exp = exp
	if d.digits == "" {
		d.neg, d.exp = false, 0 // -0 equals 0
	}
	return d, true
}

func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

// isInteger reports whether d has no fractional part.
func (d decimal) isInteger() bool { return d.digits == "" || int64(len(d.digits)) <= d.exp }

// cmp returns -1, 0 or +1 as d is less than, equal to or greater than e.
func (d decimal) cmp(e decimal) int {
	switch {
	case d.digits == "" && e.digits == "":
		return 0
	case d.neg != e.neg, d.digits == "", e.digits == "":
		return d.sign() - e.sign()
	}
	m := d.cmpMagnitude(e)
	if d.neg {
		return -m
	}
	return m
}

func (d decimal) sign() int {
	switch {
	case d.digits == "":
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// cmpMagnitude compares |d| and |e|, both non-zero.
func (d decimal) cmpMagnitude(e decimal) int {
	switch {
	case d.exp != e.exp:
		if d.exp < e.exp {
			return -1
		}
		return 1
	case d.digits == e.digits:
		return 0
	case d.digits < e.digits: // no trailing zeros, so a prefix is smaller
		return -1
	}
	return 1
}

// numberText returns the JSON number text of a context value: json.Number
// as contexts carry it, or a Go number from a hand-built context.
func numberText(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return string(x), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	}
	return "", false
}

// asDecimal parses a context value as a number.
func asDecimal(v any) (decimal, bool) {
	s, ok := numberText(v)
	if !ok {
		return decimal{}, false
	}
	return parseDecimal(s)
}
