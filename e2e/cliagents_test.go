package e2e_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// cliDir pins Codex and Claude Code. .ci/run does not install it (about
// 800 MB of native binaries); the test runs where `npm ci` was run there.
const cliDir = "cli"

// cliBinary returns the pinned binary name of e2e/cli, skipping the test
// when it is not installed.
func cliBinary(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(cliDir, "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is not installed (npm ci in e2e/cli): %v", name, err)
	}
	return p
}

// cliRun is one non-interactive run of a CLI agent.
type cliRun struct {
	stdout, stderr string
	err            error
}

// runCLI runs bin with args in a fresh working directory and home, the
// given environment and nothing of the machine's but PATH.
func runCLI(t *testing.T, bin string, env []string, args ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"NO_COLOR=1",
		"TERM=dumb",
	}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return cliRun{stdout.String(), stderr.String(), err}
}

// codexArgs configures Codex for a provider at base (an OpenAI base URL,
// ending in /v1) speaking the Responses API, no retries, no sandbox (the
// mock's commands are the test's own).
func codexArgs(base, prompt string) []string {
	return []string{
		"exec",
		"--skip-git-repo-check",
		"--dangerously-bypass-approvals-and-sandbox",
		"--json",
		"-m", "mock",
		"-c", `model_provider="gateway"`,
		"-c", `model_providers.gateway={name="gateway", base_url="` + base + `", wire_api="responses", env_key="GATEWAY_API_KEY", request_max_retries=0, stream_max_retries=0}`,
		prompt,
	}
}

// TestCodexCapture runs Codex once through a recorder in front of the
// gateway and keeps the requests it sent (UPDATE_FIXTURES=1 writes them
// to testdata/codex-requests.json).
func TestCodexCapture(t *testing.T) {
	bin := cliBinary(t, "codex")
	rec := startRecorder(t, startGateway(t, ""))
	run := runCLI(t, bin, []string{"CODEX_HOME=" + t.TempDir(), "GATEWAY_API_KEY=unused-with-the-mock"},
		codexArgs(rec.URL+"/v1", "hello from codex")...)
	t.Logf("err %v\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
	reqs := rec.requests()
	for _, r := range reqs {
		t.Logf("%s %s?%s -> %d headers %v", r.Method, r.Path, r.Query, r.Status, headerNames(r))
	}
	writeFixture(t, "codex-requests.json", reqs)
}

// claudeEnv points Claude Code at base (the gateway's root URL) with no
// traffic of its own elsewhere (telemetry, error reports, updates).
func claudeEnv(base string) []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + base,
		"ANTHROPIC_API_KEY=unused-with-the-mock",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	}
}

// claudeArgs runs one non-interactive turn that may use tools without
// asking.
func claudeArgs(prompt string) []string {
	return []string{"-p", prompt, "--model", "mock", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"}
}

// TestClaudeCodeCapture runs Claude Code once through a recorder in front
// of the gateway and keeps the requests it sent (UPDATE_FIXTURES=1 writes
// them to testdata/claude-code-requests.json).
func TestClaudeCodeCapture(t *testing.T) {
	bin := cliBinary(t, "claude")
	rec := startRecorder(t, startGateway(t, ""))
	run := runCLI(t, bin, claudeEnv(rec.URL), claudeArgs("hello from claude code")...)
	t.Logf("err %v\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
	reqs := rec.requests()
	for _, r := range reqs {
		t.Logf("%s %s?%s -> %d headers %v", r.Method, r.Path, r.Query, r.Status, headerNames(r))
	}
	writeFixture(t, "claude-code-requests.json", reqs)
}
