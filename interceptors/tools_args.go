package interceptors

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// What happens to an argument that violates its constraint.
const (
	violationDeny     = "deny"
	violationClamp    = "clamp"
	violationTruncate = "truncate"
	violationReplace  = "replace"
	violationDrop     = "drop"
)

// What happens to arguments a rule does not list.
const (
	additionalAllow = "allow"
	additionalDeny  = "deny"
	additionalDrop  = "drop"
)

// Argument types.
const (
	typeString  = "string"
	typeInteger = "integer"
	typeNumber  = "number"
	typeBoolean = "boolean"
	typeObject  = "object"
	typeArray   = "array"
)

// argumentRuleOptions configures the arguments of the tools one glob names.
type argumentRuleOptions struct {
	Tool       string                     `yaml:"tool"`
	Required   []string                   `yaml:"required"`
	Additional string                     `yaml:"additional"`
	Properties map[string]propertyOptions `yaml:"properties"`
}

// propertyOptions constrains one argument. Numbers and values are kept as
// YAML nodes so they reach the checks as exact JSON values.
type propertyOptions struct {
	Type        string      `yaml:"type"`
	Enum        []yaml.Node `yaml:"enum"`
	Pattern     string      `yaml:"pattern"`
	MaxLength   *int        `yaml:"max_length"`
	Minimum     yaml.Node   `yaml:"minimum"`
	Maximum     yaml.Node   `yaml:"maximum"`
	Forbidden   bool        `yaml:"forbidden"`
	OnViolation string      `yaml:"on_violation"`
	Replacement yaml.Node   `yaml:"replacement"`
}

// argumentRule is the compiled form of argumentRuleOptions.
type argumentRule struct {
	index      int // in arguments, to name the rule in messages
	tool       string
	required   []string
	additional string
	names      []string // property names, sorted, for a stable order
	properties map[string]*constraint
}

// constraint is one argument's compiled constraint.
type constraint struct {
	typ         string
	enum        []any
	pattern     *regexp.Regexp
	maxLength   int // -1 when unset
	minimum     *decimal
	maximum     *decimal
	minText     json.Number // the bound written back by clamp
	maxText     json.Number
	forbidden   bool
	onViolation string
	replacement any
}

// violation says which part of a constraint a value broke; clamp and
// truncate repair only their own kind.
type violation int

const (
	violationNone violation = iota
	violationType
	violationEnum
	violationPattern
	violationLength
	violationBelow
	violationAbove
	violationPresent
)

// String names the violated constraint for messages (never the value).
func (v violation) String() string {
	return [...]string{"", "type", "enum", "pattern", "max_length", "minimum", "maximum", "forbidden"}[v]
}

// compileRule validates and compiles arguments[i].
func compileRule(spec config.Interceptor, i int, o argumentRuleOptions) (*argumentRule, []config.Problem) {
	field := fmt.Sprintf("arguments[%d]", i)
	var ps []config.Problem
	r := &argumentRule{index: i, tool: o.Tool, required: o.Required, additional: o.Additional, properties: map[string]*constraint{}}
	if o.Tool == "" {
		ps = append(ps, spec.Problemf(field+".tool", "is required (a tool name glob)"))
	} else if err := checkGlob(o.Tool); err != nil {
		ps = append(ps, spec.Problemf(field+".tool", "%v", err))
	}
	switch o.Additional {
	case "":
		r.additional = additionalAllow
	case additionalAllow, additionalDeny, additionalDrop:
	default:
		ps = append(ps, spec.Problemf(field+".additional", "must be allow, deny or drop (got %q)", o.Additional))
	}
	for j, name := range o.Required {
		if name == "" {
			ps = append(ps, spec.Problemf(fmt.Sprintf("%s.required[%d]", field, j), "must not be empty"))
		}
	}
	if len(o.Required) == 0 && len(o.Properties) == 0 && o.Additional == "" {
		ps = append(ps, spec.Problemf(field, "constrains nothing: give required, properties or additional"))
	}
	for _, name := range slices.Sorted(maps.Keys(o.Properties)) {
		c, cps := compileConstraint(spec, field+".properties."+name, o.Properties[name])
		ps = append(ps, cps...)
		if c != nil && c.onViolation == violationDrop && slices.Contains(o.Required, name) {
			ps = append(ps, spec.Problemf(field+".properties."+name+".on_violation", "drop cannot apply to a required argument"))
		}
		r.names = append(r.names, name)
		r.properties[name] = c
	}
	return r, ps
}

