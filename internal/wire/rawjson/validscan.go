package rawjson

// The functions below let a request parser validate a body in the same
// pass that decodes it, instead of running encoding/json.Valid over the
// whole body first: ScanRoot checks the top-level object and every member
// value except one (the conversation, which the parser decodes strictly
// anyway), and ScanArrayChecked checks that member's array syntax around
// its elements. They judge exactly as encoding/json.Valid does (bytes >=
// 0x80 are not checked for UTF-8, as Valid does not), and never read past
// the input on invalid input. A "no" from them says nothing about which
// error applies: the caller then takes its Valid-first path, so errors
// stay exactly those of that path.

// ScanRoot scans a document that must be one object, optionally
// surrounded by whitespace, and returns its span and members (keys
// decoded as DecodeKey does). Every member value is validated except the
// value of the member named lazy, of which only the end is found
// (ValueEnd): the caller must validate it in full before relying on the
// document being valid. ok is false when the document is not such an
// object, a member repeats a key, or a validated value is invalid.
func ScanRoot(b []byte, lazy string) (root Span, ms []Member, ok bool) {
	return scanRoot(b, lazyNamed, lazy)
}

// ScanRootValid is ScanRoot with no lazy member: ok means the document is
// valid JSON, as encoding/json.Valid judges, holding one object whose
// keys do not repeat.
func ScanRootValid(b []byte) (root Span, ms []Member, ok bool) {
	return scanRoot(b, lazyNone, "")
}

// Which member values scanRoot leaves unvalidated.
const (
	lazyNamed = iota // the one named
	lazyAll
	lazyNone
)

// ScanRootDeferred is ScanRoot with every member lazy: it checks only the
// object's own syntax and its keys, for a caller that decodes every member
// value strictly, as nested inside the object (outer 1), before relying on
// the document being valid. Until then a value may only be read through
// functions that stay inside its span (CountElements).
func ScanRootDeferred(b []byte) (root Span, ms []Member, ok bool) {
	return scanRoot(b, lazyAll, "")
}

func scanRoot(b []byte, mode int, lazy string) (root Span, ms []Member, ok bool) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return Span{}, nil, false
	}
	start := i
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return endRoot(b, start, i+1, nil)
	}
	ms = make([]Member, 0, 8)
	var seen map[string]struct{}
	for {
		if i >= len(b) || b[i] != '"' {
			return Span{}, nil, false
		}
		keyEnd, ok := validString(b, i)
		if !ok {
			return Span{}, nil, false
		}
		key, err := DecodeKey(b[i:keyEnd])
		if err != nil {
			return Span{}, nil, false
		}
		if seen != nil {
			if _, dup := seen[key]; dup {
				return Span{}, nil, false
			}
			seen[key] = struct{}{}
		} else if Find(ms, key) >= 0 {
			return Span{}, nil, false
		}
		j := SkipSpace(b, keyEnd)
		if j >= len(b) || b[j] != ':' {
			return Span{}, nil, false
		}
		vs := SkipSpace(b, j+1)
		if vs >= len(b) {
			return Span{}, nil, false
		}
		var ve int
		if mode == lazyAll || mode == lazyNamed && key == lazy {
			ve = ValueEnd(b, vs)
		} else if ve, ok = validValue(b, vs, 1); !ok {
			return Span{}, nil, false
		}
		ms = append(ms, Member{Key: key, KeyAt: i, Val: Span{vs, ve}})
		if len(ms) == smallObject {
			// Past a few members a set keeps duplicate detection linear.
			seen = make(map[string]struct{}, 2*smallObject)
			for _, m := range ms {
				seen[m.Key] = struct{}{}
			}
		}
		i = SkipSpace(b, ve)
		if i >= len(b) {
			return Span{}, nil, false
		}
		if b[i] == '}' {
			return endRoot(b, start, i+1, ms)
		}
		if b[i] != ',' {
			return Span{}, nil, false
		}
		i = SkipSpace(b, i+1)
	}
}

// endRoot accepts the object ending just before end when only whitespace
// follows it.
func endRoot(b []byte, start, end int, ms []Member) (Span, []Member, bool) {
	if SkipSpace(b, end) != len(b) {
		return Span{}, nil, false
	}
	return Span{start, end}, ms, true
}

// ScanArrayChecked lists the element spans of the array at v, which
// ScanRoot left unvalidated, checking the array's own syntax: brackets,
// commas and whitespace, and that the elements tile the span exactly.
// The elements themselves are not validated: the caller decodes each
// strictly, nested inside depth containers (the root object and this
// array: 2), which completes the check.
func ScanArrayChecked(b []byte, v Span) ([]Span, bool) {
	if v.End > len(b) || v.Start >= v.End || b[v.Start] != '[' || b[v.End-1] != ']' {
		return nil, false
	}
	last := v.End - 1 // the closing bracket
	i := SkipSpace(b[:last], v.Start+1)
	if i == last {
		return nil, true
	}
	es := make([]Span, 0, 16)
	for {
		if i >= last {
			return nil, false
		}
		e := ValueEnd(b[:last], i)
		es = append(es, Span{i, e})
		i = SkipSpace(b[:last], e)
		if i == last {
			return es, true
		}
		if b[i] != ',' {
			return nil, false
		}
		i = SkipSpace(b[:last], i+1)
	}
}

// ValidElement reports whether the element at s, nested inside depth
// open containers, is valid JSON as encoding/json.Valid judges: the check
// ScanArrayChecked leaves to its caller, for a caller that reads the
// element other than by a strict decoder.
func ValidElement(b []byte, s Span, depth int) bool {
	if s.Start >= s.End || s.End > len(b) {
		return false
	}
	end, ok := validValue(b[:s.End], s.Start, depth)
	return ok && end == s.End
}

// validValue validates the value at b[i] (not whitespace), nested inside
// depth open containers, and returns the offset just past it. It is
// CheckDocument's checker with duplicate keys not looked for (dup set
// from the start: no key is collected).
func validValue(b []byte, i, depth int) (int, bool) {
	c := checker{b: b, dup: true}
	return c.value(i, depth+1)
}

// validString validates the string token at b[i] == '"' as
// encoding/json does (see checker.str).
func validString(b []byte, i int) (int, bool) {
	c := checker{b: b}
	end, _, ok := c.str(i)
	return end, ok
}
