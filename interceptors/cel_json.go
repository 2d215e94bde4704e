package interceptors

import (
	"fmt"
	"math"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// celToJSON converts a CEL value to a JSON value tree: maps with string
// keys, lists, strings, booleans, null and numbers (int64, uint64, float64,
// or the context's own json.Number). Context data comes back as the very
// maps and slices CEL was given, uncopied; callers that keep the result
// copy it. Bytes, timestamps, durations, types, optionals, non-string map
// keys and non-finite doubles have no JSON form and are errors that name
// the type only.
func celToJSON(v ref.Val) (any, error) {
	switch x := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return uint64(x), nil
	case types.Double:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("a non-finite double is not a JSON number")
		}
		return f, nil
	case types.String:
		return string(x), nil
	}
	// Values read from the context are adapted lazily and still hold the
	// JSON tree.
	switch raw := v.Value().(type) {
	case map[string]any, []any:
		return raw, nil
	}
	switch x := v.(type) {
	case traits.Mapper:
		out := make(map[string]any)
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("a map key of type %s is not a JSON object key", k.Type().TypeName())
			}
			e, err := celToJSON(x.Get(k))
			if err != nil {
				return nil, err
			}
			out[string(ks)] = e
		}
		return out, nil
	case traits.Lister:
		n, ok := x.Size().(types.Int)
		if !ok {
			return nil, fmt.Errorf("a list without a size is not a JSON array")
		}
		out := make([]any, 0, int(n))
		for i := types.Int(0); i < n; i++ {
			e, err := celToJSON(x.Get(i))
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	return nil, fmt.Errorf("a value of type %s is not a JSON value", v.Type().TypeName())
}
