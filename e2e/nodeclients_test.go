package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeDir holds the JS clients, pinned by its package-lock.json.
const nodeDir = "node"

// nodeClients are the scripts under node/clients, one per client or
// framework, with the surface each speaks.
var nodeClients = []struct{ script, surface string }{
	{"openai-chat.mjs", "chat"},
	{"openai-responses.mjs", "responses"},
	{"openai-agents.mjs", "responses"},
	{"ai-sdk.mjs", "responses"},
	{"langchain.mjs", "responses"},
	{"anthropic.mjs", "messages"},
}

// observation is what a script reports of one scenario.
type observation struct {
	Text   string     `json:"text"`
	Final  string     `json:"final"`
	Deltas []string   `json:"deltas"`
	Calls  []toolCall `json:"calls"`
	Error  *string    `json:"error"`
	// FirstDeltaMS and EndMS time a stream from its request (incremental
	// scenarios): the first text delta (nil without one), and the answer
	// or the error.
	FirstDeltaMS *float64 `json:"first_delta_ms"`
	EndMS        float64  `json:"end_ms"`
	// surface is the API the client spoke (not reported: the test's).
	surface string
}

func (o observation) err() string {
	if o.Error == nil {
		return ""
	}
	return *o.Error
}

// scriptPrompts is E2E_PROMPTS: the scenario inputs, defined once here.
func scriptPrompts(t *testing.T) string {
	b, err := json.Marshal(map[string]string{
		"plain": plainPrompt, "stream": streamPrompt, "redact": redactPrompt,
		"deny": denyPrompt, "slowDeny": slowDenyPrompt,
		"weather": weatherPrompt, "weatherResult": weatherResult,
		"search": searchPrompt, "shell": `/tool shell {"command":"rm -rf /"}`,
		"incStream": incStreamPrompt, "incDeny": incDenyPrompt, "incRedact": incRedactPrompt,
		"incOutputRedact": incOutputRedactPrompt, "incLateRedact": incLateRedactPrompt, "incRewrite": incRewritePrompt,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nodeBinary returns the node the clients run on: the one e2e/node pins
// (the npm package "node", Node 22, which several clients require), else
// the one on PATH. Without node_modules the test is skipped, except under
// CI=true, where that is a failure.
func nodeBinary(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "openai", "package.json")); err != nil {
		msg := "the JS clients need e2e/node/node_modules (run npm ci in e2e/node): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	pinned, err := filepath.Abs(filepath.Join(nodeDir, "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pinned); err == nil {
		return pinned
	}
	path, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node_modules is there but no node: " + err.Error())
	}
	return path
}

// gateways are the root URLs the scripts talk to: the client policy, the
// same with stream keep-alives, and with incremental streaming.
type gateways struct{ root, committed, incremental string }

// runScript runs one client script against the gateways, with env added
// to its environment, and decodes its report.
func runScript(t *testing.T, node, script string, g gateways, prompts string, env ...string) map[string]json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("clients", script))
	cmd.Dir = nodeDir
	// A minimal environment: no vendor key or base URL of the machine can
	// send a client around the gateway.
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"GATEWAY_URL=" + g.root,
		"GATEWAY_COMMITTED_URL=" + g.committed,
		"GATEWAY_INCREMENTAL_URL=" + g.incremental,
		"E2E_PROMPTS=" + prompts,
		"OPENAI_AGENTS_DISABLE_TRACING=1",
		"NO_COLOR=1",
	}
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	var report map[string]json.RawMessage
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("node %s printed %q: %v\n%s", script, out, err, stderr.String())
	}
	return report
}

