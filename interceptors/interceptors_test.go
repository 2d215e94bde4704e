package interceptors

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// specsOf parses a real configuration whose interceptors list is src.
func specsOf(t testing.TB, src string) []config.Interceptor {
	t.Helper()
	c, err := config.Parse("policy.yaml", []byte("upstreams:\n  - {name: mock, type: mock}\ninterceptors:\n"+src))
	if err != nil {
		t.Fatalf("config.Parse: %v", err)
	}
	return c.Interceptors
}

// build builds the only interceptor in src.
func build(t *testing.T, src string) enforcement.Interceptor {
	t.Helper()
	reg, err := Build(specsOf(t, src)[0], Env{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return reg.Interceptor
}

// buildProblems builds the interceptors in src and returns the problems.
func buildProblems(t *testing.T, src string) []string {
	t.Helper()
	_, err := BuildAll(specsOf(t, src), Env{})
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("BuildAll = %v, want *config.Error", err)
	}
	out := make([]string, len(cerr.Problems))
	for i, p := range cerr.Problems {
		out[i] = p.String()
	}
	return out
}

func at(p enforcement.Point, target any) enforcement.Context {
	return enforcement.Context{"interception_point": string(p), "target": target}
}

func intercept(t *testing.T, ic enforcement.Interceptor, c enforcement.Context) enforcement.Verdict {
	t.Helper()
	v, err := ic.Intercept(context.Background(), c)
	if err != nil {
		t.Fatalf("Intercept: %v", err)
	}
	if err := v.Validate(c.Point()); err != nil {
		t.Fatalf("verdict fails the §5 gate: %v", err)
	}
	return v
}

func samePlain(a, b enforcement.Verdict) bool { return reflect.DeepEqual(a, b) }

func TestRegistry(t *testing.T) {
	if got := Types(); !reflect.DeepEqual(got, []string{"allow", "budget", "cel", "deny", "egress", "http", "opa", "redact", "regex", "tools"}) {
		t.Errorf("Types() = %q", got)
	}
	r := Registry()
	delete(r, "allow")
	if _, ok := Registry()["allow"]; !ok {
		t.Errorf("Registry shares state between calls")
	}
}

func TestBuildUnknownType(t *testing.T) {
	got := buildProblems(t, "  - name: a\n    type: regx\n")
	want := []string{`policy.yaml:5: interceptors[0].type: unknown interceptor type "regx" (one of allow, budget, cel, deny, egress, http, opa, redact, regex, tools)`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems = %q, want %q", got, want)
	}
}

func TestBuildRegistration(t *testing.T) {
	reg, err := Build(specsOf(t, "  - name: pass\n    type: allow\n")[0], Env{})
	if err != nil || reg.Name != "pass" || reg.Interceptor == nil {
		t.Fatalf("Build = %+v, %v", reg, err)
	}
	// A hand-built spec with a bad point is refused even without config.
	_, err = Build(config.Interceptor{Name: "x", Type: "allow", Points: []string{"nowhere"}}, Env{})
	if err == nil || err.Error() != `interceptors[0].points[0]: unknown interception point "nowhere"` {
		t.Errorf("Build(bad point) = %v", err)
	}
}

func TestAllow(t *testing.T) {
	ic := build(t, "  - name: pass\n    type: allow\n")
	for _, p := range enforcement.Points() {
		if v := intercept(t, ic, at(p, "anything")); !samePlain(v, enforcement.Allow()) {
			t.Errorf("%s: %+v", p, v)
		}
	}
	got := buildProblems(t, "  - name: pass\n    type: allow\n    reason: x\n")
	want := []string{"policy.yaml:6: interceptors[0].reason: unknown key (this type takes no options)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems = %q, want %q", got, want)
	}
}

