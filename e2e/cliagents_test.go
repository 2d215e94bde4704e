package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// cliDir pins Codex, Claude Code and the Claude Agent SDK. .ci/run does
// not install it (about 1.3 GB of native binaries); the tests run where
// `npm --prefix e2e/cli ci` was run.
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

// The models the CLI agents run; the gateway routes every name to the
// mock. Each is a model the agent knows, so that it sends what it sends
// its users: for a name it does not know ("mock") the agents send plainer
// requests (Claude Code no per-turn effort, Codex its tools the old way).
const (
	// codexModel is Codex 0.171.0's default model. Its requests declare
	// the tools in an additional_tools input item (a namespace of custom
	// and function tools), not in tools, and send reasoning.context and
	// text.verbosity.
	codexModel = "gpt-6.2-sol"
	// codexOlderModel is a model Codex still offers with tools declared
	// in tools: function, custom (apply_patch's grammar), tool_search and
	// web_search.
	codexOlderModel = "gpt-5.5"
	// claudeModel is what Claude Code's opus alias names. Claude Code, and
	// the Agent SDK which runs it, takes the effort per turn with it: in
	// the output_config of a system message inside messages.
	claudeModel = "claude-opus-5-5"
)

// codexArgs configures Codex for a provider at base (an OpenAI base URL,
// ending in /v1) speaking the Responses API, on Codex's own retry
// settings (it retries a deny five times: the gateway answers the
// retries without running the model again), no sandbox (the mock's
// commands are the test's own).
func codexArgs(base, model, prompt string) []string {
	return []string{
		"exec",
		"--skip-git-repo-check",
		"--dangerously-bypass-approvals-and-sandbox",
		"--json",
		"-m", model,
		"-c", `model_provider="gateway"`,
		"-c", `model_providers.gateway={name="gateway", base_url="` + base + `", wire_api="responses", env_key="GATEWAY_API_KEY"}`,
		prompt,
	}
}

// TestCodexCapture runs one Codex tool round per model through a recorder
// (see captureTarget) and keeps the requests it sent (UPDATE_FIXTURES=1
// writes them to testdata/, where TestCapturedRequests replays them).
func TestCodexCapture(t *testing.T) {
	bin := cliBinary(t, "codex")
	for _, c := range []struct{ model, fixture string }{
		{codexModel, "codex-requests.json"},
		{codexOlderModel, "codex-gpt-5.5-requests.json"},
	} {
		t.Run(c.model, func(t *testing.T) {
			rec := startRecorder(t, captureTarget(t))
			run := runCLI(t, bin, []string{"CODEX_HOME=" + t.TempDir(), "GATEWAY_API_KEY=unused-with-the-mock"},
				codexArgs(rec.URL+"/v1", c.model, `/tool exec_command {"cmd":"echo `+cliMarker+`"}`)...)
			if run.err != nil {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
			}
			writeFixture(t, c.fixture, rec.requests())
		})
	}
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

// claudeArgs runs one non-interactive turn of claudeModel that may use
// tools without asking.
func claudeArgs(prompt string) []string {
	return []string{"-p", prompt, "--model", claudeModel, "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"}
}

// TestClaudeCodeCapture runs one Claude Code tool round through a
// recorder (see captureTarget) and keeps the requests it sent
// (UPDATE_FIXTURES=1 writes them to testdata/claude-code-requests.json,
// which TestCapturedRequests replays).
func TestClaudeCodeCapture(t *testing.T) {
	bin := cliBinary(t, "claude")
	rec := startRecorder(t, captureTarget(t))
	run := runCLI(t, bin, claudeEnv(rec.URL), claudeArgs(`/tool Bash {"command":"echo `+cliMarker+`"}`)...)
	if run.err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
	}
	writeFixture(t, "claude-code-requests.json", rec.requests())
}

