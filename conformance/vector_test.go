package conformance

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func embedded(t *testing.T) map[string]*Vector {
	t.Helper()
	vs, err := EmbeddedVectors()
	if err != nil {
		t.Fatalf("EmbeddedVectors: %v", err)
	}
	byID := make(map[string]*Vector, len(vs))
	for _, v := range vs {
		if _, dup := byID[v.ID]; dup {
			t.Fatalf("duplicate id %s", v.ID)
		}
		byID[v.ID] = v
	}
	return byID
}

func TestEmbeddedVectorsDecode(t *testing.T) {
	vs, err := EmbeddedVectors()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 51 {
		t.Fatalf("got %d vectors, want 51", len(vs))
	}
	files := make([]string, len(vs))
	for i, v := range vs {
		files[i] = v.File
		if !strings.HasPrefix(v.File, v.ID) {
			t.Errorf("%s: id %s does not prefix its file name", v.File, v.ID)
		}
		if v.Title == "" || v.SpecClause == "" {
			t.Errorf("%s: empty title or spec_clause", v.ID)
		}
		if v.Capabilities == nil || v.Scenario.Tools == nil || v.Scenario.ModelScript == nil {
			t.Errorf("%s: nil slice where an empty one is promised", v.ID)
		}
		if len(v.Expect.Interceptions) == 0 && v.ID != "AH-CTK-061" && v.ID != "AH-CTK-096" && v.ID != "AH-CTK-101" {
			t.Errorf("%s: no expected interceptions", v.ID)
		}
	}
	if !slices.IsSorted(files) {
		t.Errorf("vectors not sorted by file name: %v", files)
	}
	if len(embedded(t)) != 51 {
		t.Fatal("ids are not unique")
	}
}

func TestEmbeddedVectorsParts(t *testing.T) {
	want := map[string]int{
		"unspecified":                       15,
		"approval_seam":                     8,
		"composition/sequential_run_all":    5,
		"identity_provider":                 5,
		"streaming/incremental":             4,
		"composition/parallel_strictest":    3,
		"composition/sequential_first_deny": 2,
		"composition/parallel_unanimous":    2,
		"verdict/warnings":                  1,
		"fail_closed/verdict_gate":          1,
		"record/projection":                 1,
		"record/decided_by":                 1,
		"enforcement/post_action_deny":      1,
		"enforcement/evaluate_only":         1,
		"enforcement/isolation":             1,
	}
	got := map[string]int{}
	for _, v := range embedded(t) {
		got[PartLabel(v.Part)]++
	}
	if !maps.Equal(got, want) {
		t.Errorf("parts = %v, want %v", got, want)
	}
}