func TestDeny(t *testing.T) {
	ic := build(t, "  - name: closed\n    type: deny\n")
	if v := intercept(t, ic, at(enforcement.Input, "hi")); !samePlain(v, enforcement.Deny("policy:denied", "denied by policy closed")) {
		t.Errorf("default deny = %+v", v)
	}

	ic = build(t, "  - name: no-output\n    type: deny\n    points: [output]\n    reason: policy:read_only\n    message: output is disabled\n")
	if v := intercept(t, ic, at(enforcement.Output, "hi")); !samePlain(v, enforcement.Deny("policy:read_only", "output is disabled")) {
		t.Errorf("deny at output = %+v", v)
	}
	for _, p := range []enforcement.Point{enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall, enforcement.AgentShutdown} {
		if v := intercept(t, ic, at(p, "hi")); !samePlain(v, enforcement.Allow()) {
			t.Errorf("points filter: %s = %+v, want allow", p, v)
		}
	}

	ic = build(t, "  - name: ask\n    type: deny\n    reason: policy:needs_approval\n    escalate: true\n")
	if v := intercept(t, ic, at(enforcement.PreToolCall, map[string]any{})); !v.Liftable() || v.Reason != "policy:needs_approval" {
		t.Errorf("escalating deny = %+v, want a liftable deny", v)
	}

	got := buildProblems(t, `  - name: a
    type: deny
    resaon: policy:x
  - name: b
    type: deny
    reason: host_error:no_interceptor
  - name: c
    type: deny
    reason: "policy denied"
`)
	want := []string{
		"policy.yaml:6: interceptors[0].resaon: unknown key (expected one of escalate, message, reason)",
		`policy.yaml:9: interceptors[1].reason: must not use the reserved host_error: prefix (got "host_error:no_interceptor")`,
		`policy.yaml:12: interceptors[2].reason: must be an identifier of letters, digits and _ . : / - such as policy:denied (got "policy denied")`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

const credentials = `  - name: deny-credentials
    type: regex
    points: [post_model_call, output]
    action: deny
    reason: policy:credential_leak
    patterns:
      - 'sk-[A-Za-z0-9_-]{20,}'
      - 'AKIA[0-9A-Z]{16}'
`

func TestRegexDeny(t *testing.T) {
	ic := build(t, credentials)
	key := "sk-abcdefghijklmnopqrstuvwxyz012345"
	response := map[string]any{
		"content": "Here you go.",
		"tool_calls": []any{map[string]any{
			"id": "call_1", "name": "store",
			"args": map[string]any{"nested": []any{json.Number("7"), true, nil, "token " + key}},
		}},
		"finish_reason": "tool_calls",
	}
	v := intercept(t, ic, at(enforcement.PostModelCall, response))
	if v.Decision != enforcement.DecisionDeny || v.Reason != "policy:credential_leak" {
		t.Fatalf("verdict = %+v", v)
	}
	if strings.Contains(v.Message, key) || strings.Contains(v.Message, "sk-") || v.Message == "" {
		t.Errorf("message %q must explain without quoting the match", v.Message)
	}

	for name, target := range map[string]any{
		"ordinary text": "Ask the desk (sk-team) about AKIA training; skip-ahead tasks are fine.",
		"numbers":       []any{json.Number("12345678901234567890123"), false, nil},
		"other point":   nil,
	} {
		c := at(enforcement.PostModelCall, target)
		if name == "other point" {
			c = at(enforcement.PreModelCall, key)
		}
		if v := intercept(t, ic, c); !samePlain(v, enforcement.Allow()) {
			t.Errorf("%s: verdict = %+v, want allow", name, v)
		}
	}
	// A key is matched like a value: a secret used as a member name.
	if v := intercept(t, ic, at(enforcement.PostModelCall, map[string]any{"args": map[string]any{key: "value"}})); v.Decision != enforcement.DecisionDeny {
		t.Errorf("key: %+v, want deny", v)
	}
	if v := intercept(t, ic, at(enforcement.Output, map[string]any{"content": "AKIAABCDEFGHIJKLMNOP"})); v.Decision != enforcement.DecisionDeny {
		t.Errorf("AWS key at output: %+v", v)
	}
}

const redactEmail = `  - name: redact-email
    type: regex
    points: [pre_model_call]
    action: redact
    patterns: ['[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}']
    replacement: "[email]"
`

func TestRegexRedact(t *testing.T) {
	ic := build(t, redactEmail)
	messages := []any{
		map[string]any{"role": "system", "content": "Be brief."},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "Mail ann@example.com and bob@example.org."},
			map[string]any{"type": "meta", "n": json.Number("9007199254740993"), "ok": true, "none": nil},
		}},
	}
	c := at(enforcement.PreModelCall, messages)
	before, _ := json.Marshal(messages)
	v := intercept(t, ic, c)
	if v.Decision != enforcement.DecisionTransform || v.Transform.Path != "$target" || v.Reason != "policy:redacted" {
		t.Fatalf("verdict = %+v", v)
	}
	got, _ := json.Marshal(v.Transform.Value)
	want := `[{"content":"Be brief.","role":"system"},{"content":[{"text":"Mail [email] and [email].","type":"text"},{"n":9007199254740993,"none":null,"ok":true,"type":"meta"}],"role":"user"}]`
	if string(got) != want {
		t.Errorf("transform value =\n%s\nwant\n%s", got, want)
	}
	if after, _ := json.Marshal(messages); string(after) != string(before) {
		t.Errorf("the context was modified in place: %s", after)
	}
	n := v.Transform.Value.([]any)[1].(map[string]any)["content"].([]any)[1].(map[string]any)["n"]
	if n != json.Number("9007199254740993") {
		t.Errorf("number = %#v, want the json.Number intact", n)
	}

	if v := intercept(t, ic, at(enforcement.PreModelCall, []any{"no addresses here @ all"})); !samePlain(v, enforcement.Allow()) {
		t.Errorf("no match: %+v", v)
	}
	if v := intercept(t, ic, at(enforcement.PostModelCall, "ann@example.com")); !samePlain(v, enforcement.Allow()) {
		t.Errorf("points filter: %+v", v)
	}
}

