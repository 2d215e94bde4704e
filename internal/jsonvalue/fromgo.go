package jsonvalue

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/safepath"
)

// FromGo converts an arbitrary Go value, as an SDK user would supply it for
// tool arguments or results, into a freshly allocated value tree that shares
// no map or slice with v (the engine mutates contexts in place).
//
// Conversion follows encoding/json semantics: ints and uints become
// json.Number; float64/float32 become json.Number in encoding/json's number
// format (so 200.0 becomes 200); []byte becomes a base64 string; nil
// pointers, nil maps and nil slices become null; json.RawMessage is decoded
// with Decode (empty means null); types implementing json.Marshaler or
// encoding.TextMarshaler, structs, and maps with non-string keys go through
// json.Marshal followed by Decode. Common concrete types (map[string]any,
// []any, []string, map[string]string, scalars) take fast paths without
// reflection.
//
// Where encoding/json would silently rewrite a value, FromGo fails instead
// (spec §4.4): NaN/±Inf (ErrNonFinite), strings or keys that are not valid
// UTF-8 (ErrInvalidString), and invalid json.Number syntax
// (ErrInvalidNumber). Because json.Marshal replaces invalid UTF-8 with the
// escape \ufffd, output of the json.Marshal fallback that contains that
// escape is rejected as ErrInvalidString even if a MarshalJSON method wrote
// it deliberately. Channels, functions and complex numbers fail with
// ErrUnsupportedType; nesting beyond 10000 levels (e.g. a cyclic map) with
// ErrTooDeep. Errors are *PathError values naming the path (e.g. $.args.x),
// never the value.
func FromGo(v any) (any, error) {
	out, err := fromGo(v, 1)
	if err != nil {
		return nil, finish(err, "$")
	}
	return out, nil
}

// FromGoKeeping is FromGo sharing, rather than copying and checking, the
// objects keep reports: value trees known valid and never modified (a
// session's kept objects, see enforcement.ObjectMemo), which a transform
// value holds when it leaves them as they were.
func FromGoKeeping(v any, keep func(map[string]any) bool) (any, error) {
	out, err := fromGoKeeping(v, 1, keep)
	if err != nil {
		return nil, finish(err, "$")
	}
	return out, nil
}

func fromGo(v any, depth int) (any, error) { return fromGoKeeping(v, depth, nil) }

func fromGoKeeping(v any, depth int, keep func(map[string]any) bool) (any, error) {
	if depth > hardMaxDepth {
		return nil, tooDeep(hardMaxDepth, true)
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		if !utf8.ValidString(x) {
			return nil, newPathError(ErrInvalidString, "not valid UTF-8")
		}
		return x, nil
	case bool:
		return x, nil
	case json.Number:
		if !validNumber(string(x)) {
			return nil, newPathError(ErrInvalidNumber, "not a JSON number token")
		}
		return x, nil
	case map[string]any:
		if x == nil {
			return nil, nil
		}
		if keep != nil && keep(x) {
			return x, nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if !utf8.ValidString(k) {
				return nil, newPathError(ErrInvalidString, "object key is not valid UTF-8")
			}
			c, err := fromGoKeeping(e, depth+1, keep)
			if err != nil {
				return nil, atKey(err, k, rankIn(x, k))
			}
			out[k] = c
		}
		return out, nil
	case []any:
		if x == nil {
			return nil, nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, err := fromGoKeeping(e, depth+1, keep)
			if err != nil {
				return nil, atIndex(err, i)
			}
			out[i] = c
		}
		return out, nil
	case []string:
		if x == nil {
			return nil, nil
		}
		out := make([]any, len(x))
		for i, s := range x {
			if !utf8.ValidString(s) {
				return nil, atIndex(newPathError(ErrInvalidString, "not valid UTF-8"), i)
			}
			out[i] = s
		}
		return out, nil
	case map[string]string:
		if x == nil {
			return nil, nil
		}
		out := make(map[string]any, len(x))
		for k, s := range x {
			if !utf8.ValidString(k) {
				return nil, newPathError(ErrInvalidString, "object key is not valid UTF-8")
			}
			if !utf8.ValidString(s) {
				return nil, atKey(newPathError(ErrInvalidString, "not valid UTF-8"), k, rankIn(x, k))
			}
			out[k] = s
		}
		return out, nil
	case float64:
		return floatNumber(x, 64)
	case float32:
		return floatNumber(float64(x), 32)
	case int:
		return json.Number(strconv.FormatInt(int64(x), 10)), nil
	case int8:
		return json.Number(strconv.FormatInt(int64(x), 10)), nil
	case int16:
		return json.Number(strconv.FormatInt(int64(x), 10)), nil
	case int32:
		return json.Number(strconv.FormatInt(int64(x), 10)), nil
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), nil
	case uint:
		return json.Number(strconv.FormatUint(uint64(x), 10)), nil
	case uint8:
		return json.Number(strconv.FormatUint(uint64(x), 10)), nil
	case uint16:
		return json.Number(strconv.FormatUint(uint64(x), 10)), nil
	case uint32:
		return json.Number(strconv.FormatUint(uint64(x), 10)), nil
	case uint64:
		return json.Number(strconv.FormatUint(x, 10)), nil
	case json.RawMessage:
		return fromRaw(x)
	}
	return fromReflect(reflect.ValueOf(v), depth)
}

