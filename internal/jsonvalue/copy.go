package jsonvalue

import (
	"encoding/json"
	"strings"
)

// DeepCopy returns a copy of the value tree v that shares no map or slice
// with v, so the copy can be mutated (e.g. by a transform) without
// affecting the original. Scalars are immutable and shared. Values that are
// not tree types are returned as they are. Typed nil maps and slices stay
// nil. v must be acyclic.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return copyMap(x)
	case []any:
		return copySlice(x)
	default:
		return v
	}
}

// copyMap builds a fresh map of the final size. maps.Clone plus overwriting
// the container members measured no faster on context-shaped trees (each
// overwrite is a second hash lookup), so the simpler form stays.
func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case map[string]any:
			out[k] = copyMap(x)
		case []any:
			out[k] = copySlice(x)
		default:
			out[k] = v
		}
	}
	return out
}

func copySlice(s []any) []any {
	if s == nil {
		return nil
	}
	out := make([]any, len(s))
	for i, v := range s {
		switch x := v.(type) {
		case map[string]any:
			out[i] = copyMap(x)
		case []any:
			out[i] = copySlice(x)
		default:
			out[i] = v
		}
	}
	return out
}

// Detach returns a deep copy of v whose strings (values, keys and number
// tokens) are copies too. Decoded strings share the bytes of the text
// they came from, so a value kept beyond its request (a session's cache)
// would keep that whole request body alive; its detached copy holds only
// its own bytes.
func Detach(v any) any {
	switch x := v.(type) {
	case string:
		return strings.Clone(x)
	case json.Number:
		return json.Number(strings.Clone(string(x)))
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[strings.Clone(k)] = Detach(e)
		}
		return out
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Detach(e)
		}
		return out
	default:
		return v
	}
}
