package jsonvalue

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/swar"
)

// This file is the single-pass parser behind Decode and DecodeStrict. It
// replaces encoding/json's Decoder (which scans a value once to find its
// end and again to build the tree) plus this package's extra passes for
// invalid UTF-8 and lone surrogates: syntax, UTF-8 and surrogates are all
// checked in the one pass that builds the tree. It is a recursive-descent
// parser whose recursion is bounded by hardMaxDepth, the nesting limit
// encoding/json applies too.
//
// Allocation discipline, since Decode sits on the stream-assembly hot path:
//   - a string without escapes costs one conversion of its bytes (plus the
//     interface box, as with encoding/json); escaped strings are unescaped
//     into a reused scratch buffer and converted once;
//   - a container's members or elements are collected first and the map or
//     slice is allocated once, at its close, with its exact size: maps never
//     rehash while growing and slices carry no spare capacity;
//   - they are collected in a small array in the container's own stack
//     frame, spilling to stacks shared by all nesting levels only past
//     smallContainer entries, so documents made of small containers, such as
//     an SSE chunk, allocate nothing but their values.

// kv is an object member waiting on the member stack for its object to close.
type kv struct {
	key string
	val any
}

// parser holds the state of one decode call. It is never shared.
type parser struct {
	data   []byte
	src    string // string(data), to slice strings and numbers from, when decoding a Text; else ""
	strict bool   // report duplicate keys (DecodeStrict)
	depth  int    // containers currently open
	outer  int    // containers open around data (DecodeStrictNested)
	lone   int    // offset of the first lone surrogate escape, or -1
	elems  []any  // spilled elements of the open arrays, innermost last
	mems   []kv   // spilled members of the open objects, innermost last
}

// syntaxError is a syntax problem at a byte offset (-1 when none applies,
// as for empty input). It stays internal until fail has checked the whole
// input for invalid UTF-8, which takes precedence.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// decode parses data as a value nested inside outer open containers,
// which count toward the nesting limit.
func decode(data []byte, strict bool, outer int) (any, error) {
	return decodeFrom(data, "", strict, outer)
}

// decodeFrom is decode; when src is string(data) (not ""), the tree's
// escape-free strings and numbers are slices of it instead of copies.
func decodeFrom(data []byte, src string, strict bool, outer int) (any, error) {
	p := parser{data: data, src: src, strict: strict, lone: -1, depth: outer, outer: outer}
	i := skipSpace(data, 0)
	if i == len(data) {
		return nil, p.fail(&syntaxError{off: -1, msg: "empty input"})
	}
	v, i, err := p.value(i)
	if err == nil {
		if i = skipSpace(data, i); i < len(data) {
			err = &syntaxError{off: i, msg: "trailing data after the value"}
		}
	}
	if err != nil {
		return nil, p.fail(err)
	}
	if p.lone >= 0 {
		return nil, loneError(p.lone)
	}
	return v, nil
}

// fail turns an internal error into the one Decode returns, applying the
// precedence documented there: invalid UTF-8 anywhere beats a syntax error,
// and any other problem beats a duplicate key.
func (p *parser) fail(err error) error {
	switch e := err.(type) {
	case *syntaxError:
		// The parser stops at the first syntax error; the input after it
		// was never looked at, but its encoding still decides the
		// sentinel. This only costs a scan on the error path.
		if at := invalidUTF8Offset(p.data); at >= 0 {
			return utf8Error(at)
		}
		if e.off < 0 {
			return fmt.Errorf("jsonvalue: %w: %s", ErrSyntax, e.msg)
		}
		return fmt.Errorf("jsonvalue: %w at byte offset %d: %s", ErrSyntax, e.off, e.msg)
	case *PathError:
		// A duplicate key ends the strict parse early; the rest of the
		// input may still hold an error that outranks it.
		tree, derr := decode(p.data, false, p.outer)
		if derr != nil {
			return derr
		}
		e.resolveRanks(tree)
		return finish(e, "$")
	default:
		return err
	}
}

func utf8Error(at int) error {
	return fmt.Errorf("jsonvalue: %w: invalid UTF-8 at byte offset %d", ErrInvalidString, at)
}

