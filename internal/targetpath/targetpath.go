// Package targetpath parses and applies AGENT-HOOKS-0.1 §5.2 transform paths
// (conformance/spec/schema/path-grammar.abnf):
//
//	path           = root *( segment )
//	root           = "$target" / "$policy_target"
//	segment        = dot-member / bracket-index / bracket-member
//	dot-member     = "." member-name
//	bracket-index  = "[" 1*DIGIT "]"
//	bracket-member = "[" DQUOTE member-name DQUOTE "]"
//	member-name    = 1*( ALPHA / DIGIT / "_" / "-" )
//
// Paths operate on JSON value trees (map[string]any, []any and scalars, as
// produced by encoding/json with UseNumber).
package targetpath

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"strconv"
	"strings"
)

// Sentinel errors; they map one-to-one to the §11 reasons.
var (
	// ErrTargetForbidden: the path is not rooted at $target or
	// $policy_target (host_error:transform_target_forbidden).
	ErrTargetForbidden = errors.New("transform path not rooted at $target")
	// ErrInvalid: the path breaks the grammar, or does not resolve against
	// the target (host_error:transform_invalid).
	ErrInvalid = errors.New("invalid transform path")
)

const (
	rootTarget = "$target"
	rootAlias  = "$policy_target" // deprecated, removed in agent-hooks v0.3
)

// Segment is one step of a Path: an object member (Name) or, when IsIndex
// is set, an array element (Index).
type Segment struct {
	Name    string
	Index   int
	IsIndex bool
}

// Path is a parsed transform path. The zero value is the bare "$target".
// A Path is immutable and safe for concurrent use.
type Path struct {
	segs  []Segment
	alias bool
}

// Parse parses a §5.2 transform path.
//
// Error classes are normative (§5.2, §11) and decided by the root token,
// the longest prefix of s before the first '.' or '[':
//
//   - token exactly "$target" or "$policy_target": the rest is checked
//     against the grammar; any violation wraps ErrInvalid;
//   - token merely starting with "$target" or "$policy_target" (e.g.
//     "$targetfoo", "$targets.x", "$target x"): a grammar near-miss of an
//     allowed root, wraps ErrInvalid;
//   - anything else ("$.x", "target.x", "$input.x", "", "x"): wraps
//     ErrTargetForbidden.
//
// Because neither root contains '.' or '[', this is the same as asking
// whether s starts with "$target" or "$policy_target", which is how the
// reference implementation decides; the CTK pins $targetfoo and $targets.x
// as transform_invalid.
//
// Indexes are 1*DIGIT as in the ABNF, so leading zeros are accepted ("[01]"
// is index 1); an index that overflows int is ErrInvalid.
func Parse(s string) (Path, error) {
	var p Path
	var rest string
	switch {
	case strings.HasPrefix(s, rootAlias):
		p.alias, rest = true, s[len(rootAlias):]
	case strings.HasPrefix(s, rootTarget):
		rest = s[len(rootTarget):]
	default:
		return Path{}, fmt.Errorf("%w: root must be %s (or the deprecated %s)", ErrTargetForbidden, rootTarget, rootAlias)
	}
	for i := 0; i < len(rest); {
		switch rest[i] {
		case '.':
			j := i + 1 + nameLen(rest[i+1:])
			if j == i+1 {
				return Path{}, grammarError(s, len(s)-len(rest)+i, "expected a member name after '.'")
			}
			p.segs = append(p.segs, Segment{Name: rest[i+1 : j]})
			i = j
		case '[':
			if i+1 < len(rest) && rest[i+1] == '"' {
				start := i + 2
				j := start + nameLen(rest[start:])
				if j == start || j+1 >= len(rest) || rest[j] != '"' || rest[j+1] != ']' {
					return Path{}, grammarError(s, len(s)-len(rest)+i, `expected ["member-name"]`)
				}
				p.segs = append(p.segs, Segment{Name: rest[start:j]})
				i = j + 2
				continue
			}
			start := i + 1
			j := start
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			if j == start || j >= len(rest) || rest[j] != ']' {
				return Path{}, grammarError(s, len(s)-len(rest)+i, "expected [digits] or [\"member-name\"]")
			}
			n, err := strconv.Atoi(rest[start:j])
			if err != nil {
				return Path{}, grammarError(s, len(s)-len(rest)+i, "index out of range")
			}
			p.segs = append(p.segs, Segment{Index: n, IsIndex: true})
			i = j + 1
		default:
			return Path{}, grammarError(s, len(s)-len(rest)+i, "expected '.' or '['")
		}
	}
	return p, nil
}

// grammarError reports where parsing stopped. The path is authored by an
// interceptor, not taken from the context, so echoing its offset is safe;
// the text itself is not quoted to keep messages bounded.
func grammarError(s string, at int, msg string) error {
	return fmt.Errorf("%w: byte %d of %d: %s", ErrInvalid, at, len(s), msg)
}

