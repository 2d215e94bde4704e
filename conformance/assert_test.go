package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
)

// ---- fake harness ------------------------------------------------------

// fakeHarness replays a hand-built RunRecord and logs its lifecycle.
type fakeHarness struct {
	decl     Declaration
	rr       *RunRecord
	setupErr error
	runErr   error
	panicIn  string // "setup", "run" or "teardown"
	events   *eventLog
	onSetup  func(v *Vector)
}

type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(e string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.events, ",")
}

func (h *fakeHarness) Declaration() Declaration { return h.decl }

func (h *fakeHarness) Setup(v *Vector) error {
	h.events.add("setup:" + v.ID)
	if h.panicIn == "setup" {
		panic("setup exploded")
	}
	if h.onSetup != nil {
		h.onSetup(v)
	}
	return h.setupErr
}

func (h *fakeHarness) Run(context.Context) (*RunRecord, error) {
	h.events.add("run")
	if h.panicIn == "run" {
		panic("run exploded")
	}
	return h.rr, h.runErr
}

func (h *fakeHarness) Teardown() {
	h.events.add("teardown")
	if h.panicIn == "teardown" {
		panic("teardown exploded")
	}
}

// runFake runs one vector on a fake harness that returns rr.
func runFake(t *testing.T, v *Vector, decl Declaration, rr *RunRecord) Result {
	t.Helper()
	rep := Run(context.Background(), func() Harness { return &fakeHarness{decl: decl, rr: rr} }, []*Vector{v})
	if len(rep.Results) != 1 {
		t.Fatalf("got %d results", len(rep.Results))
	}
	return rep.Results[0]
}

// failures runs v against rr with an empty declaration and returns the failures.
func failures(t *testing.T, v *Vector, rr *RunRecord) []string {
	t.Helper()
	return failuresWith(t, v, Declaration{Name: "fake"}, rr)
}

func failuresWith(t *testing.T, v *Vector, decl Declaration, rr *RunRecord) []string {
	t.Helper()
	res := runFake(t, v, decl, rr)
	if (res.Status == StatusPass) != (len(res.Failures) == 0) || res.Status == StatusSkip {
		t.Fatalf("status %s inconsistent with failures %q", res.Status, res.Failures)
	}
	return res.Failures
}

func wantPass(t *testing.T, fs []string) {
	t.Helper()
	if len(fs) != 0 {
		t.Errorf("want pass, got failures:\n  %s", strings.Join(fs, "\n  "))
	}
}

// wantFail checks there are exactly n failures and that the first contains every needle.
func wantFail(t *testing.T, fs []string, n int, needles ...string) {
	t.Helper()
	if len(fs) != n {
		t.Errorf("want %d failure(s), got %d:\n  %s", n, len(fs), strings.Join(fs, "\n  "))
		return
	}
	for _, needle := range needles {
		if !strings.Contains(fs[0], needle) {
			t.Errorf("failure %q lacks %q", fs[0], needle)
		}
	}
}

