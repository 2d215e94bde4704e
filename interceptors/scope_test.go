package interceptors

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// scanType is one content-scanning policy under test: what it finds, and
// what it makes of it.
type scanType struct {
	name   string
	policy string // the interceptor, without a scope line
	// action is the transform's verb in messages ("redact", "rewrite"), or
	// "" for a deny policy.
	action string
	reason string
	// secrets are two different strings the policy finds; replaced is what
	// a transform makes of either.
	secrets  [2]string
	replaced string
}

var scanTypes = []scanType{
	{
		name:    "regex deny",
		policy:  "  - name: p\n    type: regex\n    action: deny\n    reason: policy:leak\n    patterns: ['sk-[A-Za-z0-9_-]{20,}']\n",
		reason:  "policy:leak",
		secrets: [2]string{"sk-aaaaaaaaaaaaaaaaaaaaaaaa1", "sk-bbbbbbbbbbbbbbbbbbbbbbbb2"},
	},
	{
		name:     "regex redact",
		policy:   "  - name: p\n    type: regex\n    action: redact\n    reason: policy:leak\n    replacement: '[key]'\n    patterns: ['sk-[A-Za-z0-9_-]{20,}']\n",
		action:   "redact",
		reason:   "policy:leak",
		secrets:  [2]string{"sk-aaaaaaaaaaaaaaaaaaaaaaaa1", "sk-bbbbbbbbbbbbbbbbbbbbbbbb2"},
		replaced: "[key]",
	},
	{
		name:     "redact",
		policy:   "  - name: p\n    type: redact\n    reason: policy:leak\n    detectors: [openai_key]\n",
		action:   "redact",
		reason:   "policy:leak",
		secrets:  [2]string{"sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "sk-proj-Q2xR7vT9mK4pL8nZ3wY6bH1cF5dJ0sA2eG7uN4iO9qX"},
		replaced: "[openai_key]",
	},
	{
		name:    "egress deny",
		policy:  "  - name: p\n    type: egress\n    reason: policy:leak\n    deny_hosts: [evil.test]\n",
		reason:  "policy:leak",
		secrets: [2]string{"https://evil.test/a", "https://evil.test/b"},
	},
	{
		name:     "egress rewrite",
		policy:   "  - name: p\n    type: egress\n    reason: policy:leak\n    deny_hosts: [evil.test]\n    action: rewrite\n",
		action:   "rewrite",
		reason:   "policy:leak",
		secrets:  [2]string{"https://evil.test/a", "https://evil.test/b"},
		replaced: "https://blocked.invalid/",
	},
}

// withScope adds a scope line to the policy ("" leaves the default).
func (st scanType) withScope(scope string) string {
	if scope == "" {
		return st.policy
	}
	return st.policy + "    scope: " + scope + "\n"
}

// requestAt is a context at point with clean messages as the target and
// the request members beside it as the gateway projects them.
func requestAt(point enforcement.Point, tools []any, params map[string]any) enforcement.Context {
	c := at(point, []any{map[string]any{"role": "user", "content": "look it up"}})
	c["tools"] = tools
	c["model"] = map[string]any{"id": "gpt-4o", "params": params}
	return c
}

// cleanTool is a tool declaration nothing matches.
func cleanTool() map[string]any {
	return map[string]any{"name": "lookup", "description": "Looks a record up.", "schema": map[string]any{
		"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}},
	}}
}

// outsidePlaces put a secret s in the request members beside the target;
// member is the one they name.
var outsidePlaces = []struct {
	name   string
	member string
	put    func(s string) ([]any, map[string]any)
}{
	{"tool description", memberTools, func(s string) ([]any, map[string]any) {
		tool := cleanTool()
		tool["description"] = "Call it with " + s + " as the key."
		return []any{cleanTool(), tool}, nil
	}},
	{"tool schema key", memberTools, func(s string) ([]any, map[string]any) {
		tool := cleanTool()
		tool["schema"].(map[string]any)["properties"].(map[string]any)[s] = map[string]any{"type": "string"}
		return []any{tool}, nil
	}},
	{"tool schema description", memberTools, func(s string) ([]any, map[string]any) {
		tool := cleanTool()
		tool["schema"].(map[string]any)["properties"].(map[string]any)["id"] = map[string]any{"type": "string", "description": s}
		return []any{tool}, nil
	}},
	{"response_format schema", memberParams, func(s string) ([]any, map[string]any) {
		return []any{cleanTool()}, map[string]any{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "answer", "schema": map[string]any{"type": "object", "properties": map[string]any{
				"text": map[string]any{"type": "string", "description": "Start with " + s},
			}},
		}}}
	}},
	{"metadata value", memberParams, func(s string) ([]any, map[string]any) {
		return nil, map[string]any{"metadata": map[string]any{"note": s}, "temperature": json.Number("0.2")}
	}},
	{"metadata key", memberParams, func(s string) ([]any, map[string]any) {
		return nil, map[string]any{"metadata": map[string]any{s: "v"}}
	}},
	{"stop", memberParams, func(s string) ([]any, map[string]any) {
		return nil, map[string]any{"stop": []any{"\n\n", s}}
	}},
}