// TestNodeClients runs every JS client and framework through one gateway
// and checks each scenario's observation as TestGoClients does.
func TestNodeClients(t *testing.T) {
	node := nodeBinary(t)
	g := gateways{
		root:        startGateway(t, "", ""),
		committed:   startGateway(t, keepAliveConfig, ""),
		incremental: startGateway(t, incrementalConfig, incrementalInterceptors),
	}
	prompts := scriptPrompts(t)
	for _, c := range nodeClients {
		t.Run(strings.TrimSuffix(c.script, ".mjs")+"/"+c.surface, func(t *testing.T) {
			t.Parallel()
			report := runScript(t, node, c.script, g, prompts)
			var unsupported map[string]string
			if err := json.Unmarshal(report["unsupported"], &unsupported); err != nil {
				t.Fatalf("unsupported: %v", err)
			}
			for name, check := range nodeChecks {
				t.Run(name, func(t *testing.T) {
					if why, ok := unsupported[name]; ok {
						t.Skip("the client cannot: " + why)
					}
					raw, ok := report[name]
					if !ok {
						t.Fatal("the script reported nothing")
					}
					var o observation
					if err := json.Unmarshal(raw, &o); err != nil {
						t.Fatalf("%v: %s", err, raw)
					}
					o.surface = c.surface
					check(t, o)
				})
			}
		})
	}
}

// nodeChecks are the expectations per scenario, the same as the Go
// clients'.
var nodeChecks = map[string]func(t *testing.T, o observation){
	"plain": func(t *testing.T, o observation) { wantText(t, o, plainAnswer) },
	"stream": func(t *testing.T, o observation) {
		wantText(t, o, streamAnswer)
		if strings.Join(o.Deltas, "") != streamAnswer || len(o.Deltas) == 0 {
			t.Fatalf("deltas %q", o.Deltas)
		}
	},
	"tool_round":          wantToolRound,
	"tool_round_streamed": wantToolRound,
	"deny":                func(t *testing.T, o observation) { wantDenied(t, o, denyReason, "403") },
	"deny_streamed":       func(t *testing.T, o observation) { wantDenied(t, o, denyReason, "403") },
	// After the 200 only the error event carries the deny.
	"deny_streamed_after_200":           func(t *testing.T, o observation) { wantDenied(t, o, denyReason, "") },
	"redaction":                         func(t *testing.T, o observation) { wantText(t, o, redactAnswer) },
	"redaction_streamed":                func(t *testing.T, o observation) { wantText(t, o, redactAnswer) },
	"tool_arguments_rewritten":          wantRepairedSearch,
	"tool_arguments_rewritten_streamed": wantRepairedSearch,
	"tool_denied":                       func(t *testing.T, o observation) { wantDenied(t, o, "policy:tool_not_allowed", "403") },

	// Incremental streaming (incremental_test.go has the Go clients').
	"incremental_stream": func(t *testing.T, o observation) {
		wantText(t, o, incStreamAnswer)
		if strings.Join(o.Deltas, "") != incStreamAnswer {
			t.Fatalf("deltas %q", o.Deltas)
		}
		if o.FirstDeltaMS == nil || o.EndMS-*o.FirstDeltaMS < float64(earlyMargin.Milliseconds()) {
			t.Fatalf("first delta at %v ms, end at %v ms: want the first at least %v before the end", o.FirstDeltaMS, o.EndMS, earlyMargin)
		}
	},
	"incremental_deny_midstream": func(t *testing.T, o observation) {
		wantMidstreamError(t, o, denyReason, incDenyReleasable)
		noLeak(t, o.Text+strings.Join(o.Deltas, "")+o.Final)
	},
	"incremental_redaction":               func(t *testing.T, o observation) { wantStreamedText(t, o, incRedactAnswer) },
	"incremental_output_redaction":        func(t *testing.T, o observation) { wantStreamedText(t, o, incOutputRedactAnswer) },
	"incremental_redaction_after_release": func(t *testing.T, o observation) { wantStreamedText(t, o, incLateRedactAnswer) },
	"incremental_rewrite_released": func(t *testing.T, o observation) {
		wantMidstreamError(t, o, streamingUnsupported, incRewriteReleasable)
	},
	"incremental_tool_arguments_rewritten": wantRepairedSearch,
}

// wantStreamedText checks the client assembled want from deltas that
// carry exactly want.
func wantStreamedText(t *testing.T, o observation, want string) {
	t.Helper()
	wantText(t, o, want)
	if strings.Join(o.Deltas, "") != want {
		t.Fatalf("deltas %q, want them to carry %q", o.Deltas, want)
	}
}

