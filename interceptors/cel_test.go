package interceptors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// toolGuard is a cel policy with one rule of each outcome, ordered so that
// an earlier rule shadows a later one.
const toolGuard = `  - name: tool-guard
    type: cel
    points: [pre_tool_call, post_model_call]
    rules:
      - name: no-prod-delete
        points: [pre_tool_call]
        when: 'context.tool_call.name == "delete_db" && context.tool_call.args.env == "prod"'
        deny: {reason: policy:prod_delete, message: deleting production databases is not allowed}
      - name: external-url
        when: 'point == "pre_tool_call" && has(target.url) && !url_host(target.url).endsWith(".corp.example")'
        escalate: {reason: policy:external_url, message: external URLs need approval}
      - name: clamp-limit
        points: [pre_tool_call]
        when: 'has(target.limit) && target.limit > 100'
        transform: {path: '$target.limit', value: '100', reason: policy:clamped}
      - name: any-delete
        when: 'context.?tool_call.?name.orValue("").startsWith("delete_")'
        warn: {reason: policy:destructive_tool}
`

// toolCall is a pre_tool_call context for a call of name with args; the
// target is the arguments (spec §4.3).
func toolCall(name string, args map[string]any) enforcement.Context {
	return enforcement.Context{
		"interception_point": string(enforcement.PreToolCall),
		"session":            map[string]any{"id": "s-1"},
		"tool_call":          map[string]any{"id": "call_1", "name": name, "args": args},
		"target":             args,
	}
}

func TestCELVerdicts(t *testing.T) {
	ic := build(t, toolGuard)
	for _, tc := range []struct {
		name string
		c    enforcement.Context
		want enforcement.Verdict
	}{
		{"deny", toolCall("delete_db", map[string]any{"env": "prod"}),
			enforcement.Deny("policy:prod_delete", "deleting production databases is not allowed")},
		{"escalate", toolCall("fetch", map[string]any{"url": "https://api.example.com/x"}),
			enforcement.Escalate("policy:external_url", "external URLs need approval")},
		{"internal url passes", toolCall("fetch", map[string]any{"url": "https://wiki.corp.example/x"}),
			enforcement.Allow()},
		{"warn, default message", toolCall("delete_db", map[string]any{"env": "staging"}),
			enforcement.Warn("policy:destructive_tool", "flagged by policy tool-guard")},
		{"no rule matches", toolCall("search", map[string]any{"limit": json.Number("10")}),
			enforcement.Allow()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := intercept(t, ic, tc.c); !samePlain(got, tc.want) {
				t.Errorf("verdict = %+v, want %+v", got, tc.want)
			}
		})
	}

	t.Run("transform", func(t *testing.T) {
		args := map[string]any{"query": "q", "limit": json.Number("500")}
		c := toolCall("search", args)
		v := intercept(t, ic, c)
		if args["limit"] != json.Number("500") {
			t.Fatalf("the interceptor modified the context: %v", args)
		}
		if v.Decision != enforcement.DecisionTransform || v.Reason != "policy:clamped" ||
			v.Transform.Path != "$target.limit" || v.Transform.Value != json.Number("100") {
			t.Fatalf("verdict = %+v (%+v)", v, v.Transform)
		}
		if err := enforcement.ApplyTransform(c, v.Transform.Path, v.Transform.Value); err != nil {
			t.Fatal(err)
		}
		if got := c["tool_call"].(map[string]any)["args"].(map[string]any)["limit"]; got != json.Number("100") {
			t.Errorf("applied limit = %v", got)
		}
	})

	t.Run("rule points", func(t *testing.T) {
		// At post_model_call the deny and clamp rules are skipped and the
		// context has no tool_call for the warn rule.
		resp := map[string]any{"content": "", "finish_reason": "tool_calls", "tool_calls": []any{
			map[string]any{"id": "c", "name": "delete_db", "args": map[string]any{"env": "prod"}},
		}}
		if v := intercept(t, ic, at(enforcement.PostModelCall, resp)); !samePlain(v, enforcement.Allow()) {
			t.Errorf("post_model_call verdict = %+v, want allow", v)
		}
		// The interceptor's points filter the whole policy.
		c := toolCall("delete_db", map[string]any{"env": "prod"})
		c["interception_point"] = string(enforcement.PostToolCall)
		if v := intercept(t, ic, c); !samePlain(v, enforcement.Allow()) {
			t.Errorf("post_tool_call verdict = %+v, want allow", v)
		}
	})
}