// vec builds a capability-free vector around an expect object.
func vec(t *testing.T, expect string) *Vector {
	t.Helper()
	src := `{"id":"AH-CTK-900","title":"fake","spec_clause":"0","capabilities":[],` +
		`"scenario":{"input":{"content":"hi","role":"user"}},"interceptor_script":[],"expect":` + expect + `}`
	v, err := ParseVector("AH-CTK-900-fake.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// ctx builds a context that passes the envelope check, with extra
// members merged over the defaults.
func ctx(point string, seq any, extra map[string]any) map[string]any {
	c := map[string]any{
		"spec":               "agent-hooks/0.1",
		"interception_point": point,
		"timestamp":          "2026-01-01T00:00:00.000Z",
		"sequence":           seq,
		"agent":              map[string]any{"id": "a", "framework": "fake-fw"},
		"session":            map[string]any{"id": "s"},
	}
	switch point {
	case "agent_startup":
		c["agent_init"] = map[string]any{"tools_registered": []any{}}
		c["target"] = c["agent_init"]
	case "input":
		c["input"] = map[string]any{"content": "hi", "role": "user"}
		c["target"] = c["input"]
	case "pre_model_call":
		c["model"] = map[string]any{"id": "mock"}
		c["messages"] = []any{map[string]any{"role": "user", "content": "hi"}}
		c["target"] = c["messages"]
	case "post_model_call":
		c["model"] = map[string]any{"id": "mock"}
		c["response"] = map[string]any{"content": "ok", "tool_calls": []any{}, "finish_reason": "stop"}
		c["target"] = c["response"]
	case "pre_tool_call", "post_tool_call":
		c["tool_call"] = map[string]any{"id": "tc-1", "name": "t", "args": map[string]any{}}
		c["target"] = map[string]any{}
		if point == "post_tool_call" {
			c["tool_result"] = map[string]any{"value": "r", "is_error": false}
			c["target"] = "r"
		}
	case "output":
		c["output"] = map[string]any{"content": "ok"}
		c["target"] = c["output"]
	case "agent_shutdown":
		c["summary"] = map[string]any{"reason": "completed"}
		c["target"] = c["summary"]
	}
	maps.Copy(c, extra)
	return c
}

// recording builds valid contexts for the points, numbered 0, 1, 2, ...
func recording(points ...string) []any {
	out := make([]any, len(points))
	for i, p := range points {
		out[i] = ctx(p, json.Number(fmt.Sprint(i)), nil)
	}
	return out
}

func completed(recorded []any) *RunRecord {
	return &RunRecord{Outcome: OutcomeCompleted, Interceptions: recorded}
}

// ---- §5.3 interceptions ------------------------------------------------

func TestAssertStrictInterceptions(t *testing.T) {
	rec := recording("agent_startup", "input", "agent_shutdown")
	v := vec(t, `{"interceptions":[
		{"interception_point":"agent_startup","context":{"sequence":0,"agent_init.tools_registered":[]}},
		{"interception_point":"input","context":{"input.content":"hi","input.role":"user"}},
		{"interception_point":"agent_shutdown"}],
		"interceptions_absent":["output"],"run_outcome":"completed"}`)
	wantPass(t, failures(t, v, completed(rec)))

	// A wrong context value names the path, the actual and the expected value.
	bad := recording("agent_startup", "input", "agent_shutdown")
	bad[1].(map[string]any)["input"] = map[string]any{"content": "bye", "role": "user"}
	wantFail(t, failures(t, v, completed(bad)), 1, "interceptions[1] input", "input.content", `"bye"`, `"hi"`)

	// A path that does not resolve.
	v2 := vec(t, `{"interceptions":[{"interception_point":"input","context":{"input.missing":1}}],"run_outcome":"completed"}`)
	wantFail(t, failures(t, v2, completed(recording("input"))), 1, "input.missing", "did not resolve")
}

func TestAssertStrictMismatchReturnsEarly(t *testing.T) {
	// The expected context is wrong and interceptions_absent is violated,
	// but a sequence mismatch reports once and skips both.
	v := vec(t, `{"interceptions":[
		{"interception_point":"input","context":{"input.content":"WRONG"}},
		{"interception_point":"output"}],
		"interceptions_absent":["input"],"run_outcome":"completed"}`)
	fs := failures(t, v, completed(recording("input", "agent_shutdown")))
	wantFail(t, fs, 1, "interception sequence mismatch", "[input output]", "[input agent_shutdown]")

	// Strict mode also rejects extra emissions and a different order.
	v2 := vec(t, `{"interceptions":[{"interception_point":"input"}],"run_outcome":"completed"}`)
	wantFail(t, failures(t, v2, completed(recording("input", "output"))), 1, "mismatch")
	v3 := vec(t, `{"interceptions":[{"interception_point":"output"},{"interception_point":"input"}],"run_outcome":"completed"}`)
	wantFail(t, failures(t, v3, completed(recording("input", "output"))), 1, "mismatch")
	// An empty recording against an empty expectation is fine.
	v4 := vec(t, `{"interceptions":[],"run_outcome":"completed"}`)
	wantPass(t, failures(t, v4, completed(nil)))
	wantFail(t, failures(t, v4, completed(recording("input"))), 1, "mismatch")
}

func TestAssertNonStrictInterceptions(t *testing.T) {
	rec := recording("agent_startup", "input", "pre_model_call", "output", "agent_shutdown")
	v := vec(t, `{"sequence_strict":false,"interceptions":[
		{"interception_point":"input"},{"interception_point":"agent_shutdown"}],"run_outcome":"completed"}`)
	wantPass(t, failures(t, v, completed(rec)))

	// Not found: one failure, and interceptions_absent (violated here) is skipped.
	v2 := vec(t, `{"sequence_strict":false,"interceptions":[
		{"interception_point":"output"},{"interception_point":"input"}],
		"interceptions_absent":["agent_startup"],"run_outcome":"completed"}`)
	wantFail(t, failures(t, v2, completed(rec)), 1, `interceptions[1]`, `"input" not found`, "position 4")
}

func TestAssertNonStrictNoBacktracking(t *testing.T) {
	rec := []any{
		ctx("pre_tool_call", json.Number("0"), map[string]any{"tool_call": map[string]any{"id": "1", "name": "a", "args": map[string]any{}}}),
		ctx("pre_tool_call", json.Number("1"), map[string]any{"tool_call": map[string]any{"id": "2", "name": "b", "args": map[string]any{}}}),
	}
	// The first pre_tool_call is paired; its context fails and the second is never tried.
	v := vec(t, `{"sequence_strict":false,"interceptions":[
		{"interception_point":"pre_tool_call","context":{"tool_call.name":"b"}}],"run_outcome":"completed"}`)
	wantFail(t, failures(t, v, completed(rec)), 1, "tool_call.name", `"a"`, `"b"`)

	// Two entries for the same point pair with the first and second occurrence.
	v2 := vec(t, `{"sequence_strict":false,"interceptions":[
		{"interception_point":"pre_tool_call","context":{"tool_call.name":"a"}},
		{"interception_point":"pre_tool_call","context":{"tool_call.name":"b"}}],"run_outcome":"completed"}`)
	wantPass(t, failures(t, v2, completed(rec)))
}

func TestAssertInterceptionsAbsent(t *testing.T) {
	v := vec(t, `{"sequence_strict":false,"interceptions":[{"interception_point":"pre_tool_call"}],
		"interceptions_absent":["post_tool_call"],"run_outcome":"completed"}`)
	wantPass(t, failures(t, v, completed(recording("pre_tool_call", "output"))))
	wantFail(t, failures(t, v, completed(recording("pre_tool_call", "post_tool_call"))), 1, `"post_tool_call"`, "must be absent")
	// Records do not count: only the recording is checked.
	rr := completed(recording("pre_tool_call"))
	rr.Records = []any{map[string]any{"interception_point": "post_tool_call"}}
	wantPass(t, failures(t, v, rr))
}

func TestAssertContextMustValidate(t *testing.T) {
	invalid := ctx("input", json.Number("0"), nil)
	delete(invalid, "session")
	v := vec(t, `{"interceptions":[{"interception_point":"input"}],"run_outcome":"completed"}`)
	fs := failures(t, v, completed([]any{invalid}))
	if len(fs) != 2 || !strings.Contains(fs[0], `lacks required member "session"`) || !strings.Contains(fs[1], "$.session.id") {
		t.Errorf("failures = %q", fs)
	}
	vOff := vec(t, `{"interceptions":[{"interception_point":"input","context_must_validate":false}],"run_outcome":"completed"}`)
	wantPass(t, failures(t, vOff, completed([]any{invalid})))

	// Only paired contexts are validated.
	unpaired := ctx("input", json.Number("0"), map[string]any{"agent": "not an object"})
	vLoose := vec(t, `{"sequence_strict":false,"interceptions":[{"interception_point":"output"}],"run_outcome":"completed"}`)
	wantPass(t, failures(t, vLoose, completed([]any{unpaired, ctx("output", json.Number("1"), nil)})))
}

func TestEnvelopeFailures(t *testing.T) {
	mutate := func(point string, f func(c map[string]any)) any {
		c := ctx(point, json.Number("3"), nil)
		f(c)
		return c
	}
	cases := []struct {
		name string
		ctx  any
		want string // "" = valid
	}{
		{"valid startup", ctx("agent_startup", json.Number("0"), nil), ""},
		{"valid post_tool_call", ctx("post_tool_call", json.Number("7"), nil), ""},
		{"null target", mutate("output", func(c map[string]any) { c["target"] = nil }), ""},
		{"messages any value", mutate("pre_model_call", func(c map[string]any) { c["messages"] = "x" }), ""},
		{"not an object", []any{}, "not an object"},
		{"spec", mutate("input", func(c map[string]any) { c["spec"] = "agent-hooks/0.x" }), "$.spec"},
		{"spec prefix", mutate("input", func(c map[string]any) { c["spec"] = "hooks/0.1" }), "$.spec"},
		{"unknown point", mutate("input", func(c map[string]any) { c["interception_point"] = "pre_input" }), "$.interception_point"},
		{"timestamp type", mutate("input", func(c map[string]any) { c["timestamp"] = json.Number("1") }), "$.timestamp"},
		{"float sequence", mutate("input", func(c map[string]any) { c["sequence"] = json.Number("0.0") }), "$.sequence"},
		{"negative sequence", mutate("input", func(c map[string]any) { c["sequence"] = json.Number("-1") }), "$.sequence"},
		{"empty agent id", mutate("input", func(c map[string]any) { c["agent"] = map[string]any{"id": "", "framework": "x"} }), "$.agent.id"},
		{"framework case", mutate("input", func(c map[string]any) { c["agent"] = map[string]any{"id": "a", "framework": "Fake"} }), "$.agent.framework"},
		{"session id", mutate("input", func(c map[string]any) { c["session"] = map[string]any{"id": json.Number("1")} }), "$.session.id"},
		{"missing target", mutate("input", func(c map[string]any) { delete(c, "target") }), `lacks required member "target"`},
		{"missing conditional", mutate("pre_tool_call", func(c map[string]any) { delete(c, "tool_call") }), "$.tool_call: missing"},
		{"conditional not object", mutate("output", func(c map[string]any) { c["output"] = "x" }), "$.output: not an object"},
		{"missing subfield", mutate("post_model_call", func(c map[string]any) {
			c["response"] = map[string]any{"content": nil, "finish_reason": "stop"}
		}), "$.response.tool_calls"},
		{"null subfield is present", mutate("post_model_call", func(c map[string]any) {
			c["response"] = map[string]any{"content": nil, "tool_calls": nil, "finish_reason": nil}
		}), ""},
	}
	for _, c := range cases {
		got := envelopeFailures(c.ctx)
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: unexpected failures %q", c.name, got)
		case c.want != "" && (len(got) == 0 || !strings.Contains(strings.Join(got, "|"), c.want)):
			t.Errorf("%s: failures %q lack %q", c.name, got, c.want)
		}
	}
}

func TestAssertContextSubstrings(t *testing.T) {
	c := ctx("pre_model_call", json.Number("0"), map[string]any{
		"messages": []any{
			map[string]any{"role": "tool", "content": "blocked: ctk:tainted-result <b>&"},
			map[string]any{"z": json.Number("2"), "a": json.Number("1")},
		},
	})
	v := vec(t, `{"interceptions":[{"interception_point":"pre_model_call",
		"context_must_contain":["ctk:tainted-result","<b>&","{\"a\":1,\"z\":2}"],
		"context_must_not_contain":["SECRET-RESULT"]}],"run_outcome":"completed"}`)
	wantPass(t, failures(t, v, completed([]any{c})))

	vMissing := vec(t, `{"interceptions":[{"interception_point":"pre_model_call","context_must_contain":["SECRET-RESULT"]}],"run_outcome":"completed"}`)
	wantFail(t, failures(t, vMissing, completed([]any{c})), 1, `does not contain "SECRET-RESULT"`)
	vLeak := vec(t, `{"interceptions":[{"interception_point":"pre_model_call","context_must_not_contain":["tainted"]}],"run_outcome":"completed"}`)
	wantFail(t, failures(t, vLeak, completed([]any{c})), 1, `contains "tainted"`)
}

// ---- §5.4 run outcome and postures ------------------------------------

func TestAssertRunOutcome(t *testing.T) {
	v := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"blocked"}`)
	wantPass(t, failures(t, v, &RunRecord{Outcome: OutcomeBlocked}))
	wantFail(t, failures(t, v, &RunRecord{Outcome: OutcomeCompleted}), 1, `run_outcome = "completed", want "blocked"`)
}

func TestAssertRunOutcomeByPosture(t *testing.T) {
	const posture = `"run_outcome_by_posture":{"posture":"tool_seam_host_error","outcomes":{"continue":"completed","terminate":"blocked"}}`
	v := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed",`+posture+`}`)
	terminate := Declaration{Postures: map[string]string{PostureToolSeamHostError: PostureTerminate}}

	wantPass(t, failuresWith(t, v, terminate, &RunRecord{Outcome: OutcomeBlocked}))
	wantFail(t, failuresWith(t, v, terminate, &RunRecord{Outcome: OutcomeCompleted}), 1, `want "blocked"`)

	// No declared posture means continue, whatever the harness writes into its record.
	selfDeclared := &RunRecord{Outcome: OutcomeCompleted, Postures: map[string]string{PostureToolSeamHostError: PostureTerminate}}
	wantPass(t, failures(t, v, selfDeclared))
	wantFail(t, failures(t, v, &RunRecord{Outcome: OutcomeBlocked}), 1, `want "completed"`)

	// Unknown posture name: a failure, then fall back to run_outcome.
	vUnknown := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed",
		"run_outcome_by_posture":{"posture":"weather","outcomes":{"continue":"completed","terminate":"blocked"}}}`)
	wantFail(t, failures(t, vUnknown, &RunRecord{Outcome: OutcomeCompleted}), 1, `unknown posture "weather"`)

	// Integrity: outcomes.continue must equal run_outcome; checking goes on
	// with the selected outcome.
	vBroken := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed",
		"run_outcome_by_posture":{"posture":"tool_seam_host_error","outcomes":{"continue":"blocked","terminate":"blocked"}}}`)
	wantFail(t, failures(t, vBroken, &RunRecord{Outcome: OutcomeBlocked}), 1, "vector error", "outcomes.continue")
	fs := failures(t, vBroken, &RunRecord{Outcome: OutcomeCompleted})
	if len(fs) != 2 || !strings.Contains(fs[1], `want "blocked"`) {
		t.Errorf("integrity + outcome failures = %q", fs)
	}

	// A declared value without an entry: a failure, then fall back.
	halt := Declaration{Postures: map[string]string{PostureToolSeamHostError: "halt"}}
	wantFail(t, failuresWith(t, v, halt, &RunRecord{Outcome: OutcomeCompleted}), 1, `"halt"`, "no entry")
	fs = failuresWith(t, v, halt, &RunRecord{Outcome: OutcomeBlocked})
	if len(fs) != 2 || !strings.Contains(fs[1], `want "completed"`) {
		t.Errorf("halt with blocked: failures = %q", fs)
	}
}