func idsWhere(vs map[string]*Vector, pred func(*Vector) bool) []string {
	var ids []string
	for id, v := range vs {
		if pred(v) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func TestEmbeddedVectorsCapabilities(t *testing.T) {
	vs := embedded(t)
	has := func(c string) func(*Vector) bool {
		return func(v *Vector) bool { return slices.Contains(v.Capabilities, c) }
	}
	cases := []struct {
		name string
		got  []string
		want []string
	}{
		{"incremental_output", idsWhere(vs, has("incremental_output")), []string{"AH-CTK-110", "AH-CTK-111", "AH-CTK-112", "AH-CTK-113"}},
		{"int64_json", idsWhere(vs, has("int64_json")), []string{"AH-CTK-090", "AH-CTK-095"}},
		{"bigint_json", idsWhere(vs, has("bigint_json")), []string{"AH-CTK-091"}},
		{"no capabilities", idsWhere(vs, func(v *Vector) bool { return len(v.Capabilities) == 0 }),
			[]string{"AH-CTK-011", "AH-CTK-022", "AH-CTK-061", "AH-CTK-074"}},
		{"model_calls only", idsWhere(vs, func(v *Vector) bool { return slices.Equal(v.Capabilities, []string{"model_calls"}) }),
			[]string{"AH-CTK-002", "AH-CTK-003", "AH-CTK-012"}},
		{"strict sequence", idsWhere(vs, func(v *Vector) bool { return v.Expect.SequenceStrict }),
			[]string{"AH-CTK-001", "AH-CTK-002", "AH-CTK-003", "AH-CTK-012", "AH-CTK-061", "AH-CTK-074", "AH-CTK-096", "AH-CTK-110"}},
		{"posture", idsWhere(vs, func(v *Vector) bool { return v.Expect.RunOutcomeByPosture != nil }),
			[]string{"AH-CTK-070", "AH-CTK-071", "AH-CTK-072", "AH-CTK-073", "AH-CTK-085", "AH-CTK-087", "AH-CTK-092",
				"AH-CTK-094", "AH-CTK-095", "AH-CTK-097", "AH-CTK-098", "AH-CTK-102", "AH-CTK-103"}},
		{"evaluate_only", idsWhere(vs, func(v *Vector) bool { return v.Mode == ModeEvaluateOnly }), []string{"AH-CTK-040", "AH-CTK-101"}},
		{"no part", idsWhere(vs, func(v *Vector) bool { return v.Part == "" }),
			[]string{"AH-CTK-001", "AH-CTK-002", "AH-CTK-003", "AH-CTK-010", "AH-CTK-011", "AH-CTK-012", "AH-CTK-020", "AH-CTK-021",
				"AH-CTK-022", "AH-CTK-040", "AH-CTK-060", "AH-CTK-061", "AH-CTK-070", "AH-CTK-071", "AH-CTK-074"}},
	}
	for _, c := range cases {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	for id, v := range vs {
		for _, c := range v.Capabilities {
			if !slices.Contains([]string{"model_calls", "tool_calls", "int64_json", "bigint_json", "incremental_output"}, c) {
				t.Errorf("%s: unexpected capability %q", id, c)
			}
		}
		if by := v.Expect.RunOutcomeByPosture; by != nil {
			if by.Posture != PostureToolSeamHostError || by.Outcomes["continue"] != "completed" || by.Outcomes["terminate"] != "blocked" {
				t.Errorf("%s: posture map %+v", id, by)
			}
		}
	}
}

func TestEmbeddedVectorsSemantics(t *testing.T) {
	vs := embedded(t)

	// interceptor_script: [] is one allow-all interceptor; interceptor_scripts: [] is none.
	if got := vs["AH-CTK-001"].InterceptorScripts(); len(got) != 1 || len(got[0]) != 0 || got[0] == nil {
		t.Errorf("001 interceptors = %#v, want one empty rule list", got)
	}
	for _, id := range []string{"AH-CTK-061", "AH-CTK-101"} {
		if got := vs[id].InterceptorScripts(); got == nil || len(got) != 0 {
			t.Errorf("%s interceptors = %#v, want zero", id, got)
		}
	}
	if got := vs["AH-CTK-080"].InterceptorScripts(); len(got) != 3 {
		t.Errorf("080 has %d interceptors, want 3", len(got))
	}
	r := vs["AH-CTK-070"].InterceptorScripts()[0][0]
	if r.At != "pre_tool_call" || r.Fault != FaultRaise || r.HasReturn {
		t.Errorf("070 rule = %+v", r)
	}

	// approval_script: [] registers no resolver.
	if vs["AH-CTK-032"].HasResolver() || !vs["AH-CTK-031"].HasResolver() || vs["AH-CTK-001"].HasResolver() {
		t.Error("HasResolver wrong for 031/032/001")
	}
	res := vs["AH-CTK-072"].ApprovalScript[0].Resolve
	if res.IdentityOverride == nil || !strings.HasPrefix(*res.IdentityOverride, "sha256:000") || res.Outcome != "approve" || !res.HasVerdict {
		t.Errorf("072 resolve = %+v", res)
	}
	if got := vs["AH-CTK-073"].ApprovalScript[0].Resolve.Fault; got != FaultRaise {
		t.Errorf("073 resolver fault = %q", got)
	}
	a99 := vs["AH-CTK-099"].ApprovalScript[0]
	if !a99.Resolve.EchoRecomputed || !JSONEqual(a99.Match["target.amount"], "[redacted]") {
		t.Errorf("099 approval rule = %+v", a99)
	}
	if got := vs["AH-CTK-099"].RedactForApproval; !slices.Equal(got, []string{"$target.amount"}) {
		t.Errorf("099 redact_for_approval = %v", got)
	}

	// identity_provider: absent, explicit null and a name are distinct.
	checkProvider := func(id, wantName string, wantBound bool) {
		t.Helper()
		name, bound := vs[id].IdentityProvider.Provider()
		if name != wantName || bound != wantBound {
			t.Errorf("%s provider = (%q, %v), want (%q, %v)", id, name, bound, wantName, wantBound)
		}
	}
	checkProvider("AH-CTK-001", IdentityProviderJCS, true)
	checkProvider("AH-CTK-089", "", false)
	checkProvider("AH-CTK-096", IdentityProviderFault, true)
	if p := vs["AH-CTK-089"].IdentityProvider; !p.Present || p.Name != nil {
		t.Errorf("089 provider spec = %+v", p)
	}
	if vs["AH-CTK-001"].IdentityProvider.Present {
		t.Error("001 provider must be absent")
	}

	// composition: absent means the default; explicit values are kept.
	if c := vs["AH-CTK-001"].Composition; c != DefaultComposition() || !c.Defaulted {
		t.Errorf("001 composition = %+v", c)
	}
	if c := vs["AH-CTK-080"].Composition; c.Profile != ProfileSequentialFirstDeny || c.OnApproval != OnApprovalResume || c.Defaulted {
		t.Errorf("080 composition = %+v", c)
	}
	c81 := vs["AH-CTK-081"].Composition
	if c81.Profile != ProfileSequentialRunAll || c81.OnApproval != "" {
		t.Errorf("081 composition = %+v", c81)
	}
	if c := vs["AH-CTK-085"].Composition.WithDefaults(); c.OnTransformConflict != SynthesisDeny || c.OnApproval != "" {
		t.Errorf("085 resolved composition = %+v", c)
	}
	if c := vs["AH-CTK-087"].Composition.WithDefaults(); c.OnDisagreement != SynthesisDeny {
		t.Errorf("087 resolved composition = %+v", c)
	}

	// Numbers survive as tokens, including beyond 2^53 and beyond u64.
	for id, tok := range map[string]string{"AH-CTK-090": "9007199254740993", "AH-CTK-091": "18446744073709551616"} {
		args := vs[id].Scenario.ModelScript[0].Respond.ToolCalls[0].Args
		if got, ok := args["id"].(json.Number); !ok || string(got) != tok {
			t.Errorf("%s args.id = %#v, want json.Number %s", id, args["id"], tok)
		}
	}

	// Presence flags.
	if e := vs["AH-CTK-012"].Expect; !e.HasFinalOutput || e.FinalOutput != nil {
		t.Errorf("012 final_output must be an explicit null: %+v", e)
	}
	if e := vs["AH-CTK-010"].Expect; e.HasFinalOutput {
		t.Error("010 has no final_output")
	}
	if e := vs["AH-CTK-001"].Expect; e.IdentitiesEqual == nil || !*e.IdentitiesEqual || !e.HasToolInvocations {
		t.Errorf("001 expect = %+v", e)
	}
	if e := vs["AH-CTK-112"].Expect; !e.HasReleasedOutput || !JSONEqual(e.ReleasedOutput, "clean segment, ") ||
		len(e.Records) != 2 || !slices.Equal(e.PersistedMustNotContain, []string{"partial tail"}) {
		t.Errorf("112 expect = %+v", e)
	}
	resp := vs["AH-CTK-112"].Scenario.ModelScript[0].Respond
	if !resp.StreamTruncated || len(resp.Stream) != 2 || resp.Content != "clean segment, partial tail" {
		t.Errorf("112 respond = %+v", resp)
	}
	if got := vs["AH-CTK-001"].Scenario.ToolNames(); !slices.Equal(got, []string{"calculator"}) {
		t.Errorf("001 tool names = %v", got)
	}
	if got := vs["AH-CTK-002"].Scenario.ToolNames(); got == nil || len(got) != 0 {
		t.Errorf("002 tool names = %#v, want empty non-nil", got)
	}
	if m := vs["AH-CTK-001"].Scenario.ModelScript[0].Respond; m.Content != nil || m.ToolCalls[0].ID != "tc-1" {
		t.Errorf("001 first respond = %+v", m)
	}
	if v := vs["AH-CTK-100"]; len(v.Expect.Interceptions) < 2 {
		t.Error("100 interceptions")
	} else {
		found := false
		for _, x := range v.Expect.Interceptions {
			if len(x.ContextMustContain) > 0 && len(x.ContextMustNotContain) > 0 {
				found = true
			}
		}
		if !found {
			t.Error("100: substring assertions not decoded")
		}
	}
	r93 := vs["AH-CTK-093"].Expect.Records
	if len(r93) == 0 || !slices.Contains(r93[0].Absent, "verdict.transform.value") {
		t.Errorf("093 records = %+v", r93)
	}
}

// minimal returns a valid vector source with the given extra top-level members.
func minimal(extra string) string {
	s := `{"id":"AH-CTK-900","title":"t","spec_clause":"0","capabilities":[],` +
		`"scenario":{"input":{"content":"hi","role":"user"}},` +
		`"expect":{"interceptions":[],"run_outcome":"completed"}`
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

func TestParseVectorErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"syntax", `{"id":`, "decode"},
		{"trailing", minimal(`"interceptor_script":[]`) + `{}`, "trailing data"},
		{"unknown top-level member", minimal(`"interceptor_script":[],"bogus":1`), `unknown member(s) "bogus"`},
		{"neither script", minimal(""), "one of interceptor_script or interceptor_scripts"},
		{"both scripts", minimal(`"interceptor_script":[],"interceptor_scripts":[]`), "mutually exclusive"},
		{"bad mode", minimal(`"interceptor_script":[],"mode":"evaluate-only"`), "$.mode"},
		{"bad provider", minimal(`"interceptor_script":[],"identity_provider":"hmac"`), "$.identity_provider"},
		{"bad point", minimal(`"interceptor_script":[{"at":"pre_tool","return":{"decision":"allow"}}]`), "$.interceptor_script[0].at"},
		{"rule unknown member", minimal(`"interceptor_script":[{"at":"input","retrun":{}}]`), `"retrun"`},
		{"wrong type", minimal(`"interceptor_script":[],"capabilities":"model_calls"`), "$.capabilities: want an array, got a string"},
		{"missing id", `{"title":"t"}`, `missing required member "id"`},
		{"expect unknown member", strings.Replace(minimal(`"interceptor_script":[]`), `"run_outcome"`, `"run_outcomes":"x","run_outcome"`, 1), `"run_outcomes"`},
		{"records unknown member", strings.Replace(minimal(`"interceptor_script":[]`), `"run_outcome"`,
			`"records":[{"interception_point":"input","asert":{}}],"run_outcome"`, 1), `$.expect.records[0]`},
		{"identities_equal type", strings.Replace(minimal(`"interceptor_script":[]`), `"run_outcome"`, `"identities_equal":"yes","run_outcome"`, 1), "identities_equal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseVector("AH-CTK-900-x.json", []byte(c.src))
			if err == nil {
				t.Fatal("ParseVector succeeded")
			}
			if !strings.Contains(err.Error(), "AH-CTK-900-x.json") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q lacks the file name or %q", err, c.want)
			}
		})
	}
}

