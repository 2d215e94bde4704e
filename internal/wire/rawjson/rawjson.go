package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// Span is the half-open byte range [start, end) of one JSON value.
type Span struct{ Start, End int }

// Member is one object Member: its decoded key, the offset of the key's
// opening quote, and the span of its value.
type Member struct {
	Key   string
	KeyAt int
	Val   Span
}

// ErrDuplicateKey is returned by scanObject; callers turn it into their own
// typed error. Duplicate keys are refused wherever this package interprets
// an object, because parsers disagree on which occurrence wins and the
// policy must see exactly what the receiver acts on.
var ErrDuplicateKey = errors.New("duplicate member")

func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// ValueEnd returns the offset just past the JSON value starting at b[i].
func ValueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = StringEnd(b, i) - 1
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
		for i < len(b) && !IsSpace(b[i]) && b[i] != ',' && b[i] != ']' && b[i] != '}' {
			i++
		}
		return i
	}
}

// StringEnd returns the offset just past the string starting at b[i] == '"',
// or len(b) when the string is not terminated.
//
// It jumps to each '"' with bytes.IndexByte and counts the backslashes
// right before it: an odd run escapes the quote. The run is counted back
// no further than where the search started, which is never inside an
// escape (the string's first byte, or just past an escaped quote).
func StringEnd(b []byte, i int) int {
	from := i + 1
	for from < len(b) {
		q := bytes.IndexByte(b[from:], '"')
		if q < 0 {
			break
		}
		q += from
		k := q
		for k > from && b[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			return q + 1
		}
		from = q + 1
	}
	return len(b)
}

// RootSpan returns the span of the single value in a valid document.
func RootSpan(b []byte) Span {
	s := SkipSpace(b, 0)
	return Span{s, ValueEnd(b, s)}
}

// Kind returns the first byte of the value: '{', '[', '"', 't', 'f', 'n',
// or a number's first byte.
func (s Span) Kind(b []byte) byte { return b[s.Start] }

func (s Span) IsNull(b []byte) bool { return s.End-s.Start == 4 && b[s.Start] == 'n' }

// smallObject is the member count up to which duplicate keys are found by
// a linear scan rather than a set.
const smallObject = 16

// ScanObject lists the members of the object at v in document order. It
// reports errDuplicateKey when a key (after unescaping) occurs twice.
func ScanObject(b []byte, v Span) ([]Member, error) {
	i := SkipSpace(b, v.Start+1)
	if b[i] == '}' {
		return nil, nil
	}
	// One allocation covers the members of a typical request or message.
	return scanMembers(b, i, nil, 8)
}

// ScanObjectInto is ScanObject listing the members in dst's storage when
// they fit: a caller scanning many small objects passes the same
// (stack) array each time instead of allocating a list per object.
func ScanObjectInto(b []byte, v Span, dst []Member) ([]Member, error) {
	i := SkipSpace(b, v.Start+1)
	if b[i] == '}' {
		return nil, nil
	}
	return scanMembersInto(b, i, nil, dst[:0])
}

// scanMembers lists the members of an object whose first key starts at
// b[i], into a list of capacity n; unescaped keys found in t are taken
// from t (a nil t finds none).
func scanMembers(b []byte, i int, t KeyTable, n int) ([]Member, error) {
	return scanMembersInto(b, i, t, make([]Member, 0, n))
}

// scanMembersInto is scanMembers appending to ms.
func scanMembersInto(b []byte, i int, t KeyTable, ms []Member) ([]Member, error) {
	var seen map[string]struct{}
	for {
		keyEnd := StringEnd(b, i)
		key, ok := t[string(b[i+1:keyEnd-1])]
		if !ok || bytes.IndexByte(b[i:keyEnd], '\\') >= 0 {
			var err error
			if key, err = DecodeKey(b[i:keyEnd]); err != nil {
				return nil, err
			}
		}
		if seen != nil {
			if _, dup := seen[key]; dup {
				return nil, ErrDuplicateKey
			}
			seen[key] = struct{}{}
		} else {
			for _, m := range ms {
				if m.Key == key {
					return nil, ErrDuplicateKey
				}
			}
		}
		vs := SkipSpace(b, SkipSpace(b, keyEnd)+1) // past ':'
		ve := ValueEnd(b, vs)
		ms = append(ms, Member{Key: key, KeyAt: i, Val: Span{vs, ve}})
		if len(ms) == smallObject {
			// Past a few members a set keeps duplicate detection linear.
			seen = make(map[string]struct{}, 2*smallObject)
			for _, m := range ms {
				seen[m.Key] = struct{}{}
			}
		}
		i = SkipSpace(b, ve)
		if b[i] == '}' {
			return ms, nil
		}
		i = SkipSpace(b, i+1) // past ','
	}
}