func TestCELTransformSkippedWhereForbidden(t *testing.T) {
	ic := build(t, `  - name: stamp
    type: cel
    rules:
      - when: 'true'
        transform: {path: $target, value: '"stamped"'}
`)
	if v := intercept(t, ic, at(enforcement.AgentStartup, "x")); !samePlain(v, enforcement.Allow()) {
		t.Errorf("agent_startup verdict = %+v, want allow", v)
	}
	if v := intercept(t, ic, at(enforcement.Output, "x")); v.Decision != enforcement.DecisionTransform || v.Transform.Value != "stamped" {
		t.Errorf("output verdict = %+v", v)
	}
}

func TestCELNonBlocking(t *testing.T) {
	for _, src := range []string{toolGuard, strings.Replace(toolGuard, "    points: [pre_tool_call, post_model_call]\n", "", 1)} {
		if _, ok := build(t, src).(enforcement.NonBlocking); !ok {
			t.Errorf("cel interceptor is not NonBlocking")
		}
	}
}

// celValue evaluates expr with target at pre_model_call through a real cel
// interceptor whose only rule replaces $target with expr's value.
func celValue(t *testing.T, expr string, target any) any {
	t.Helper()
	ic := build(t, fmt.Sprintf("  - name: probe\n    type: cel\n    rules:\n      - when: 'true'\n        transform: {path: $target, value: %s}\n", strconv.Quote(expr)))
	c := at(enforcement.PreModelCall, target)
	v, err := ic.Intercept(context.Background(), c)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	if err := v.Validate(c.Point()); err != nil || v.Decision != enforcement.DecisionTransform {
		t.Fatalf("%s: verdict %+v", expr, v)
	}
	return v.Transform.Value
}

func TestCELHelpers(t *testing.T) {
	target := map[string]any{
		"url":   "https://API.Example.com:8443/v1?q=1",
		"text":  "Contact: Ann <ann@example.com>, ticket INC-4711.",
		"nums":  []any{json.Number("3"), json.Number("4")},
		"obj":   map[string]any{"a": map[string]any{"b": []any{"first", "second"}}, "x-y": true},
		"empty": "",
	}
	for _, tc := range []struct {
		expr string
		want any
	}{
		{`url_host(target.url)`, "api.example.com"},
		{`url_host("http://[::1]:8080/")`, "::1"},
		{`url_host("HTTP://Sub.Corp.Example")`, "sub.corp.example"},
		{`url_host("example.com/path")`, ""},
		{`url_host("not a url at all")`, ""},
		{`url_host("mailto:ann@example.com")`, ""},
		{`url_host("http://%zz")`, ""},
		{`url_host("https://allowed.example@evil.example/")`, "evil.example"},
		{`url_host("https://Corp.Example./x")`, "corp.example"},
		{`url_host("http://0x7f.1/")`, "127.0.0.1"},
		{`url_host("https://a.example\\@b.example/")`, ""},
		{`contains_ci(target.text, "CONTACT")`, true},
		{`contains_ci(target.text, "inc-4711")`, true},
		{`contains_ci(target.text, "bob")`, false},
		{`re_find(target.text, "[A-Z]+-[0-9]+")`, "INC-4711"},
		{`re_find(target.text, "[a-z]+@[a-z.]+")`, "ann@example.com"},
		{`re_find(target.text, "ZZZ")`, ""},
		{`re_find(target.text, target.obj.a.b[0])`, ""}, // a pattern that is not a constant
		{`re_find(target.text, "(?i)" + "contact")`, "Contact"},
		{`target.text.matches("INC-[0-9]{4}")`, true},
		{`json_path(target, "$.obj.a.b[1]")`, "second"},
		{`json_path(target, "$.obj[\"x-y\"]")`, true},
		{`json_path(target, "$.obj.a.missing") == null`, true},
		{`json_path(target, "$.nums[9]") == null`, true},
		{`json_path(target, "$.url.host") == null`, true},
		{`json_path(target, "$.nums")`, []any{json.Number("3"), json.Number("4")}},
		{`json_path({"k": [1, {"z": "built"}]}, "$.k[1].z")`, "built"},
		{`json_path(target, "$")["empty"]`, ""},
		{`target.text.lowerAscii().contains("ann")`, true},
		{`target.text.split(", ")[1]`, "ticket INC-4711."},
		{`"a,b".split(",").size()`, json.Number("2")},
	} {
		if got := celValue(t, tc.expr, target); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.expr, got, tc.want)
		}
	}
}