func TestParseVectorCompositionFallback(t *testing.T) {
	cases := []struct {
		comp string
		want Composition
	}{
		{`{"profile":"parallel/strictest","on_transform_conflict":"approval"}`,
			Composition{Profile: ProfileParallelStrictest, OnTransformConflict: SynthesisApprove}},
		{`{"profile":"sequential/run_all","on_approval":null,"extra":1}`, Composition{Profile: ProfileSequentialRunAll}},
		{`{"profile":"parallel/everything"}`, DefaultComposition()},
		{`{"profile":"parallel/unanimous","on_disagreement":"shrug"}`, DefaultComposition()},
		{`{"on_approval":"resume"}`, DefaultComposition()},
		{`"sequential/run_all"`, DefaultComposition()},
	}
	for _, c := range cases {
		v, err := ParseVector("x.json", []byte(minimal(`"interceptor_script":[],"composition":`+c.comp)))
		if err != nil {
			t.Fatalf("%s: %v", c.comp, err)
		}
		if v.Composition != c.want {
			t.Errorf("%s: composition = %+v, want %+v", c.comp, v.Composition, c.want)
		}
	}
}

func TestLoadVectors(t *testing.T) {
	vec := func(id string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(strings.Replace(minimal(`"interceptor_script":[]`), "AH-CTK-900", id, 1))}
	}
	fsys := fstest.MapFS{
		"v/AH-CTK-002-b.json":   vec("AH-CTK-002"),
		"v/AH-CTK-001-a.json":   vec("AH-CTK-001"),
		"v/README.json":         {Data: []byte("not a vector")},
		"empty/notes.txt":       {Data: []byte("x")},
		"dup/AH-CTK-001-a.json": vec("AH-CTK-001"),
		"dup/AH-CTK-001-b.json": vec("AH-CTK-001"),
		"bad/AH-CTK-003-c.json": {Data: []byte(`{"id":"AH-CTK-003"}`)},
	}
	vs, err := LoadVectors(fsys, "v")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].ID != "AH-CTK-001" || vs[1].File != "AH-CTK-002-b.json" {
		t.Errorf("loaded %d vectors in wrong order: %v, %v", len(vs), vs[0].File, vs[len(vs)-1].File)
	}
	if _, err := LoadVectors(fsys, "empty"); err == nil || !strings.Contains(err.Error(), "no AH-CTK-*.json") {
		t.Errorf("empty dir: err = %v", err)
	}
	if _, err := LoadVectors(fsys, "dup"); err == nil || !strings.Contains(err.Error(), "already used by AH-CTK-001-a.json") {
		t.Errorf("duplicate ids: err = %v", err)
	}
	if _, err := LoadVectors(fsys, "bad"); err == nil || !strings.Contains(err.Error(), "AH-CTK-003-c.json") {
		t.Errorf("bad vector: err = %v", err)
	}
}