// agentSDK returns the command line that runs e2e/cli/agent-sdk.mjs: one
// Claude Agent SDK query of claudeModel with prompt. It skips the test
// when the SDK is not installed (npm ci in e2e/cli).
func agentSDK(t *testing.T, prompt string) (node string, args []string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(cliDir, "node_modules", "@anthropic-ai", "claude-agent-sdk", "package.json")); err != nil {
		t.Skipf("the Claude Agent SDK is not installed (npm ci in e2e/cli): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("no node to run the Claude Agent SDK: %v", err)
	}
	script, err := filepath.Abs(filepath.Join(cliDir, "agent-sdk.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return node, []string{script, claudeModel, prompt}
}

// TestAgentSDKCapture runs one Claude Agent SDK query with a Bash tool
// round through a recorder (see captureTarget) and keeps the requests
// its Claude Code sent (UPDATE_FIXTURES=1 writes them to
// testdata/agent-sdk-requests.json, which TestCapturedRequests replays).
func TestAgentSDKCapture(t *testing.T) {
	node, args := agentSDK(t, `/tool Bash {"command":"echo `+cliMarker+`"}`)
	rec := startRecorder(t, captureTarget(t))
	run := runCLI(t, node, claudeEnv(rec.URL), args...)
	if run.err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
	}
	writeFixture(t, "agent-sdk-requests.json", rec.requests())
}

// cliPolicy adds, for the CLI agents' shell tools (Codex's exec_command,
// Claude Code's Bash): a deny of destructive commands, and a rewrite of
// any other command than the expected one into a harmless marker.
const cliPolicy = `
  - name: deny-destructive
    type: regex
    points: [post_model_call]
    action: deny
    reason: policy:destructive_command
    message: ` + cliDenyMessage + `
    patterns: ['rm -rf']
  - name: deny-marker
    type: regex
    points: [post_model_call]
    action: deny
    reason: policy:marker
    message: ` + cliMarkerDenyMessage + `
    patterns: ['` + cliDeniedAnswer + `']
  - name: command-allowlist
    type: tools
    arguments:
      - tool: exec_command
        properties:
          cmd: {enum: ["echo ` + cliMarker + `", "echo ` + cliRewritten + `"], on_violation: replace, replacement: "echo ` + cliRewritten + `"}
      - tool: Bash
        properties:
          command: {enum: ["echo ` + cliMarker + `", "echo ` + cliRewritten + `"], on_violation: replace, replacement: "echo ` + cliRewritten + `"}
`

const (
	// cliMarker is what the allowed command prints.
	cliMarker = "hooks-gateway-e2e"
	// cliRewritten is what the policy's replacement command prints.
	cliRewritten = "rewritten-by-policy"
	// cliDenyMessage is the deny's message: the agents show it (Codex
	// shows the message of an error body, not its code).
	cliDenyMessage = "the model proposed a destructive command"
	// cliDeniedAnswer is an answer deny-marker refuses. Not a credential:
	// Claude Code replaces credential-shaped strings of the prompt with
	// "<token>" before sending it.
	cliDeniedAnswer      = "forbidden-answer-7c1f"
	cliMarkerDenyMessage = "the answer carried the test's forbidden marker"
	// cliCanary is printed only by a command the policy must not let run.
	cliCanary = "policy-bypassed"
)

// cliCase is one run of a CLI agent: the shell command the mock proposes,
// what its output must show and what it must not.
type cliCase struct {
	name, command string
	// ran is the output the executed command printed ("" when nothing
	// may run).
	ran string
	// denied is the message the run must fail with ("" when it succeeds).
	denied string
	// prompt, when set, replaces the /tool prompt; committed runs it on a
	// gateway with stream keep-alives on (a deny then comes in-stream).
	prompt    string
	committed bool
}

var cliCases = []cliCase{
	{name: "tool call runs", command: "echo " + cliMarker, ran: cliMarker},
	{name: "command rewritten", command: "echo " + cliCanary, ran: cliRewritten},
	{name: "command denied", command: "rm -rf ./nothing; echo " + cliCanary, denied: cliDenyMessage},
	{name: "answer denied after the 200", prompt: "/sleep 150ms the answer is " + cliDeniedAnswer, committed: true,
		denied: cliMarkerDenyMessage},
}

// cliGateways serves cliPolicy twice: plainly and with keep-alives on,
// both writing their records to trail.
func cliGateways(t *testing.T) (root, committed string, trail *recordTrail) {
	trail = &recordTrail{}
	start := func(top string) string {
		cfg, err := config.Parse("clients.yaml", []byte(top+clientPolicy+cliPolicy))
		if err != nil {
			t.Fatalf("config:\n%v", err)
		}
		return serveGateway(t, cfg, trail)
	}
	return start(""), start(keepAliveConfig), trail
}

// recordTrail holds the records gateways wrote, one JSON object a line.
type recordTrail struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recordTrail) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

// mark is where the records written from now on start.
func (r *recordTrail) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Len()
}

// since returns the records written after mark.
func (r *recordTrail) since(mark int) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return jsonLines(r.buf.String()[mark:])
}

