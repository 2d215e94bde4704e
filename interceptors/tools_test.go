package interceptors

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// preTool is a pre_tool_call context; its target is the arguments.
func preTool(name string, args any) enforcement.Context {
	return enforcement.Context{
		"interception_point": string(enforcement.PreToolCall),
		"tool_call":          map[string]any{"id": "call_1", "name": name, "args": args},
		"target":             args,
	}
}

// postModel is a post_model_call context whose response makes calls.
func postModel(calls ...map[string]any) enforcement.Context {
	list := make([]any, len(calls))
	for i, c := range calls {
		list[i] = c
	}
	return at(enforcement.PostModelCall, map[string]any{"content": nil, "tool_calls": list, "finish_reason": "tool_calls"})
}

// args decodes a JSON object the way contexts carry it (json.Number).
func args(t *testing.T, s string) map[string]any {
	t.Helper()
	v, err := jsonvalue.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := jsonvalue.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const toolNames = `  - name: tool-policy
    type: tools
    allow: ["search_*", "get_weather", "fs/*"]
    deny: ["search_private*"]
`

func TestToolsNames(t *testing.T) {
	ic := build(t, toolNames)
	const noAllow = "no allow glob matches its name"
	for name, denied := range map[string]string{
		"get_weather":        "",
		"search_web":         "",
		"search_":            "",
		"fs/read":            "",
		"search_private_db":  "deny[0] matches its name", // deny wins over a matching allow
		"get_weather_v2":     noAllow,                    // globs match the whole name
		"GET_WEATHER":        noAllow,                    // case-sensitive
		"shell":              noAllow,
		"fs/read/deep":       noAllow, // '*' does not cross '/'
		"":                   noAllow,
		"search_web\nignore": "", // '*' matches any byte but '/'
	} {
		for _, c := range []enforcement.Context{
			preTool(name, map[string]any{}),
			postModel(map[string]any{"id": "call_1", "name": name, "args": map[string]any{}}),
		} {
			v := intercept(t, ic, c)
			if denied == "" {
				if !samePlain(v, enforcement.Allow()) {
					t.Errorf("%s %q: %+v, want allow", c.Point(), name, v)
				}
				continue
			}
			// The message names the call by position and the policy's own
			// glob, never the name the model chose.
			want := callAt(c) + ": the tool is not allowed by policy tool-policy (" + denied + ")"
			if v.Decision != enforcement.DecisionDeny || v.Reason != "policy:tool_not_allowed" || v.Message != want {
				t.Errorf("%s %q: %+v, want the not-allowed deny %q", c.Point(), name, v, want)
			}
		}
	}

	// Deny alone: everything else passes. A configured reason and message
	// are used as given.
	ic = build(t, "  - name: p\n    type: tools\n    deny: [shell, 'exec_*']\n    reason: policy:no_shell\n    message: shell access is disabled\n")
	if v := intercept(t, ic, preTool("exec_python", map[string]any{})); !samePlain(v, enforcement.Deny("policy:no_shell", "shell access is disabled")) {
		t.Errorf("deny list: %+v", v)
	}
	if v := intercept(t, ic, preTool("get_weather", map[string]any{})); !samePlain(v, enforcement.Allow()) {
		t.Errorf("deny list lets others through: %+v", v)
	}
	// Points other than the two where calls appear are let through.
	for _, p := range []enforcement.Point{enforcement.PreModelCall, enforcement.PostToolCall, enforcement.Output, enforcement.AgentStartup} {
		if v := intercept(t, ic, at(p, "shell")); !samePlain(v, enforcement.Allow()) {
			t.Errorf("%s: %+v", p, v)
		}
	}
}

// TestToolsMessagesNeverNameToolsOrArguments: tool and argument names are
// the model's choice, so no message of the type carries them.
func TestToolsMessagesNeverNameToolsOrArguments(t *testing.T) {
	const canary = "CANARY7f3a"
	for _, tc := range []struct{ policy, tool, args string }{
		{toolNames, "x_" + canary, `{}`},
		{toolNames, "search_private_" + canary, `{}`},
		{weatherRule, "get_weather", `{"city":"Paris","` + canary + `":"v"}`},
		{weatherRule, canary, `{"keep":1,"` + canary + `":"v"}`},
		{weatherRule, canary, `"raw ` + canary + `"`},
	} {
		ic := build(t, tc.policy)
		var in any = tc.args
		if strings.HasPrefix(tc.args, "{") {
			in = args(t, tc.args)
		}
		for _, c := range []enforcement.Context{preTool(tc.tool, in), postModel(map[string]any{"id": "call_1", "name": tc.tool, "args": in})} {
			v := intercept(t, ic, c)
			if v.Decision == enforcement.DecisionAllow || strings.Contains(v.Message+v.Reason, canary) {
				t.Errorf("%s %s %s: %+v", c.Point(), tc.tool, tc.args, v)
			}
		}
	}
}

// callAt is how messages name the call of a context built by preTool or
// postModel (with one call).
func callAt(c enforcement.Context) string {
	if c.Point() == enforcement.PreToolCall {
		return "the tool call"
	}
	return "tool_calls[0]"
}

// weatherRule exercises every constraint kind and action.
const weatherRule = `  - name: tool-policy
    type: tools
    arguments:
      - tool: get_weather
        required: [city]
        additional: deny
        properties:
          city: {type: string, max_length: 16, pattern: '^[A-Za-z ,.-]+$'}
          days: {type: integer, minimum: 1, maximum: 7, on_violation: clamp}
          units: {enum: [metric, imperial], on_violation: replace, replacement: metric}
          note: {type: string, max_length: 5, on_violation: truncate}
          debug: {forbidden: true, on_violation: drop}
          verbose: {type: boolean}
          limit: {maximum: 9007199254740992}
          ratio: {type: number, minimum: -0.5, maximum: 0.5}
          tags: {type: array}
          opts: {type: object}
          code: {enum: [1, 2.5, "x", true, null]}
      - tool: "*"
        additional: drop
        properties:
          keep: {}
`

func TestToolsArguments(t *testing.T) {
	ic := build(t, weatherRule)
	for _, tc := range []struct {
		name, in string
		want     string // the rewritten arguments; "" when allowed unchanged
		deny     string // the deny message; "" when not denied
	}{
		{name: "valid", in: `{"city":"Paris","days":3,"units":"metric","note":"hi","verbose":true,"limit":9007199254740992,"ratio":0.5,"tags":[],"opts":{},"code":2.50}`},
		{name: "integer written as 7.0", in: `{"city":"Paris","days":7.0}`},
		{name: "enum number by value", in: `{"city":"Paris","code":1.0}`},
		{name: "enum null", in: `{"city":"Paris","code":null}`},
		{name: "clamp above", in: `{"city":"Paris","days":30}`, want: `{"city":"Paris","days":7}`},
		{name: "clamp below", in: `{"city":"Paris","days":-2}`, want: `{"city":"Paris","days":1}`},
		{name: "clamp a huge integer", in: `{"city":"Paris","days":123456789012345678901234567890}`, want: `{"city":"Paris","days":7}`},
		{name: "replace", in: `{"city":"Paris","units":"kelvin"}`, want: `{"city":"Paris","units":"metric"}`},
		{name: "replace a wrong type", in: `{"city":"Paris","units":3}`, want: `{"city":"Paris","units":"metric"}`},
		{name: "truncate", in: `{"city":"Paris","note":"ab€cdefg"}`, want: `{"city":"Paris","note":"ab€cd"}`},
		{name: "drop forbidden", in: `{"city":"Paris","debug":false}`, want: `{"city":"Paris"}`},
		{name: "several repairs", in: `{"city":"Rome","days":0,"units":"x","debug":1}`, want: `{"city":"Rome","days":1,"units":"metric"}`},
		{name: "missing required", in: `{"days":3}`, deny: `required argument "city" is missing (policy tool-policy, arguments[0])`},
		{name: "not listed", in: `{"city":"Paris","callback":"http://x"}`, deny: `argument {member 0} is not permitted (policy tool-policy, arguments[0])`},
		{name: "pattern", in: `{"city":"Paris; rm -rf /"}`, deny: `argument "city" violates its pattern constraint (policy tool-policy, arguments[0])`},
		{name: "max_length", in: `{"city":"Llanfairpwllgwyngyll"}`, deny: `argument "city" violates its max_length constraint (policy tool-policy, arguments[0])`},
		{name: "type string", in: `{"city":42}`, deny: `argument "city" violates its type constraint (policy tool-policy, arguments[0])`},
		{name: "clamp cannot fix a type", in: `{"city":"Paris","days":"thirty"}`, deny: `argument "days" violates its type constraint (policy tool-policy, arguments[0])`},
		{name: "clamp cannot fix a fraction", in: `{"city":"Paris","days":2.5}`, deny: `argument "days" violates its type constraint (policy tool-policy, arguments[0])`},
		{name: "truncate cannot fix a type", in: `{"city":"Paris","note":5}`, deny: `argument "note" violates its type constraint (policy tool-policy, arguments[0])`},
		{name: "maximum exact beyond float64", in: `{"city":"Paris","limit":9007199254740993}`, deny: `argument "limit" violates its maximum constraint (policy tool-policy, arguments[0])`},
		{name: "maximum implies a number", in: `{"city":"Paris","limit":"1"}`, deny: `argument "limit" violates its type constraint (policy tool-policy, arguments[0])`},
		{name: "maximum exact where float64 rounds", in: `{"city":"Paris","ratio":0.50000000000000001}`, deny: `argument "ratio" violates its maximum constraint (policy tool-policy, arguments[0])`},
		{name: "minimum of a number", in: `{"city":"Paris","ratio":-0.51}`, deny: `argument "ratio" violates its minimum constraint (policy tool-policy, arguments[0])`},
		{name: "boolean", in: `{"city":"Paris","verbose":"yes"}`, deny: `argument "verbose" violates its type constraint (policy tool-policy, arguments[0])`},
		{name: "array", in: `{"city":"Paris","tags":{}}`, deny: `argument "tags" violates its type constraint (policy tool-policy, arguments[0])`},
		{name: "object", in: `{"city":"Paris","opts":[]}`, deny: `argument "opts" violates its type constraint (policy tool-policy, arguments[0])`},
		{name: "enum", in: `{"city":"Paris","code":"2.5"}`, deny: `argument "code" violates its enum constraint (policy tool-policy, arguments[0])`},
	} {
		in := args(t, tc.in)
		for _, c := range []enforcement.Context{preTool("get_weather", in), postModel(map[string]any{"id": "call_1", "name": "get_weather", "args": in})} {
			before := jsonOf(t, map[string]any(c))
			v := intercept(t, ic, c)
			if after := jsonOf(t, map[string]any(c)); after != before {
				t.Errorf("%s at %s: the context was modified in place", tc.name, c.Point())
			}
			switch {
			case tc.deny != "":
				if v.Decision != enforcement.DecisionDeny || v.Reason != "policy:tool_argument_invalid" || v.Message != callAt(c)+": "+tc.deny {
					t.Errorf("%s at %s: %+v, want deny %q", tc.name, c.Point(), v, tc.deny)
				}
			case tc.want == "":
				if !samePlain(v, enforcement.Allow()) {
					t.Errorf("%s at %s: %+v, want allow", tc.name, c.Point(), v)
				}
			default:
				if v.Decision != enforcement.DecisionTransform || v.Transform.Path != "$target" || v.Reason != "policy:tool_arguments_rewritten" {
					t.Fatalf("%s at %s: %+v, want a transform", tc.name, c.Point(), v)
				}
				got := v.Transform.Value
				if c.Point() == enforcement.PostModelCall {
					got = got.(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["args"]
				}
				if s := jsonOf(t, got); s != tc.want {
					t.Errorf("%s at %s: args %s, want %s", tc.name, c.Point(), s, tc.want)
				}
			}
		}
	}

	// The catch-all rule: arguments not listed are dropped, and the
	// message counts them by rank among the argument names.
	v := intercept(t, ic, preTool("other", args(t, `{"keep":1,"extra":"x"}`)))
	if v.Decision != enforcement.DecisionTransform || jsonOf(t, v.Transform.Value) != `{"keep":1}` ||
		v.Message != "tool arguments rewritten by policy tool-policy: the tool call: argument {member 0} dropped" {
		t.Errorf("additional: drop: %+v", v)
	}
	// Arguments that are not an object cannot be checked.
	v = intercept(t, ic, preTool("other", "raw text"))
	if v.Decision != enforcement.DecisionDeny || v.Message != `the tool call: arguments are not an object (policy tool-policy, arguments[1])` {
		t.Errorf("non-object arguments: %+v", v)
	}
}

// TestToolsMessagesCarryNoValues checks that no deny or rewrite message
// quotes an argument value.
func TestToolsMessagesCarryNoValues(t *testing.T) {
	ic := build(t, weatherRule)
	secret := "sk-SECRET-value-1234567890"
	for _, in := range []string{
		`{"city":"` + secret + `"}`,
		`{"city":"Paris","note":"` + secret + `"}`,
		`{"city":"Paris","units":"` + secret + `"}`,
		`{"city":"Paris","days":"` + secret + `"}`,
	} {
		v := intercept(t, ic, preTool("get_weather", args(t, in)))
		if v.Decision == enforcement.DecisionAllow || strings.Contains(v.Message, "SECRET") || strings.Contains(v.Reason, "SECRET") {
			t.Errorf("%s: %+v", in, v)
		}
	}
}

// TestToolsResponseTransform checks that a post_model_call transform
// rewrites only the calls that need it and keeps everything else.
func TestToolsResponseTransform(t *testing.T) {
	ic := build(t, weatherRule)
	c := postModel(
		map[string]any{"id": "call_a", "name": "get_weather", "args": args(t, `{"city":"Oslo","days":3}`)},
		map[string]any{"id": "call_b", "name": "get_weather", "args": args(t, `{"city":"Rome","days":99,"opts":{"n":12345678901234567890123}}`)},
		map[string]any{"id": "call_c", "name": "lookup", "args": args(t, `{"keep":true}`)},
	)
	c.Target().(map[string]any)["content"] = "Checking."
	v := intercept(t, ic, c)
	if v.Decision != enforcement.DecisionTransform {
		t.Fatalf("verdict %+v", v)
	}
	want := `{"content":"Checking.","finish_reason":"tool_calls","tool_calls":[` +
		`{"args":{"city":"Oslo","days":3},"id":"call_a","name":"get_weather"},` +
		`{"args":{"city":"Rome","days":7,"opts":{"n":12345678901234567890123}},"id":"call_b","name":"get_weather"},` +
		`{"args":{"keep":true},"id":"call_c","name":"lookup"}]}`
	if got := jsonOf(t, v.Transform.Value); got != want {
		t.Errorf("transform\n got %s\nwant %s", got, want)
	}
	if v.Message != `tool arguments rewritten by policy tool-policy: tool_calls[1]: "days" clamped` {
		t.Errorf("message %q", v.Message)
	}
	// The transform applies through the engine's own path.
	cl := c.Clone()
	if err := enforcement.ApplyTransform(cl, v.Transform.Path, v.Transform.Value); err != nil {
		t.Fatalf("ApplyTransform: %v", err)
	}

	// One denied call denies the whole response.
	c = postModel(
		map[string]any{"id": "call_a", "name": "get_weather", "args": args(t, `{"city":"Oslo","days":30}`)},
		map[string]any{"id": "call_b", "name": "get_weather", "args": args(t, `{"days":3}`)},
	)
	if v := intercept(t, ic, c); v.Decision != enforcement.DecisionDeny {
		t.Errorf("a denied call among rewritten ones: %+v", v)
	}
	// No calls, nothing to do.
	if v := intercept(t, ic, postModel()); !samePlain(v, enforcement.Allow()) {
		t.Errorf("no calls: %+v", v)
	}
}

// TestToolsMalformedContextFails checks fail-closed behaviour: contexts
// whose calls cannot be read are errors, not allows.
func TestToolsMalformedContextFails(t *testing.T) {
	ic := build(t, toolNames)
	for name, c := range map[string]enforcement.Context{
		"pre_tool_call without a name": {"interception_point": "pre_tool_call", "tool_call": map[string]any{"id": "x"}, "target": map[string]any{}},
		"response not an object":       at(enforcement.PostModelCall, "text"),
		"tool_calls not a list":        at(enforcement.PostModelCall, map[string]any{"tool_calls": "x"}),
		"call without a name":          postModel(map[string]any{"id": "call_1", "args": map[string]any{}}),
	} {
		if v, err := ic.Intercept(t.Context(), c); err == nil {
			t.Errorf("%s: verdict %+v, want an error", name, v)
		}
	}
}

func TestToolsGoNumbers(t *testing.T) {
	// Hand-built contexts may carry Go numbers rather than json.Number.
	ic := build(t, weatherRule)
	v := intercept(t, ic, preTool("get_weather", map[string]any{"city": "Paris", "days": float64(30)}))
	if v.Decision != enforcement.DecisionTransform || v.Transform.Value.(map[string]any)["days"] != json.Number("7") {
		t.Errorf("float64 argument: %+v", v)
	}
	v = intercept(t, ic, preTool("get_weather", map[string]any{"city": "Paris", "days": 3}))
	if !samePlain(v, enforcement.Allow()) {
		t.Errorf("int argument: %+v", v)
	}
}

func TestToolsProblems(t *testing.T) {
	got := buildProblems(t, `  - name: a
    type: tools
    points: [pre_tool_call, output]
  - name: b
    type: tools
    allow: ["[", ""]
    deny: ["ok"]
    reason: host_error:x
  - name: c
    type: tools
    arguments:
      - tool: ""
        additional: maybe
        required: [x]
        properties:
          x: {on_violation: drop, type: string}
          n: {type: integer, minimum: 1.5, maximum: 0, on_violation: truncate}
          s: {type: boolean, pattern: '(', max_length: -1}
          e: {enum: [ab, b], type: string, max_length: 1}
          r: {type: string, on_violation: replace}
          q: {type: string, replacement: x}
          w: {type: string, max_length: 2, on_violation: replace, replacement: long}
          f: {forbidden: true, type: string, on_violation: clamp}
          z: {on_violation: clamp}
          y: {minimum: "ten", enum: []}
          v: {type: text, on_violation: ignore}
      - tool: x
`)
	want := []string{
		"policy.yaml:4: interceptors[0]: gives no allow, deny or arguments: it would enforce nothing",
		"policy.yaml:6: interceptors[0].points[1]: tools acts only where tool calls appear: post_model_call, pre_tool_call and post_tool_call (a tool listing) (got output)",
		`policy.yaml:9: interceptors[1].allow[0]: invalid glob "[": syntax error in pattern`,
		"policy.yaml:9: interceptors[1].allow[1]: must not be empty",
		`policy.yaml:11: interceptors[1].reason: must not use the reserved host_error: prefix (got "host_error:x")`,
		"policy.yaml:15: interceptors[2].arguments[0].tool: is required (a tool name glob)",
		`policy.yaml:16: interceptors[2].arguments[0].additional: must be allow, deny or drop (got "maybe")`,
		"policy.yaml:19: interceptors[2].arguments[0].properties.x.on_violation: drop cannot apply to a required argument",
		"policy.yaml:20: interceptors[2].arguments[0].properties.n.minimum: must be an integer for type integer (got 1.5)",
		"policy.yaml:20: interceptors[2].arguments[0].properties.n.minimum: is greater than maximum",
		"policy.yaml:20: interceptors[2].arguments[0].properties.n.on_violation: truncate needs max_length",
		"policy.yaml:21: interceptors[2].arguments[0].properties.s.pattern: applies to strings, not type boolean",
		"policy.yaml:21: interceptors[2].arguments[0].properties.s.pattern: invalid RE2 pattern: error parsing regexp: missing closing ): `(`",
		"policy.yaml:21: interceptors[2].arguments[0].properties.s.max_length: applies to strings, not type boolean",
		"policy.yaml:21: interceptors[2].arguments[0].properties.s.max_length: must not be negative",
		"policy.yaml:22: interceptors[2].arguments[0].properties.e.enum[0]: does not satisfy the property's max_length constraint",
		"policy.yaml:23: interceptors[2].arguments[0].properties.r.on_violation: replace needs a replacement",
		"policy.yaml:24: interceptors[2].arguments[0].properties.q.replacement: is only used with on_violation: replace",
		"policy.yaml:25: interceptors[2].arguments[0].properties.w.replacement: does not satisfy the property's max_length constraint",
		"policy.yaml:26: interceptors[2].arguments[0].properties.f.forbidden: takes no other constraint: any value is a violation",
		"policy.yaml:26: interceptors[2].arguments[0].properties.f.on_violation: must be deny or drop for a forbidden argument",
		"policy.yaml:27: interceptors[2].arguments[0].properties.z.on_violation: clamp needs minimum, maximum or max_length",
		"policy.yaml:27: interceptors[2].arguments[0].properties.z.on_violation: has nothing to act on: the property declares no constraint",
		`policy.yaml:28: interceptors[2].arguments[0].properties.y.minimum: must be a decimal number in JSON syntax (got "ten")`,
		"policy.yaml:28: interceptors[2].arguments[0].properties.y.enum: must list at least one value",
		`policy.yaml:29: interceptors[2].arguments[0].properties.v.type: must be one of string, integer, number, boolean, object, array (got "text")`,
		`policy.yaml:29: interceptors[2].arguments[0].properties.v.on_violation: must be deny, clamp, truncate, replace or drop (got "ignore")`,
		"policy.yaml:30: interceptors[2].arguments[1]: constrains nothing: give required, properties or additional",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestToolsThroughEmitter runs tools and egress in one policy through a
// real emitter at pre_tool_call: the engine applies the repairs of both to
// tool_call.args, in order, and a denied call blocks.
func TestToolsThroughEmitter(t *testing.T) {
	regs, err := BuildAll(specsOf(t, weatherRule+`  - name: egress
    type: egress
    deny_hosts: [evil.test]
    action: rewrite
`), Env{})
	if err != nil {
		t.Fatal(err)
	}
	em, err := enforcement.NewEmitter(enforcement.Options{Interceptors: regs})
	if err != nil {
		t.Fatal(err)
	}
	b := &enforcement.Builder{Agent: enforcement.Agent{ID: "a", Framework: "test"}, SessionID: "s", Sequence: &enforcement.Counter{}}
	ctx := t.Context()

	pre, err := b.Build(ctx, enforcement.PreToolCall, enforcement.PreToolFields(enforcement.ToolCall{
		ID: "call_1", Name: "get_weather", Args: args(t, `{"city":"Paris","days":30,"note":"see https://evil.test/x"}`),
	}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := em.Emit(ctx, pre)
	if err != nil {
		t.Fatalf("Emit: %v", err)
	}
	// note is truncated to 5 characters first, so egress sees no URL.
	call := out.Context["tool_call"].(map[string]any)
	if got := jsonOf(t, call["args"]); got != `{"city":"Paris","days":7,"note":"see h"}` {
		t.Errorf("tool_call.args = %s", got)
	}

	pre, _ = b.Build(ctx, enforcement.PreToolCall, enforcement.PreToolFields(enforcement.ToolCall{
		ID: "call_2", Name: "lookup", Args: args(t, `{"keep":"https://evil.test/a","drop":1}`),
	}))
	out, err = em.Emit(ctx, pre)
	if err != nil {
		t.Fatalf("Emit: %v", err)
	}
	if got := jsonOf(t, out.Context["tool_call"].(map[string]any)["args"]); got != `{"keep":"https://blocked.invalid/"}` {
		t.Errorf("tool_call.args = %s", got)
	}

	pre, _ = b.Build(ctx, enforcement.PreToolCall, enforcement.PreToolFields(enforcement.ToolCall{
		ID: "call_3", Name: "get_weather", Args: args(t, `{"days":3}`),
	}))
	out, err = em.Emit(ctx, pre)
	var blocked *enforcement.BlockedError
	if !errors.As(err, &blocked) || out.Verdict.Reason != "policy:tool_argument_invalid" {
		t.Errorf("missing city: %+v, %v", out.Verdict, err)
	}
}

// A tools/list result loses the tools the lists deny only when the
// gateway's extensions say the call is MCP's tools/list: a tool that is
// merely named like one (".../tools/list", through the emit API) keeps
// its result.
func TestToolsListingOnlyForMCP(t *testing.T) {
	ic := build(t, `  - name: tool-policy
    type: tools
    points: [post_tool_call]
    deny: ["mcp__fs__delete_*"]
`)
	listing := func(ext map[string]any) enforcement.Context {
		result := map[string]any{"tools": []any{map[string]any{"name": "echo"}, map[string]any{"name": "delete_repo"}}}
		c := enforcement.Context{
			"interception_point": string(enforcement.PostToolCall),
			"tool_call":          map[string]any{"id": "1", "name": "mcp__fs__/tools/list", "args": map[string]any{}},
			"tool_result":        map[string]any{"value": result, "is_error": false},
			"target":             result,
		}
		if ext != nil {
			c["extensions"] = ext
		}
		return c
	}
	v, err := ic.Intercept(context.Background(), listing(map[string]any{"hooks_gateway": map[string]any{"mcp_method": "tools/list"}}))
	b, _ := json.Marshal(v)
	if err != nil || v.Decision != enforcement.DecisionTransform || !strings.Contains(string(b), `"echo"`) || strings.Contains(string(b), "delete_repo") {
		t.Errorf("MCP tools/list: %s, %v; want delete_repo withheld", b, err)
	}
	v, err = ic.Intercept(context.Background(), listing(nil))
	if err != nil || v.Decision != enforcement.DecisionAllow {
		t.Errorf("a tool named like a listing: %+v, %v; want it allowed untouched", v, err)
	}
}
