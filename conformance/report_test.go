package conformance

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func sampleReport() Report {
	decl := Declaration{
		Name:             "sdk-local",
		Capabilities:     []string{"model_calls", "tool_calls"},
		Postures:         map[string]string{PostureToolSeamHostError: PostureTerminate},
		BufferedOutput:   true,
		Profiles:         []string{ProfileSequentialFirstDeny, ProfileSequentialRunAll},
		IdentityProvider: IdentityProviderJCS,
	}
	return NewReport(decl, []Result{
		{ID: "AH-CTK-001", Title: "basic loop", Status: StatusPass},
		{ID: "AH-CTK-030", Title: "approve", Part: "approval_seam", Status: StatusPass},
		{ID: "AH-CTK-031", Title: "reject | pipe", Part: "approval_seam", Status: StatusFail,
			Failures: []string{`run_outcome = "blocked", want "completed"`, "records[0]: `decided_by` <missing> & more"}},
		{ID: "AH-CTK-002", Title: "no tools", Status: StatusFail, Failures: []string{"interception sequence mismatch"}},
		{ID: "AH-CTK-110", Title: "stream", Part: "streaming/incremental", Status: StatusSkip, Detail: "missing capabilities: [incremental_output]"},
	})
}

func TestNewReport(t *testing.T) {
	r := sampleReport()
	want := []PartSummary{
		{Part: "approval_seam", Passed: 1, Failed: 1},
		{Part: "streaming/incremental", Skipped: 1},
		{Part: UnspecifiedPart, Passed: 1, Failed: 1},
	}
	if !reflect.DeepEqual(r.Parts, want) {
		t.Errorf("parts = %+v, want %+v", r.Parts, want)
	}
	if r.Totals != (Totals{Vectors: 5, Passed: 2, Failed: 2, Skipped: 1}) {
		t.Errorf("totals = %+v", r.Totals)
	}
	if r.Failed() != 2 {
		t.Errorf("Failed() = %d", r.Failed())
	}
	for _, res := range r.Results {
		if res.Failures == nil {
			t.Errorf("%s: nil failures", res.ID)
		}
	}
	if r.Results[0].Part != "" {
		t.Error("results keep the raw part tag")
	}
	empty := NewReport(Declaration{}, nil)
	if empty.Failed() != 0 || empty.Totals.Vectors != 0 || empty.Parts == nil || !strings.Contains(empty.Markdown(), "No vector was applicable") {
		t.Errorf("empty report = %+v", empty)
	}
}

func TestReportMarkdown(t *testing.T) {
	md := sampleReport().Markdown()
	for _, want := range []string{
		"# AGENT-HOOKS-0.1 conformance report — sdk-local",
		"- **Capabilities (§3.2):** `model_calls`, `tool_calls`",
		"`tool_seam_host_error: terminate` (non-default posture; must be disclosed in the claim)",
		"- **Identity provider (§10.1):** `jcs-sha256`",
		"- **Composition profiles (§7.2):** `sequential/first_deny`, `sequential/run_all`",
		"| Part | Passed | Failed | Skipped |\n| --- | --- | --- | --- |\n" +
			"| approval_seam | 1 | 1 | 0 |\n| streaming/incremental | 0 | 0 | 1 |\n| unspecified | 1 | 1 | 0 |\n",
		"Total: **2 passed, 2 failed, 1 skipped** of 5.",
		"Not conformant: 2 applicable vector(s) fail.",
		"| `AH-CTK-110` | streaming/incremental | missing capabilities: [incremental_output] |",
		"### `AH-CTK-031` — reject | pipe\n\nPart: approval_seam",
		"- run_outcome = \"blocked\", want \"completed\"\n- records[0]: `decided_by` <missing> & more\n",
		"### `AH-CTK-002` — no tools\n\nPart: unspecified",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q\n---\n%s", want, md)
		}
	}
	if strings.Contains(md, "AH-CTK-030`") {
		t.Error("passing vectors are not listed individually")
	}

	pass := NewReport(Declaration{Name: "h", BufferedOutput: false}, []Result{{ID: "AH-CTK-001", Status: StatusPass}})
	md = pass.Markdown()
	for _, want := range []string{
		"Conformant for the declared surface",
		"`tool_seam_host_error: continue` (spec default)",
		"cannot retract content already streamed",
		"- **Capabilities (§3.2):** none (lifecycle baseline only)",
		"## Skips\n\nNone.",
		"## Failures\n\nNone.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q\n---\n%s", want, md)
		}
	}
}

func TestReportJSONRoundTrip(t *testing.T) {
	r := sampleReport()
	b, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<missing> & more") {
		t.Error("JSON must not HTML-escape failure strings")
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", back, r)
	}
	var raw struct {
		Results []map[string]any `json:"results"`
		Totals  map[string]int   `json:"totals"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	first := raw.Results[0]
	for _, k := range []string{"id", "part", "status", "failures"} {
		if _, ok := first[k]; !ok {
			t.Errorf("result lacks %q: %v", k, first)
		}
	}
	if raw.Totals["failed"] != 2 || raw.Totals["vectors"] != 5 {
		t.Errorf("totals = %v", raw.Totals)
	}
}
