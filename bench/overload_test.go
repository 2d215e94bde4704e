package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
)

func TestOverloadTally(t *testing.T) {
	var tl overloadTally
	withRetry := http.Header{"Retry-After": []string{"1"}}
	tl.add(200, nil, 3*time.Millisecond, "")
	tl.add(200, nil, 5*time.Millisecond, "")
	tl.add(503, withRetry, time.Millisecond, "")
	tl.add(503, http.Header{}, 2*time.Millisecond, "")                              // no Retry-After
	tl.add(503, http.Header{"Retry-After": []string{"soon"}}, time.Millisecond, "") // not seconds
	tl.add(0, nil, 30*time.Second, "context deadline exceeded")
	tl.add(502, nil, time.Millisecond, "502 Bad Gateway")
	if tl.requests != 7 || len(tl.admitted) != 2 || len(tl.refused) != 3 || tl.noRetryAfter != 2 || tl.otherCount() != 2 {
		t.Fatalf("tally = %d requests, %d admitted, %d refused, %d without Retry-After, %d other",
			tl.requests, len(tl.admitted), len(tl.refused), tl.noRetryAfter, tl.otherCount())
	}
	if got := kindSummary(tl.other); got != "1× HTTP 502; 1× context deadline exceeded" {
		t.Errorf("other kinds = %q", got)
	}
	if l := summarize(tl.admitted); l.P99 != 5*time.Millisecond {
		t.Errorf("admitted p99 = %s", l.P99)
	}
}

