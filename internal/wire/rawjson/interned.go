package rawjson

// KeyTable maps the member names a reader knows to one shared string each,
// so that scanning an object names its known members without allocating.
// It is built once and shared read-only.
type KeyTable map[string]string

// NewKeyTable returns the table of every name in sets.
func NewKeyTable(sets ...MemberSet) KeyTable {
	t := KeyTable{}
	for _, s := range sets {
		for k := range s {
			t[k] = k
		}
	}
	return t
}

// ScanObjectInterned is ScanObject (same members, same duplicate and key
// errors) with unescaped keys found in t taken from t, and the member list
// allocated once at its final size.
func ScanObjectInterned(b []byte, v Span, t KeyTable) ([]Member, error) {
	i := SkipSpace(b, v.Start+1)
	if b[i] == '}' {
		return nil, nil
	}
	ms := make([]Member, 0, countMembers(b, i))
	var seen map[string]struct{}
	for {
		keyEnd := StringEnd(b, i)
		key, ok := t[string(b[i+1:keyEnd-1])]
		if !ok || hasBackslash(b[i:keyEnd]) {
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

// countMembers counts the members of an object whose first key starts at
// b[i], as ScanObject walks them.
func countMembers(b []byte, i int) int {
	n := 0
	for {
		n++
		i = SkipSpace(b, SkipSpace(b, StringEnd(b, i))+1)
		i = SkipSpace(b, ValueEnd(b, i))
		if i >= len(b) || b[i] == '}' {
			return n
		}
		i = SkipSpace(b, i+1)
	}
}

func hasBackslash(tok []byte) bool {
	for _, c := range tok {
		if c == '\\' {
			return true
		}
	}
	return false
}
