package rawjson

// ObjectEach walks the object at b[i] with the strict token checks,
// calling member with each member's name (escape-free, as it appears in b)
// and the offset of its value; member checks the value and returns the
// offset past it. It reports the offset past the object, or false for
// anything but an object of escape-free names whose values member accepts
// (an escaped name is for a full decoder to compare). Fast paths scan
// documents of a known shape with it and fall back when it says no.
func ObjectEach(b []byte, i int, member func(key []byte, at int) (int, bool)) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		ke, esc, ok := StrictString(b, i)
		if !ok || esc {
			return 0, false
		}
		key := b[i+1 : ke-1]
		i = SkipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = SkipSpace(b, i+1)
		if i >= len(b) {
			return 0, false
		}
		ve, ok := member(key, i)
		if !ok {
			return 0, false
		}
		i = SkipSpace(b, ve)
		switch {
		case i >= len(b):
			return 0, false
		case b[i] == '}':
			return i + 1, true
		case b[i] != ',':
			return 0, false
		}
		i = SkipSpace(b, i+1)
	}
}

// ArrayEach walks the array at b[i] as ObjectEach walks an object,
// calling elem with the offset of each element; elem checks the element
// and returns the offset past it. It reports the offset past the array,
// or false for anything but an array whose elements elem accepts.
func ArrayEach(b []byte, i int, elem func(at int) (int, bool)) (int, bool) {
	if i >= len(b) || b[i] != '[' {
		return 0, false
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		if i >= len(b) {
			return 0, false
		}
		ee, ok := elem(i)
		if !ok {
			return 0, false
		}
		i = SkipSpace(b, ee)
		switch {
		case i >= len(b):
			return 0, false
		case b[i] == ']':
			return i + 1, true
		case b[i] != ',':
			return 0, false
		}
		i = SkipSpace(b, i+1)
	}
}