// ---- §5.5 other run-level members --------------------------------------

func TestAssertFinalOutput(t *testing.T) {
	vText := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","final_output":"done"}`)
	wantPass(t, failures(t, vText, &RunRecord{Outcome: OutcomeCompleted, FinalOutput: "done"}))
	wantFail(t, failures(t, vText, &RunRecord{Outcome: OutcomeCompleted, FinalOutput: "Done"}), 1, `final_output = "Done", want "done"`)

	// An explicit null requires a null final output.
	vNull := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"blocked","final_output":null}`)
	wantPass(t, failures(t, vNull, &RunRecord{Outcome: OutcomeBlocked}))
	wantFail(t, failures(t, vNull, &RunRecord{Outcome: OutcomeBlocked, FinalOutput: "model text"}), 1, "want null")

	// Absent: not checked.
	vAbsent := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed"}`)
	wantPass(t, failures(t, vAbsent, &RunRecord{Outcome: OutcomeCompleted, FinalOutput: "anything"}))

	// Number kinds: 1 is not 1.0; Go numbers are judged by their JSON encoding.
	vOne := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","final_output":1}`)
	for _, actual := range []any{json.Number("1"), float64(1), 1, uint8(1)} {
		wantPass(t, failures(t, vOne, &RunRecord{Outcome: OutcomeCompleted, FinalOutput: actual}))
	}
	for _, actual := range []any{json.Number("1.0"), json.Number("1e0"), "1", 1.5, true} {
		wantFail(t, failures(t, vOne, &RunRecord{Outcome: OutcomeCompleted, FinalOutput: actual}), 1, "final_output")
	}
	vOnePointZero := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","final_output":1.0}`)
	wantPass(t, failures(t, vOnePointZero, &RunRecord{Outcome: OutcomeCompleted, FinalOutput: json.Number("1.00")}))
	wantFail(t, failures(t, vOnePointZero, &RunRecord{Outcome: OutcomeCompleted, FinalOutput: float64(1)}), 1, "final_output = 1, want 1.0")
}

