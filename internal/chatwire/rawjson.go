package chatwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// This file is the raw-JSON layer: it locates members and elements inside a
// document by byte offset, so that untouched parts of a body are re-emitted
// byte-for-byte (number tokens, key order, whitespace, unknown fields) and
// only what a verdict changed is rewritten.
//
// Every function here assumes its input already passed json.Valid; it then
// only has to find value boundaries, never to diagnose syntax.

// span is the half-open byte range [start, end) of one JSON value.
type span struct{ start, end int }

// member is one object member: its decoded key, the offset of the key's
// opening quote, and the span of its value.
type member struct {
	key   string
	keyAt int
	val   span
}

// errDuplicateKey is returned by scanObject; callers turn it into their own
// typed error. Duplicate keys are refused wherever this package interprets
// an object, because parsers disagree on which occurrence wins and the
// policy must see exactly what the receiver acts on.
var errDuplicateKey = errors.New("duplicate member")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// valueEnd returns the offset just past the JSON value starting at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	default: // number, true, false, null
		for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != ']' && b[i] != '}' {
			i++
		}
		return i
	}
}

// stringEnd returns the offset just past the string starting at b[i] == '"'.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// rootSpan returns the span of the single value in a valid document.
func rootSpan(b []byte) span {
	s := skipSpace(b, 0)
	return span{s, valueEnd(b, s)}
}

// kind returns the first byte of the value: '{', '[', '"', 't', 'f', 'n',
// or a number's first byte.
func (s span) kind(b []byte) byte { return b[s.start] }

func (s span) isNull(b []byte) bool { return s.end-s.start == 4 && b[s.start] == 'n' }

// smallObject is the member count up to which duplicate keys are found by
// a linear scan rather than a set.
const smallObject = 16

// scanObject lists the members of the object at v in document order. It
// reports errDuplicateKey when a key (after unescaping) occurs twice.
func scanObject(b []byte, v span) ([]member, error) {
	var ms []member
	var seen map[string]struct{}
	i := skipSpace(b, v.start+1)
	if b[i] == '}' {
		return ms, nil
	}
	for {
		keyEnd := stringEnd(b, i)
		key, err := decodeKey(b[i:keyEnd])
		if err != nil {
			return nil, err
		}
		if seen != nil {
			if _, dup := seen[key]; dup {
				return nil, errDuplicateKey
			}
			seen[key] = struct{}{}
		} else {
			for _, m := range ms {
				if m.key == key {
					return nil, errDuplicateKey
				}
			}
		}
		vs := skipSpace(b, skipSpace(b, keyEnd)+1) // past ':'
		ve := valueEnd(b, vs)
		ms = append(ms, member{key: key, keyAt: i, val: span{vs, ve}})
		if len(ms) == smallObject {
			// Past a few members a set keeps duplicate detection linear.
			seen = make(map[string]struct{}, 2*smallObject)
			for _, m := range ms {
				seen[m.key] = struct{}{}
			}
		}
		i = skipSpace(b, ve)
		if b[i] == '}' {
			return ms, nil
		}
		i = skipSpace(b, i+1) // past ','
	}
}

// hasDuplicateKeys reports whether any object in the value at s repeats a
// key. Decode (like encoding/json) keeps the last duplicate while other
// parsers keep the first, so such input is refused, or, for tool-call
// arguments, shown to the policy as the raw string.
func hasDuplicateKeys(b []byte, s span) bool {
	switch s.kind(b) {
	case '{':
		ms, err := scanObject(b, s)
		if err != nil {
			return true
		}
		for _, m := range ms {
			if k := m.val.kind(b); (k == '{' || k == '[') && hasDuplicateKeys(b, m.val) {
				return true
			}
		}
	case '[':
		for _, e := range scanArray(b, s) {
			if k := e.kind(b); (k == '{' || k == '[') && hasDuplicateKeys(b, e) {
				return true
			}
		}
	}
	return false
}