func TestValidRetryAfter(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "0": true, "120": true, "": false, "-1": false, "1.5": false, "Wed, 21 Oct 2015 07:28:00 GMT": false} {
		if got := validRetryAfter(v); got != want {
			t.Errorf("validRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestOverloadChecks(t *testing.T) {
	good := func() *OverloadResult {
		return &OverloadResult{RSSCeiling: 256 << 20, GatewayOK: 100, OutputVerdicts: 100, Targets: []OverloadTarget{
			{Name: "bare proxy"},
			{Name: "gateway", Requests: 300, Admitted: 99, Refused: 201, AdmittedLatency: Latency{P99: 20 * time.Millisecond}, PeakRSS: 50 << 20},
		}}
	}
	if lines, ok := overloadChecks(good()); !ok {
		t.Fatalf("good run failed: %v", lines)
	}
	for name, spoil := range map[string]func(*OverloadResult){
		"no refusals":        func(r *OverloadResult) { r.Targets[1].Refused = 0 },
		"503 without header": func(r *OverloadResult) { r.Targets[1].RefusedNoRetryAfter = 1 },
		"slow admitted":      func(r *OverloadResult) { r.Targets[1].AdmittedLatency.P99 = 60 * time.Millisecond },
		"over the ceiling":   func(r *OverloadResult) { r.Targets[1].PeakRSS = 300 << 20 },
		"unverdicted answer": func(r *OverloadResult) { r.OutputVerdicts = 99 },
		"other errors":       func(r *OverloadResult) { r.Targets[1].Other = 1 },
	} {
		r := good()
		spoil(r)
		lines, ok := overloadChecks(r)
		if ok {
			t.Errorf("%s: passed: %v", name, lines)
		}
		if !strings.Contains(strings.Join(lines, "\n"), "FAIL") {
			t.Errorf("%s: no FAIL line: %v", name, lines)
		}
	}
}

func TestCountOutputPermits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	rec := func(point, decision string) string {
		return `{"interception_point":"` + point + `","mode":"enforce","verdict":{"decision":"` + decision +
			`","reason":"r"},"session_id":"s","sequence":1,"interceptors_registered":1}` + "\n"
	}
	body := rec("output", "allow") + rec("post_model_call", "allow") + rec("output", "deny") + rec("output", "allow")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := countOutputPermits(path)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("output permits = %d, want 2", n)
	}
	if err := os.WriteFile(path, []byte("{not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := countOutputPermits(path); err == nil {
		t.Error("a corrupt record counted without error")
	}
}

func TestCompareFillsEveryTarget(t *testing.T) {
	lat := func(p50, p99 int) Latency {
		return Latency{P50: time.Duration(p50) * time.Millisecond, P99: time.Duration(p99) * time.Millisecond}
	}
	res := &ScenarioResult{Targets: []TargetResult{
		{Name: "direct", Latency: lat(1, 2), CPUPer1k: 0.1},
		{Name: "bare proxy", Latency: lat(2, 4), CPUPer1k: 0.5},
		{Name: "nginx", Latency: lat(1, 3), CPUPer1k: 0.25},
		{Name: "gateway", Latency: lat(4, 10), CPUPer1k: 1.0},
	}}
	compare(res)
	if g := res.Targets[3]; g.AddedP50 != 3*time.Millisecond || g.AddedP99 != 8*time.Millisecond || g.CPUOverBare != 2 {
		t.Errorf("gateway = %+v", g)
	}
	if n := res.Targets[2]; n.CPUOverBare != 0.5 || n.AddedP99 != time.Millisecond {
		t.Errorf("nginx = %+v", n)
	}
	if res.AddedP50 != 3*time.Millisecond || res.BareAddedP99 != 2*time.Millisecond || res.CPURatio != 2 {
		t.Errorf("summary fields: added p50 %s, bare added p99 %s, ratio %v", res.AddedP50, res.BareAddedP99, res.CPURatio)
	}
}

func TestParseStatPPID(t *testing.T) {
	got, err := parseStatPPID("42 (a (b) c) S 7 42 42 0 -1")
	if err != nil || got != 7 {
		t.Errorf("ppid = %d, %v; want 7", got, err)
	}
	if _, err := parseStatPPID("garbage"); err == nil {
		t.Error("no error for a line without a command name")
	}
	if pids := treePIDs(os.Getpid()); len(pids) == 0 || pids[0] != os.Getpid() {
		t.Errorf("treePIDs(self) = %v", pids)
	}
}

func TestOverloadOnlyWhenNamed(t *testing.T) {
	all, err := selectScenarios("", false, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range all {
		if sc.name == overloadName {
			t.Fatal("the default run includes the overload scenario")
		}
	}
	named, err := selectScenarios("json,overload", false, false)
	if err != nil || len(named) != 2 || named[1].name != overloadName {
		t.Fatalf("named: %v, %v", named, err)
	}
}

func TestOverloadConfigLoads(t *testing.T) {
	dir := t.TempDir()
	path, err := writeConfig(dir, overloadScenario().config, map[string]string{"UPSTREAM": "http://127.0.0.1:1", "RECORDS": dir + "/r.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("configs/overload.yaml: %v", err)
	}
	if cfg.Server.MaxRequests != overloadMaxRequests {
		t.Errorf("server.max_requests = %d, the report says %d", cfg.Server.MaxRequests, overloadMaxRequests)
	}
	if cfg.Limits.BufferBudget != overloadBufferBudget {
		t.Errorf("limits.buffer_budget = %d, the report says %d", cfg.Limits.BufferBudget, overloadBufferBudget)
	}
}

func TestSignedMS(t *testing.T) {
	if got := signedMS(-115 * time.Microsecond); got != "−0.115 ms" {
		t.Errorf("signedMS(-115µs) = %q", got)
	}
	if got := signedMS(2 * time.Millisecond); got != "+2.000 ms" {
		t.Errorf("signedMS(2ms) = %q", got)
	}
}

// runOverload and runSoak stop their stack early (to flush the records)
// and again on the way out: the second stop must return at once.
func TestChildStopTwice(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	cmd := exec.Command(sleep, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{name: "sleep", cmd: cmd, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(c.exited) }()
	c.stop()
	done := make(chan struct{})
	go func() { c.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("a second stop of an exited child did not return")
	}
}

func TestWorkDir(t *testing.T) {
	for _, keep := range []bool{false, true} {
		dir, cleanup, err := workDir("test", keep)
		if err != nil {
			t.Fatal(err)
		}
		cleanup()
		_, err = os.Stat(dir)
		if kept := err == nil; kept != keep {
			t.Errorf("keep %v: directory still there: %v", keep, kept)
		}
		os.RemoveAll(dir)
	}
}
