package jsonvalue

import (
	"encoding/json"
	"strconv"
)

// Equal reports whether a and b are the same JSON value under the CTK's
// equality (CTK.md §5.2, mirroring serde_json's Value equality):
//
//   - objects: same key set and equal values, key order irrelevant;
//   - arrays: same length, equal element-wise;
//   - strings and bools: exact; null equals only null;
//   - numbers: each token is classified as a non-negative integer (fits
//     uint64), a negative integer (fits int64) or a float (has '.', 'e' or
//     'E', is an integer token outside both ranges, or is "-0"); two
//     numbers are equal only when they have the same kind and value, so
//     1 != 1.0, 100 != 1e2, 1.0 == 1.00, -0 != 0, -0 == 0.0, and integer
//     tokens beyond uint64 compare as the nearest doubles.
//
// Go numbers (float64, float32, ints, uints) are accepted on either side and
// compared as the token encoding/json would write for them (so float64(200)
// is the integer 200). A json.Number that is not a valid token, and a NaN
// or infinite float, equal nothing. Typed nil maps and slices count as null,
// as they encode to null. Other non-tree values are converted with FromGo
// first; if that fails they equal nothing. a and b must be acyclic.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || x == nil || y == nil {
			return slowEqual(a, b)
		}
		if len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !Equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || x == nil || y == nil {
			return slowEqual(a, b)
		}
		if len(x) != len(y) {
			return false
		}
		if len(x) == 0 || &x[0] == &y[0] {
			// The same elements: a tree compared with itself (a context
			// member that came back from its emission untouched) is equal
			// without a walk.
			return true
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		if ok {
			return x == y
		}
	case bool:
		y, ok := b.(bool)
		if ok {
			return x == y
		}
	case json.Number:
		if y, ok := b.(json.Number); ok {
			return numberEqual(string(x), string(y))
		}
	case nil:
		if b == nil {
			return true
		}
	}
	return slowEqual(a, b)
}

// slowEqual handles mixed representations: Go numbers, typed nil
// containers, and non-tree values.
func slowEqual(a, b any) bool {
	ta, aNum := numToken(a)
	tb, bNum := numToken(b)
	if aNum || bNum {
		return aNum && bNum && numberEqual(ta, tb)
	}
	aTree, bTree := isTree(a), isTree(b)
	if !aTree || !bTree {
		// FromGo yields only tree values, so this recursion ends at once.
		na, nb := a, b
		var err error
		if !aTree {
			if na, err = FromGo(a); err != nil {
				return false
			}
		}
		if !bTree {
			if nb, err = FromGo(b); err != nil {
				return false
			}
		}
		return Equal(na, nb)
	}
	// Both are tree values that Equal's fast path declined: they are
	// equal only if both are null (typed nil containers encode as null).
	return isNull(a) && isNull(b)
}

func isNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return x == nil
	case []any:
		return x == nil
	}
	return false
}

func isTree(v any) bool {
	switch v.(type) {
	case map[string]any, []any, string, bool, json.Number, nil:
		return true
	}
	return false
}

// numToken returns the JSON token of a number of any supported Go type.
func numToken(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return string(x), true
	case float64:
		return floatToken(x, 64)
	case float32:
		return floatToken(float64(x), 32)
	case int:
		return strconv.FormatInt(int64(x), 10), true
	case int8:
		return strconv.FormatInt(int64(x), 10), true
	case int16:
		return strconv.FormatInt(int64(x), 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint:
		return strconv.FormatUint(uint64(x), 10), true
	case uint8:
		return strconv.FormatUint(uint64(x), 10), true
	case uint16:
		return strconv.FormatUint(uint64(x), 10), true
	case uint32:
		return strconv.FormatUint(uint64(x), 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	}
	return "", false
}

// numberEqual compares two tokens under the kind-and-value rule. Identical
// valid tokens are equal without parsing.
func numberEqual(a, b string) bool {
	if a == b {
		return validNumber(a)
	}
	na, ok := classify(a)
	if !ok {
		return false
	}
	nb, ok := classify(b)
	return ok && na.equal(nb)
}