// HasDuplicateKeys reports whether any object in the value at s repeats a
// key (compared as DecodeKey decodes keys). Decode (like encoding/json)
// keeps the last duplicate while other parsers keep the first, so such
// input is refused, or, for tool-call arguments, shown to the policy as the
// raw string. The value of a member of a valid document is a valid
// document itself, so one CheckDocument pass answers; a span that is not
// (which no caller passes) counts as a duplicate, failing closed.
func HasDuplicateKeys(b []byte, s Span) bool {
	_, valid, dup := CheckDocument(b[s.Start:s.End])
	return !valid || dup
}

// DecodeKey unescapes a raw key token. Escaped keys ("\u006dodel") are
// decoded so that they cannot smuggle a member past a lookup by name.
func DecodeKey(raw []byte) (string, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		if k := knownKey(raw[1 : len(raw)-1]); k != "" {
			return k, nil
		}
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// ScanArray lists the element spans of the array at v.
func ScanArray(b []byte, v Span) []Span {
	var es []Span
	i := SkipSpace(b, v.Start+1)
	if b[i] == ']' {
		return es
	}
	es = make([]Span, 0, 16) // one allocation for most conversations
	for {
		e := ValueEnd(b, i)
		es = append(es, Span{i, e})
		i = SkipSpace(b, e)
		if b[i] == ']' {
			return es
		}
		i = SkipSpace(b, i+1)
	}
}

// ArrayLonger reports whether the member name of ms is an array of more
// than limit elements (limit <= 0: never): a bound checked before any
// element is decoded.
func ArrayLonger(b []byte, ms []Member, name string, limit int) bool {
	i := Find(ms, name)
	if limit <= 0 || i < 0 || ms[i].Val.Kind(b) != '[' {
		return false
	}
	return CountElements(b, ms[i].Val, limit) > limit
}

// CountElements counts the elements of the array at v, stopping once it
// has counted more than limit (limit < 0: no stop). It allocates nothing:
// a bound on elements can be checked before any element is decoded.
//
// It never reads outside v, so it may run on an array whose elements have
// not been validated yet (ScanRoot's lazy member): its count is then
// meaningless but harmless, since validation follows.
func CountElements(b []byte, v Span, limit int) int {
	b = b[:v.End]
	i := SkipSpace(b, v.Start+1)
	if i >= len(b) || b[i] == ']' {
		return 0
	}
	n := 0
	for {
		n++
		if limit >= 0 && n > limit {
			return n
		}
		i = SkipSpace(b, ValueEnd(b, i))
		if i >= len(b) || b[i] == ']' {
			return n
		}
		if i = SkipSpace(b, i+1); i >= len(b) {
			return n
		}
	}
}

// Find returns the index of the member named key, or -1.
func Find(ms []Member, key string) int {
	for i := range ms {
		if ms[i].Key == key {
			return i
		}
	}
	return -1
}

// ObjPatch describes changes to one object; render applies them.
type ObjPatch struct {
	src     []byte
	obj     Span
	members []Member
	replace map[int][]byte // member index → new raw value
	remove  map[int]bool
	add     [][2][]byte // new members: raw quoted key, raw value
}

func NewObjPatch(src []byte, obj Span, ms []Member) *ObjPatch {
	return &ObjPatch{src: src, obj: obj, members: ms}
}

// Set replaces the value of key, or appends the member when it is absent.
func (p *ObjPatch) Set(key string, raw []byte) {
	if i := Find(p.members, key); i >= 0 {
		if p.replace == nil {
			p.replace = map[int][]byte{}
		}
		p.replace[i] = raw
		return
	}
	p.add = append(p.add, [2][]byte{QuoteKey(key), raw})
}

// Drop removes the member at index i.
func (p *ObjPatch) Drop(i int) {
	if p.remove == nil {
		p.remove = map[int]bool{}
	}
	p.remove[i] = true
}

// Del removes the member named key if it exists.
func (p *ObjPatch) Del(key string) {
	if i := Find(p.members, key); i >= 0 {
		if p.remove == nil {
			p.remove = map[int]bool{}
		}
		p.remove[i] = true
	}
}

func (p *ObjPatch) Changed() bool {
	return len(p.replace) > 0 || len(p.remove) > 0 || len(p.add) > 0
}

// Render returns the patched object. Without removals the original text is
// spliced, so whitespace and every untouched byte survive; a removal
// rebuilds the object from the members' own raw text joined by commas
// (the members keep their bytes, only the separators are normalized).
func (p *ObjPatch) Render() []byte {
	src := p.src
	out := make([]byte, 0, p.obj.End-p.obj.Start+64)
	if len(p.remove) == 0 {
		at := p.obj.Start
		for i, m := range p.members {
			if raw, ok := p.replace[i]; ok {
				out = append(out, src[at:m.Val.Start]...)
				out = append(out, raw...)
				at = m.Val.End
			}
		}
		insertAt := p.obj.Start + 1
		if len(p.members) > 0 {
			insertAt = p.members[len(p.members)-1].Val.End
		}
		out = append(out, src[at:insertAt]...)
		out = p.appendAdds(out, len(p.members) > 0)
		return append(out, src[insertAt:p.obj.End]...)
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
			out = append(out, src[m.KeyAt:m.Val.Start]...)
			out = append(out, raw...)
		} else {
			out = append(out, src[m.KeyAt:m.Val.End]...)
		}
	}
	out = p.appendAdds(out, n > 0)
	return append(out, '}')
}