// compileConstraint validates one property's constraint and the
// combination of its on_violation with it.
func compileConstraint(spec config.Interceptor, field string, o propertyOptions) (*constraint, []config.Problem) {
	var ps []config.Problem
	bad := func(sub, format string, args ...any) {
		ps = append(ps, spec.Problemf(field+"."+sub, format, args...))
	}
	c := &constraint{typ: o.Type, maxLength: -1, forbidden: o.Forbidden, onViolation: o.OnViolation}
	switch o.Type {
	case "", typeString, typeInteger, typeNumber, typeBoolean, typeObject, typeArray:
	default:
		bad("type", "must be one of string, integer, number, boolean, object, array (got %q)", o.Type)
	}
	stringOnly := func(sub string) {
		if o.Type != "" && o.Type != typeString {
			bad(sub, "applies to strings, not type %s", o.Type)
		}
	}
	if o.Pattern != "" {
		stringOnly("pattern")
		re, err := regexp.Compile(o.Pattern)
		if err != nil {
			bad("pattern", "invalid RE2 pattern: %v", err)
		}
		c.pattern = re
	}
	if o.MaxLength != nil {
		stringOnly("max_length")
		if *o.MaxLength < 0 {
			bad("max_length", "must not be negative")
		}
		c.maxLength = *o.MaxLength
	}
	for _, b := range []struct {
		name string
		node *yaml.Node
		dst  **decimal
		text *json.Number
	}{{"minimum", &o.Minimum, &c.minimum, &c.minText}, {"maximum", &o.Maximum, &c.maximum, &c.maxText}} {
		if b.node.Kind == 0 {
			continue
		}
		if o.Type != "" && o.Type != typeInteger && o.Type != typeNumber {
			bad(b.name, "applies to numbers, not type %s", o.Type)
		}
		d, ok := yamlDecimal(b.node)
		switch {
		case !ok:
			bad(b.name, "must be a decimal number in JSON syntax (got %q)", b.node.Value)
			continue
		case o.Type == typeInteger && !d.isInteger():
			bad(b.name, "must be an integer for type integer (got %s)", b.node.Value)
		}
		*b.dst, *b.text = &d, json.Number(b.node.Value)
	}
	if c.minimum != nil && c.maximum != nil && c.minimum.cmp(*c.maximum) > 0 {
		bad("minimum", "is greater than maximum")
	}
	for j := range o.Enum {
		v, err := yamlJSON(&o.Enum[j])
		if err != nil {
			bad(fmt.Sprintf("enum[%d]", j), "%v", err)
			continue
		}
		c.enum = append(c.enum, v)
	}
	if o.Enum != nil && len(o.Enum) == 0 {
		bad("enum", "must list at least one value")
	}
	constrained := o.Type != "" || o.Enum != nil || o.Pattern != "" || o.MaxLength != nil ||
		o.Minimum.Kind != 0 || o.Maximum.Kind != 0
	if o.Forbidden && constrained {
		bad("forbidden", "takes no other constraint: any value is a violation")
	}
	// Each enum value must pass the rest of the constraint, or it could
	// never be accepted.
	for j, v := range c.enum {
		probe := *c
		probe.enum = nil
		if k := probe.check(v); k != violationNone {
			bad(fmt.Sprintf("enum[%d]", j), "does not satisfy the property's %s constraint", k)
		}
	}
	hasReplacement := o.Replacement.Kind != 0
	switch o.OnViolation {
	case "":
		c.onViolation = violationDeny
	case violationDeny, violationDrop:
	case violationClamp, violationTruncate, violationReplace:
		if o.Forbidden {
			bad("on_violation", "must be deny or drop for a forbidden argument")
			break
		}
		ps = append(ps, c.checkRepair(spec, field, hasReplacement)...)
	default:
		bad("on_violation", "must be deny, clamp, truncate, replace or drop (got %q)", o.OnViolation)
	}
	if !constrained && !o.Forbidden && o.OnViolation != "" {
		bad("on_violation", "has nothing to act on: the property declares no constraint")
	}
	if hasReplacement {
		switch v, err := yamlJSON(&o.Replacement); {
		case o.OnViolation != violationReplace:
			bad("replacement", "is only used with on_violation: replace")
		case err != nil:
			bad("replacement", "%v", err)
		default:
			if k := c.check(v); k != violationNone {
				bad("replacement", "does not satisfy the property's %s constraint", k)
			}
			c.replacement = v
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return c, nil
}

// checkRepair validates that the repairing on_violation has what it needs.
func (c *constraint) checkRepair(spec config.Interceptor, field string, hasReplacement bool) []config.Problem {
	var msg string
	switch {
	case c.onViolation == violationClamp && c.minimum == nil && c.maximum == nil && c.maxLength < 0:
		msg = "clamp needs minimum, maximum or max_length"
	case c.onViolation == violationTruncate && c.maxLength < 0:
		msg = "truncate needs max_length"
	case c.onViolation == violationReplace && !hasReplacement:
		msg = "replace needs a replacement"
	default:
		return nil
	}
	return []config.Problem{spec.Problemf(field+".on_violation", "%s", msg)}
}

// checkGlob validates a path.Match pattern; Match checks the whole
// pattern even when the name differs early.
func checkGlob(pattern string) error {
	if _, err := path.Match(pattern, ""); err != nil {
		return fmt.Errorf("invalid glob %q: %w", pattern, err)
	}
	return nil
}

// check returns the first part of c that v violates.
func (c *constraint) check(v any) violation {
	if c.forbidden {
		return violationPresent
	}
	if c.typ != "" && !hasType(v, c.typ) {
		return violationType
	}
	if c.enum != nil && !slices.ContainsFunc(c.enum, func(e any) bool { return sameValue(e, v) }) {
		return violationEnum
	}
	if c.pattern != nil || c.maxLength >= 0 {
		s, ok := v.(string)
		if !ok {
			return violationType
		}
		if c.pattern != nil && !c.pattern.MatchString(s) {
			return violationPattern
		}
		if c.maxLength >= 0 && utf8.RuneCountInString(s) > c.maxLength {
			return violationLength
		}
	}
	if c.minimum != nil || c.maximum != nil {
		d, ok := asDecimal(v)
		if !ok {
			return violationType
		}
		if c.minimum != nil && d.cmp(*c.minimum) < 0 {
			return violationBelow
		}
		if c.maximum != nil && d.cmp(*c.maximum) > 0 {
			return violationAbove
		}
	}
	return violationNone
}

// repair applies on_violation to a value that broke kind. keep is false
// when the argument is to be removed; ok is false when the action cannot
// repair this violation (the call is then denied). A repaired value is
// checked again, so a truncated string must still match the pattern.
func (c *constraint) repair(v any, kind violation) (out any, keep, ok bool) {
	switch c.onViolation {
	case violationDrop:
		return nil, false, true
	case violationReplace:
		return c.replacement, true, true
	case violationClamp:
		switch kind {
		case violationBelow:
			out = c.minText
		case violationAbove:
			out = c.maxText
		case violationLength:
			out = truncateRunes(v.(string), c.maxLength)
		default:
			return nil, false, false
		}
	case violationTruncate:
		if kind != violationLength {
			return nil, false, false
		}
		out = truncateRunes(v.(string), c.maxLength)
	default:
		return nil, false, false
	}
	return out, true, c.check(out) == violationNone
}

// truncateRunes keeps the first n code points of s.
func truncateRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// hasType reports whether v is a JSON value of type t.
func hasType(v any, t string) bool {
	switch t {
	case typeString:
		_, ok := v.(string)
		return ok
	case typeBoolean:
		_, ok := v.(bool)
		return ok
	case typeObject:
		_, ok := v.(map[string]any)
		return ok
	case typeArray:
		_, ok := v.([]any)
		return ok
	case typeNumber:
		_, ok := asDecimal(v)
		return ok
	case typeInteger:
		d, ok := asDecimal(v)
		return ok && d.isInteger()
	}
	return false
}

// sameValue compares JSON values, numbers by exact value (1 equals 1.0).
func sameValue(a, b any) bool {
	if da, ok := asDecimal(a); ok {
		db, ok := asDecimal(b)
		return ok && da.cmp(db) == 0
	}
	return jsonvalue.Equal(a, b)
}

// yamlDecimal reads a YAML number scalar as an exact decimal.
func yamlDecimal(n *yaml.Node) (decimal, bool) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		return decimal{}, false
	}
	return parseDecimal(n.Value)
}

// yamlJSON converts a YAML value to the JSON value contexts carry:
// json.Number for numbers (exact text), map[string]any, []any.
func yamlJSON(n *yaml.Node) (any, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			return strconv.ParseBool(n.Value)
		case "!!int", "!!float":
			if _, ok := parseDecimal(n.Value); !ok {
				return nil, fmt.Errorf("must be a number in JSON syntax (got %q)", n.Value)
			}
			return json.Number(n.Value), nil
		case "!!str":
			return n.Value, nil
		}
		return nil, fmt.Errorf("unsupported YAML value %s", n.ShortTag())
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := yamlJSON(e)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for k := 0; k+1 < len(n.Content); k += 2 {
			v, err := yamlJSON(n.Content[k+1])
			if err != nil {
				return nil, err
			}
			out[n.Content[k].Value] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported YAML value")
}
