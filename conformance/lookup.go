package conformance

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Lookup resolves a CTK dotted path (CTK.md §3.4) against a JSON value
// tree and reports whether it resolved.
//
// The path is split on '.', empty tokens are skipped (so the empty path
// is the root), each token is an object member, and "[n]" indexes an
// array; "[n]" may follow a token or another bracket, and text right
// after ']' starts a new token. A member present with a null value
// resolves (to nil). Bracketed member names (["x"]) are not supported.
//
// v should be a value tree (map[string]any, []any, string, json.Number,
// bool, nil); any other container met on the way (a struct, a typed map
// or slice) is first converted through encoding/json.
func Lookup(v any, path string) (any, bool) {
	cur := v
	start := 0
	var ok bool
	for i := 0; i <= len(path); i++ {
		c := byte('.')
		if i < len(path) {
			c = path[i]
		}
		switch c {
		case '.':
			if i > start {
				if cur, ok = member(cur, path[start:i]); !ok {
					return nil, false
				}
			}
			start = i + 1
		case '[':
			if i > start {
				if cur, ok = member(cur, path[start:i]); !ok {
					return nil, false
				}
			}
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return nil, false
			}
			end += i
			idx, valid := parseIndex(path[i+1 : end])
			if !valid {
				return nil, false
			}
			if cur, ok = element(cur, idx); !ok {
				return nil, false
			}
			i = end
			start = end + 1
		}
	}
	return cur, true
}

// parseIndex accepts what the oracle's usize parse accepts: ASCII
// digits with an optional leading '+', nothing else (no sign, no
// spaces, no quotes).
func parseIndex(s string) (int, bool) {
	s = strings.TrimPrefix(s, "+")
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 63)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

func member(v any, key string) (any, bool) {
	m, ok := containerOf(v).(map[string]any)
	if !ok {
		return nil, false
	}
	got, ok := m[key]
	return got, ok
}

func element(v any, idx int) (any, bool) {
	a, ok := containerOf(v).([]any)
	if !ok || idx >= len(a) {
		return nil, false
	}
	return a[idx], true
}

// containerOf returns v itself when it is a value-tree node and its
// encoding/json round trip otherwise, so typed host values can be
// walked like decoded JSON. Unencodable values become nil.
func containerOf(v any) any {
	if isTreeNode(v) {
		return v
	}
	t, err := toTree(v)
	if err != nil {
		return nil
	}
	return t
}

// MatchAll reports whether every predicate of a rule's match object
// holds on ctx: the path resolves (Lookup) and the resolved value is
// JSON-equal (JSONEqual) to the expected value. A nil or empty match
// always holds.
func MatchAll(ctx any, match map[string]any) bool {
	if len(match) == 0 {
		return true
	}
	ctx = containerOf(ctx) // convert a typed context once, not per predicate
	for path, want := range match {
		got, ok := Lookup(ctx, path)
		if !ok || !JSONEqual(got, want) {
			return false
		}
	}
	return true
}

// CloneValue deep-copies a value tree, preserving json.Number tokens.
// Values that are not tree nodes (structs, typed maps and slices, Go
// numbers) are converted through encoding/json; such a value that cannot
// be encoded clones to nil.
func CloneValue(v any) any {
	t, err := toPlainTree(v)
	if err != nil {
		return nil
	}
	return t
}

// isTreeNode reports whether v is one of the types a UseNumber decode
// into an interface produces.
func isTreeNode(v any) bool {
	switch v.(type) {
	case nil, bool, string, json.Number, map[string]any, []any:
		return true
	}
	return false
}

// toTree converts an arbitrary Go value into a value tree via its JSON
// encoding, keeping number tokens as json.Number.
func toTree(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// toPlainTree returns a fresh value tree equal to v's JSON encoding:
// tree nodes are copied, anything else goes through toTree.
func toPlainTree(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string, json.Number:
		return x, nil
	case map[string]any:
		if x == nil {
			return nil, nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := toPlainTree(e)
			if err != nil {
				return nil, err
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
			c, err := toPlainTree(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	default:
		return toTree(v)
	}
}