func floatNumber(f float64, bits int) (any, error) {
	tok, ok := floatToken(f, bits)
	if !ok {
		return nil, newPathError(ErrNonFinite, "NaN and ±Inf have no JSON form")
	}
	return json.Number(tok), nil
}

func fromRaw(raw []byte) (any, error) {
	if len(raw) == 0 {
		return nil, nil // json.Marshal also writes null for an empty RawMessage
	}
	out, err := Decode(raw)
	if err != nil {
		sentinel := ErrSyntax
		if errors.Is(err, ErrInvalidString) {
			sentinel = ErrInvalidString
		}
		return nil, newPathError(sentinel, "json.RawMessage: "+trimPrefix(err.Error()))
	}
	return out, nil
}

func trimPrefix(s string) string {
	const p = "jsonvalue: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// fromReflect handles named types and containers of non-tree element types.
// Anything whose JSON form encoding/json customizes (marshaler methods,
// struct tags, non-string map keys, []byte) is delegated to json.Marshal so
// the result matches what the user would get from encoding/json.
func fromReflect(rv reflect.Value, depth int) (any, error) {
	t := rv.Type()
	if t.Implements(reflect.TypeFor[json.Marshaler]()) || t.Implements(reflect.TypeFor[encoding.TextMarshaler]()) {
		if rv.Kind() == reflect.Pointer && rv.IsNil() {
			return nil, nil
		}
		return viaMarshal(rv.Interface())
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		// Count the hop so a pointer cycle hits the depth ceiling.
		return fromGo(rv.Elem().Interface(), depth+1)
	case reflect.String:
		return fromGo(rv.String(), depth)
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return json.Number(strconv.FormatInt(rv.Int(), 10)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return json.Number(strconv.FormatUint(rv.Uint(), 10)), nil
	case reflect.Float32:
		return floatNumber(rv.Float(), 32)
	case reflect.Float64:
		return floatNumber(rv.Float(), 64)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return viaMarshal(rv.Interface())
		}
		if rv.IsNil() {
			return nil, nil
		}
		out := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			k := it.Key().String()
			if !utf8.ValidString(k) {
				return nil, newPathError(ErrInvalidString, "object key is not valid UTF-8")
			}
			c, err := fromGo(it.Value().Interface(), depth+1)
			if err != nil {
				return nil, atKey(err, k, reflectRank(rv, k))
			}
			out[k] = c
		}
		return out, nil
	case reflect.Slice:
		if rv.IsNil() {
			return nil, nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return viaMarshal(rv.Interface()) // base64, as encoding/json does
		}
		return fromList(rv, depth)
	case reflect.Array:
		return fromList(rv, depth)
	case reflect.Struct:
		return viaMarshal(rv.Interface())
	default:
		return nil, newPathError(ErrUnsupportedType, fmt.Sprintf("%s has no JSON representation", t))
	}
}

