package interceptors

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// defaultCELCostLimit bounds one evaluation of one expression. A rule over
// a tool call costs tens of units; scanning a long conversation with
// exists() and string functions, tens of thousands. A million stops a
// hostile or accidental quadratic expression in milliseconds.
const defaultCELCostLimit = 1_000_000

// celOptions configures the "cel" type.
type celOptions struct {
	// Rules run in order; the first whose when is true decides.
	Rules []celRuleOptions `yaml:"rules"`
	// CostLimit bounds each evaluation (CEL cost units); nil is the default.
	CostLimit *int64 `yaml:"cost_limit"`
}

// celRuleOptions is one rule: a condition and exactly one outcome.
type celRuleOptions struct {
	// Name labels the rule in errors; it must not carry payload.
	Name string `yaml:"name"`
	// Points restricts the rule to some of the interceptor's points.
	Points []string `yaml:"points"`
	// When is a CEL expression of type bool.
	When      string               `yaml:"when"`
	Deny      *celOutcomeOptions   `yaml:"deny"`
	Escalate  *celOutcomeOptions   `yaml:"escalate"`
	Warn      *celOutcomeOptions   `yaml:"warn"`
	Transform *celTransformOptions `yaml:"transform"`
}

// celOutcomeOptions is the verdict a deny, escalate or warn rule returns.
type celOutcomeOptions struct {
	Reason  string `yaml:"reason"`
	Message string `yaml:"message"`
}

// celTransformOptions rewrites the value at Path with the result of the
// CEL expression Value.
type celTransformOptions struct {
	Path    string `yaml:"path"`
	Value   string `yaml:"value"`
	Reason  string `yaml:"reason"`
	Message string `yaml:"message"`
}

// celRuleName keeps rule names labels, in the shape of interceptor names.
var celRuleName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// celInterceptor evaluates its rules in order against the whole context.
type celInterceptor struct {
	name  string
	rules []celRule
}

// celRule is one compiled rule.
type celRule struct {
	label string
	// points is nil when the rule runs wherever the interceptor does.
	points map[enforcement.Point]bool
	when   cel.Program
	// outcome builds the verdict of a deny, escalate or warn rule afresh
	// each time, so no caller shares its maps and slices.
	outcome         func(reason, message string) enforcement.Verdict
	reason, message string
	transform       *celTransform
}

// celTransform is a compiled transform outcome.
type celTransform struct {
	path            string
	value           cel.Program
	reason, message string
}

// newCEL builds the "cel" type.
func newCEL(spec config.Interceptor, _ Env) (enforcement.Interceptor, error) {
	var opts celOptions
	if err := spec.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	var ps []config.Problem
	limit := uint64(defaultCELCostLimit)
	if opts.CostLimit != nil {
		if *opts.CostLimit <= 0 {
			ps = append(ps, spec.Problemf("cost_limit", "must be positive (got %d)", *opts.CostLimit))
		} else {
			limit = uint64(*opts.CostLimit)
		}
	}
	if len(opts.Rules) == 0 {
		ps = append(ps, spec.Problemf("rules", "at least one rule is required"))
	}
	env, err := newCELEnv()
	if err != nil {
		return nil, fmt.Errorf("cel environment: %w", err)
	}
	c := &celCompiler{spec: spec, env: env, limit: limit, names: make(map[string]bool, len(opts.Rules))}
	ic := &celInterceptor{name: spec.Name, rules: make([]celRule, 0, len(opts.Rules))}
	for i, ro := range opts.Rules {
		if r, ok := c.rule(fmt.Sprintf("rules[%d]", i), ro); ok {
			ic.rules = append(ic.rules, r)
		}
	}
	ps = append(ps, c.ps...)
	if len(ps) > 0 {
		return nil, problemsError(ps...)
	}
	return ic, nil
}

// celCompiler compiles the rules of one interceptor and collects problems.
type celCompiler struct {
	spec  config.Interceptor
	env   *cel.Env
	limit uint64
	// names are the rule names seen so far.
	names map[string]bool
	ps    []config.Problem
}

func (c *celCompiler) problemf(field, format string, args ...any) {
	c.ps = append(c.ps, c.spec.Problemf(field, format, args...))
}

// rule compiles one rule; ok is false when it has problems.
func (c *celCompiler) rule(field string, ro celRuleOptions) (celRule, bool) {
	before := len(c.ps)
	r := celRule{label: ro.Name}
	switch {
	case ro.Name == "":
		r.label = field
	case !celRuleName.MatchString(ro.Name):
		c.problemf(field+".name", "must match %s (got %q)", celRuleName, ro.Name)
	case c.names[ro.Name]:
		c.problemf(field+".name", "duplicate rule name %q", ro.Name)
	}
	if ro.Name != "" {
		c.names[ro.Name] = true
	}
	r.points = c.points(field, ro.Points)

	var outcomes []string
	for _, o := range []struct {
		name string
		set  bool
	}{{"deny", ro.Deny != nil}, {"escalate", ro.Escalate != nil}, {"warn", ro.Warn != nil}, {"transform", ro.Transform != nil}} {
		if o.set {
			outcomes = append(outcomes, o.name)
		}
	}
	switch len(outcomes) {
	case 0:
		c.problemf(field, "needs one outcome: deny, escalate, warn or transform")
	case 1:
	default:
		c.problemf(field, "has %s; a rule has exactly one outcome", strings.Join(outcomes, " and "))
	}

	if ro.When == "" {
		c.problemf(field+".when", "is required (a CEL expression of type bool)")
	} else {
		r.when = c.program(field+".when", ro.When, func(t *cel.Type) string {
			if t.IsExactType(cel.BoolType) {
				return ""
			}
			return fmt.Sprintf("must be of type bool, not %s (compare explicitly, such as x == true)", t)
		})
	}

	switch {
	case ro.Deny != nil:
		r.outcome = enforcement.Deny
		r.reason, r.message = c.outcome(field+".deny", *ro.Deny, "denied")
	case ro.Escalate != nil:
		r.outcome = enforcement.Escalate
		r.reason, r.message = c.outcome(field+".escalate", *ro.Escalate, "escalated for approval")
	case ro.Warn != nil:
		r.outcome = enforcement.Warn
		r.reason, r.message = c.outcome(field+".warn", *ro.Warn, "flagged")
	case ro.Transform != nil:
		r.transform = c.transform(field, ro)
	}
	return r, len(c.ps) == before
}

