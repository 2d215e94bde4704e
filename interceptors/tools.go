package interceptors

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/safepath"
)

// Reasons of the tools type besides the configurable not-allowed reason.
const (
	reasonToolNotAllowed     = "policy:tool_not_allowed"
	reasonToolArgumentDenied = "policy:tool_argument_invalid"
	reasonToolArgsRewritten  = "policy:tool_arguments_rewritten"
	reasonToolsWithheld      = "policy:tools_withheld"
)

// toolsOptions configures the "tools" type.
type toolsOptions struct {
	// Allow lists path.Match globs; when not empty, a tool no glob
	// matches is denied.
	Allow []string `yaml:"allow"`
	// Deny lists globs checked before Allow.
	Deny      []string              `yaml:"deny"`
	Reason    string                `yaml:"reason"`
	Message   string                `yaml:"message"`
	Arguments []argumentRuleOptions `yaml:"arguments"`
}

// toolsInterceptor enforces tool-name lists and argument constraints where
// tool calls appear: the model's response (post_model_call) and the call
// about to run (pre_tool_call).
type toolsInterceptor struct {
	policy  string
	allow   []string
	deny    []string
	reason  string
	message string // configured not-allowed message; "" for the default
	rules   []*argumentRule
}

// newTools builds the "tools" type.
func newTools(spec config.Interceptor, _ Env) (enforcement.Interceptor, error) {
	var opts toolsOptions
	if err := spec.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	var ps []config.Problem
	for i, p := range spec.Points {
		switch enforcement.Point(p) {
		case enforcement.PostModelCall, enforcement.PreToolCall, enforcement.PostToolCall:
		default:
			if enforcement.Point(p).Valid() {
				ps = append(ps, spec.Problemf(fmt.Sprintf("points[%d]", i),
					"tools acts only where tool calls appear: post_model_call, pre_tool_call and post_tool_call (a tool listing) (got %s)", p))
			}
		}
	}
	if len(opts.Allow) == 0 && len(opts.Deny) == 0 && len(opts.Arguments) == 0 {
		ps = append(ps, spec.Problemf("", "gives no allow, deny or arguments: it would enforce nothing"))
	}
	for _, list := range []struct {
		field string
		globs []string
	}{{"allow", opts.Allow}, {"deny", opts.Deny}} {
		for i, g := range list.globs {
			field := fmt.Sprintf("%s[%d]", list.field, i)
			if g == "" {
				ps = append(ps, spec.Problemf(field, "must not be empty"))
			} else if err := checkGlob(g); err != nil {
				ps = append(ps, spec.Problemf(field, "%v", err))
			}
		}
	}
	t := &toolsInterceptor{policy: spec.Name, allow: opts.Allow, deny: opts.Deny, reason: opts.Reason, message: opts.Message}
	if t.reason == "" {
		t.reason = reasonToolNotAllowed
	} else {
		ps = append(ps, checkReason(spec, opts.Reason)...)
	}
	for i, o := range opts.Arguments {
		r, rps := compileRule(spec, i, o)
		ps = append(ps, rps...)
		t.rules = append(t.rules, r)
	}
	if len(ps) > 0 {
		return nil, problemsError(ps...)
	}
	return t, nil
}

// NonBlocking marks the checks as pure CPU work bounded by the context.
func (t *toolsInterceptor) NonBlocking() {}

// ReadsOnly marks the type as reading only: rewrites go to its own deep
// copy of the target (audited by TestReadOnlyTypesNeverWrite).
func (*toolsInterceptor) ReadsOnly() {}

// Intercept implements enforcement.Interceptor. A context whose tool calls
// are malformed is an error, so the engine blocks it rather than let an
// unchecked call through.
func (t *toolsInterceptor) Intercept(_ context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	switch c.Point() {
	case enforcement.PostModelCall:
		return t.response(c.Target())
	case enforcement.PreToolCall:
		call, _ := c["tool_call"].(map[string]any)
		name, ok := call["name"].(string)
		if !ok {
			return enforcement.Verdict{}, fmt.Errorf("tools: pre_tool_call context has no tool_call.name string")
		}
		if isMCPMethod(c) {
			// An MCP request other than tools/call (initialize,
			// tools/list, resources/read, …): allow lists name tools, so
			// only a deny glob refuses it.
			if i := slices.IndexFunc(t.deny, func(g string) bool { return globMatch(g, name) }); i >= 0 {
				return enforcement.Deny(t.reason, t.deniedMessage("the MCP request", "deny["+strconv.Itoa(i)+"] matches its name")), nil
			}
			return enforcement.Allow(), nil
		}
		out, changes, deny := t.call("the tool call", name, c.Target())
		switch {
		case deny != nil:
			return *deny, nil
		case len(changes) == 0:
			return enforcement.Allow(), nil
		}
		return t.rewritten(jsonvalue.DeepCopy(out), changes), nil
	case enforcement.PostToolCall:
		call, _ := c["tool_call"].(map[string]any)
		name, _ := call["name"].(string)
		if prefix, ok := strings.CutSuffix(name, toolListing); ok && mcpMethod(c) == "tools/list" {
			return t.listing(prefix, c.Target())
		}
	}
	return enforcement.Allow(), nil
}

