package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/conformance"
)

// replayHarness returns a fixed RunRecord.
type replayHarness struct {
	decl conformance.Declaration
	rr   conformance.RunRecord
}

func (h *replayHarness) Declaration() conformance.Declaration { return h.decl }
func (h *replayHarness) Setup(*conformance.Vector) error      { return nil }
func (h *replayHarness) Run(context.Context) (*conformance.RunRecord, error) {
	rr := h.rr
	return &rr, nil
}
func (h *replayHarness) Teardown() {}

func registry(outcome string) map[string]conformance.HarnessFactory {
	return map[string]conformance.HarnessFactory{
		"fake": func() conformance.Harness {
			return &replayHarness{
				decl: conformance.Declaration{Name: "fake", Capabilities: []string{"model_calls"}},
				rr:   conformance.RunRecord{Outcome: outcome},
			}
		},
	}
}

// vectorDir writes one vector expecting a completed run with no interceptions.
func vectorDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := `{"id":"AH-CTK-900","title":"fake","spec_clause":"0","capabilities":["model_calls"],` +
		`"scenario":{"input":{"content":"hi","role":"user"}},"interceptor_script":[],` +
		`"expect":{"sequence_strict":false,"interceptions":[],"run_outcome":"completed"}}`
	if err := os.WriteFile(filepath.Join(dir, "AH-CTK-900-fake.json"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// surfaceRegistry has a harness "multi" with two surfaces: chat
// completions passes the fake vector, responses fails it.
func surfaceRegistry() map[string]conformance.HarnessFactory {
	fake := func(name, outcome string) conformance.HarnessFactory {
		return func() conformance.Harness {
			return &replayHarness{
				decl: conformance.Declaration{Name: name, Capabilities: []string{"model_calls"}},
				rr:   conformance.RunRecord{Outcome: outcome},
			}
		}
	}
	return map[string]conformance.HarnessFactory{
		"multi":                  fake("multi", "completed"),
		"multi/chat_completions": fake("multi/chat_completions", "completed"),
		"multi/responses":        fake("multi/responses", "blocked"),
	}
}

func runCmd(t *testing.T, reg map[string]conformance.HarnessFactory, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut, reg)
	return code, out.String(), errOut.String()
}

func TestUsageErrors(t *testing.T) {
	dir := vectorDir(t)
	cases := []struct {
		name string
		reg  map[string]conformance.HarnessFactory
		args []string
		want string
	}{
		{"nothing registered", map[string]conformance.HarnessFactory{}, nil, `no harness registered under "sdk-local" (registered: none)`},
		{"unknown harness", registry("completed"), []string{"--harness", "nope", "--vectors", dir}, `no harness registered under "nope" (registered: fake)`},
		{"bad format", registry("completed"), []string{"--harness", "fake", "--format", "xml"}, "--format must be markdown or json"},
		{"bad flag", registry("completed"), []string{"--bogus"}, "flag provided but not defined"},
		{"extra argument", registry("completed"), []string{"--harness", "fake", "extra"}, `unexpected argument "extra"`},
		{"missing dir", registry("completed"), []string{"--harness", "fake", "--vectors", filepath.Join(dir, "nope")}, "no AH-CTK-*.json vectors"},
		{"empty dir", registry("completed"), []string{"--harness", "fake", "--vectors", t.TempDir()}, "no AH-CTK-*.json vectors"},
		{"surface of a harness without surfaces", registry("completed"), []string{"--harness", "fake", "--surface", "responses"}, `harness "fake" has no API surfaces`},
		{"unknown surface", surfaceRegistry(), []string{"--harness", "multi", "--surface", "grpc"}, `harness "multi" has no surface "grpc" (surfaces: chat_completions, responses, all)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, c.reg, c.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if out != "" {
				t.Errorf("stdout = %q, want empty", out)
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("stderr %q lacks %q", errOut, c.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	code, _, errOut := runCmd(t, registry("completed"), "-h")
	if code != exitOK || !strings.Contains(errOut, "--format") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestRunPassMarkdown(t *testing.T) {
	code, out, errOut := runCmd(t, registry("completed"), "--harness", "fake", "--vectors", vectorDir(t))
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q, stdout %s", code, errOut, out)
	}
	for _, want := range []string{"conformance report — fake", "| unspecified | 1 | 0 | 0 |", "Total: **1 passed, 0 failed, 0 skipped** of 1."} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

func TestRunFailJSON(t *testing.T) {
	code, out, _ := runCmd(t, registry("blocked"), "--harness", "fake", "--vectors", vectorDir(t), "--format", "json")
	if code != exitFail {
		t.Errorf("exit %d, want %d", code, exitFail)
	}
	rep := decodeReport(t, out)
	if rep.Totals.Failed != 1 || len(rep.Results) != 1 || !strings.Contains(rep.Results[0].Failures[0], `want "completed"`) {
		t.Errorf("report = %+v", rep)
	}
}

func TestRunEmbeddedByDefault(t *testing.T) {
	// The fake declares only model_calls, so most embedded vectors skip and
	// the few that run fail against its empty record.
	code, out, _ := runCmd(t, registry("completed"), "--harness", "fake", "--format", "json")
	if code != exitFail {
		t.Errorf("exit %d, want %d", code, exitFail)
	}
	rep := decodeReport(t, out)
	if rep.Totals.Vectors != 51 {
		t.Errorf("ran %d vectors, want the 51 embedded ones", rep.Totals.Vectors)
	}
}

// decodeReport reads the --format json output: the vector report and the
// golden identity results.
func decodeReport(t *testing.T, out string) conformance.Report {
	t.Helper()
	var doc struct {
		Vectors conformance.Report        `json:"vectors"`
		Golden  *conformance.GoldenReport `json:"golden_identity"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not a JSON report: %v\n%s", err, out)
	}
	if doc.Golden == nil || len(doc.Golden.Results) == 0 {
		t.Fatalf("JSON report has no golden identity results:\n%s", out)
	}
	return doc.Vectors
}

// TestSDKLocalRegistered runs the real registry: the SDK-local harness is
// the default and passes every applicable vector.
func TestSDKLocalRegistered(t *testing.T) {
	code, out, errOut := runCmd(t, harnesses())
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"Total: **47 passed, 0 failed, 4 skipped** of 51.", "17 passed, 0 failed, 1 diverge by design."} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestGatewayRegistered runs the gateway harness by name: the real gateway
// over HTTP passes every applicable vector, like the SDK-local harness.
func TestGatewayRegistered(t *testing.T) {
	code, out, errOut := runCmd(t, harnesses(), "--harness", "gateway")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	for _, want := range []string{"conformance report — gateway", "Total: **47 passed, 0 failed, 4 skipped** of 51."} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestGatewayMCPRegistered runs the MCP harness by name: with its tool
// calls through the gateway's MCP route it passes every applicable vector,
// like the gateway harness; --surface all reports each surface.
func TestGatewayMCPRegistered(t *testing.T) {
	code, out, errOut := runCmd(t, harnesses(), "--harness", "gateway-mcp")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	for _, want := range []string{"conformance report — gateway-mcp/chat_completions", "Total: **47 passed, 0 failed, 4 skipped** of 51."} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	runs, err := selectRuns(harnesses(), "gateway-mcp", surfaceAll, true)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"chat_completions", "responses", "messages"} {
		if i >= len(runs) || runs[i].surface != want || runs[i].factory().Declaration().Name != "gateway-mcp/"+want {
			t.Errorf("gateway-mcp surfaces: run %d is not %s", i, want)
		}
	}
}

// TestSurfaceSelection: --surface picks one surface's entry, all runs each
// in report order with a summary table, and no flag runs the plain name.
func TestSurfaceSelection(t *testing.T) {
	dir := vectorDir(t)
	cases := []struct {
		name    string
		args    []string
		code    int
		want    []string
		wantNot []string
	}{
		{"default", []string{}, exitOK, []string{"conformance report — multi\n"}, []string{"Results per surface"}},
		{"one surface", []string{"--surface", "responses"}, exitFail, []string{"conformance report — multi/responses"}, []string{"multi/chat_completions", "Results per surface"}},
		{"all", []string{"--surface", "all"}, exitFail, []string{
			"conformance report — multi/chat_completions",
			"conformance report — multi/responses",
			"| Surface | Passed | Skipped | Failed |",
			"| chat_completions | 1 | 0 | 0 |\n| responses | 0 | 0 | 1 |",
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--harness", "multi", "--vectors", dir}, c.args...)
			code, out, errOut := runCmd(t, surfaceRegistry(), args...)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(out, w) {
					t.Errorf("stdout has %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestSurfaceAllJSON: --surface all --format json reports each surface
// under "surfaces", in order.
func TestSurfaceAllJSON(t *testing.T) {
	code, out, _ := runCmd(t, surfaceRegistry(), "--harness", "multi", "--surface", "all", "--vectors", vectorDir(t), "--format", "json")
	if code != exitFail {
		t.Errorf("exit %d, want %d", code, exitFail)
	}
	var doc struct {
		Surfaces []struct {
			Surface string             `json:"surface"`
			Vectors conformance.Report `json:"vectors"`
		} `json:"surfaces"`
		Golden *conformance.GoldenReport `json:"golden_identity"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not a JSON report: %v\n%s", err, out)
	}
	if len(doc.Surfaces) != 2 || doc.Surfaces[0].Surface != "chat_completions" || doc.Surfaces[1].Surface != "responses" ||
		doc.Surfaces[0].Vectors.Totals.Passed != 1 || doc.Surfaces[1].Vectors.Totals.Failed != 1 || doc.Golden == nil {
		t.Errorf("report = %+v", doc)
	}
}

// TestGatewaySurfacesRegistered: the real registry gives the gateway one
// entry per surface, in report order, each declaring its surface. (The
// conformance package runs the vectors on each.)
func TestGatewaySurfacesRegistered(t *testing.T) {
	runs, err := selectRuns(harnesses(), "gateway", surfaceAll, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"chat_completions", "responses", "messages"}
	if len(runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(runs), len(want))
	}
	for i, r := range runs {
		if r.surface != want[i] {
			t.Errorf("run %d is %q, want %q", i, r.surface, want[i])
		}
		if name := r.factory().Declaration().Name; name != "gateway/"+want[i] {
			t.Errorf("run %d declares %q", i, name)
		}
	}
	if _, err := selectRuns(harnesses(), "sdk-local", "responses", true); err == nil {
		t.Error("sdk-local accepted a surface")
	}
}