// checkOneRun checks the records of one agent run: every record is of
// one session (the agent's own run id made it one), and a deny the agent
// retried was judged once: the retries got it again without reaching the
// model.
func checkOneRun(t *testing.T, c cliCase, recs []map[string]any) {
	t.Helper()
	sessions := map[any]bool{}
	var denies int
	for _, r := range recs {
		sessions[r["session_id"]] = true
		if v, _ := r["verdict"].(map[string]any); r["interception_point"] == "post_model_call" && v["decision"] == "deny" {
			denies++
		}
	}
	if len(sessions) != 1 {
		t.Errorf("the run's records are in %d sessions, want one: %v", len(sessions), sessions)
	}
	if c.denied != "" && denies != 1 {
		t.Errorf("%d post_model_call denies in the run: the agent's retries of the denied call reached the model again", denies)
	}
}

// promptFor is c's prompt and gateway for an agent whose shell tool is
// tool, taking its command line in member arg.
func (c cliCase) promptFor(tool, arg, root, committed string) (prompt, gateway string) {
	gateway = root
	if c.committed {
		gateway = committed
	}
	if c.prompt != "" {
		return c.prompt, gateway
	}
	args, _ := json.Marshal(map[string]string{arg: c.command})
	return "/tool " + tool + " " + string(args), gateway
}

// TestCodex runs Codex through the gateway: the mock proposes an
// exec_command call, Codex runs it and sends its output back, and the
// mock's final answer carries it; the policy rewrites or denies commands.
func TestCodex(t *testing.T) {
	bin := cliBinary(t, "codex")
	root, committed, trail := cliGateways(t)
	for _, c := range cliCases {
		t.Run(c.name, func(t *testing.T) {
			prompt, gateway := c.promptFor("exec_command", "cmd", root, committed)
			mark := trail.mark()
			run := runCLI(t, bin, []string{"CODEX_HOME=" + t.TempDir(), "GATEWAY_API_KEY=unused-with-the-mock"},
				codexArgs(gateway+"/v1", codexModel, prompt)...)
			defer checkOneRun(t, c, trail.since(mark))
			checkCodexRun(t, c, run)
		})
	}
}

// TestClaudeCode runs Claude Code through the gateway with the Bash tool,
// as TestCodex runs Codex.
func TestClaudeCode(t *testing.T) {
	bin := cliBinary(t, "claude")
	root, committed, trail := cliGateways(t)
	for _, c := range cliCases {
		t.Run(c.name, func(t *testing.T) {
			prompt, gateway := c.promptFor("Bash", "command", root, committed)
			mark := trail.mark()
			run := runCLI(t, bin, claudeEnv(gateway), claudeArgs(prompt)...)
			checkOneRun(t, c, trail.since(mark))
			checkClaudeRun(t, c, run)
		})
	}
}

// TestAgentSDK runs the Claude Agent SDK through the gateway with the Bash
// tool, as TestClaudeCode runs Claude Code (the SDK yields Claude Code's
// stream-json messages).
func TestAgentSDK(t *testing.T) {
	agentSDK(t, "") // skips without the SDK
	root, committed, trail := cliGateways(t)
	for _, c := range cliCases {
		t.Run(c.name, func(t *testing.T) {
			prompt, gateway := c.promptFor("Bash", "command", root, committed)
			node, args := agentSDK(t, prompt)
			mark := trail.mark()
			checkClaudeRun(t, c, runCLI(t, node, claudeEnv(gateway), args...))
			checkOneRun(t, c, trail.since(mark))
		})
	}
}

// checkCodexRun checks a run that printed Codex's --json events.
func checkCodexRun(t *testing.T, c cliCase, run cliRun) {
	t.Helper()
	var outputs, answers []string
	for _, ev := range jsonLines(run.stdout) {
		item, _ := ev["item"].(map[string]any)
		if ev["type"] != "item.completed" || item == nil {
			continue
		}
		switch item["type"] {
		case "command_execution":
			out, _ := item["aggregated_output"].(string)
			outputs = append(outputs, out)
		case "agent_message":
			text, _ := item["text"].(string)
			answers = append(answers, text)
		}
	}
	checkCLIRun(t, c, run, outputs, answers)
}

// checkClaudeRun checks a run that printed Claude Code's stream-json
// messages.
func checkClaudeRun(t *testing.T, c cliCase, run cliRun) {
	t.Helper()
	var outputs, answers []string
	for _, ev := range jsonLines(run.stdout) {
		switch ev["type"] {
		case "user": // tool results travel in user messages
			outputs = append(outputs, blockTexts(ev, "tool_result")...)
		case "result":
			text, _ := ev["result"].(string)
			answers = append(answers, text)
		}
	}
	checkCLIRun(t, c, run, outputs, answers)
}