// decodeKey unescapes a raw key token. Escaped keys ("\u006dodel") are
// decoded so that they cannot smuggle a member past a lookup by name.
func decodeKey(raw []byte) (string, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// scanArray lists the element spans of the array at v.
func scanArray(b []byte, v span) []span {
	var es []span
	i := skipSpace(b, v.start+1)
	if b[i] == ']' {
		return es
	}
	for {
		e := valueEnd(b, i)
		es = append(es, span{i, e})
		i = skipSpace(b, e)
		if b[i] == ']' {
			return es
		}
		i = skipSpace(b, i+1)
	}
}

// find returns the index of the member named key, or -1.
func find(ms []member, key string) int {
	for i := range ms {
		if ms[i].key == key {
			return i
		}
	}
	return -1
}

// objPatch describes changes to one object; render applies them.
type objPatch struct {
	src     []byte
	obj     span
	members []member
	replace map[int][]byte // member index → new raw value
	remove  map[int]bool
	add     [][2][]byte // new members: raw quoted key, raw value
}

func newObjPatch(src []byte, obj span, ms []member) *objPatch {
	return &objPatch{src: src, obj: obj, members: ms}
}

// set replaces the value of key, or appends the member when it is absent.
func (p *objPatch) set(key string, raw []byte) {
	if i := find(p.members, key); i >= 0 {
		if p.replace == nil {
			p.replace = map[int][]byte{}
		}
		p.replace[i] = raw
		return
	}
	p.add = append(p.add, [2][]byte{quoteKey(key), raw})
}

// drop removes the member at index i.
func (p *objPatch) drop(i int) {
	if p.remove == nil {
		p.remove = map[int]bool{}
	}
	p.remove[i] = true
}

// del removes the member named key if it exists.
func (p *objPatch) del(key string) {
	if i := find(p.members, key); i >= 0 {
		if p.remove == nil {
			p.remove = map[int]bool{}
		}
		p.remove[i] = true
	}
}

func (p *objPatch) changed() bool {
	return len(p.replace) > 0 || len(p.remove) > 0 || len(p.add) > 0
}

// render returns the patched object. Without removals the original text is
// spliced, so whitespace and every untouched byte survive; a removal
// rebuilds the object from the members' own raw text joined by commas
// (the members keep their bytes, only the separators are normalized).
func (p *objPatch) render() []byte {
	src := p.src
	out := make([]byte, 0, p.obj.end-p.obj.start+64)
	if len(p.remove) == 0 {
		at := p.obj.start
		for i, m := range p.members {
			if raw, ok := p.replace[i]; ok {
				out = append(out, src[at:m.val.start]...)
				out = append(out, raw...)
				at = m.val.end
			}
		}
		insertAt := p.obj.start + 1
		if len(p.members) > 0 {
			insertAt = p.members[len(p.members)-1].val.end
		}
		out = append(out, src[at:insertAt]...)
		out = p.appendAdds(out, len(p.members) > 0)
		return append(out, src[insertAt:p.obj.end]...)
	}
	out = append(out, '{')
	n := 0
	for i, m := range p.members {
		if p.remove[i] {
			continue
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		if raw, ok := p.replace[i]; ok {
			out = append(out, src[m.keyAt:m.val.start]...)
			out = append(out, raw...)
		} else {
			out = append(out, src[m.keyAt:m.val.end]...)
		}
	}
	out = p.appendAdds(out, n > 0)
	return append(out, '}')
}

func (p *objPatch) appendAdds(out []byte, comma bool) []byte {
	for _, kv := range p.add {
		if comma {
			out = append(out, ',')
		}
		comma = true
		out = append(out, kv[0]...)
		out = append(out, ':')
		out = append(out, kv[1]...)
	}
	return out
}

// quoteKey returns key as a JSON string token. Keys used here are ASCII
// identifiers, so no escaping is needed beyond the quotes.
func quoteKey(key string) []byte {
	return slices.Concat([]byte{'"'}, []byte(key), []byte{'"'})
}

// splice returns src with the bytes of s replaced by repl.
func splice(src []byte, s span, repl []byte) []byte {
	out := make([]byte, 0, len(src)-(s.end-s.start)+len(repl))
	out = append(out, src[:s.start]...)
	out = append(out, repl...)
	return append(out, src[s.end:]...)
}

// renderArray renders an array holding elems. When the count equals that
// of the original array (arr, with element spans orig) the original text is
// spliced element by element, keeping separators and indentation;
// otherwise the array is rebuilt compactly.
func renderArray(src []byte, arr span, orig []span, elems [][]byte) []byte {
	n := 2 + len(elems)
	for _, e := range elems {
		n += len(e)
	}
	if len(elems) != len(orig) || len(orig) == 0 {
		out := make([]byte, 0, n)
		out = append(out, '[')
		for i, e := range elems {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, e...)
		}
		return append(out, ']')
	}
	out := make([]byte, 0, n+arr.end-arr.start)
	at := arr.start
	for i, e := range elems {
		out = append(out, src[at:orig[i].start]...)
		out = append(out, e...)
		at = orig[i].end
	}
	return append(out, src[at:arr.end]...)
}

// decodeSpan decodes the value at s into a value tree (numbers as
// json.Number; invalid UTF-8 and lone surrogate escapes rejected).
func decodeSpan(b []byte, s span) (any, error) {
	return jsonvalue.Decode(b[s.start:s.end])
}

// decodeProblem describes a jsonvalue.Decode or DecodeStrict failure
// without quoting input.
func decodeProblem(err error) string {
	switch {
	case errors.Is(err, jsonvalue.ErrInvalidString):
		return "contains invalid UTF-8 or a lone surrogate escape"
	case errors.Is(err, jsonvalue.ErrDuplicateKey):
		return "has an object with a duplicate member"
	}
	return "is not valid JSON"
}

// typeName names the JSON type of a value-tree node for error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64, float32, int, int64, int32, uint64:
		return "number"
	default:
		return "non-JSON value"
	}
}

// kindName names the JSON type of a raw value for error messages.
func kindName(b []byte, s span) string {
	switch s.kind(b) {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