func TestVectorCloneIsIndependent(t *testing.T) {
	v := embedded(t)["AH-CTK-020"]
	c := v.Clone()
	if c == v {
		t.Fatal("Clone returned the same vector")
	}
	c.InterceptorScripts()[0][0].Match["tool_call.name"] = "mutated"
	c.Raw["id"] = "mutated"
	c.Expect.Interceptions[0].Context["x"] = 1
	if v.Raw["id"] != "AH-CTK-020" || len(v.Expect.Interceptions[0].Context) == len(c.Expect.Interceptions[0].Context) {
		t.Error("mutating the clone changed the original")
	}
	for _, r := range v.InterceptorScripts()[0] {
		if r.Match["tool_call.name"] == "mutated" {
			t.Error("clone shares rule match maps")
		}
	}
}

func TestRuleSemantics(t *testing.T) {
	v, err := ParseVector("x.json", []byte(minimal(`"interceptor_script":[
		{"at":"pre_tool_call","match":{"tool_call.name":"a","tool_call.args.n":1},"return":{"decision":"deny","reason":"ctk:a"}},
		{"at":"pre_tool_call","fault":"malformed_verdict"},
		{"at":"input"}]`)))
	if err != nil {
		t.Fatal(err)
	}
	rules := v.InterceptorScripts()[0]
	ctx := func(point, name string, n any) map[string]any {
		return map[string]any{"interception_point": point, "tool_call": map[string]any{"name": name, "args": map[string]any{"n": n}}}
	}
	r, ok := FirstMatch(rules, ctx("pre_tool_call", "a", json.Number("1")))
	if !ok || r.Fault != "" || !JSONEqual(r.Verdict(), map[string]any{"decision": "deny", "reason": "ctk:a"}) {
		t.Errorf("first rule should fire: %+v", r)
	}
	// 1.0 is not 1: the first rule's match fails and the fault rule fires.
	if r, ok := FirstMatch(rules, ctx("pre_tool_call", "a", json.Number("1.0"))); !ok || r.Fault != FaultMalformedVerdict {
		t.Errorf("1.0 must not match 1: got %+v", r)
	}
	if r, ok := FirstMatch(rules, ctx("input", "", nil)); !ok || !JSONEqual(r.Verdict(), map[string]any{"decision": "allow"}) {
		t.Errorf("a rule without return allows: %+v", r)
	}
	if _, ok := FirstMatch(rules, ctx("output", "a", 1)); ok {
		t.Error("no rule is at output")
	}
	if _, ok := FirstMatch(rules, map[string]any{}); ok {
		t.Error("a context without interception_point matches no rule")
	}
	// Verdict returns a copy: mutating it leaves the rule intact.
	verdict := rules[0].Verdict().(map[string]any)
	verdict["decision"] = "allow"
	if rules[0].Return.(map[string]any)["decision"] != "deny" {
		t.Error("Verdict shares the rule's return value")
	}
}