func loneError(at int) error {
	return fmt.Errorf("jsonvalue: %w: lone UTF-16 surrogate escape at byte offset %d", ErrInvalidString, at)
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// skipSpace returns the offset of the first non-whitespace byte at or after i.
func skipSpace(d []byte, i int) int {
	for i < len(d) && d[i] <= ' ' && isSpace(d[i]) {
		i++
	}
	return i
}

func unexpectedEnd(i int) error { return &syntaxError{off: i, msg: "unexpected end of input"} }

// value parses the value starting at d[i], which is not whitespace, and
// returns it with the offset just past it.
func (p *parser) value(i int) (any, int, error) {
	d := p.data
	if i >= len(d) {
		return nil, i, unexpectedEnd(i)
	}
	switch c := d[i]; c {
	case '{':
		return p.object(i)
	case '[':
		return p.array(i)
	case '"':
		start := i + 1
		j, high := stringRun(d, start)
		if !high && j < len(d) && d[j] == '"' {
			if v := wellKnown(d[start:j]); v != nil {
				return v, j + 1, nil // a constant: no allocation
			}
		}
		s, j, err := p.strRest(start, j, high, false)
		if err != nil {
			return nil, j, err
		}
		return s, j, nil
	case 't':
		return p.literal(i, "true", true)
	case 'f':
		return p.literal(i, "false", false)
	case 'n':
		return p.literal(i, "null", nil)
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return p.number(i)
		}
		return nil, i, &syntaxError{off: i, msg: "expected a JSON value"}
	}
}

func (p *parser) literal(i int, lit string, v any) (any, int, error) {
	d := p.data
	j := i + len(lit)
	if j <= len(d) && string(d[i:j]) == lit {
		return v, j, nil
	}
	// Report the first byte that differs, or the end of input for a
	// truncated literal ("tru").
	k := i
	for k < len(d) && k < j && d[k] == lit[k-i] {
		k++
	}
	if k == len(d) {
		return nil, k, unexpectedEnd(k)
	}
	return nil, k, &syntaxError{off: k, msg: "invalid literal (expected true, false or null)"}
}

// number scans a number token per RFC 8259 §6 and returns it verbatim.
func (p *parser) number(i int) (any, int, error) {
	d := p.data
	start := i
	if d[i] == '-' {
		i++
	}
	switch {
	case i >= len(d):
		return nil, i, unexpectedEnd(i)
	case d[i] == '0':
		// A leading zero is the whole integer part: "01" ends the
		// number after the 0 and then fails as trailing data.
		i++
	case d[i] >= '1' && d[i] <= '9':
		i = digits(d, i+1)
	default:
		return nil, i, &syntaxError{off: i, msg: "invalid number: expected a digit"}
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) {
			return nil, i, unexpectedEnd(i)
		}
		if !isDigit(d[i]) {
			return nil, i, &syntaxError{off: i, msg: "invalid number: expected a digit after the decimal point"}
		}
		i = digits(d, i+1)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) {
			return nil, i, unexpectedEnd(i)
		}
		if !isDigit(d[i]) {
			return nil, i, &syntaxError{off: i, msg: "invalid number: expected a digit in the exponent"}
		}
		i = digits(d, i+1)
	}
	return json.Number(p.token(start, i)), i, nil
}

func digits(d []byte, i int) int {
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	return i
}

// smallContainer is how many elements or members a container collects in
// its own stack frame before spilling to the parser's shared stacks. Most
// containers in chat traffic are this small, and a frame-local array costs
// no allocation, whereas stacks stored in the parser escape to the heap.
const smallContainer = 8

