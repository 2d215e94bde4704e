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
	return scanMembers(b, i, t, countMembers(b, i))
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