func TestAssertToolInvocations(t *testing.T) {
	v := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed",
		"tool_invocations":[{"name":"calc","args":{"expr":"2+2","n":1}}]}`)
	ok := func(inv ...ToolInvocation) *RunRecord {
		return &RunRecord{Outcome: OutcomeCompleted, ToolInvocations: inv}
	}
	wantPass(t, failures(t, v, ok(ToolInvocation{"calc", map[string]any{"expr": "2+2", "n": json.Number("1")}})))
	wantPass(t, failures(t, v, ok(ToolInvocation{"calc", map[string]any{"expr": "2+2", "n": float64(1)}})))
	wantPass(t, failures(t, v, ok(ToolInvocation{"calc", struct {
		Expr string `json:"expr"`
		N    int    `json:"n"`
	}{"2+2", 1}})))
	wantFail(t, failures(t, v, ok()), 1, "tool_invocations = [], want")
	wantFail(t, failures(t, v, ok(ToolInvocation{"calc", map[string]any{"expr": "2+2"}})), 1, "tool_invocations")
	wantFail(t, failures(t, v, ok(ToolInvocation{"calc", map[string]any{"expr": "2+2", "n": json.Number("1"), "x": nil}})), 1, "tool_invocations")
	wantFail(t, failures(t, v, ok(
		ToolInvocation{"calc", map[string]any{"expr": "2+2", "n": json.Number("1")}},
		ToolInvocation{"calc", map[string]any{"expr": "2+2", "n": json.Number("1")}})), 1, "tool_invocations")
	wantFail(t, failures(t, v, ok(ToolInvocation{"calc", nil})), 1, `"args":null`)

	vNone := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","tool_invocations":[]}`)
	wantPass(t, failures(t, vNone, ok()))
	wantFail(t, failures(t, vNone, ok(ToolInvocation{"calc", map[string]any{}})), 1, "want []")

	// Order matters.
	v2 := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed",
		"tool_invocations":[{"name":"a","args":{}},{"name":"b","args":{}}]}`)
	wantPass(t, failures(t, v2, ok(ToolInvocation{"a", map[string]any{}}, ToolInvocation{"b", map[string]any{}})))
	wantFail(t, failures(t, v2, ok(ToolInvocation{"b", map[string]any{}}, ToolInvocation{"a", map[string]any{}})), 1, "tool_invocations")
}

func TestAssertToolNotInvoked(t *testing.T) {
	v := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","tool_not_invoked":["http_get"]}`)
	wantPass(t, failures(t, v, &RunRecord{Outcome: OutcomeCompleted, ToolInvocations: []ToolInvocation{{"other", map[string]any{}}}}))
	wantFail(t, failures(t, v, &RunRecord{Outcome: OutcomeCompleted, ToolInvocations: []ToolInvocation{{"http_get", map[string]any{}}}}),
		1, `"http_get" was invoked 1 time(s)`)
}