// TestScanScopeOutsideTarget: with the default scope each type judges the
// request's tools and model.params at pre_model_call. A deny policy denies
// as it would in the target; a transforming one cannot reach them and
// denies with a message naming the member, never the match. scope: target
// and every other point leave them alone.
func TestScanScopeOutsideTarget(t *testing.T) {
	for _, st := range scanTypes {
		byScope := map[string]enforcement.Interceptor{}
		for _, scope := range []string{"", "request", "target"} {
			byScope[scope] = build(t, st.withScope(scope))
		}
		for _, place := range outsidePlaces {
			tools, params := place.put(st.secrets[0])
			c := requestAt(enforcement.PreModelCall, tools, params)
			before := jsonOf(t, map[string]any(c))
			for _, scope := range []string{"", "request"} {
				v := intercept(t, byScope[scope], c)
				if v.Decision != enforcement.DecisionDeny || v.Reason != st.reason {
					t.Errorf("%s, scope %q, %s: %+v, want deny %s", st.name, scope, place.name, v, st.reason)
					continue
				}
				if st.action != "" {
					if want := outsideMessage("p", place.member, st.action); v.Message != want {
						t.Errorf("%s, %s: message %q, want %q", st.name, place.name, v.Message, want)
					}
				}
				if strings.Contains(v.Message, st.secrets[0]) {
					t.Errorf("%s, %s: message %q quotes the match", st.name, place.name, v.Message)
				}
			}
			if v := intercept(t, byScope["target"], c); !samePlain(v, enforcement.Allow()) {
				t.Errorf("%s, scope target, %s: %+v, want allow", st.name, place.name, v)
			}
			if jsonOf(t, map[string]any(c)) != before {
				t.Errorf("%s, %s: the context was modified", st.name, place.name)
			}
			// Only pre_model_call is widened.
			for _, p := range []enforcement.Point{enforcement.PostModelCall, enforcement.Input} {
				other := requestAt(p, tools, params)
				other["target"] = "clean"
				if v := intercept(t, byScope[""], other); !samePlain(v, enforcement.Allow()) {
					t.Errorf("%s at %s, %s: %+v, want allow (only the target is judged there)", st.name, p, place.name, v)
				}
			}
		}
		// Clean members beside a clean target: nothing to do.
		if v := intercept(t, byScope[""], requestAt(enforcement.PreModelCall, []any{cleanTool()}, map[string]any{"tool_choice": "auto"})); !samePlain(v, enforcement.Allow()) {
			t.Errorf("%s, clean request: %+v", st.name, v)
		}
	}
}