// wantMidstreamError checks the client raised an error naming reason that
// is not a deny before the stream (describe() leads with the status: not
// 403), after receiving a non-empty prefix of releasable and nothing else.
func wantMidstreamError(t *testing.T, o observation, reason, releasable string) {
	t.Helper()
	if o.Error == nil || !strings.Contains(*o.Error, reason) || strings.HasPrefix(*o.Error, "403 ") {
		t.Fatalf("text %q, deltas %q, error %s; want an in-stream %s error", o.Text, o.Deltas, o.err(), reason)
	}
	wantReleasedPrefix(t, o.Deltas, releasable)
}

func wantText(t *testing.T, o observation, want string) {
	t.Helper()
	if o.Error != nil || o.Text != want {
		t.Fatalf("text %q, error %s; want %q", o.Text, o.err(), want)
	}
}

func wantToolRound(t *testing.T, o observation) {
	t.Helper()
	if o.Error != nil || len(o.Calls) != 1 || o.Calls[0].Name != weatherTool {
		t.Fatalf("calls %+v, error %s", o.Calls, o.err())
	}
	sameJSON(t, o.Calls[0].Args, weatherArgs)
	if !strings.Contains(o.Final, weatherResult) {
		t.Fatalf("final answer %q does not carry the tool result %q", o.Final, weatherResult)
	}
}

func wantRepairedSearch(t *testing.T, o observation) {
	t.Helper()
	if o.Error != nil || len(o.Calls) == 0 || o.Calls[0].Name != searchTool {
		t.Fatalf("calls %+v, error %s", o.Calls, o.err())
	}
	sameJSON(t, o.Calls[0].Args, searchRepaired)
}

// wantDenied checks the client failed with reason (and status when not
// ""), and that nothing of the denied answer reached it.
func wantDenied(t *testing.T, o observation, reason, status string) {
	t.Helper()
	if status == "403" && o.surface == "messages" {
		status = "451" // the Messages surface's policy deny
	}
	if o.Error == nil || !strings.Contains(*o.Error, reason) || !strings.Contains(*o.Error, status) {
		t.Fatalf("text %q, deltas %q, error %s; want a %s %s error", o.Text, o.Deltas, o.err(), status, reason)
	}
	noLeak(t, o.Text+strings.Join(o.Deltas, "")+o.Final)
}

// streamLoopReport is what clients/openai-responses-stream-loop.mjs
// prints.
type streamLoopReport struct {
	Calls   []toolCall `json:"calls"`
	Answers []string   `json:"answers"`
	Error   *string    `json:"error"`
}

// TestOpenAIStreamHelperCapture runs the openai JS SDK's responses.stream()
// helper in an application's tool loop, the helper's output fed back as
// it returns it (clients/openai-responses-stream-loop.mjs), through a
// recorder, and keeps the requests it sent (UPDATE_FIXTURES=1 writes them
// to testdata/openai-js-stream-helper-requests.json, which
// TestCapturedRequests replays). Through the gateway it is also the loop's
// end-to-end test: a tool round and a follow-up turn.
func TestOpenAIStreamHelperCapture(t *testing.T) {
	node := nodeBinary(t)
	rec := startRecorder(t, captureTarget(t))
	raw := runScript(t, node, "openai-responses-stream-loop.mjs", gateways{root: rec.URL}, scriptPrompts(t))
	var r streamLoopReport
	for name, dst := range map[string]any{"calls": &r.Calls, "answers": &r.Answers, "error": &r.Error} {
		if err := json.Unmarshal(raw[name], dst); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if r.Error != nil {
		t.Fatalf("the loop failed after %d requests: %s", len(rec.requests()), *r.Error)
	}
	if len(r.Calls) != 1 || r.Calls[0].Name != weatherTool {
		t.Fatalf("calls %+v, want one %s call", r.Calls, weatherTool)
	}
	sameJSON(t, r.Calls[0].Args, weatherArgs)
	if len(r.Answers) != 2 || !strings.Contains(r.Answers[0], weatherResult) || r.Answers[1] != plainAnswer {
		t.Fatalf("answers %q, want the tool result %q, then %q", r.Answers, weatherResult, plainAnswer)
	}
	writeFixture(t, "openai-js-stream-helper-requests.json", rec.requests())
}