// ---- §5.6 records -------------------------------------------------------

func records() []any {
	return []any{
		map[string]any{"interception_point": "input", "verdict": map[string]any{"decision": "allow"}},
		map[string]any{
			"interception_point": "pre_tool_call",
			"verdict":            map[string]any{"decision": "deny", "reason": "ctk:blocked", "transform": map[string]any{"path": "$target.url"}},
			"decided_by":         nil,
			"identity_provider":  nil,
			"timestamp":          "t",
			"verdicts":           []any{map[string]any{"index": json.Number("0"), "decision": "deny"}},
		},
		map[string]any{"interception_point": "pre_tool_call", "verdict": map[string]any{"decision": "allow"}, "decided_by": json.Number("1")},
		map[string]any{"interception_point": "agent_shutdown", "verdict": map[string]any{"decision": "allow"}},
	}
}

func TestAssertRecords(t *testing.T) {
	rr := func() *RunRecord { return &RunRecord{Outcome: OutcomeCompleted, Records: records()} }
	v := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","records":[
		{"interception_point":"pre_tool_call","assert":{"verdict.decision":"deny","decided_by":null,"identity_provider":null,"verdicts[0].index":0},
		 "absent":["trace","verdict.transform.value"],"present":["timestamp","decided_by"]},
		{"interception_point":"pre_tool_call","assert":{"verdict.decision":"allow","decided_by":1}},
		{"interception_point":"agent_shutdown"}]}`)
	wantPass(t, failures(t, v, rr()))

	wrong := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","records":[
		{"interception_point":"pre_tool_call","assert":{"verdict.reason":"ctk:other"}}]}`)
	wantFail(t, failures(t, wrong, rr()), 1, "records[0] (record #1, pre_tool_call)", "verdict.reason", `"ctk:blocked"`, `"ctk:other"`)

	// decided_by: null requires the key present with null.
	nullVsAbsent := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","records":[
		{"interception_point":"input","assert":{"decided_by":null}}]}`)
	wantFail(t, failures(t, nullVsAbsent, rr()), 1, "decided_by did not resolve")
	zero := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","records":[
		{"interception_point":"pre_tool_call","assert":{"decided_by":0}}]}`)
	wantFail(t, failures(t, zero, rr()), 1, "decided_by = null, want 0")

	// absent fails on a key present as null; present succeeds on null.
	absentNull := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","records":[
		{"interception_point":"pre_tool_call","absent":["decided_by","verdict.transform.path"]}]}`)
	fs := failures(t, absentNull, rr())
	if len(fs) != 2 || !strings.Contains(fs[0], "decided_by is present (null)") || !strings.Contains(fs[1], `verdict.transform.path is present ("$target.url")`) {
		t.Errorf("absent failures = %q", fs)
	}
	present := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","records":[
		{"interception_point":"input","present":["verdict.decision","timestamp"]}]}`)
	wantFail(t, failures(t, present, rr()), 1, "timestamp is absent, want present")
}

