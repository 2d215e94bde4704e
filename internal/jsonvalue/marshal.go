package jsonvalue

import (
	"encoding/json"
	"slices"
	"strconv"
)

// Marshal returns the compact JSON encoding of v. See AppendCompact.
func Marshal(v any) ([]byte, error) {
	return AppendCompact(make([]byte, 0, 256), v)
}

// AppendCompact appends the compact JSON encoding of v to dst.
//
// The output is byte-identical to encoding/json's Encoder with
// SetEscapeHTML(false) minus the trailing newline: object keys sorted
// bytewise, json.Number written verbatim, float64/float32 in encoding/json's
// number format, typed nil maps and slices as null. Unlike encoding/json it
// never rewrites a value: invalid UTF-8, an invalid or empty json.Number
// (encoding/json writes "0" for the latter) and NaN/±Inf are errors. Accepted
// node types are those Check accepts. The output is deterministic, which
// records and substring assertions rely on.
//
// On error the returned slice is dst as passed in and the error is a
// *PathError naming where the problem is.
func AppendCompact(dst []byte, v any) ([]byte, error) {
	// 32 keys cover the open objects along a typical context path (envelope,
	// message, tool call, arguments) without regrowing the scratch stack.
	e := encoder{buf: dst, keys: make([]string, 0, 32)}
	if err := e.value(v, 1); err != nil {
		return dst, finish(err, "$")
	}
	return e.buf, nil
}

type encoder struct {
	buf []byte
	// keys is one scratch stack shared by all nested objects: each object
	// pushes its keys, sorts its own window, and pops them when done, so
	// sorting costs no allocation per object.
	keys []string
}

func (e *encoder) value(v any, depth int) error {
	if depth > hardMaxDepth {
		return tooDeep(hardMaxDepth, true)
	}
	switch x := v.(type) {
	case string:
		e.grow(len(x) + 2)
		var ok bool
		if e.buf, ok = appendQuoted(e.buf, x); !ok {
			return newPathError(ErrInvalidString, "not valid UTF-8")
		}
	case map[string]any:
		return e.object(x, depth)
	case []any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		e.buf = append(e.buf, '[')
		for i, el := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.value(el, depth+1); err != nil {
				return atIndex(err, i)
			}
		}
		e.buf = append(e.buf, ']')
	case json.Number:
		if !validNumber(string(x)) {
			return newPathError(ErrInvalidNumber, "not a JSON number token")
		}
		e.buf = append(e.buf, x...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case nil:
		e.buf = append(e.buf, "null"...)
	case float64:
		return e.float(x, 64)
	case float32:
		return e.float(float64(x), 32)
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
	case int8:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
	case int16:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
	case int32:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
	case int64:
		e.buf = strconv.AppendInt(e.buf, x, 10)
	case uint:
		e.buf = strconv.AppendUint(e.buf, uint64(x), 10)
	case uint8:
		e.buf = strconv.AppendUint(e.buf, uint64(x), 10)
	case uint16:
		e.buf = strconv.AppendUint(e.buf, uint64(x), 10)
	case uint32:
		e.buf = strconv.AppendUint(e.buf, uint64(x), 10)
	case uint64:
		e.buf = strconv.AppendUint(e.buf, x, 10)
	default:
		return unsupported(v)
	}
	return nil
}

func (e *encoder) object(m map[string]any, depth int) error {
	if m == nil {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	start := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	end := len(e.keys)
	slices.Sort(e.keys[start:end])
	e.buf = append(e.buf, '{')
	// Index e.keys afresh on every step: a nested object may grow (and so
	// reallocate) the scratch stack, but it only ever writes above end.
	for i := start; i < end; i++ {
		k := e.keys[i]
		if i > start {
			e.buf = append(e.buf, ',')
		}
		var ok bool
		if e.buf, ok = appendQuoted(e.buf, k); !ok {
			e.keys = e.keys[:start]
			return newPathError(ErrInvalidString, "object key is not valid UTF-8")
		}
		e.buf = append(e.buf, ':')
		if err := e.value(m[k], depth+1); err != nil {
			e.keys = e.keys[:start]
			return atKey(err, k, i-start)
		}
	}
	e.buf = append(e.buf, '}')
	e.keys = e.keys[:start]
	return nil
}

// grow makes room for n more bytes, doubling the buffer. append alone grows
// large slices by only ~1.25x, which for a 1 MiB context meant about 35
// reallocations and copying the output several times over; strings carry
// most of the bytes, so reserving before each string is enough.
func (e *encoder) grow(n int) {
	if cap(e.buf)-len(e.buf) >= n {
		return
	}
	nb := make([]byte, len(e.buf), max(2*cap(e.buf), len(e.buf)+n))
	copy(nb, e.buf)
	e.buf = nb
}

func (e *encoder) float(f float64, bits int) error {
	if nonFinite(f) {
		return newPathError(ErrNonFinite, "NaN and ±Inf have no JSON form")
	}
	e.buf = appendFloat(e.buf, f, bits)
	return nil
}