func TestCELNumbers(t *testing.T) {
	target := map[string]any{
		"i":     json.Number("7"),
		"exact": json.Number("9007199254740993"), // 2^53+1: a float64 would round it
		"big":   json.Number("12345678901234567890123"),
		"f":     json.Number("1.5"),
		"e":     json.Number("1e3"),
		"neg":   json.Number("-42"),
	}
	for _, tc := range []struct {
		expr string
		want any
	}{
		{`type(target.i) == int && target.i == 7`, true},
		{`target.i > 6.5`, true},
		{`target.exact + 1`, json.Number("9007199254740994")},
		{`target.exact == 9007199254740992`, false},
		{`type(target.big) == double && target.big > 9223372036854775807`, true},
		{`target.f * 2.0`, json.Number("3")},
		{`target.f < 2`, true},
		{`type(target.e) == double && target.e == 1000`, true},
		{`target.neg / 5`, json.Number("-8")},
		{`[1, 2.5, "x", null, true, {"k": target.i}]`,
			[]any{json.Number("1"), json.Number("2.5"), "x", nil, true, map[string]any{"k": json.Number("7")}}},
		{`18446744073709551615u`, json.Number("18446744073709551615")},
		// Context data handed back is the context's own tree: big numbers
		// keep every digit.
		{`target`, target},
	} {
		if got := celValue(t, tc.expr, target); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.expr, got, tc.want)
		}
	}
}

// celFailure runs a single-rule policy whose when is expr against c and
// returns the interceptor's error.
func celFailure(t *testing.T, extra, when, outcome string, c enforcement.Context) error {
	t.Helper()
	ic := build(t, fmt.Sprintf("  - name: guard\n    type: cel\n%s    rules:\n      - name: the-rule\n        when: %s\n        %s\n",
		extra, strconv.Quote(when), outcome))
	v, err := ic.Intercept(context.Background(), c)
	if err == nil {
		t.Fatalf("%s: verdict %+v, want an error", when, v)
	}
	return err
}

func TestCELRuntimeErrorsFailClosed(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	deny := "deny: {reason: policy:x}"
	c := toolCall("lookup", map[string]any{"key": secret, "n": "not a number", "list": []any{}})
	for _, tc := range []struct {
		when, outcome string
		class         error
	}{
		{`target.limit > 1`, deny, errCELMissing},
		// The missing key is itself payload; CEL's message would quote it.
		{`target[target.key] == 1`, deny, errCELMissing},
		{`target.list[0] == 1`, deny, errCELMissing},
		{`target.n > 1`, deny, errCELType},
		{`int(target.key) > 0`, deny, errCELEval},
		{`true`, `transform: {path: $target.args, value: 'dyn(bytes(target.key))'}`, errCELResult},
		{`true`, `transform: {path: $target.args, value: '{1: target.key}'}`, errCELResult},
		{`true`, `transform: {path: $target.args, value: '0.0 / 0.0'}`, errCELResult},
	} {
		err := celFailure(t, "", tc.when, tc.outcome, c)
		if !errors.Is(err, tc.class) {
			t.Errorf("%s: error %v, want class %v", tc.when, err, tc.class)
		}
		var rerr *celRuleError
		if !errors.As(err, &rerr) || rerr.interceptor != "guard" || rerr.rule != "the-rule" {
			t.Errorf("%s: error %#v does not name the interceptor and rule", tc.when, err)
		}
		if msg := err.Error(); strings.Contains(msg, secret) || strings.Contains(msg, "not a number") ||
			!strings.Contains(msg, "guard") || !strings.Contains(msg, "the-rule") {
			t.Errorf("%s: error text %q", tc.when, msg)
		}
	}

	// Guarded reads of absent keys are not errors.
	ic := build(t, `  - name: guarded
    type: cel
    rules:
      - when: 'has(target.limit) && target.limit > 1'
        deny: {reason: policy:a}
      - when: 'target.?limit.orValue(0) > 1 || target.?list[?0].hasValue() || context.?tool_call.?args.?x.hasValue()'
        deny: {reason: policy:b}
      - when: '"limit" in target && target["limit"] > 1'
        deny: {reason: policy:c}
`)
	if v := intercept(t, ic, c); !samePlain(v, enforcement.Allow()) {
		t.Errorf("guarded rules: %+v, want allow", v)
	}
}