// array parses the array starting at d[i] == '['.
func (p *parser) array(i int) (any, int, error) {
	d := p.data
	if p.depth++; p.depth > hardMaxDepth {
		return nil, i, tooDeepError(i)
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == ']' {
		p.depth--
		return []any{}, i + 1, nil // non-nil, like encoding/json
	}
	var small [smallContainer]any
	base := len(p.elems)
	n := 0
	for {
		v, j, err := p.value(i)
		if err != nil {
			return nil, j, atIndex(err, n)
		}
		switch {
		case n < len(small):
			small[n] = v
		case n == len(small):
			p.elems = append(p.elems, small[:]...)
			fallthrough
		default:
			p.elems = append(p.elems, v)
		}
		n++
		i = skipSpace(d, j)
		if i >= len(d) {
			return nil, i, unexpectedEnd(i)
		}
		if d[i] == ',' {
			i = skipSpace(d, i+1)
			continue
		}
		if d[i] != ']' {
			return nil, i, &syntaxError{off: i, msg: "expected ',' or ']' after an array element"}
		}
		break
	}
	a := make([]any, n)
	if n <= len(small) {
		copy(a, small[:n])
	} else {
		copy(a, p.elems[base:])
		p.elems = p.elems[:base]
	}
	p.depth--
	return a, i + 1, nil
}

// object parses the object starting at d[i] == '{'.
func (p *parser) object(i int) (any, int, error) {
	d := p.data
	if p.depth++; p.depth > hardMaxDepth {
		return nil, i, tooDeepError(i)
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		p.depth--
		return map[string]any{}, i + 1, nil // non-nil, like encoding/json
	}
	var small [smallContainer]kv
	base := len(p.mems)
	n := 0
	for {
		if i >= len(d) {
			return nil, i, unexpectedEnd(i)
		}
		if d[i] != '"' {
			return nil, i, &syntaxError{off: i, msg: "expected a string object key"}
		}
		key, j, err := p.str(i)
		if err != nil {
			return nil, j, err
		}
		i = skipSpace(d, j)
		if i >= len(d) {
			return nil, i, unexpectedEnd(i)
		}
		if d[i] != ':' {
			return nil, i, &syntaxError{off: i, msg: "expected ':' after an object key"}
		}
		v, j, err := p.value(skipSpace(d, i+1))
		if err != nil {
			return nil, j, atKey(err, key, -1)
		}
		switch {
		case n < len(small):
			small[n] = kv{key, v}
		case n == len(small):
			p.mems = append(p.mems, small[:]...)
			fallthrough
		default:
			p.mems = append(p.mems, kv{key, v})
		}
		n++
		i = skipSpace(d, j)
		if i >= len(d) {
			return nil, i, unexpectedEnd(i)
		}
		if d[i] == ',' {
			i = skipSpace(d, i+1)
			continue
		}
		if d[i] != '}' {
			return nil, i, &syntaxError{off: i, msg: "expected ',' or '}' after an object member"}
		}
		break
	}
	var ms []kv
	if n <= len(small) {
		ms = small[:n]
	} else {
		// Popping first is safe: nothing is pushed before ms is used.
		ms, p.mems = p.mems[base:], p.mems[:base]
	}
	// Sized from the exact member count, so the map never grows.
	m := make(map[string]any, n)
	for _, e := range ms {
		m[e.key] = e.val // in document order, so the last duplicate wins
	}
	if p.strict && len(m) != n {
		if err := duplicate(ms); err != nil {
			return nil, i, err
		}
	}
	p.depth--
	return m, i + 1, nil
}

// duplicate returns the error for the first member of ms whose key repeats
// an earlier one's. It runs only once a map came out smaller than its
// member list, i.e. on the error path.
func duplicate(ms []kv) error {
	seen := make(map[string]bool, len(ms))
	for _, e := range ms {
		if seen[e.key] {
			return atKey(newPathError(ErrDuplicateKey, "the object names this member more than once"), e.key, -1)
		}
		seen[e.key] = true
	}
	return nil
}

func tooDeepError(i int) error {
	return &syntaxError{off: i, msg: "nesting deeper than " + strconv.Itoa(hardMaxDepth) + " levels"}
}

// str parses the string starting at d[i] == '"'. A string without escapes
// is converted straight from the input; the first backslash hands over to
// unescape.
func (p *parser) str(i int) (string, int, error) {
	start := i + 1
	j, high := stringRun(p.data, start)
	return p.strRest(start, j, high, true)
}

// strRest finishes the string whose contents start at d[start], given
// stringRun's result for start: the end j of its plain run and whether
// that run holds bytes >= 0x80; intern says whether a well-known string
// is to be returned as its constant (value has already tried).
func (p *parser) strRest(start, j int, high, intern bool) (string, int, error) {
	d := p.data
	if j >= len(d) {
		return "", j, unexpectedEnd(j)
	}
	if high && !utf8.Valid(d[start:j]) {
		return "", j, utf8Error(start + invalidUTF8Offset(d[start:j]))
	}
	switch d[j] {
	case '"':
		if intern && !high {
			if v := wellKnown(d[start:j]); v != nil {
				return v.(string), j + 1, nil // a constant: no allocation
			}
		}
		return p.token(start, j), j + 1, nil
	case '\\':
		return p.unescape(start, j)
	default:
		return "", j, &syntaxError{off: j, msg: "control character in string"}
	}
}

// token returns the input's bytes [i:j] as a string: a slice of the
// shared text, or a copy.
func (p *parser) token(i, j int) string {
	if p.src != "" {
		return p.src[i:j]
	}
	return string(p.data[i:j])
}

// unescape finishes a string whose first escape is at d[j]; d[start:j] is
// its already validated plain prefix. It decodes escapes exactly as
// encoding/json does, except that a lone surrogate escape is recorded for
// Decode to reject instead of becoming U+FFFD.
//
// The string is built in a strings.Builder sized from its raw length
// (escapes only ever shrink), so it costs one allocation and one copy of
// its bytes, where a scratch buffer grew by doubling and was then copied
// into the string.
func (p *parser) unescape(start, j int) (string, int, error) {
	d := p.data
	var sb strings.Builder
	sb.Grow(rawStringLen(d, start, j))
	sb.Write(d[start:j])
	for {
		switch c := d[j]; {
		case c == '"':
			return sb.String(), j + 1, nil
		case c == '\\':
			if j+1 >= len(d) {
				return "", j + 1, unexpectedEnd(j + 1)
			}
			var (
				r   rune
				err error
			)
			r, j, err = p.escape(j)
			if err != nil {
				return "", j, err
			}
			sb.WriteRune(r)
		default:
			return "", j, &syntaxError{off: j, msg: "control character in string"}
		}
		k, high := stringRun(d, j)
		if k >= len(d) {
			return "", k, unexpectedEnd(k)
		}
		if high && !utf8.Valid(d[j:k]) {
			return "", k, utf8Error(j + invalidUTF8Offset(d[j:k]))
		}
		sb.Write(d[j:k])
		j = k
	}
}

// rawStringLen returns the length of the contents of the string that
// starts at d[start] and has an escape at d[j]: up to its closing quote,
// an upper bound of its unescaped length. It only looks for the quote;
// when it finds none (the string is malformed, which unescape reports)
// it returns what it has scanned.
func rawStringLen(d []byte, start, j int) int {
	for j < len(d) {
		k, _ := stringRun(d, j)
		switch {
		case k >= len(d):
			return k - start
		case d[k] == '"':
			return k - start
		case d[k] == '\\':
			j = k + 2
		default:
			return k - start // a control byte: an error
		}
	}
	return len(d) - start
}

// escape decodes the escape sequence at d[j] == '\\' (with d[j+1] present)
// and returns its rune and the offset just past it. A surrogate pair of
// \u escapes is one rune.
func (p *parser) escape(j int) (rune, int, error) {
	d := p.data
	switch e := d[j+1]; e {
	case '"', '\\', '/':
		return rune(e), j + 2, nil
	case 'b':
		return '\b', j + 2, nil
	case 'f':
		return '\f', j + 2, nil
	case 'n':
		return '\n', j + 2, nil
	case 'r':
		return '\r', j + 2, nil
	case 't':
		return '\t', j + 2, nil
	case 'u':
		r, ok := Hex4(d, j+2)
		if !ok {
			return 0, j, p.badHex(j + 2)
		}
		if r < 0xD800 || r > 0xDFFF {
			return r, j + 6, nil
		}
		if r <= 0xDBFF && j+12 <= len(d) && d[j+6] == '\\' && d[j+7] == 'u' {
			if lo, ok := Hex4(d, j+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), j + 12, nil
			}
		}
		// A lone surrogate: keep parsing, since a syntax error later in
		// the input outranks it, but remember the first one.
		if p.lone < 0 {
			p.lone = j
		}
		return utf8.RuneError, j + 6, nil
	default:
		return 0, j + 1, &syntaxError{off: j + 1, msg: "invalid escape in string"}
	}
}