func TestRegexRedactOptions(t *testing.T) {
	// The replacement is literal; "" deletes; no points means every point
	// where a transform is permitted.
	ic := build(t, "  - name: r\n    type: regex\n    action: redact\n    patterns: ['(\\d{3})-\\d{4}']\n    replacement: '$1-xxxx'\n")
	if v := intercept(t, ic, at(enforcement.Input, "call 555-1234")); v.Decision != enforcement.DecisionTransform || v.Transform.Value != "call $1-xxxx" {
		t.Errorf("literal replacement: %+v", v)
	}
	for _, p := range []enforcement.Point{enforcement.AgentStartup, enforcement.AgentShutdown} {
		if v := intercept(t, ic, at(p, "555-1234")); !samePlain(v, enforcement.Allow()) {
			t.Errorf("%s: %+v, want allow (transforms are forbidden there)", p, v)
		}
	}
	ic = build(t, "  - name: r\n    type: regex\n    action: redact\n    patterns: ['secret']\n    replacement: ''\n    reason: policy:scrub\n")
	if v := intercept(t, ic, at(enforcement.Output, "a secret b")); v.Transform == nil || v.Transform.Value != "a  b" || v.Reason != "policy:scrub" {
		t.Errorf("empty replacement: %+v", v)
	}
	// A replacement equal to the match changes nothing: allow.
	ic = build(t, "  - name: r\n    type: regex\n    action: redact\n    patterns: ['same']\n    replacement: same\n")
	if v := intercept(t, ic, at(enforcement.Output, "the same")); !samePlain(v, enforcement.Allow()) {
		t.Errorf("unchanged: %+v", v)
	}
	// Patterns combine: a replacement is never matched again by a later one.
	ic = build(t, "  - name: r\n    type: regex\n    action: redact\n    patterns: ['a+', '\\[x\\]']\n    replacement: '[x]'\n")
	if v := intercept(t, ic, at(enforcement.Output, "aa [x]")); v.Transform == nil || v.Transform.Value != "[x] [x]" {
		t.Errorf("combined: %+v", v)
	}
}

