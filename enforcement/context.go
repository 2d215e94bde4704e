package enforcement

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/targetpath"
)

// SpecVersion is the spec identifier hosts put in every context.
const SpecVersion = "agent-hooks/0.1"

// Context is an AgentContext (spec §4): a JSON object held as a value tree of
// map[string]any, []any, string, json.Number, bool and nil. Numbers are
// json.Number so integers beyond 2^53 survive exactly.
type Context map[string]any

// Point returns the context's interception point ("" when absent).
func (c Context) Point() Point {
	s, _ := c["interception_point"].(string)
	return Point(s)
}

// Target returns the context's target value.
func (c Context) Target() any { return c["target"] }

// SessionID returns session.id ("" when absent).
func (c Context) SessionID() string {
	s, _ := c["session"].(map[string]any)
	id, _ := s["id"].(string)
	return id
}

// Sequence returns the context's sequence, or -1 when it is not an integer.
func (c Context) Sequence() int64 {
	n, ok := c["sequence"].(json.Number)
	if !ok {
		return -1
	}
	i, err := n.Int64()
	if err != nil {
		return -1
	}
	return i
}

// ValidateEnvelope runs the §4 envelope check: the required core, the
// point's conditional fields and their whitelisted subfields, by presence
// and JSON type. It is a presence-and-type check, not full schema
// validation. Errors name the field, never its value.
func ValidateEnvelope(c Context) error {
	if c == nil {
		return fmt.Errorf("context is not an object")
	}
	for _, k := range []string{"spec", "interception_point", "timestamp", "sequence", "agent", "session", "target"} {
		if _, ok := c[k]; !ok {
			return fmt.Errorf("missing required field %q", k)
		}
	}
	spec, ok := c["spec"].(string)
	if !ok || !validSpec(spec) {
		return fmt.Errorf("spec must match agent-hooks/<major>.<minor>")
	}
	ps, ok := c["interception_point"].(string)
	if !ok || !Point(ps).Valid() {
		return fmt.Errorf("interception_point is not one of the eight points")
	}
	if _, ok := c["timestamp"].(string); !ok {
		return fmt.Errorf("timestamp is not a string")
	}
	if !isNonNegativeInteger(c["sequence"]) {
		return fmt.Errorf("sequence is not a non-negative integer")
	}
	agent, ok := c["agent"].(map[string]any)
	if !ok {
		return fmt.Errorf("agent is not an object")
	}
	if id, ok := agent["id"].(string); !ok || id == "" {
		return fmt.Errorf("agent.id is not a non-empty string")
	}
	if fw, ok := agent["framework"].(string); !ok || !validFramework(fw) {
		return fmt.Errorf("agent.framework must match ^[a-z0-9_-]+$")
	}
	session, ok := c["session"].(map[string]any)
	if !ok {
		return fmt.Errorf("session is not an object")
	}
	if id, ok := session["id"].(string); !ok || id == "" {
		return fmt.Errorf("session.id is not a non-empty string")
	}
	return CheckConditional(Point(ps), c)
}

// CheckConditional checks that fields hold the conditional members point
// requires (§4.2) and their whitelisted subfields, by presence and object
// type. Hosts that accept contexts from clients run it before taking a
// sequence number.
func CheckConditional(point Point, fields map[string]any) error {
	if !point.Valid() {
		return fmt.Errorf("interception_point is not one of the eight points")
	}
	for _, f := range shapes[point].fields {
		v, ok := fields[f.field]
		if !ok {
			return &FieldError{Field: f.field, Msg: fmt.Sprintf("%s requires field %q", point, f.field)}
		}
		if f.subfields == nil {
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return &FieldError{Field: f.field, Msg: fmt.Sprintf("%s is not an object", f.field)}
		}
		for _, sub := range f.subfields {
			if _, ok := obj[sub]; !ok {
				name := f.field + "." + sub
				return &FieldError{Field: name, Msg: fmt.Sprintf("%s requires field %q", point, name)}
			}
		}
	}
	return nil
}

// FieldError names the context member a check rejected.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Msg }

// ValidFramework reports whether s is a valid agent.framework (§4.1).
func ValidFramework(s string) bool { return validFramework(s) }

// isNonNegativeInteger reports whether v is an integer-typed JSON number ≥ 0
// (a float token such as 0.0 fails).
func isNonNegativeInteger(v any) bool {
	switch n := v.(type) {
	case json.Number:
		s := string(n)
		if s == "" {
			return false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	case int:
		return n >= 0
	case int64:
		return n >= 0
	}
	return false
}

// targetAlias returns the value of the member that target mirrors.
func targetAlias(c Context, p Point) (any, bool) {
	path := shapes[p].targetOf
	if len(path) == 0 {
		return nil, false
	}
	v, ok := c[path[0]]
	if len(path) == 1 || !ok {
		return v, ok
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	v, ok = obj[path[1]]
	return v, ok
}

// writeBack stores target into the member it mirrors (§4.3), so a transform
// of target is observable in the guarded action.
func writeBack(c Context, p Point) {
	path := shapes[p].targetOf
	switch len(path) {
	case 1:
		c[path[0]] = c["target"]
	case 2:
		if obj, ok := c[path[0]].(map[string]any); ok {
			obj[path[1]] = c["target"]
		}
	}
}

// Clone returns a deep copy of c. When target and the member it mirrors
// are one value (as Build makes them), the copy shares one copy of it too,
// so a context costs one copy of its payload rather than two, and a
// transform of the copy's target stays visible in its mirror.
func (c Context) Clone() Context {
	out := make(Context, len(c))
	p := c.Point()
	alias, ok := targetAlias(c, p)
	shared := ok && sameValue(alias, c["target"])
	for k, v := range c {
		if k == "target" && shared {
			continue
		}
		out[k] = jsonvalue.DeepCopy(v)
	}
	if shared {
		out["target"], _ = targetAlias(out, p)
	}
	return out
}

// transformBase returns the copy of c a first transform at p is applied
// to: Clone, except for a transform of the whole target (a redactor
// rewriting the conversation), which gets its own copy of the new target
// from applyParsed. Copying c's target and the rest of c (the tool
// declarations, the model and its params, which no transform can change)
// only to drop the target would copy the whole payload for nothing; the
// rest is shared instead, but for the object holding a nested mirror of
// the target, which is copied because writeBack writes into it. Nothing
// writes into a context's other members, so c is left as it was.
func (c Context) transformBase(p targetpath.Path) Context {
	if !p.IsRoot() {
		return c.Clone()
	}
	out := maps.Clone(c)
	if path := shapes[c.Point()].targetOf; len(path) == 2 {
		if obj, ok := out[path[0]].(map[string]any); ok {
			out[path[0]] = maps.Clone(obj)
		}
	}
	return out
}

// sameValue reports whether a and b are the same container (not merely
// equal): the same map, or the same backing array and length.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && x != nil && y != nil && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	case []any:
		y, ok := b.([]any)
		return ok && len(x) > 0 && len(x) == len(y) && &x[0] == &y[0]
	}
	return false
}

// SetTarget sets the context's target and writes it into the member the
// point's target mirrors (§4.3), e.g. tool_call.args at pre_tool_call.
func (c Context) SetTarget(v any) {
	c["target"] = v
	writeBack(c, c.Point())
}