// toolListing ends the tool_call name of an MCP tools/list request
// (<server prefix>/tools/list, see docs/mcp.md); the listing is filtered
// only when the gateway's extensions say the call is one.
const toolListing = "/tools/list"

// listing keeps, of an MCP tools/list result, the tools the lists allow,
// named as their calls will be (prefix + the tool's name): a client is
// never offered a tool its calls would be denied.
func (t *toolsInterceptor) listing(prefix string, target any) (enforcement.Verdict, error) {
	result, ok := target.(map[string]any)
	tools, isList := result["tools"].([]any)
	if !ok || !isList {
		return enforcement.Allow(), nil // an error answer, or no listing
	}
	kept := make([]any, 0, len(tools))
	for i, e := range tools {
		tool, _ := e.(map[string]any)
		name, ok := tool["name"].(string)
		if !ok {
			return enforcement.Verdict{}, fmt.Errorf("tools: the listing's tools[%d] has no name string", i)
		}
		if t.nameDenied(prefix+name) == "" {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(tools) {
		return enforcement.Allow(), nil
	}
	out := maps.Clone(result)
	out["tools"] = jsonvalue.DeepCopy(kept)
	v := enforcement.TransformTo("$target", out)
	v.Reason = reasonToolsWithheld
	v.Message = enforcement.TruncateMessage(fmt.Sprintf("%d of %d listed tools withheld by policy %s", len(tools)-len(kept), len(tools), t.policy))
	return v, nil
}

// response checks every call of a post_model_call target; the arguments
// it rewrites become one transform of the whole response.
func (t *toolsInterceptor) response(target any) (enforcement.Verdict, error) {
	resp, ok := target.(map[string]any)
	if !ok {
		return enforcement.Verdict{}, fmt.Errorf("tools: post_model_call target is not an object")
	}
	calls, ok := resp["tool_calls"].([]any)
	if !ok && resp["tool_calls"] != nil {
		return enforcement.Verdict{}, fmt.Errorf("tools: post_model_call tool_calls is not an array")
	}
	newArgs := make(map[int]map[string]any)
	var changes []string
	for i, e := range calls {
		call, _ := e.(map[string]any)
		name, ok := call["name"].(string)
		if !ok {
			return enforcement.Verdict{}, fmt.Errorf("tools: post_model_call tool_calls[%d] has no name string", i)
		}
		out, ch, deny := t.call("tool_calls["+strconv.Itoa(i)+"]", name, call["args"])
		if deny != nil {
			return *deny, nil
		}
		if len(ch) > 0 {
			newArgs[i] = out
			changes = append(changes, ch...)
		}
	}
	if len(changes) == 0 {
		return enforcement.Allow(), nil
	}
	copied := jsonvalue.DeepCopy(resp).(map[string]any)
	copiedCalls := copied["tool_calls"].([]any)
	for i, args := range newArgs {
		copiedCalls[i].(map[string]any)["args"] = jsonvalue.DeepCopy(args)
	}
	return t.rewritten(copied, changes), nil
}

// rewritten is the transform of $target to value.
func (t *toolsInterceptor) rewritten(value any, changes []string) enforcement.Verdict {
	v := enforcement.TransformTo("$target", value)
	v.Reason = reasonToolArgsRewritten
	v.Message = enforcement.TruncateMessage(fmt.Sprintf("tool arguments rewritten by policy %s: %s", t.policy, strings.Join(changes, ", ")))
	return v
}

// call checks one tool call; at says which one, for messages. It returns a
// deny verdict, or the arguments with the repairs applied (a shallow copy
// sharing untouched values with args) and what was repaired. Messages name
// the call by position and the policy's own globs, rules and property
// names, never the tool or argument names the model chose.
func (t *toolsInterceptor) call(at, name string, args any) (map[string]any, []string, *enforcement.Verdict) {
	if why := t.nameDenied(name); why != "" {
		v := enforcement.Deny(t.reason, t.deniedMessage(at, why))
		return nil, nil, &v
	}
	rule := t.ruleFor(name)
	if rule == nil {
		return nil, nil, nil
	}
	out, changes, problem := rule.apply(args)
	if problem != "" {
		v := enforcement.Deny(reasonToolArgumentDenied,
			fmt.Sprintf("%s: %s (policy %s, arguments[%d])", at, problem, t.policy, rule.index))
		return nil, nil, &v
	}
	for i, ch := range changes {
		changes[i] = at + ": " + ch
	}
	return out, changes, nil
}

// deniedMessage is the not-allowed deny's message: the configured one,
// or one naming where (at) and why.
func (t *toolsInterceptor) deniedMessage(at, why string) string {
	if t.message != "" {
		return t.message
	}
	return fmt.Sprintf("%s: the tool is not allowed by policy %s (%s)", at, t.policy, why)
}

// isMCPMethod reports whether a tool point's context brackets an MCP
// request other than tools/call.
func isMCPMethod(c enforcement.Context) bool {
	m := mcpMethod(c)
	return m != "" && m != "tools/call"
}

// mcpMethod is the MCP method a tool point's context brackets ("" for a
// tool call that is not MCP's): the gateway names it in
// extensions.hooks_gateway.mcp_method, which no client can set (the emit
// API refuses the gateway's extension namespace).
func mcpMethod(c enforcement.Context) string {
	ext, _ := c["extensions"].(map[string]any)
	gw, _ := ext["hooks_gateway"].(map[string]any)
	m, _ := gw["mcp_method"].(string)
	return m
}

// nameDenied applies deny, then allow, and says why a name is refused
// ("" when it is allowed). Globs were validated at load.
func (t *toolsInterceptor) nameDenied(name string) string {
	if i := slices.IndexFunc(t.deny, func(g string) bool { return globMatch(g, name) }); i >= 0 {
		return "deny[" + strconv.Itoa(i) + "] matches its name"
	}
	if len(t.allow) > 0 && !slices.ContainsFunc(t.allow, func(g string) bool { return globMatch(g, name) }) {
		return "no allow glob matches its name"
	}
	return ""
}

// ruleFor returns the first argument rule whose glob matches name.
func (t *toolsInterceptor) ruleFor(name string) *argumentRule {
	for _, r := range t.rules {
		if globMatch(r.tool, name) {
			return r
		}
	}
	return nil
}

func globMatch(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}

// pastTense describes a repair in messages.
var pastTense = map[string]string{
	violationClamp:    "clamped",
	violationTruncate: "truncated",
	violationReplace:  "replaced",
	violationDrop:     "dropped",
}

// apply checks args against r. problem, when not empty, says why the call
// is denied. Messages name an argument by the rule's own property names or,
// for one the rule does not list, by its rank among the argument names
// (safepath's {member N}); never by a name the model chose, nor a value.
func (r *argumentRule) apply(args any) (out map[string]any, changes []string, problem string) {
	m, ok := args.(map[string]any)
	if !ok {
		return nil, nil, "arguments are not an object"
	}
	for _, name := range r.required {
		if _, ok := m[name]; !ok {
			return nil, nil, fmt.Sprintf("required argument %s is missing", quoteName(name))
		}
	}
	out = maps.Clone(m)
	for rank, name := range slices.Sorted(maps.Keys(m)) {
		if _, listed := r.properties[name]; listed || slices.Contains(r.required, name) {
			continue
		}
		switch r.additional {
		case additionalDeny:
			return nil, nil, "argument " + safepath.Member(name, rank) + " is not permitted"
		case additionalDrop:
			delete(out, name)
			changes = append(changes, "argument "+safepath.Member(name, rank)+" dropped")
		}
	}
	for _, name := range r.names {
		v, present := m[name]
		if !present {
			continue
		}
		c := r.properties[name]
		kind := c.check(v)
		if kind == violationNone {
			continue
		}
		nv, keep, ok := c.repair(v, kind)
		if !ok {
			return nil, nil, fmt.Sprintf("argument %s violates its %s constraint", quoteName(name), kind)
		}
		if keep {
			out[name] = nv
		} else {
			delete(out, name)
		}
		changes = append(changes, quoteName(name)+" "+pastTense[c.onViolation])
	}
	return out, changes, ""
}

// maxQuotedName bounds the names quoted into messages: the policy's own
// names, which need not be short.
const maxQuotedName = 64

// quoteName quotes a name from the policy (never from the payload) for a
// message, shortened.
func quoteName(s string) string {
	if len(s) > maxQuotedName {
		s = strings.ToValidUTF8(s[:maxQuotedName], "") + "…"
	}
	return strconv.Quote(s)
}
