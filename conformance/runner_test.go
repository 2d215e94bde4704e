package conformance

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

func capsVector(t *testing.T, id string, caps string) *Vector {
	t.Helper()
	src := `{"id":"` + id + `","title":"t","spec_clause":"0","capabilities":` + caps + `,` +
		`"scenario":{"input":{"content":"hi","role":"user"}},"interceptor_script":[],` +
		`"expect":{"sequence_strict":false,"interceptions":[],"run_outcome":"completed"}}`
	v, err := ParseVector(id+".json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRunSkipRule(t *testing.T) {
	var made atomic.Int32
	decl := Declaration{Name: "fake", Capabilities: []string{"model_calls", "bigint_json"}}
	factory := func() Harness {
		made.Add(1)
		return &fakeHarness{decl: decl, rr: &RunRecord{Outcome: OutcomeCompleted}}
	}
	vs := []*Vector{
		capsVector(t, "AH-CTK-901", `[]`),
		capsVector(t, "AH-CTK-902", `["model_calls","bigint_json"]`),
		capsVector(t, "AH-CTK-903", `["tool_calls","model_calls","int64_json"]`),
		capsVector(t, "AH-CTK-904", `["model_calls","no_such_capability"]`),
	}
	rep := Run(context.Background(), factory, vs)
	want := []struct {
		status Status
		detail string
	}{
		{StatusPass, ""},
		{StatusPass, ""},
		{StatusSkip, "missing capabilities: [tool_calls int64_json]"},
		{StatusSkip, "missing capabilities: [no_such_capability]"},
	}
	for i, w := range want {
		got := rep.Results[i]
		if got.Status != w.status || got.Detail != w.detail || len(got.Failures) != 0 {
			t.Errorf("%s: got %s %q %q, want %s %q", got.ID, got.Status, got.Detail, got.Failures, w.status, w.detail)
		}
	}
	// One harness for the declaration, then one fresh harness per vector that runs.
	if n := made.Load(); n != 3 {
		t.Errorf("factory called %d times, want 3", n)
	}
	if got := MissingCapabilities(vs[2], decl); !slices.Equal(got, []string{"tool_calls", "int64_json"}) {
		t.Errorf("MissingCapabilities = %v", got)
	}
}

func TestRunEmbeddedSkipsWithoutCapabilities(t *testing.T) {
	vs, err := EmbeddedVectors()
	if err != nil {
		t.Fatal(err)
	}
	// A host declaring nothing runs only the four capability-free vectors.
	var ran []string
	factory := func() Harness {
		return &fakeHarness{decl: Declaration{Name: "bare"}, rr: &RunRecord{Outcome: OutcomeBlocked}, onSetup: func(v *Vector) { ran = append(ran, v.ID) }}
	}
	rep := Run(context.Background(), factory, vs)
	if !slices.Equal(ran, []string{"AH-CTK-011", "AH-CTK-022", "AH-CTK-061", "AH-CTK-074"}) {
		t.Errorf("ran %v", ran)
	}
	if rep.Totals.Skipped != 47 || rep.Totals.Vectors != 51 {
		t.Errorf("totals = %+v", rep.Totals)
	}
	// A buffering host with the full non-incremental surface skips exactly 110–113.
	full := Declaration{Name: "buffered", Capabilities: []string{"model_calls", "tool_calls", "int64_json", "bigint_json"}}
	rep = Run(context.Background(), func() Harness { return &fakeHarness{decl: full, rr: &RunRecord{}} }, vs)
	var skipped []string
	for _, r := range rep.Results {
		if r.Status == StatusSkip {
			skipped = append(skipped, r.ID)
			if r.Detail != "missing capabilities: [incremental_output]" {
				t.Errorf("%s detail = %q", r.ID, r.Detail)
			}
		}
	}
	if !slices.Equal(skipped, []string{"AH-CTK-110", "AH-CTK-111", "AH-CTK-112", "AH-CTK-113"}) {
		t.Errorf("skipped %v", skipped)
	}
	// The empty RunRecord fails every applicable vector.
	if rep.Totals.Failed != 47 || rep.Failed() != 47 {
		t.Errorf("totals = %+v", rep.Totals)
	}
}

func TestRunHarnessErrors(t *testing.T) {
	v := capsVector(t, "AH-CTK-901", `[]`)
	ok := &RunRecord{Outcome: OutcomeCompleted}
	cases := []struct {
		name       string
		h          *fakeHarness
		wantFail   string // "" = pass
		wantEvents string
	}{
		{"pass", &fakeHarness{rr: ok}, "", "setup:AH-CTK-901,run,teardown"},
		{"setup error", &fakeHarness{rr: ok, setupErr: errors.New("no profile")}, "harness.Setup: no profile", "setup:AH-CTK-901,teardown"},
		{"run error", &fakeHarness{rr: ok, runErr: errors.New("tool missing")}, "harness.Run: tool missing", "setup:AH-CTK-901,run,teardown"},
		{"nil record", &fakeHarness{}, "harness.Run: returned no RunRecord", "setup:AH-CTK-901,run,teardown"},
		{"setup panic", &fakeHarness{rr: ok, panicIn: "setup"}, "harness.Setup panicked: setup exploded", "setup:AH-CTK-901,teardown"},
		{"run panic", &fakeHarness{rr: ok, panicIn: "run"}, "harness.Run panicked: run exploded", "setup:AH-CTK-901,run,teardown"},
		{"teardown panic", &fakeHarness{rr: ok, panicIn: "teardown"}, "harness.Teardown panicked: teardown exploded", "setup:AH-CTK-901,run,teardown"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Assertion would fail too (wrong outcome), proving no assertions run after a harness error.
			if c.wantFail != "" && c.h.rr != nil {
				c.h.rr = &RunRecord{Outcome: OutcomeBlocked}
			}
			log := &eventLog{}
			first := true
			factory := func() Harness {
				if first { // the declaration probe is never set up
					first = false
					return &fakeHarness{}
				}
				c.h.events = log
				return c.h
			}
			res := Run(context.Background(), factory, []*Vector{v}).Results[0]
			if c.wantFail == "" {
				if res.Status != StatusPass {
					t.Errorf("status %s, failures %q", res.Status, res.Failures)
				}
			} else if res.Status != StatusFail || len(res.Failures) != 1 || res.Failures[0] != c.wantFail {
				t.Errorf("got %s %q, want one failure %q", res.Status, res.Failures, c.wantFail)
			}
			if got := log.String(); got != c.wantEvents {
				t.Errorf("lifecycle = %s, want %s", got, c.wantEvents)
			}
		})
	}
}