func TestAssertRecordsCursor(t *testing.T) {
	rr := func() *RunRecord { return &RunRecord{Outcome: OutcomeCompleted, Records: records()} }
	// No backtracking: after agent_shutdown (the last record) nothing is left,
	// so the pre_tool_call entry is not found and the rest are skipped.
	v := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","records":[
		{"interception_point":"agent_shutdown"},
		{"interception_point":"pre_tool_call"},
		{"interception_point":"input","assert":{"verdict.decision":"WRONG"}}]}`)
	wantFail(t, failures(t, v, rr()), 1, `records[1]: no "pre_tool_call" record found in order`)

	// A third pre_tool_call entry has no third record.
	v3 := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","records":[
		{"interception_point":"pre_tool_call"},{"interception_point":"pre_tool_call"},{"interception_point":"pre_tool_call"}]}`)
	wantFail(t, failures(t, v3, rr()), 1, "records[2]")

	// Expected records with none reported: one failure.
	wantFail(t, failures(t, v, &RunRecord{Outcome: OutcomeCompleted}), 1, "reported no records")
	// Like the oracle, even "records": [] demands a non-empty record list.
	vEmpty := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","records":[]}`)
	wantFail(t, failures(t, vEmpty, &RunRecord{Outcome: OutcomeCompleted}), 1, "reported no records")
	wantPass(t, failures(t, vEmpty, rr()))

	// Typed records are judged by their JSON encoding.
	type rec struct {
		Point     string `json:"interception_point"`
		DecidedBy *int   `json:"decided_by"`
	}
	typed := &RunRecord{Outcome: OutcomeCompleted, Records: []any{rec{Point: "output"}}}
	vTyped := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","records":[
		{"interception_point":"output","assert":{"decided_by":null}}]}`)
	wantPass(t, failures(t, vTyped, typed))
}

// ---- §5.3 sequence check -------------------------------------------------

func TestAssertSequence(t *testing.T) {
	loose := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed"}`)
	withSeqs := func(seqs ...any) *RunRecord {
		rec := make([]any, len(seqs))
		for i, s := range seqs {
			rec[i] = ctx("input", s, nil)
			if s == nil {
				delete(rec[i].(map[string]any), "sequence")
			}
		}
		return completed(rec)
	}
	n := func(s string) json.Number { return json.Number(s) }
	wantPass(t, failures(t, loose, withSeqs(n("0"), n("2"), n("5"))))           // gaps are allowed
	wantPass(t, failures(t, loose, withSeqs(float64(0), float64(1), int64(3)))) // Go integers encode as integers
	wantPass(t, failures(t, loose, completed(nil)))
	wantFail(t, failures(t, loose, withSeqs(n("0"), n("2"), n("1"))), 1, "not strictly increasing", "[0 2 1]")
	wantFail(t, failures(t, loose, withSeqs(n("0"), n("1"), n("1"))), 1, "not strictly increasing")
	wantFail(t, failures(t, loose, withSeqs(n("0"), n("1.0"))), 1, "1 of 2 recorded contexts lack an integer sequence", "[0 1.0]")
	wantFail(t, failures(t, loose, withSeqs(n("0"), float64(1.5))), 1, "lack an integer sequence")
	wantFail(t, failures(t, loose, withSeqs(n("0"), "1")), 1, "lack an integer sequence")
	wantFail(t, failures(t, loose, withSeqs(n("0"), nil)), 1, "<missing>")
	wantFail(t, failures(t, loose, withSeqs(n("18446744073709551615"))), 1, "lack an integer sequence")

	// The check runs even when a strict mismatch ended the interception checks.
	strict := vec(t, `{"interceptions":[{"interception_point":"output"}],"run_outcome":"completed"}`)
	fs := failures(t, strict, withSeqs(n("1"), n("0")))
	if len(fs) != 2 || !strings.Contains(fs[0], "mismatch") || !strings.Contains(fs[1], "sequence") {
		t.Errorf("failures = %q", fs)
	}
}