// TestScanScopeTransformStillDenies: a match beside the target denies even
// when the target has matches a transform could fix; scope: target then
// transforms the target alone.
func TestScanScopeTransformStillDenies(t *testing.T) {
	for _, st := range scanTypes {
		if st.action == "" {
			continue
		}
		c := requestAt(enforcement.PreModelCall, []any{map[string]any{"name": "t", "description": st.secrets[0]}}, nil)
		c["target"] = []any{map[string]any{"role": "user", "content": "use " + st.secrets[1]}}
		if v := intercept(t, build(t, st.policy), c); v.Decision != enforcement.DecisionDeny {
			t.Errorf("%s: %+v, want deny", st.name, v)
		}
		v := intercept(t, build(t, st.withScope("target")), c)
		if v.Decision != enforcement.DecisionTransform || jsonOf(t, v.Transform.Value) != `[{"content":"use `+st.replaced+`","role":"user"}]` {
			t.Errorf("%s, scope target: %+v", st.name, v)
		}
	}
}

// TestScanKeys: object keys are matched like string values. Deny policies
// deny; transforming ones rename the key, and deny when two members of one
// object would end up with the same key.
func TestScanKeys(t *testing.T) {
	for _, st := range scanTypes {
		ic := build(t, st.policy)
		s0, s1 := st.secrets[0], st.secrets[1]
		args := map[string]any{"id " + s0: "v", "n": json.Number("3"), "nested": []any{map[string]any{s1: true}}}
		target := []any{map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
			map[string]any{"id": "c1", "name": "f", "args": args},
		}}}
		before := jsonOf(t, target)
		v := intercept(t, ic, at(enforcement.PreModelCall, target))
		if jsonOf(t, target) != before {
			t.Errorf("%s: the target was modified", st.name)
		}
		if st.action == "" {
			if v.Decision != enforcement.DecisionDeny || v.Reason != st.reason {
				t.Errorf("%s: secret keys: %+v, want deny", st.name, v)
			}
			continue
		}
		if v.Decision != enforcement.DecisionTransform {
			t.Fatalf("%s: secret keys: %+v, want transform", st.name, v)
		}
		want := `[{"content":null,"role":"assistant","tool_calls":[{"args":{"id ` + st.replaced + `":"v","n":3,"nested":[{"` + st.replaced + `":true}]},"id":"c1","name":"f"}]}]`
		if got := jsonOf(t, v.Transform.Value); got != want {
			t.Errorf("%s: transform\n got %s\nwant %s", st.name, got, want)
		}
		// Two keys rewritten alike, or a rewritten key equal to one that
		// stays, would merge two members: deny.
		for name, obj := range map[string]map[string]any{
			"two renamed": {s0: json.Number("1"), s1: json.Number("2")},
			"one kept":    {st.replaced: json.Number("1"), s0: json.Number("2")},
		} {
			v := intercept(t, ic, at(enforcement.PreToolCall, obj))
			if !samePlain(v, enforcement.Deny(st.reason, mergeMessage("p"))) {
				t.Errorf("%s, %s: %+v, want the merge deny", st.name, name, v)
			}
			if len(obj) != 2 {
				t.Errorf("%s, %s: the target was modified", st.name, name)
			}
		}
	}
}

// TestScanScopeProblems: the scope option takes request or target only;
// the problem points at the scope line.
func TestScanScopeProblems(t *testing.T) {
	for _, st := range scanTypes {
		src := st.withScope("everything")
		line := 3 + strings.Count(src, "\n") // after the three lines specsOf puts first
		want := fmt.Sprintf(`policy.yaml:%d: interceptors[0].scope: must be request or target (got "everything")`, line)
		if got := buildProblems(t, src); !reflect.DeepEqual(got, []string{want}) {
			t.Errorf("%s: problems %q, want %q", st.name, got, want)
		}
	}
}

// xToY is a find that replaces every x with y.
func xToY(dst []edit, s string) []edit {
	for i := range len(s) {
		if s[i] == 'x' {
			dst = append(dst, edit{start: i, end: i + 1, repl: "y"})
		}
	}
	return dst
}

