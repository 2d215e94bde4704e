package rawjson

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/swar"
)

// The token checks below accept exactly what jsonvalue.DecodeStrict
// accepts for one string or number token, without building a value: a
// reader may scan a document of known shape with them and fall back to
// the full decoder whenever one of them says no.

// StrictString checks the string token starting at b[i] == '"': no raw
// control characters, only JSON escapes, valid UTF-8 and no lone
// surrogate escapes. It returns the offset just past the closing quote
// and whether the token holds any escape.
func StrictString(b []byte, i int) (end int, escaped, ok bool) {
	for i++; ; {
		if i = swar.IndexStopOrHigh(b, i); i >= len(b) {
			return 0, false, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, true
		case c < 0x20:
			return 0, false, false
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				r, ok := jsonvalue.Hex4(b, i+2)
				if !ok || r >= 0xDC00 && r <= 0xDFFF {
					return 0, false, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+1 >= len(b) || b[i] != '\\' || b[i+1] != 'u' {
						return 0, false, false
					}
					r2, ok := jsonvalue.Hex4(b, i+2)
					if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
						return 0, false, false
					}
					i += 6
				}
			default:
				return 0, false, false
			}
		default: // c >= utf8.RuneSelf
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, false
			}
			i += size
		}
	}
}

// AppendUnescaped appends the text of a string token (quotes included)
// that StrictString accepted.
func AppendUnescaped(dst, tok []byte) []byte {
	end := len(tok) - 1
	for i := 1; i < end; {
		if tok[i] != '\\' {
			j := i + 1
			for j < end && tok[j] != '\\' {
				j++
			}
			dst = append(dst, tok[i:j]...)
			i = j
			continue
		}
		switch c := tok[i+1]; c {
		case 'u':
			r, _ := jsonvalue.Hex4(tok, i+2)
			i += 6
			if utf16.IsSurrogate(r) {
				r2, _ := jsonvalue.Hex4(tok, i+2)
				r = utf16.DecodeRune(r, r2)
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			continue
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
		i += 2
	}
	return dst
}

// StrictLiteral returns the offset just past the literal lit (true, false
// or null) at b[i] and whether it is there.
func StrictLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// StrictNumber returns the offset just past the JSON number token at b[i]
// and whether it follows the JSON grammar.
func StrictNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