// wide is a context whose target is a list of n numbers.
func wide(n int) enforcement.Context {
	list := make([]any, n)
	for i := range list {
		list[i] = json.Number(strconv.Itoa(i))
	}
	return at(enforcement.PreModelCall, list)
}

func TestCELCostLimit(t *testing.T) {
	// 10^9 iterations: without the limit this would run for minutes.
	cubic := `target.all(a, target.all(b, target.all(c, a + b + c >= 0)))`
	err := celFailure(t, "", cubic, "deny: {reason: policy:x}", wide(1000))
	if !errors.Is(err, errCELCostLimit) {
		t.Fatalf("error = %v, want the cost limit", err)
	}

	// cost_limit is per expression: the same rule fits a larger budget on
	// a small list and not a smaller one.
	c := wide(10)
	ic := build(t, "  - name: guard\n    type: cel\n    cost_limit: 100000\n    rules:\n      - when: "+strconv.Quote(cubic)+"\n        deny: {reason: policy:x}\n")
	if v := intercept(t, ic, c); v.Decision != enforcement.DecisionDeny {
		t.Errorf("within budget: %+v", v)
	}
	if err := celFailure(t, "    cost_limit: 100\n", cubic, "deny: {reason: policy:x}", c); !errors.Is(err, errCELCostLimit) {
		t.Errorf("small budget: error = %v", err)
	}
}