func TestRegexProblems(t *testing.T) {
	got := buildProblems(t, `  - name: a
    type: regex
    action: deny
  - name: b
    type: regex
    action: block
    patterns:
      - ok
      - 'bad('
      - ''
      - 'x*'
  - name: c
    type: regex
    patterns: [x]
    replacement: y
  - name: d
    type: regex
    action: deny
    patterns: [x]
    replacement: y
  - name: e
    type: regex
    action: redact
    points: [input, agent_shutdown]
    patterns: [x]
  - name: f
    type: regex
    action: deny
    pattern: x
`)
	want := []string{
		"policy.yaml:4: interceptors[0].patterns: at least one pattern is required",
		`policy.yaml:9: interceptors[1].action: must be deny or redact (got "block")`,
		"policy.yaml:12: interceptors[1].patterns[1]: invalid RE2 pattern: error parsing regexp: missing closing ): `bad(`",
		"policy.yaml:13: interceptors[1].patterns[2]: must not be empty",
		"policy.yaml:14: interceptors[1].patterns[3]: matches the empty string, so it would match every value",
		"policy.yaml:15: interceptors[2].action: is required (deny or redact)",
		"policy.yaml:23: interceptors[3].replacement: is only used with action: redact",
		"policy.yaml:27: interceptors[4].points[1]: redact cannot run at agent_shutdown: the spec forbids transforms there",
		"policy.yaml:32: interceptors[5].pattern: unknown key (expected one of action, message, patterns, reason, replacement, scope)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestDefaultPolicy runs the embedded default's interceptors through a real
// emitter: the transform and the deny must survive the engine's gates.
func TestDefaultPolicy(t *testing.T) {
	t.Setenv(config.EnvOpenAIKey, "")
	c := config.Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	regs, err := BuildAll(c.Interceptors, Env{})
	if err != nil {
		t.Fatalf("BuildAll: %v", err)
	}
	opts, err := c.Enforcement.EngineOptions()
	if err != nil {
		t.Fatal(err)
	}
	opts.Interceptors = regs
	em, err := enforcement.NewEmitter(opts)
	if err != nil {
		t.Fatal(err)
	}
	b := &enforcement.Builder{Agent: enforcement.Agent{ID: "a", Framework: "test"}, SessionID: "s", Sequence: &enforcement.Counter{}}
	ctx := context.Background()

	pre, err := b.Build(ctx, enforcement.PreModelCall, enforcement.PreModelFields("gpt-4o", []any{
		map[string]any{"role": "user", "content": "write to jane.doe@corp.example, budget 12.50"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := em.Emit(ctx, pre)
	if err != nil {
		t.Fatalf("Emit(pre_model_call): %v", err)
	}
	got, _ := json.Marshal(out.Target())
	if string(got) != `[{"content":"write to [email], budget 12.50","role":"user"}]` {
		t.Errorf("pre_model_call target = %s", got)
	}

	post, err := b.Build(ctx, enforcement.PostModelCall, enforcement.PostModelFields("gpt-4o", enforcement.ModelResponse{
		Content: "use -----BEGIN RSA PRIVATE KEY----- MIIE...", FinishReason: "stop",
	}))
	if err != nil {
		t.Fatal(err)
	}
	out, err = em.Emit(ctx, post)
	var blocked *enforcement.BlockedError
	if !errors.As(err, &blocked) || out.Verdict.Reason != "policy:credential_leak" {
		t.Fatalf("Emit(post_model_call) = %+v, %v", out.Verdict, err)
	}

	post, _ = b.Build(ctx, enforcement.PostModelCall, enforcement.PostModelFields("gpt-4o", enforcement.ModelResponse{
		Content: "Sure: the sky-blue theme costs $5.", FinishReason: "stop",
	}))
	if out, err := em.Emit(ctx, post); err != nil || out.Verdict.Decision != enforcement.DecisionAllow {
		t.Errorf("ordinary response: %+v, %v", out.Verdict, err)
	}
}
