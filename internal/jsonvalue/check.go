package jsonvalue

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Limits bounds a value (spec §12.3). A zero field means "no configured
// limit"; even then depth is capped at an internal ceiling of 10000 levels
// so that a cyclic value fails closed instead of exhausting the stack.
type Limits struct {
	// MaxBytes bounds the length of the value's compact JSON encoding,
	// exactly as Marshal would produce it.
	MaxBytes int
	// MaxDepth bounds nesting: the root value is at level 1 and each
	// array element or object member is one level below its container,
	// so a scalar inside one object is at level 2 (the same counting as
	// the reference SDKs' 128-level identity-path check).
	MaxDepth int
}

// Check validates v in a single walk: every node must be a tree type
// (map[string]any, []any, string, json.Number, bool, nil) or a Go number
// (float64, float32, any int or uint type) that Marshal can encode;
// strings and object keys must be valid UTF-8; json.Number values must be
// JSON number tokens; floats must be finite; and v must respect lim.
//
// The size compared with MaxBytes is exact, not an estimate: it is the
// length Marshal (and encoding/json with HTML escaping off) would produce.
// When the limit is exceeded the walk stops at the value that crossed it
// and names that value's path.
//
// The returned error is a *PathError wrapping ErrTooDeep, ErrTooLarge,
// ErrNonFinite, ErrInvalidString, ErrInvalidNumber or ErrUnsupportedType.
func Check(v any, lim Limits) error { return CheckMemo(v, lim, nil) }

// CheckMemo is Check taking the size and height of the objects memo
// knows from an earlier walk (nil: none); see SizeMemo.
func CheckMemo(v any, lim Limits, memo SizeMemo) error {
	c := checker{maxBytes: lim.MaxBytes, maxDepth: lim.MaxDepth, memo: memo}
	if c.maxDepth <= 0 {
		c.maxDepth, c.ceiling = hardMaxDepth, true
	}
	if err := c.walk(v, 1); err != nil {
		return finish(err, "$")
	}
	return nil
}

// CheckWithout is Check over the object m less its member skip, without
// building that smaller object.
func CheckWithout(m map[string]any, skip string, lim Limits) error {
	return CheckWithoutMemo(m, skip, lim, nil)
}

// CheckWithoutMemo is CheckWithout taking the size and height of the
// objects memo knows from an earlier walk (nil: none); see SizeMemo.
func CheckWithoutMemo(m map[string]any, skip string, lim Limits, memo SizeMemo) error {
	c := checker{maxBytes: lim.MaxBytes, maxDepth: lim.MaxDepth, memo: memo}
	if c.maxDepth <= 0 {
		c.maxDepth, c.ceiling = hardMaxDepth, true
	}
	_, skipped := m[skip]
	if err := c.object(m, 1, skip, skipped); err != nil {
		return finish(err, "$")
	}
	return nil
}

// object walks the members of x at depth, less member skip when skipped.
func (c *checker) object(x map[string]any, depth int, skip string, skipped bool) error {
	members := len(x)
	if skipped {
		members--
	}
	// Braces plus, per member, a colon and a comma (one comma fewer than
	// members).
	n := 2
	if members > 0 {
		n += 2*members - 1
	}
	if err := c.add(n); err != nil {
		return err
	}
	for k, e := range x {
		if skipped && k == skip {
			continue
		}
		kn, ok := quotedLen(k)
		if !ok {
			return newPathError(ErrInvalidString, "object key is not valid UTF-8")
		}
		if err := c.add(kn); err != nil {
			return atKey(err, k, rankIn(x, k))
		}
		if err := c.walk(e, depth+1); err != nil {
			return atKey(err, k, rankIn(x, k))
		}
	}
	return nil
}

type checker struct {
	maxBytes int
	maxDepth int
	ceiling  bool // maxDepth is the internal ceiling, not a caller limit
	size     int
	memo     SizeMemo
	deepest  int // the deepest level walked, for the measures memo keeps
}

// add accounts n more output bytes.
func (c *checker) add(n int) error {
	c.size += n
	if c.maxBytes > 0 && c.size > c.maxBytes {
		return newPathError(ErrTooLarge, "compact JSON exceeds "+strconv.Itoa(c.maxBytes)+" bytes")
	}
	return nil
}

func (c *checker) walk(v any, depth int) error {
	if depth > c.maxDepth {
		return tooDeep(c.maxDepth, c.ceiling)
	}
	c.deepest = max(c.deepest, depth)
	switch x := v.(type) {
	case string:
		n, ok := quotedLen(x)
		if !ok {
			return newPathError(ErrInvalidString, "not valid UTF-8")
		}
		return c.add(n)
	case map[string]any:
		if x == nil {
			return c.add(len("null"))
		}
		if c.memo != nil && c.memo.Keeps(x) {
			return c.memoObject(x, depth)
		}
		return c.object(x, depth, "", false)
	case []any:
		if x == nil {
			return c.add(len("null"))
		}
		n := 2
		if len(x) > 0 {
			n += len(x) - 1
		}
		if err := c.add(n); err != nil {
			return err
		}
		for i, e := range x {
			if err := c.walk(e, depth+1); err != nil {
				return atIndex(err, i)
			}
		}
		return nil
	case json.Number:
		if !validNumber(string(x)) {
			return newPathError(ErrInvalidNumber, "not a JSON number token")
		}
		return c.add(len(x))
	case bool:
		if x {
			return c.add(len("true"))
		}
		return c.add(len("false"))
	case nil:
		return c.add(len("null"))
	case float64:
		return c.float(x, 64)
	case float32:
		return c.float(float64(x), 32)
	case int:
		return c.add(intLen(int64(x)))
	case int8:
		return c.add(intLen(int64(x)))
	case int16:
		return c.add(intLen(int64(x)))
	case int32:
		return c.add(intLen(int64(x)))
	case int64:
		return c.add(intLen(x))
	case uint:
		return c.add(uintLen(uint64(x)))
	case uint8:
		return c.add(uintLen(uint64(x)))
	case uint16:
		return c.add(uintLen(uint64(x)))
	case uint32:
		return c.add(uintLen(uint64(x)))
	case uint64:
		return c.add(uintLen(x))
	default:
		return unsupported(v)
	}
}

func (c *checker) float(f float64, bits int) error {
	if nonFinite(f) {
		return newPathError(ErrNonFinite, "NaN and ±Inf have no JSON form")
	}
	var buf [32]byte
	return c.add(len(appendFloat(buf[:0], f, bits)))
}

func tooDeep(limit int, ceiling bool) error {
	if ceiling {
		return newPathError(ErrTooDeep, "exceeds the internal ceiling of "+strconv.Itoa(limit)+" levels (cyclic value?)")
	}
	return newPathError(ErrTooDeep, "exceeds "+strconv.Itoa(limit)+" levels")
}

func unsupported(v any) error {
	return newPathError(ErrUnsupportedType, fmt.Sprintf("%T is not a JSON value-tree type", v))
}

func uintLen(u uint64) int {
	n := 1
	for u >= 10 {
		u /= 10
		n++
	}
	return n
}

func intLen(i int64) int {
	if i < 0 {
		// Negate in uint64 space so math.MinInt64 does not overflow.
		return 1 + uintLen(uint64(-(i+1))+1)
	}
	return uintLen(uint64(i))
}