func TestCELCancellation(t *testing.T) {
	ic := build(t, toolGuard)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ic.Intercept(ctx, toolCall("delete_db", map[string]any{"env": "prod"}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestCELConfigProblems(t *testing.T) {
	_, err := BuildAll(specsOf(t, `  - name: bad
    type: cel
    points: [pre_tool_call, post_model_call]
    cost_limit: 0
    rules:
      - name: Bad Name
        when: 'context.tool_call.name =='
        deny: {reason: policy:x}
      - when: 'contxt.tool_call.name == "x"'
        deny: {reason: "host_error:mine"}
      - when: 'context.tool_call.name'
        warn: {reason: "not a reason"}
      - when: 'true'
      - when: 'true'
        deny: {reason: policy:a}
        warn: {reason: policy:b}
      - points: [output]
        when: 're_find(target.name, "(") != ""'
        escalate: {}
      - when: 'target.name.matches("[")'
        deny: {reason: policy:d}
      - when: 'json_path(target, "a.b") == 1'
        deny: {reason: policy:e}
      - when: 'true'
        transform: {path: '$.args', value: 'b"x"'}
      - deny: {reason: policy:f}
  - name: forbidden-points
    type: cel
    points: [agent_startup, pre_tool_call]
    rules:
      - name: same
        when: 'true'
        transform: {path: $target.args, value: '{}'}
      - name: same
        points: [agent_shutdown]
        when: 'true'
        transform: {path: $target, value: 'null'}
  - name: typo
    type: cel
    rules:
      - when: 'true'
        deny: {reason: policy:x}
        mesage: x
  - name: empty
    type: cel
`), Env{})
	got := problemStrings(t, err)
	want := []struct{ prefix, contains string }{
		{"policy.yaml:7: interceptors[0].cost_limit: ", "must be positive"},
		{"policy.yaml:9: interceptors[0].rules[0].name: ", "must match"},
		{"policy.yaml:10: interceptors[0].rules[0].when: column ", "Syntax error"},
		{"policy.yaml:12: interceptors[0].rules[1].when: column 1: ", "undeclared reference to 'contxt'"},
		{"policy.yaml:13: interceptors[0].rules[1].deny.reason: ", "reserved host_error: prefix"},
		{"policy.yaml:14: interceptors[0].rules[2].when: ", "must be of type bool, not dyn"},
		{"policy.yaml:15: interceptors[0].rules[2].warn.reason: ", "must be an identifier"},
		{"policy.yaml:16: interceptors[0].rules[3]: ", "needs one outcome"},
		{"policy.yaml:17: interceptors[0].rules[4]: ", "has deny and warn"},
		{"policy.yaml:20: interceptors[0].rules[5].points[0]: ", "output is not among the interceptor's points"},
		{"policy.yaml:21: interceptors[0].rules[5].when: ", "invalid RE2 pattern"},
		{"policy.yaml:22: interceptors[0].rules[5].escalate.reason: ", "is required"},
		{"policy.yaml:23: interceptors[0].rules[6].when: ", "invalid matches argument"},
		{"policy.yaml:25: interceptors[0].rules[7].when: ", `"a.b" is not a path`},
		{"policy.yaml:28: interceptors[0].rules[8].transform.path: ", "$target"},
		{"policy.yaml:28: interceptors[0].rules[8].transform.value: ", "must produce a JSON value"},
		{"policy.yaml:29: interceptors[0].rules[9].when: ", "is required"},
		{"policy.yaml:32: interceptors[1].points[0]: ", "cannot run at agent_startup"},
		{"policy.yaml:37: interceptors[1].rules[1].name: ", `duplicate rule name "same"`},
		{"policy.yaml:38: interceptors[1].rules[1].points[0]: ", "agent_shutdown is not among the interceptor's points"},
		{"policy.yaml:38: interceptors[1].rules[1].points[0]: ", "cannot run at agent_shutdown"},
		{"policy.yaml:46: interceptors[2].rules[0].mesage: ", "unknown key"},
		{"policy.yaml:47: interceptors[3].rules: ", "at least one rule is required"},
	}
	if len(got) != len(want) {
		t.Errorf("%d problems, want %d:\n  %s", len(got), len(want), strings.Join(got, "\n  "))
	}
	for i := range min(len(got), len(want)) {
		if !strings.HasPrefix(got[i], want[i].prefix) || !strings.Contains(got[i], want[i].contains) {
			t.Errorf("problem %d = %q\n  want prefix %q containing %q", i, got[i], want[i].prefix, want[i].contains)
		}
	}
}

// problemStrings renders a *config.Error's problems, one per line.
func problemStrings(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		t.Fatal("no problems")
	}
	return strings.Split(err.Error(), "\n")
}

func BenchmarkCEL(b *testing.B) {
	specs := specsOf(b, toolGuard)
	reg, err := Build(specs[0], Env{})
	if err != nil {
		b.Fatal(err)
	}
	// A call no rule decides, so all four conditions run.
	c := toolCall("search", map[string]any{
		"query": "quarterly revenue by region", "limit": json.Number("20"),
		"url": "https://wiki.corp.example/finance",
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		v, err := reg.Interceptor.Intercept(ctx, c)
		if err != nil || v.Decision != enforcement.DecisionAllow {
			b.Fatalf("verdict %+v, %v", v, err)
		}
	}
}

// TestCELDocExample builds the example of docs/configuration.md and runs
// it, so the documentation stays valid.
func TestCELDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "### `cel`\n")
	if !ok {
		t.Fatal("no cel section")
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	if !ok {
		t.Fatal("no example in the cel section")
	}
	block, _, _ = strings.Cut(block, "```")
	var src strings.Builder
	for _, line := range strings.SplitAfter(block, "\n") {
		if line != "" {
			src.WriteString("  " + line)
		}
	}
	ic := build(t, src.String())
	resp := map[string]any{"content": nil, "finish_reason": "tool_calls", "tool_calls": []any{
		map[string]any{"id": "call_1", "name": "delete_db", "args": map[string]any{"env": "prod"}},
	}}
	if v := intercept(t, ic, at(enforcement.PostModelCall, resp)); v.Decision != enforcement.DecisionDeny || v.Reason != "policy:prod_delete" {
		t.Errorf("prod delete: %+v", v)
	}
	if v := intercept(t, ic, toolCall("fetch", map[string]any{"url": "https://example.org/"})); !v.Liftable() || v.Reason != "policy:external_url" {
		t.Errorf("external url: %+v", v)
	}
	if v := intercept(t, ic, toolCall("shell", map[string]any{"command": "SUDO reboot"})); len(v.Warnings) != 1 || v.Warnings[0].Reason != "policy:privileged_shell" {
		t.Errorf("shell: %+v", v)
	}
}