func fromList(rv reflect.Value, depth int) (any, error) {
	out := make([]any, rv.Len())
	for i := range out {
		c, err := fromGo(rv.Index(i).Interface(), depth+1)
		if err != nil {
			return nil, atIndex(err, i)
		}
		out[i] = c
	}
	return out, nil
}

// viaMarshal is the fallback for values whose JSON form encoding/json
// defines. Marshal errors are classified without quoting the value.
func viaMarshal(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		var uve *json.UnsupportedValueError
		var ute *json.UnsupportedTypeError
		switch {
		case errors.As(err, &uve):
			if k := uve.Value.Kind(); k == reflect.Float32 || k == reflect.Float64 {
				return nil, newPathError(ErrNonFinite, fmt.Sprintf("json.Marshal of %T: NaN or ±Inf inside", v))
			}
			return nil, newPathError(ErrUnsupportedType, fmt.Sprintf("json.Marshal of %T: unsupported value (cycle?)", v))
		case errors.As(err, &ute):
			return nil, newPathError(ErrUnsupportedType, fmt.Sprintf("json.Marshal of %T: %s has no JSON representation", v, ute.Type))
		default:
			return nil, &PathError{Err: ErrUnsupportedType, Detail: fmt.Sprintf("json.Marshal of %T failed", v), wrapped: err}
		}
	}
	if at := replacementEscape(data); at >= 0 {
		return nil, newPathError(ErrInvalidString, fmt.Sprintf("json.Marshal of %T replaced invalid UTF-8 (\\ufffd escape at output offset %d)", v, at))
	}
	out, err := Decode(data)
	if err != nil {
		sentinel := ErrSyntax
		if errors.Is(err, ErrInvalidString) {
			sentinel = ErrInvalidString
		}
		return nil, newPathError(sentinel, fmt.Sprintf("json.Marshal of %T: %s", v, trimPrefix(err.Error())))
	}
	return out, nil
}

// replacementEscape returns the offset of the first real (not itself
// escaped) "\ufffd" escape in valid JSON text, or -1. encoding/json writes
// a genuine U+FFFD as raw UTF-8, so the escape marks a replaced byte.
func replacementEscape(data []byte) int {
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(`\ufffd`))
		if j < 0 {
			return -1
		}
		at := i + j
		if escapeStart(data, at) {
			return at
		}
		i = at + 2
	}
}

// reflectRank is rankIn for a map with string keys held in a reflect.Value.
func reflectRank(m reflect.Value, key string) int {
	return safepath.Rank(func(yield func(string) bool) {
		for it := m.MapRange(); it.Next(); {
			if !yield(it.Key().String()) {
				return
			}
		}
	}, key)
}

// Adopt is FromGo for a value the caller hands over: when v is already a
// value tree (map[string]any, []any, string, bool, json.Number, nil, with
// valid UTF-8 and number tokens, at most 10000 levels deep), v itself is
// returned and nothing is allocated; otherwise FromGo converts it. The
// caller must not change v afterwards.
func Adopt(v any) (any, error) {
	if isValueTree(v, 1) {
		return v, nil
	}
	return FromGo(v)
}

// IsValueTree reports whether v is a valid value tree (map[string]any,
// []any, string, bool, json.Number, nil, with valid UTF-8 and number
// tokens, no nil container, at most 10000 levels deep). Such a value
// passes Check without limits; IsValueTree answers that faster, without
// measuring it, and a false answer says nothing (Check also accepts Go
// numbers and nil containers).
func IsValueTree(v any) bool { return isValueTree(v, 1) }

// isValueTree reports whether v is a valid value tree, checking what FromGo
// would check without copying.
func isValueTree(v any, depth int) bool {
	if depth > hardMaxDepth {
		return false
	}
	switch x := v.(type) {
	case nil, bool:
		return true
	case string:
		return utf8.ValidString(x)
	case json.Number:
		return validNumber(string(x))
	case map[string]any:
		if x == nil {
			return false // FromGo turns a nil map into null
		}
		for k, e := range x {
			if !utf8.ValidString(k) || !isValueTree(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		if x == nil {
			return false
		}
		for _, e := range x {
			if !isValueTree(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}
