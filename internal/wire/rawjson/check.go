package rawjson

import (
	"bytes"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/swar"
)

// maxNesting is encoding/json's nesting limit: Valid refuses a document
// whose arrays and objects nest deeper.
const maxNesting = 10000

// CheckDocument checks b in one pass for what encoding/json.Valid and
// HasDuplicateKeys check in two: valid reports whether b is exactly one
// JSON value, optionally surrounded by whitespace, under encoding/json's
// grammar (which, like Valid, lets invalid UTF-8 and lone surrogate
// escapes through); dup whether any object repeats a key, compared as
// DecodeKey decodes keys. root is the span of the value; dup and root mean
// nothing when valid is false.
func CheckDocument(b []byte) (root Span, valid, dup bool) {
	c := checker{b: b}
	i := SkipSpace(b, 0)
	end, ok := c.value(i, 1)
	if !ok || SkipSpace(b, end) != len(b) {
		return Span{}, false, false
	}
	return Span{i, end}, true, c.dup
}

// CheckStrict reports whether b is one JSON value, optionally surrounded
// by whitespace, that jsonvalue.DecodeStrict certainly accepts: valid as
// CheckDocument judges, no object repeating a key, valid UTF-8, and no \u
// escape of a UTF-16 surrogate (the decoder accepts a pair and refuses a
// lone one; telling them apart is left to it). A fast path that decodes
// parts of a document on its own checks the whole first with it; false
// says nothing about which error applies, so the caller then decodes the
// whole and reports what the decoder reports. root is the value's span.
func CheckStrict(b []byte) (root Span, ok bool) {
	c := checker{b: b}
	i := SkipSpace(b, 0)
	end, ok := c.value(i, 1)
	if !ok || SkipSpace(b, end) != len(b) || c.dup || c.surrogate || !utf8.Valid(b) {
		return Span{}, false
	}
	return Span{i, end}, true
}

// checker is one CheckDocument pass. keys is a scratch stack shared by
// all open objects: each object compares its keys within its own window
// and pops them when it closes, so nesting costs no allocation.
type checker struct {
	b   []byte
	dup bool
	// surrogate reports a \u escape of a UTF-16 surrogate (CheckStrict).
	surrogate bool
	keys      [][]byte
}

// linearKeys is the key count up to which the checker compares an
// object's keys by a linear scan: the largest objects it usually meets (a
// Responses answer or stream snapshot: about 25 members) would otherwise
// cost an allocation per key for a set.
const linearKeys = 32

// value checks the value starting at b[i] and returns the offset past it.
func (c *checker) value(i, depth int) (int, bool) {
	b := c.b
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '{':
		return c.object(i, depth)
	case '[':
		return c.array(i, depth)
	case '"':
		end, _, ok := c.str(i)
		return end, ok
	case 't':
		return StrictLiteral(b, i, "true")
	case 'f':
		return StrictLiteral(b, i, "false")
	case 'n':
		return StrictLiteral(b, i, "null")
	}
	return StrictNumber(b, i)
}

// str checks the string token at b[i] == '"' as encoding/json's scanner
// does: no raw control characters, only JSON escapes (\u with four hex
// digits), any other bytes.
func (c *checker) str(i int) (end int, escaped, ok bool) {
	b := c.b
	for i++; ; i++ {
		// Any bytes >= 0x80 are let through, as encoding/json does.
		i = swar.IndexStop(b, i)
		if i >= len(b) {
			return 0, false, false
		}
		switch ch := b[i]; {
		case ch == '"':
			return i + 1, escaped, true
		case ch < 0x20:
			return 0, false, false
		case ch == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(b) || !isHex(b[k]) {
						return 0, false, false
					}
				}
				c.surrogate = c.surrogate || isSurrogate(b[i+2:i+6])
				i += 5
			default:
				return 0, false, false
			}
		}
	}
}

// isSurrogate reports whether the four hex digits hex name a UTF-16
// surrogate, D800 to DFFF.
func isSurrogate(hex []byte) bool {
	return hex[0]|0x20 == 'd' && (hex[1] >= '8' && hex[1] <= '9' || hex[1]|0x20 >= 'a' && hex[1]|0x20 <= 'f')
}

func isHex(ch byte) bool {
	return ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f' || ch >= 'A' && ch <= 'F'
}

func (c *checker) array(i, depth int) (int, bool) {
	if depth > maxNesting {
		return 0, false
	}
	b := c.b
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		end, ok := c.value(i, depth+1)
		if !ok {
			return 0, false
		}
		i = SkipSpace(b, end)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ']':
			return i + 1, true
		case ',':
			i = SkipSpace(b, i+1)
		default:
			return 0, false
		}
	}
}

func (c *checker) object(i, depth int) (int, bool) {
	if depth > maxNesting {
		return 0, false
	}
	base := len(c.keys)
	end, ok := c.members(i, depth, base)
	c.keys = c.keys[:base]
	return end, ok
}

// members checks the members of the object at b[i] == '{', whose keys
// go on the stack from base.
func (c *checker) members(i, depth, base int) (int, bool) {
	b := c.b
	var seen map[string]struct{} // past linearKeys keys
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		keyEnd, escaped, ok := c.str(i)
		if !ok {
			return 0, false
		}
		if !c.dup {
			seen = c.addKey(base, seen, b[i:keyEnd], escaped)
		}
		i = SkipSpace(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		end, ok := c.value(SkipSpace(b, i+1), depth+1)
		if !ok {
			return 0, false
		}
		i = SkipSpace(b, end)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case '}':
			return i + 1, true
		case ',':
			i = SkipSpace(b, i+1)
		default:
			return 0, false
		}
	}
}

// addKey pushes the key token tok onto the window of the object whose keys
// start at base, noting a duplicate. Keys are compared decoded, as
// DecodeKey decodes them; only escaped keys need decoding. Past the
// first linearKeys keys the object's keys go into seen, which it
// returns, so that a large object is checked in linear time.
func (c *checker) addKey(base int, seen map[string]struct{}, tok []byte, escaped bool) map[string]struct{} {
	key := tok[1 : len(tok)-1]
	if escaped {
		s, err := DecodeKey(tok)
		if err != nil {
			c.dup = true // as HasDuplicateKeys treats an undecodable key
			return seen
		}
		key = []byte(s)
	}

	if c.keys == nil {
		// Allocated on the first key, once for the common depths: a
		// document without objects costs nothing.
		c.keys = make([][]byte, 0, 2*linearKeys)
	}
	window := c.keys[base:]
	if seen == nil && len(window) < linearKeys {
		for _, k := range window {
			if bytes.Equal(k, key) {
				c.dup = true
				return seen
			}
		}
		c.keys = append(c.keys, key)
		return seen
	}
	if seen == nil {
		seen = make(map[string]struct{}, 4*linearKeys)
		for _, k := range window {
			seen[string(k)] = struct{}{}
		}
	}
	if _, ok := seen[string(key)]; ok {
		c.dup = true
		return seen
	}
	seen[string(key)] = struct{}{}
	return seen
}