func (p *ObjPatch) appendAdds(out []byte, comma bool) []byte {
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

// QuoteKey returns key as a JSON string token. Keys used here are ASCII
// identifiers, so no escaping is needed beyond the quotes.
func QuoteKey(key string) []byte {
	return slices.Concat([]byte{'"'}, []byte(key), []byte{'"'})
}

// Splice returns src with the bytes of s replaced by repl.
func Splice(src []byte, s Span, repl []byte) []byte {
	out := make([]byte, 0, len(src)-(s.End-s.Start)+len(repl))
	out = append(out, src[:s.Start]...)
	out = append(out, repl...)
	return append(out, src[s.End:]...)
}

// SpliceOwned is Splice for a repl the caller hands over: when s is all
// of src (a body that is its root object, without surrounding
// whitespace) the result is repl itself rather than a copy of it.
func SpliceOwned(src []byte, s Span, repl []byte) []byte {
	if s.Start == 0 && s.End == len(src) {
		return repl
	}
	return Splice(src, s, repl)
}

// RenderArray renders an array holding elems. When the count equals that
// of the original array (arr, with element spans orig) the original text is
// spliced element by element, keeping separators and indentation;
// otherwise the array is rebuilt compactly.
func RenderArray(src []byte, arr Span, orig []Span, elems [][]byte) []byte {
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
	return replaceSpans(src, arr, orig, elems)
}

// ReplaceSpans returns a copy of src with each orig[i] (in order, not
// overlapping) replaced by elems[i], in one allocation of the final size:
// a body whose array elements a gateway rewrote, without rendering the
// array and then the body around it.
func ReplaceSpans(src []byte, orig []Span, elems [][]byte) []byte {
	return replaceSpans(src, Span{0, len(src)}, orig, elems)
}

// replaceSpans is ReplaceSpans over the part of src at within.
func replaceSpans(src []byte, within Span, orig []Span, elems [][]byte) []byte {
	n := within.End - within.Start
	for i, e := range elems {
		n += len(e) - (orig[i].End - orig[i].Start)
	}
	out := make([]byte, 0, n)
	at := within.Start
	for i, e := range elems {
		out = append(out, src[at:orig[i].Start]...)
		out = append(out, e...)
		at = orig[i].End
	}
	return append(out, src[at:within.End]...)
}

// DecodeSpan decodes the value at s into a value tree (numbers as
// json.Number; invalid UTF-8 and lone surrogate escapes rejected).
func DecodeSpan(b []byte, s Span) (any, error) {
	return jsonvalue.Decode(b[s.Start:s.End])
}

// DecodeProblem describes a jsonvalue.Decode or DecodeStrict failure
// without quoting input.
func DecodeProblem(err error) string {
	switch {
	case errors.Is(err, jsonvalue.ErrInvalidString):
		return "contains invalid UTF-8 or a lone surrogate escape"
	case errors.Is(err, jsonvalue.ErrDuplicateKey):
		return "has an object with a duplicate member"
	}
	return "is not valid JSON"
}

// TypeName names the JSON type of a value-tree node for error messages.
func TypeName(v any) string {
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

// KindName names the JSON type of a raw value for error messages.
func KindName(b []byte, s Span) string {
	switch s.Kind(b) {
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

// MemberValue returns the span of the value of member key of the object
// at v, in a document already validated, and whether it has one: the
// first such member, names compared as DecodeKey decodes them. It is
// ScanObject followed by Find for an object without duplicate members
// (which ScanObject refuses), without the member list: it allocates
// nothing for names written without escapes and stops at the member.
func MemberValue(b []byte, v Span, key string) (Span, bool) {
	i := SkipSpace(b, v.Start+1)
	if b[i] == '}' {
		return Span{}, false
	}
	for {
		keyEnd := StringEnd(b, i)
		vs := SkipSpace(b, SkipSpace(b, keyEnd)+1) // past ':'
		ve := ValueEnd(b, vs)
		if keyIs(b[i:keyEnd], key) {
			return Span{vs, ve}, true
		}
		i = SkipSpace(b, ve)
		if b[i] == '}' {
			return Span{}, false
		}
		i = SkipSpace(b, i+1) // past ','
	}
}

// keyIs reports whether the key token raw (quotes included) names key.
func keyIs(raw []byte, key string) bool {
	name := raw[1 : len(raw)-1]
	if bytes.IndexByte(name, '\\') < 0 {
		return string(name) == key
	}
	k, err := DecodeKey(raw)
	return err == nil && k == key
}