func TestRunGivesHarnessAPrivateVector(t *testing.T) {
	v := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed","final_output":"done"}`)
	factory := func() Harness {
		return &fakeHarness{
			rr: &RunRecord{Outcome: OutcomeCompleted, FinalOutput: "done"},
			onSetup: func(hv *Vector) {
				if hv == v {
					t.Error("harness got the runner's vector")
				}
				hv.Expect.FinalOutput = "tampered"
				hv.Expect.RunOutcome = OutcomeBlocked
			},
		}
	}
	if res := Run(context.Background(), factory, []*Vector{v}).Results[0]; res.Status != StatusPass {
		t.Errorf("a harness mutating its vector changed the assertions: %q", res.Failures)
	}
}

func TestRunFillsPosturesFromDeclaration(t *testing.T) {
	v := vec(t, `{"sequence_strict":false,"interceptions":[],"run_outcome":"completed",
		"run_outcome_by_posture":{"posture":"tool_seam_host_error","outcomes":{"continue":"completed","terminate":"blocked"}}}`)
	// The harness claims terminate in its record; only the declaration counts.
	rr := &RunRecord{Outcome: OutcomeCompleted, Postures: map[string]string{PostureToolSeamHostError: PostureTerminate}}
	decl := Declaration{Postures: map[string]string{"other": "x"}}
	rep := Run(context.Background(), func() Harness { return &fakeHarness{decl: decl, rr: rr} }, []*Vector{v})
	if rep.Results[0].Status != StatusPass {
		t.Errorf("failures: %q", rep.Results[0].Failures)
	}
	if got := declaredPostures(decl); got[PostureToolSeamHostError] != PostureContinue || got["other"] != "x" {
		t.Errorf("postures = %v", got)
	}
	if rr.Postures[PostureToolSeamHostError] != PostureTerminate || len(decl.Postures) != 1 {
		t.Error("the runner modified the harness's record or declaration")
	}
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	vs := []*Vector{capsVector(t, "AH-CTK-901", `[]`), capsVector(t, "AH-CTK-902", `["tool_calls"]`)}
	rep := Run(ctx, func() Harness { return &fakeHarness{rr: &RunRecord{Outcome: OutcomeCompleted}} }, vs)
	if r := rep.Results[0]; r.Status != StatusFail || !strings.Contains(r.Failures[0], "not run: context canceled") {
		t.Errorf("canceled run: %+v", r)
	}
	if r := rep.Results[1]; r.Status != StatusSkip {
		t.Errorf("a skip stays a skip: %+v", r)
	}
}
