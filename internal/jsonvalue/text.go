package jsonvalue

import "unsafe"

// Text is a JSON document held twice: as its bytes and as one string
// conversion of them. Decoding a part of it through Text yields the same
// tree as Decode of the same bytes, except that escape-free strings, object
// keys and numbers are slices of the one string instead of copies: a
// request's trees then cost one allocation for all their plain strings
// instead of one per string.
//
// The price is retention: any such string keeps the whole document alive.
// A string taken from these trees that is stored beyond the document's
// lifetime (a session store, a cache, a counter key) must be copied with
// strings.Clone at that boundary.
//
// The zero Text is an empty document. A Text is read-only and may be
// shared by concurrent decodes.
type Text struct {
	b []byte
	s string
}

// NewText converts b once; b must not be modified while the Text is used.
func NewText(b []byte) Text { return Text{b: b, s: string(b)} }

// ShareText is NewText without the copy: the Text, and every string
// decoded from it, share b's bytes, so b must never be modified again
// (a request body the gateway only reads). It saves a copy of the whole
// document; a string that outlives the request pins b as it would pin
// NewText's copy.
func ShareText(b []byte) Text {
	if len(b) == 0 {
		return Text{b: b}
	}
	return Text{b: b, s: unsafe.String(&b[0], len(b))}
}

// Bytes returns the document's bytes.
func (t Text) Bytes() []byte { return t.b }

// Decode is Decode of t's bytes [start:end].
func (t Text) Decode(start, end int) (any, error) {
	return decodeFrom(t.b[start:end], t.s[start:end], false, 0)
}

// DecodeStrictNested is DecodeStrictNested of t's bytes [start:end].
func (t Text) DecodeStrictNested(start, end, outer int) (any, error) {
	return decodeFrom(t.b[start:end], t.s[start:end], true, max(outer, 0))
}

// Slice returns t's bytes [start:end] as a string that shares t's
// conversion (and so keeps the whole document alive, like the trees).
func (t Text) Slice(start, end int) string { return t.s[start:end] }

// DecodeString is Decode of t's bytes [start:end] for a span holding one
// string token, for callers decoding many: it skips Decode's setup for
// anything else. The value and errors are Decode's.
func (t Text) DecodeString(start, end int) (any, error) {
	p := parser{data: t.b[start:end], src: t.s[start:end], lone: -1}
	if len(p.data) > 0 && p.data[0] == '"' {
		v, j, err := p.value(0)
		if err == nil && j == len(p.data) && p.lone < 0 {
			return v, nil
		}
	}
	return t.Decode(start, end) // not a lone valid string: Decode's answer
}