// badHex reports the problem with the four hex digits meant to start at d[at].
func (p *parser) badHex(at int) error {
	d := p.data
	for k := at; k < at+4; k++ {
		if k >= len(d) {
			return unexpectedEnd(k)
		}
		if c := d[k]; !(isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return &syntaxError{off: k, msg: "invalid \\u escape: expected a hex digit"}
		}
	}
	return &syntaxError{off: at, msg: "invalid \\u escape"} // not reached
}

// stringRun returns the offset of the first byte at or after i that ends a
// plain run inside a JSON string ('"', '\\' or a control byte), or len(d),
// and whether a byte >= 0x80 occurs before it (so the run needs UTF-8
// validation). Like swar.IndexStop it tests eight bytes at a time: the word tests
// never miss a flagged byte, and a false alarm only falls back to the byte
// loop. Bytes >= 0x80 do not stop the run; they only set the flag.
func stringRun(d []byte, i int) (int, bool) {
	var high uint64
	for ; i+8 <= len(d); i += 8 {
		w := swar.Load(d, i)
		if swar.Stops(w) != 0 {
			break
		}
		high |= w
	}
	for ; i < len(d); i++ {
		c := d[i]
		if c < 0x20 || c == '"' || c == '\\' {
			break
		}
		high |= uint64(c)
	}
	return i, swar.High(high) != 0
}