func TestApprovalRuleSemantics(t *testing.T) {
	v, err := ParseVector("x.json", []byte(minimal(`"interceptor_script":[],"approval_script":[
		{"match":{"target.amount":"[redacted]"},"resolve":{"outcome":"approve","verdict":{"decision":"allow"},"echo_recomputed":true}},
		{"resolve":{"outcome":"reject"}}]`)))
	if err != nil {
		t.Fatal(err)
	}
	r, ok := FirstApprovalMatch(v.ApprovalScript, map[string]any{"target": map[string]any{"amount": "[redacted]"}})
	if !ok || r.Resolve.Outcome != "approve" || !r.Resolve.EchoRecomputed {
		t.Errorf("first rule should match: %+v", r)
	}
	r, ok = FirstApprovalMatch(v.ApprovalScript, map[string]any{"target": map[string]any{"amount": json.Number("100")}})
	if !ok || r.Resolve.Outcome != "reject" || r.Resolve.HasVerdict {
		t.Errorf("catch-all should match: %+v", r)
	}
	if _, ok := FirstApprovalMatch(nil, map[string]any{}); ok {
		t.Error("no rules: unresolved")
	}
}

func TestToolDispatch(t *testing.T) {
	v := embedded(t)["AH-CTK-020"]
	tool, ok := v.Scenario.Tool(v.Scenario.Tools[0].Name)
	if !ok {
		t.Fatal("tool lookup")
	}
	var safe map[string]any
	for _, b := range tool.Behavior {
		if b.WhenArgs != nil {
			safe = b.WhenArgs
		}
	}
	if safe == nil {
		t.Fatal("020 has a when_args clause")
	}
	body := func(ret any) any { b, _ := Lookup(ret, "body"); return b }
	ret, isErr, ok := tool.Dispatch(CloneValue(safe))
	if !ok || isErr || !JSONEqual(body(ret), "ok") {
		t.Errorf("safe args dispatch = %v, %v, %v", ret, isErr, ok)
	}
	ret, _, ok = tool.Dispatch(map[string]any{"url": "https://evil"})
	if !ok || !JSONEqual(body(ret), "WRONG_URL") {
		t.Errorf("catch-all dispatch = %v, %v", ret, ok)
	}
	// when_args is whole-object equality, not a subset match.
	extra := CloneValue(safe).(map[string]any)
	extra["more"] = true
	if ret, _, _ := tool.Dispatch(extra); !JSONEqual(body(ret), "WRONG_URL") {
		t.Errorf("superset args must fall through to the catch-all, got %v", ret)
	}
	// The return value is a copy.
	ret, _, _ = tool.Dispatch(CloneValue(safe))
	ret.(map[string]any)["body"] = "changed"
	if ret, _, _ := tool.Dispatch(CloneValue(safe)); !JSONEqual(body(ret), "ok") {
		t.Error("Dispatch shares the behavior's return value")
	}
	strictTool := Tool{Name: "t", Behavior: []Behavior{{WhenArgs: map[string]any{"a": json.Number("1")}, Return: "one"}}}
	if _, _, ok := strictTool.Dispatch(map[string]any{"a": json.Number("2")}); ok {
		t.Error("no clause matches: ok must be false")
	}
}