// points validates a rule's points filter against the interceptor's.
func (c *celCompiler) points(field string, points []string) map[enforcement.Point]bool {
	if len(points) == 0 {
		return nil
	}
	out := make(map[enforcement.Point]bool, len(points))
	for i, p := range points {
		pf := fmt.Sprintf("%s.points[%d]", field, i)
		switch {
		case !enforcement.Point(p).Valid():
			c.problemf(pf, "unknown interception point %q", p)
		case len(c.spec.Points) > 0 && !slices.Contains(c.spec.Points, p):
			c.problemf(pf, "%s is not among the interceptor's points (%s), so the rule would never run there",
				p, strings.Join(c.spec.Points, ", "))
		}
		out[enforcement.Point(p)] = true
	}
	return out
}

// outcome validates a deny, escalate or warn block and returns its reason
// and message; the default message names the policy, never the content.
func (c *celCompiler) outcome(field string, o celOutcomeOptions, what string) (string, string) {
	if o.Reason == "" {
		c.problemf(field+".reason", "is required")
	} else {
		c.ps = append(c.ps, checkReasonAt(c.spec, field+".reason", o.Reason)...)
	}
	if o.Message == "" {
		o.Message = what + " by policy " + c.spec.Name
	}
	return o.Reason, o.Message
}

// transform validates a transform block: a §5.2 path, a value expression
// whose type can be JSON, and only points where the spec permits
// transforms.
func (c *celCompiler) transform(field string, ro celRuleOptions) *celTransform {
	t := ro.Transform
	tf := field + ".transform"
	out := &celTransform{path: t.Path, reason: t.Reason, message: t.Message}
	if t.Path == "" {
		c.problemf(tf+".path", "is required (such as $target.args.limit)")
	} else if err := enforcement.ValidateTransformPath(t.Path); err != nil {
		c.problemf(tf+".path", "%v", err)
	}
	if t.Value == "" {
		c.problemf(tf+".value", "is required (a CEL expression)")
	} else {
		out.value = c.program(tf+".value", t.Value, jsonResultType)
	}
	if t.Reason != "" {
		c.ps = append(c.ps, checkReasonAt(c.spec, tf+".reason", t.Reason)...)
	}
	// The rule's own points, or else the interceptor's, must all permit a
	// transform; with neither, the rule is skipped where they do not.
	points, pf := ro.Points, field+".points"
	if len(points) == 0 {
		points, pf = c.spec.Points, "points"
	}
	for i, p := range points {
		if pt := enforcement.Point(p); pt.Valid() && !pt.Transformable() {
			c.problemf(fmt.Sprintf("%s[%d]", pf, i), "a transform rule cannot run at %s: the spec forbids transforms there", p)
		}
	}
	return out
}

// jsonResultType accepts the static types whose values convert to JSON.
func jsonResultType(t *cel.Type) string {
	switch t.Kind() {
	case types.DynKind, types.NullTypeKind, types.BoolKind, types.IntKind, types.UintKind,
		types.DoubleKind, types.StringKind, types.ListKind, types.MapKind:
		return ""
	}
	return fmt.Sprintf("must produce a JSON value (null, bool, number, string, list or map), not %s", t)
}

// program compiles and type-checks one expression, reporting every CEL
// issue at field's line, and plans it with the cost limit. check returns a
// problem with the result type, or "".
func (c *celCompiler) program(field, expr string, check func(*cel.Type) string) cel.Program {
	ast, iss := c.env.Compile(expr)
	if iss.Err() != nil {
		for _, e := range iss.Errors() {
			c.problemf(field, "%s: %s", exprLocation(expr, e.Location.Line(), e.Location.Column()), e.Message)
		}
		return nil
	}
	if msg := check(ast.OutputType()); msg != "" {
		c.problemf(field, "%s", msg)
		return nil
	}
	prg, err := c.env.Program(ast, celProgramOptions(c.limit)...)
	if err != nil {
		// Constant arguments (regex patterns, json_path paths) are
		// compiled here.
		c.problemf(field, "%v", err)
		return nil
	}
	return prg
}

// exprLocation renders a CEL position (1-based line, 0-based column) for a
// problem already located at the expression's YAML line.
func exprLocation(expr string, line, col int) string {
	if strings.Contains(expr, "\n") {
		return fmt.Sprintf("expression line %d column %d", line, col+1)
	}
	return fmt.Sprintf("column %d", col+1)
}