// checkCLIRun checks one CLI agent run against its case: the commands'
// outputs and the final answers the agent printed.
func checkCLIRun(t *testing.T, c cliCase, run cliRun, outputs, answers []string) {
	t.Helper()
	all := strings.Join(outputs, "\n") + "\n" + strings.Join(answers, "\n")
	if strings.Contains(all, cliCanary+"\n") || strings.Contains(all, "\n"+cliCanary) {
		t.Fatalf("a command the policy refused ran:\n%s", run.stdout)
	}
	if strings.Contains(all, cliDeniedAnswer) {
		t.Fatalf("a denied answer reached the agent:\n%s", run.stdout)
	}
	if c.denied != "" {
		if run.err == nil && !strings.Contains(run.stdout, c.denied) {
			t.Fatalf("the run succeeded without the deny %s:\nstdout:\n%s\nstderr:\n%s", c.denied, run.stdout, run.stderr)
		}
		if !strings.Contains(run.stdout+run.stderr, c.denied) {
			t.Fatalf("the agent does not show the deny %q:\nstdout:\n%s\nstderr:\n%s", c.denied, run.stdout, run.stderr)
		}
		// A deny reads as a refusal: not as a key problem, nor as a
		// dropped connection.
		for _, wrong := range []string{"Failed to authenticate", "stream closed before response.completed"} {
			if strings.Contains(run.stdout+run.stderr, wrong) {
				t.Fatalf("the agent shows the deny as %q:\nstdout:\n%s\nstderr:\n%s", wrong, run.stdout, run.stderr)
			}
		}
		if len(outputs) > 0 {
			t.Fatalf("commands ran: %q", outputs)
		}
		return
	}
	if run.err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
	}
	if len(outputs) != 1 || !strings.Contains(outputs[0], c.ran) {
		t.Fatalf("command outputs %q, want one carrying %q\nstdout:\n%s", outputs, c.ran, run.stdout)
	}
	// The mock answers "tool results: " and the tool's output.
	if len(answers) == 0 || !strings.Contains(answers[len(answers)-1], "tool results:") || !strings.Contains(answers[len(answers)-1], c.ran) {
		t.Fatalf("final answers %q, want the tool result %q\nstdout:\n%s", answers, c.ran, run.stdout)
	}
}

// jsonLines decodes every line of s that is a JSON object.
func jsonLines(s string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(s, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// blockTexts returns the text of every content block of type typ in a
// stream-json message event (string content, or text blocks within).
func blockTexts(ev map[string]any, typ string) []string {
	msg, _ := ev["message"].(map[string]any)
	blocks, _ := msg["content"].([]any)
	var out []string
	for _, b := range blocks {
		block, _ := b.(map[string]any)
		if block["type"] != typ {
			continue
		}
		switch c := block["content"].(type) {
		case string:
			out = append(out, c)
		case []any:
			for _, p := range c {
				if part, _ := p.(map[string]any); part["type"] == "text" {
					s, _ := part["text"].(string)
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// TestCLIAgentsOnTheEmbeddedDefault runs a tool round of each agent through
// a gateway on the embedded default (go run ./cmd/hooks-gateway), with the
// mock model: the agents' own requests and declarations pass its policy,
// and each run is one session.
func TestCLIAgentsOnTheEmbeddedDefault(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("HOOKS_GATEWAY_LISTEN", "")
	t.Setenv("HOOKS_GATEWAY_REDIS_URL", "")
	trail := &recordTrail{}
	root := serveGateway(t, config.Default(), trail)
	c := cliCase{name: "tool round", ran: cliMarker}
	run := func(t *testing.T, bin string, env, args []string, check func(cliRun)) {
		mark := trail.mark()
		r := runCLI(t, bin, env, args...)
		check(r)
		checkOneRun(t, c, trail.since(mark))
	}
	t.Run("codex", func(t *testing.T) {
		bin := cliBinary(t, "codex")
		prompt := `/tool exec_command {"cmd":"echo ` + cliMarker + `"}`
		run(t, bin, []string{"CODEX_HOME=" + t.TempDir(), "GATEWAY_API_KEY=unused-with-the-mock"}, codexArgs(root+"/v1", codexModel, prompt), func(r cliRun) { checkCodexRun(t, c, r) })
	})
	claudePrompt := `/tool Bash {"command":"echo ` + cliMarker + `"}`
	t.Run("claude code", func(t *testing.T) {
		bin := cliBinary(t, "claude")
		run(t, bin, claudeEnv(root), claudeArgs(claudePrompt), func(r cliRun) { checkClaudeRun(t, c, r) })
	})
	t.Run("agent sdk", func(t *testing.T) {
		node, args := agentSDK(t, claudePrompt)
		run(t, node, claudeEnv(root), args, func(r cliRun) { checkClaudeRun(t, c, r) })
	})
}