// ---- §5.5 identities_equal ----------------------------------------------

func TestAssertIdentitiesEqual(t *testing.T) {
	s := func(v string) *string { return &v }
	withPairs := func(p ...IdentityPair) *RunRecord {
		return &RunRecord{Outcome: OutcomeCompleted, Identities: p}
	}
	vTrue := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","identities_equal":true}`)
	vFalse := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","identities_equal":false}`)
	vNone := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed"}`)

	wantPass(t, failures(t, vTrue, withPairs(IdentityPair{s("a"), s("a")}, IdentityPair{nil, nil})))
	wantFail(t, failures(t, vTrue, withPairs(IdentityPair{s("a"), s("a")}, IdentityPair{s("a"), s("b")})), 1, `#1 input="a" enforced="b"`)
	wantFail(t, failures(t, vTrue, withPairs(IdentityPair{nil, s("a")})), 1, "#0 input=null")
	wantPass(t, failures(t, vFalse, withPairs(IdentityPair{s("a"), s("a")}, IdentityPair{s("a"), nil})))
	wantFail(t, failures(t, vFalse, withPairs(IdentityPair{s("a"), s("a")}, IdentityPair{nil, nil})), 1, "all 2 pairs are equal")
	wantFail(t, failures(t, vTrue, withPairs()), 1, "no identity pairs")
	wantFail(t, failures(t, vFalse, withPairs()), 1, "no identity pairs")
	wantPass(t, failures(t, vNone, withPairs(IdentityPair{s("a"), s("b")})))
}

// ---- incremental_output members -----------------------------------------