// rewriteSample has w rewrite the sample both rewriter tests use, checks
// what it made, and returns the sample and the result.
func rewriteSample(t *testing.T, w *textRewriter) (in, out []any) {
	t.Helper()
	in = []any{map[string]any{"k": []any{"v", json.Number("1"), nil}}, map[string]any{"x": "a-x", "same": map[string]any{"n": true}}, nil}
	res, changed := w.tree(in)
	if !changed || w.merged {
		t.Fatalf("changed %v merged %v", changed, w.merged)
	}
	if got := jsonOf(t, res); got != `[{"k":["v",1,null]},{"same":{"n":true},"y":"a-y"},null]` {
		t.Errorf("out %s", got)
	}
	return in, res.([]any)
}

// TestTextRewriterOwnsItsResult: a changed tree comes back with every
// container new (unchanged ones copied), the input untouched; an unchanged
// tree comes back as it is.
func TestTextRewriterOwnsItsResult(t *testing.T) {
	w := textRewriter{find: xToY}
	in, out := rewriteSample(t, &w)
	scribble(out)
	if jsonOf(t, in) != `[{"k":["v",1,null]},{"same":{"n":true},"x":"a-x"},null]` {
		t.Errorf("the result shares a container with the input: %s", jsonOf(t, in))
	}
	unchanged := []any{"plain", json.Number("1"), nil, true, map[string]any{"k": "v"}}
	if out, changed := w.tree(unchanged); changed || reflect.ValueOf(out).UnsafePointer() != reflect.ValueOf(unchanged).UnsafePointer() {
		t.Errorf("nothing to rewrite: changed %v, out %v", changed, out)
	}
	var boxed any = unchanged
	if n := testing.AllocsPerRun(100, func() { w.tree(boxed) }); n != 0 {
		t.Errorf("nothing to rewrite: %v allocations, want none", n)
	}
}

// TestTextRewriterSharesWhatAFrozenInputLeaves: over an input the host
// froze (enforcement.ContextsFrozen), the result holds the unchanged
// elements and members themselves, and only the containers on the way
// to a change are new; the input is left as it was.
func TestTextRewriterSharesWhatAFrozenInputLeaves(t *testing.T) {
	w := textRewriter{frozen: true, find: xToY}
	in, out := rewriteSample(t, &w)
	if jsonOf(t, in) != `[{"k":["v",1,null]},{"same":{"n":true},"x":"a-x"},null]` {
		t.Errorf("the input changed: %s", jsonOf(t, in))
	}
	ptr := func(m any) unsafe.Pointer { return reflect.ValueOf(m).UnsafePointer() }
	changedObj := in[1].(map[string]any)
	if ptr(out[0]) != ptr(in[0]) || ptr(out[1].(map[string]any)["same"]) != ptr(changedObj["same"]) {
		t.Error("an unchanged object was copied")
	}
	if ptr(out) == ptr(in) || ptr(out[1]) == ptr(changedObj) {
		t.Error("a container on the way to a change is the input's")
	}
}

// TestRegexReplaceMatchesStdlib: the one-pass replacement writes what
// regexp's ReplaceAllLiteralString writes, empty matches included.
func TestRegexReplaceMatchesStdlib(t *testing.T) {
	texts := []string{"", "a", "abc abc", "xx yy", "aaa", "ann@example.com, bob@example.org.", "é a\u00a0b", "\xff a \xfe"}
	for _, pattern := range []string{"a", "a+", `\b`, `x|\b`, `[a-z]+@[a-z]+\.[a-z]{2,}`, `(?i)A`, `b*c`} {
		for _, repl := range []string{"", "[r]", "$1"} {
			r := &regexInterceptor{re: regexp.MustCompile(pattern), replacement: repl}
			for _, s := range texts {
				want := r.re.ReplaceAllLiteralString(s, repl)
				w := textRewriter{find: r.appendEdits}
				got, changed := w.text(s)
				if got != want || changed != (want != s) {
					t.Errorf("%q over %q with %q: got %q (changed %v), want %q", pattern, s, repl, got, changed, want)
				}
			}
		}
	}
}
