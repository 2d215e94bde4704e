package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/policy"
)

func denyWord(word string) string {
	return "interceptors:\n  - name: deny-" + word + "\n    type: regex\n    points: [input]\n    action: deny\n    reason: policy:" + word + "\n    patterns: ['" + word + "']\n"
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func policyRun(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"policy"}, args...), &stdout, &stderr, nil)
	return code, stdout.String(), stderr.String()
}

func TestPolicyCheck(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), denyWord("alpha"))
	writeFile(t, filepath.Join(dir, "b.yaml"), "routes:\n  - name: r\n    match: {agent_id: 'x-*'}\n    interceptors: [deny-alpha]\n")
	want, err := policy.Version(dir)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := policyRun("check", dir)
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "1 interceptors, 1 routes, 2 files") {
		t.Errorf("check of a good policy: exit %d\n%s%s", code, out, errOut)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	// A shape problem, a type-option problem and a route problem: all
	// reported in one run.
	writeFile(t, bad, denyWord("alpha")+"    colour: red\n  - name: x\n    type: regex\n    action: deny\n    patterns: ['(']\nroutes:\n  - name: r\n    interceptors: [nope]\n")
	code, out, errOut = policyRun("check", bad)
	if code != 1 || out != "" {
		t.Errorf("check of a bad policy: exit %d, stdout %q", code, out)
	}
	for _, w := range []string{
		bad + ":15: routes[0].interceptors[0]: no interceptor is named \"nope\"",
		bad + ":8: interceptors[0].colour: unknown key",
		bad + ":12: interceptors[1].patterns[0]",
	} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}

	if code, _, _ := policyRun("check", filepath.Join(t.TempDir(), "absent")); code != 2 {
		t.Errorf("unreadable policy: exit %d, want 2", code)
	}
	if code, _, _ := policyRun("check"); code != 2 {
		t.Errorf("no argument: exit %d, want 2", code)
	}
}

func TestPolicyTest(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	writeFile(t, pol, denyWord("alpha")+`  - name: redact-card
    type: regex
    points: [pre_tool_call]
    action: redact
    patterns: ['4[0-9]{15}']
    replacement: "[card]"
  - name: warn-beta
    type: cel
    points: [input]
    rules:
      - {when: 'context.input.content.contains("beta")', warn: {reason: "policy:beta"}}
routes:
  - name: payments
    match: {agent_id: "pay-*", tenant: acme}
    interceptors: [redact-card]
    mode: evaluate_only
`)
	passing := filepath.Join(dir, "pass.yaml")
	writeFile(t, passing, `cases:
  - name: alpha denied
    point: input
    context: {input: {content: "say alpha"}}
    expect: {decision: deny, reason: "policy:alpha", mode: enforce, warnings: []}
  - name: payments route redacts, alpha not in its chain
    point: pre_tool_call
    route: {agent_id: pay-1, tenant: acme}
    context: {tool_call: {name: charge, args: {card: "4111111111111111", note: alpha}}}
    expect: {decision: transform, transform_value: {card: "[card]", note: alpha}, mode: evaluate_only}
  - name: beta warns
    point: input
    context: {input: {content: "beta"}}
    expect: {decision: allow, warnings: ["policy:beta"]}
  - name: another tenant gets the default chain
    point: input
    route: {agent_id: pay-1, tenant: other}
    context: {input: {content: "alpha"}}
    expect: {decision: deny}
`)
	code, out, errOut := policyRun("test", pol, passing)
	if code != 0 || strings.Count(out, "PASS") != 4 || !strings.Contains(out, "route payments") {
		t.Errorf("passing cases: exit %d\n%s%s", code, out, errOut)
	}

	failing := filepath.Join(dir, "fail.yaml")
	writeFile(t, failing, `cases:
  - name: wrong decision
    point: input
    context: {input: {content: "hello"}}
    expect: {decision: deny}
  - name: wrong reason
    point: input
    context: {input: {content: "alpha"}}
    expect: {decision: deny, reason: "policy:other"}
  - name: right
    point: output
    expect: {decision: allow}
  - name: wrong mode
    point: output
    expect: {decision: allow, mode: evaluate_only}
  - name: missing warning
    point: input
    context: {input: {content: "hello"}}
    expect: {decision: allow, warnings: ["policy:beta"]}
  - name: unexpected warning
    point: input
    context: {input: {content: "beta"}}
    expect: {decision: allow, warnings: []}
`)
	code, out, _ = policyRun("test", pol, failing)
	if code != 1 || strings.Count(out, "FAIL") != 5 || strings.Count(out, "PASS") != 1 || !strings.Contains(out, "6 cases: 1 passed, 5 failed") ||
		!strings.Contains(out, "ran in mode enforce, want evaluate_only") || !strings.Contains(out, `got warnings ["policy:beta"], want []`) {
		t.Errorf("failing cases: exit %d\n%s", code, out)
	}

	unknown := filepath.Join(dir, "unknown.yaml")
	writeFile(t, unknown, "cases:\n  - name: x\n    pont: input\n")
	if code, _, errOut := policyRun("test", pol, unknown); code != 2 || !strings.Contains(errOut, "pont") {
		t.Errorf("cases file with an unknown key: exit %d: %s", code, errOut)
	}
}

// TestSIGHUPReloadsAndAdminListener runs the gateway with its policy in a
// file and the admin endpoints on their own listener: SIGHUP reloads the
// policy, and the admin listener shows the new version.
func TestSIGHUPReloadsAndAdminListener(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	writeFile(t, pol, denyWord("alpha"))
	cfg := writeConfig(t, `listeners:
  http: "127.0.0.1:0"
  admin: "localhost:0"
upstreams:
  - name: mock
    type: mock
policy:
  path: `+pol+`
  watch: false
records:
  sinks: []
`)
	g := start(t, "--config", cfg)
	m := regexp.MustCompile(`admin endpoints listening" addr=(\S+)`).FindStringSubmatch(g.stderr.String())
	if m == nil {
		t.Fatalf("no admin listener in the log:\n%s", g.stderr.String())
	}
	admin := m[1]
	ctx := t.Context()
	if status, body, err := chat(ctx, g.addr, "alpha"); err != nil || status != 403 {
		t.Fatalf("first policy: %d %s %v", status, body, err)
	}

	writeFile(t, pol, denyWord("beta"))
	want, err := policy.Version(pol)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		status, _, err := chat(ctx, g.addr, "beta")
		if err == nil && status == 403 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SIGHUP did not reload the policy (last status %d, %v):\n%s", status, err, g.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get("http://" + admin + "/admin/policy")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Version string   `json:"version"`
		Sources []string `json:"sources"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Version != want || len(st.Sources) != 1 || st.Sources[0] != pol {
		t.Errorf("GET /admin/policy = %+v, want version %s", st, want)
	}
	if resp, err := http.Get("http://" + g.addr + "/admin/policy"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("the main listener serves the admin endpoints without a token: %d", resp.StatusCode)
		}
	}
	if code := g.stop(t); code != 0 {
		t.Errorf("exit %d:\n%s", code, g.stderr.String())
	}
}

// TestExamplePolicy keeps deploy/examples/policy and its cases valid.
func TestExamplePolicy(t *testing.T) {
	dir := filepath.Join("..", "..", "deploy", "examples")
	if code, out, errOut := policyRun("check", filepath.Join(dir, "policy")); code != 0 {
		t.Errorf("policy check: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := policyRun("test", filepath.Join(dir, "policy"), filepath.Join(dir, "policy-tests", "cases.yaml"))
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Errorf("policy test: exit %d\n%s%s", code, out, errOut)
	}
}