// nameLen returns the length of the member-name prefix of s.
func nameLen(s string) int {
	i := 0
	for i < len(s) && isNameChar(s[i]) {
		i++
	}
	return i
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// Segments returns a copy of the path's segments, outermost first.
func (p Path) Segments() []Segment {
	return append([]Segment(nil), p.segs...)
}

// Alias reports whether the path was written with the deprecated
// $policy_target root.
func (p Path) Alias() bool { return p.alias }

// IsRoot reports whether the path is the bare root, addressing the whole
// target.
func (p Path) IsRoot() bool { return len(p.segs) == 0 }

// String returns the canonical form: the root as written ($target or
// $policy_target, so Alias survives a round trip through Parse), members
// in dot form (every member-name is valid there), indexes without leading
// zeros.
func (p Path) String() string {
	return p.prefix(len(p.segs))
}

// prefix renders the root and the first n segments.
func (p Path) prefix(n int) string {
	var b strings.Builder
	if p.alias {
		b.WriteString(rootAlias)
	} else {
		b.WriteString(rootTarget)
	}
	for _, s := range p.segs[:n] {
		if s.IsIndex {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.Index))
			b.WriteByte(']')
		} else {
			b.WriteByte('.')
			b.WriteString(s.Name)
		}
	}
	return b.String()
}

// Lookup returns the value p addresses within root, and whether it exists.
func (p Path) Lookup(root any) (any, bool) {
	cur := root
	for _, s := range p.segs {
		next, err := step(cur, s)
		if err != "" {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// Replace replaces the value p addresses within root by value and returns
// the new root: value itself for the bare root path, otherwise root, whose
// containers are modified in place (callers transform a private copy).
//
// Semantics are replace-only (§5.2, CTK.md §2.4): every intermediate step
// must exist and have the right type (an object for a member step, an array
// for an index step), the final member must already exist in its object —
// a transform never adds a key — and an index must be in range. Any failure
// wraps ErrInvalid and names the path up to the failing step, never the
// values involved; root is then unchanged.
func (p Path) Replace(root, value any) (any, error) {
	if len(p.segs) == 0 {
		return value, nil
	}
	cur := root
	last := len(p.segs) - 1
	for i, s := range p.segs[:last] {
		next, msg := step(cur, s)
		if msg != "" {
			return root, p.resolveError(i, msg)
		}
		cur = next
	}
	s := p.segs[last]
	if s.IsIndex {
		a, ok := cur.([]any)
		if !ok {
			return root, p.resolveError(last, "expected an array, found "+kind(cur))
		}
		if s.Index >= len(a) {
			return root, p.resolveError(last, "index out of range (length "+strconv.Itoa(len(a))+")")
		}
		a[s.Index] = value
		return root, nil
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return root, p.resolveError(last, "expected an object, found "+kind(cur))
	}
	if _, ok := m[s.Name]; !ok {
		return root, p.resolveError(last, "member does not exist (a transform cannot add keys)")
	}
	m[s.Name] = value
	return root, nil
}

// ReplaceSharing is Replace on a root some of whose objects are shared
// with other values, which shared reports (a session's kept objects): the
// first shared object the path enters is deep-copied into its parent
// before anything is modified, so no shared object, nor anything it
// holds, changes. On failure root is unchanged, as with Replace.
func (p Path) ReplaceSharing(root, value any, shared func(any) bool) (any, error) {
	if len(p.segs) == 0 {
		return value, nil
	}
	if _, ok := p.Lookup(root); !ok {
		return p.Replace(root, value) // which names the failing step
	}
	if shared(root) {
		root = jsonvalue.DeepCopy(root)
		return p.Replace(root, value)
	}
	cur := root
	for _, s := range p.segs[:len(p.segs)-1] {
		next, _ := step(cur, s)
		if shared(next) {
			next = jsonvalue.DeepCopy(next) // private all the way down
			set(cur, s, next)
			break
		}
		cur = next
	}
	return p.Replace(root, value)
}

// set replaces the member or element s of container cur, which exists.
func set(cur any, s Segment, v any) {
	if s.IsIndex {
		cur.([]any)[s.Index] = v
		return
	}
	cur.(map[string]any)[s.Name] = v
}

func (p Path) resolveError(i int, msg string) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, p.prefix(i+1), msg)
}

// step takes one segment from cur; msg is non-empty when it cannot.
func step(cur any, s Segment) (next any, msg string) {
	if s.IsIndex {
		a, ok := cur.([]any)
		if !ok {
			return nil, "expected an array, found " + kind(cur)
		}
		if s.Index >= len(a) {
			return nil, "index out of range (length " + strconv.Itoa(len(a)) + ")"
		}
		return a[s.Index], ""
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, "expected an object, found " + kind(cur)
	}
	v, ok := m[s.Name]
	if !ok {
		return nil, "member does not exist"
	}
	return v, ""
}

// kind names a value's JSON type for error messages.
func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case json.Number, float64, float32, int, int64, uint64:
		return "number"
	default:
		return "non-JSON value"
	}
}