func TestAssertIncrementalMembers(t *testing.T) {
	v := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"blocked","final_output":null,
		"released_output":"public part, ","persisted_must_not_contain":["secret tail"]}`)
	incremental := Declaration{Capabilities: []string{CapabilityIncrementalOutput}}
	good := &RunRecord{Outcome: OutcomeBlocked, ReleasedOutput: "public part, ", Persisted: `["public part, "]`}
	wantPass(t, failuresWith(t, v, incremental, good))
	wantPass(t, failuresWith(t, v, incremental, &RunRecord{Outcome: OutcomeBlocked, ReleasedOutput: "public part, "})) // empty persisted
	wantFail(t, failuresWith(t, v, incremental, &RunRecord{Outcome: OutcomeBlocked, ReleasedOutput: "public part, secret tail"}),
		1, `released_output = "public part, secret tail", want "public part, "`)
	wantFail(t, failuresWith(t, v, incremental, &RunRecord{Outcome: OutcomeBlocked, ReleasedOutput: "public part, ", Persisted: "x secret tail"}),
		1, `persisted contains "secret tail"`)
	// A host without incremental_output is not asked for these members.
	wantPass(t, failures(t, v, &RunRecord{Outcome: OutcomeBlocked, Persisted: "secret tail"}))
}

// ---- §5 order ---------------------------------------------------------------

func TestAssertFailureOrder(t *testing.T) {
	s := func(v string) *string { return &v }
	v := vec(t, `{"interceptions":[{"interception_point":"output"}],"run_outcome":"completed",
		"final_output":"x","records":[{"interception_point":"output"}],"identities_equal":true}`)
	rr := &RunRecord{
		Outcome:       OutcomeBlocked,
		Interceptions: []any{ctx("input", json.Number("1"), nil), ctx("input", json.Number("0"), nil)},
		Identities:    []IdentityPair{{s("a"), s("b")}},
	}
	fs := failures(t, v, rr)
	want := []string{"interception sequence mismatch", "run_outcome", "final_output", "reported no records", "sequence not strictly", "identities_equal"}
	if len(fs) != len(want) {
		t.Fatalf("failures = %q", fs)
	}
	for i, w := range want {
		if !strings.Contains(fs[i], w) {
			t.Errorf("failure %d = %q, want it to mention %q", i, fs[i], w)
		}
	}
}

func TestAssertUnencodableValues(t *testing.T) {
	v := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","final_output":null}`)
	fs := failures(t, v, &RunRecord{Outcome: OutcomeCompleted, FinalOutput: func() {}})
	wantFail(t, fs, 1, "final_output is not JSON-encodable")
}

// ---- §5.2 equality ----------------------------------------------------------

func TestJSONEqual(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	cases := []struct {
		a, b any
		want bool
	}{
		{n("1"), n("1"), true},
		{n("1"), n("1.0"), false},
		{n("1.0"), n("1.00"), true},
		{n("100"), n("1e2"), false},
		{n("1e2"), n("100.0"), true},
		{n("-0"), n("0"), false},
		{n("-0"), n("0.0"), true},
		{n("-0"), n("-0.0"), true},
		{n("-1"), n("-1"), true},
		{n("-1"), n("-1.0"), false},
		{n("18446744073709551615"), n("18446744073709551615"), true},    // u64 max is an integer
		{n("18446744073709551615"), n("18446744073709551615.0"), false}, // ... so not a float
		{n("18446744073709551616"), n("18446744073709551616.0"), true},  // beyond u64: a double
		{n("18446744073709551616"), n("18446744073709551617"), true},    // both round to 2^64
		{n("-9223372036854775808"), n("-9223372036854775808"), true},
		{n("-9223372036854775809"), n("-9223372036854775809.0"), true}, // beyond i64: a double
		{n("9007199254740993"), n("9007199254740992"), false},          // integers compare exactly
		{float64(200), n("200"), true},
		{float64(200), n("200.0"), false},
		{200, n("200"), true},
		{-3, n("-3"), true},
		{1.5, n("1.5"), true},
		{n("abc"), n("abc"), false},
		{n("01"), n("1"), false},
		{nil, nil, true},
		{nil, "null", false},
		{"a", "a", true},
		{true, true, true},
		{true, n("1"), false},
		{map[string]any{"a": n("1"), "b": []any{"x"}}, map[string]any{"b": []any{"x"}, "a": n("1")}, true},
		{map[string]any{"a": n("1")}, map[string]any{"a": n("1"), "b": nil}, false},
		{map[string]any{"a": nil}, map[string]any{}, false},
		{[]any{n("1"), n("2")}, []any{n("2"), n("1")}, false},
		{[]any{}, []any{}, true},
		{[]any{}, nil, false},
		{map[string]any(nil), nil, true},
		{[]string{"a"}, []any{"a"}, true},
		{[]string(nil), []any{}, false},
		{map[string]int{"x": 1}, map[string]any{"x": n("1")}, true},
	}
	for _, c := range cases {
		if got := JSONEqual(c.a, c.b); got != c.want {
			t.Errorf("JSONEqual(%#v, %#v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := JSONEqual(c.b, c.a); got != c.want {
			t.Errorf("JSONEqual(%#v, %#v) = %v, want %v (reversed)", c.b, c.a, got, c.want)
		}
	}
}
