package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/mcptest"
	"github.com/hooks-gateway/hooks-gateway/internal/specschema"
	"github.com/hooks-gateway/hooks-gateway/proxy"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// The tools of the test's MCP server, as the gateway names them
// (the default prefix mcp__fs__, which is also Claude Code's and Codex's
// name for them), and what the policy does with each.
const (
	mcpEcho   = "mcp__fs__echo"   // allowed
	mcpDeploy = "mcp__fs__deploy" // listed, every call denied (deploy-freeze)
	mcpWhoami = "mcp__fs__whoami" // allowed, its result redacted
	mcpDelete = "mcp__fs__delete_repo"

	// mcpDenyMessage is deploy-freeze's message: the client must show it.
	mcpDenyMessage = "deploys are frozen until the release is cut"
	mcpDenyReason  = "policy:deploy_frozen"
	// mcpOperator is the whoami result's e-mail, redacted on its way back.
	mcpOperator = "ops@example.com"
)

// mcpUpstream is a real MCP server (the official Go SDK) over Streamable
// HTTP, keeping the tool calls that reach it.
type mcpUpstream struct {
	*mcptest.Upstream
	url string
}

// startMCPUpstream serves the test's MCP server: echo, deploy, whoami
// and delete_repo.
func startMCPUpstream(t *testing.T) *mcpUpstream {
	t.Helper()
	u := mcptest.New(nil)
	mcptest.TextTool(u, "echo", "Repeats text.", func(in struct {
		Text string `json:"text"`
	}) string {
		return "echo: " + in.Text
	})
	mcptest.TextTool(u, "deploy", "Deploys the service.", func(in struct {
		Env string `json:"env"`
	}) string {
		return "deployed to " + in.Env
	})
	mcptest.TextTool(u, "whoami", "Says who the operator is.", func(struct{}) string { return "operator: " + mcpOperator })
	mcptest.TextTool(u, "delete_repo", "Deletes a repository.", func(struct{}) string { return "deleted" })
	return &mcpUpstream{Upstream: u, url: u.Serve(t, nil)}
}

// mcpInterceptors are the MCP policy, added to clientPolicy's: the tools
// list withholds delete_repo (and denies its calls), deploy-freeze denies
// every deploy call (the tool stays listed: the agent may try it and must
// learn why it failed), and tool results have e-mails redacted.
const mcpInterceptors = `
  - name: mcp-tools
    type: tools
    points: [pre_tool_call, post_tool_call]
    deny: ["mcp__fs__delete_*"]
  - name: deploy-freeze
    type: cel
    points: [pre_tool_call]
    rules:
      - name: deploy-frozen
        when: context.tool_call.name == "` + mcpDeploy + `"
        deny:
          reason: ` + mcpDenyReason + `
          message: ` + mcpDenyMessage + `
  - name: redact-tool-emails
    type: regex
    points: [post_tool_call]
    action: redact
    scope: target
    patterns: ['[a-z]+@example[.]com']
    replacement: "[email]"
`

// headerLog keeps the headers of the requests a gateway's /mcp/ route
// and its model routes received.
type headerLog struct {
	mu         sync.Mutex
	mcp, model []http.Header
	calls      []string
}

func (l *headerLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		if strings.HasPrefix(r.URL.Path, "/mcp/") {
			l.mcp = append(l.mcp, r.Header.Clone())
			l.calls = append(l.calls, r.Method+" "+r.Header.Get("Mcp-Method")+" "+r.Header.Get("Mcp-Protocol-Version"))
		} else {
			l.model = append(l.model, r.Header.Clone())
		}
		l.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// values returns, per header name of interest, the distinct values the
// requests of one kind carried ("" for a request without it).
func (l *headerLog) values(model bool, names ...string) map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	reqs := l.mcp
	if model {
		reqs = l.model
	}
	out := map[string][]string{}
	for _, n := range names {
		for _, h := range reqs {
			if v := h.Get(n); !slices.Contains(out[n], v) {
				out[n] = append(out[n], v)
			}
		}
	}
	return out
}

// names returns the header names the MCP requests carried.
func (l *headerLog) names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, h := range l.mcp {
		for k := range h {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// runHeaders are the headers that name a run or an MCP session.
var runHeaders = []string{"Agent-Hooks-Session", "X-Claude-Code-Session-Id", "Session-Id", "Thread-Id", "Mcp-Session-Id", "Mcp-Protocol-Version", "User-Agent"}

// serveMCPGateway serves clientPolicy with the MCP server at upstream as
// "fs" under mcpInterceptors, writing its records to trail and keeping
// the headers it received.
func serveMCPGateway(t *testing.T, upstream string, trail io.Writer) (string, *headerLog) {
	t.Helper()
	top := "mcp:\n  servers:\n    - name: fs\n      url: " + upstream + "\n"
	cfg, err := config.Parse("mcp.yaml", []byte(top+clientPolicy+mcpInterceptors))
	if err != nil {
		t.Fatalf("config:\n%v", err)
	}
	asm, err := proxy.Build(context.Background(), cfg, trail, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	t.Cleanup(func() { asm.Close() })
	seen := &headerLog{}
	hs := httptest.NewServer(seen.wrap(asm.Server))
	t.Cleanup(hs.Close)
	return hs.URL, seen
}

// checkTrail checks records: each schema-valid, all in one session, their
// sequence numbers gapless from 0; it returns the session and the points
// in order.
func checkTrail(t *testing.T, recs []map[string]any) (session string, points []string) {
	t.Helper()
	schemas, err := specschema.Load()
	if err != nil {
		t.Fatal(err)
	}
	sessions := map[string]int{}
	for i, r := range recs {
		b, _ := json.Marshal(r)
		if err := schemas.ValidateJSON("", b); err != nil {
			t.Errorf("record %d not schema-valid: %v\n%s", i, err, b)
		}
		s, _ := r["session_id"].(string)
		sessions[s]++
		session = s
		if seq, _ := r["sequence"].(float64); int(seq) != i {
			t.Errorf("record %d has sequence %v: the trail has a gap", i, r["sequence"])
		}
		points = append(points, fmt.Sprint(r["interception_point"]))
	}
	if len(sessions) != 1 {
		t.Errorf("the records are in %d sessions, want one: %v", len(sessions), sessions)
	}
	return session, points
}

// preToolDecisions returns the decision of every pre_tool_call record,
// in order (records carry no tool names: those are payload).
func preToolDecisions(recs []map[string]any) []string {
	var out []string
	for _, r := range recs {
		if r["interception_point"] == "pre_tool_call" {
			v, _ := r["verdict"].(map[string]any)
			out = append(out, fmt.Sprint(v["decision"]))
		}
	}
	return out
}

// pointRecords are the records among lines (the trail also holds the
// policy's version lines).
func pointRecords(lines []map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range lines {
		if _, ok := r["interception_point"]; ok {
			out = append(out, r)
		}
	}
	return out
}

// mcpScriptReport is what clients/mcp-sdk.mjs prints.
type mcpScriptReport struct {
	ProtocolVersion string   `json:"protocolVersion"`
	MCPSession      bool     `json:"mcpSession"`
	Server          string   `json:"server"`
	Tools           []string `json:"tools"`
	Calls           []struct {
		IsError bool           `json:"isError"`
		Text    string         `json:"text"`
		Meta    map[string]any `json:"meta"`
		Error   *string        `json:"error"`
	} `json:"calls"`
	Error *string `json:"error"`
}

// TestMCPTypeScriptSDK runs the official TypeScript MCP SDK's client
// (clients/mcp-sdk.mjs) through the gateway's /mcp/fs against the Go
// SDK's server: the listing without the withheld tool, an allowed call,
// a denied one answered as an error result with the policy's reason, a
// withheld tool called anyway, a redacted result; the server sees only
// the allowed calls and the records are one session.
func TestMCPTypeScriptSDK(t *testing.T) {
	node := nodeBinary(t)
	up := startMCPUpstream(t)
	trail := &recordTrail{}
	gw, seen := serveMCPGateway(t, up.url, trail)
	calls, _ := json.Marshal([]map[string]any{
		{"name": "echo", "arguments": map[string]any{"text": "hello"}},
		{"name": "deploy", "arguments": map[string]any{"env": "prod"}},
		{"name": "delete_repo", "arguments": map[string]any{}},
		{"name": "whoami", "arguments": map[string]any{}},
	})
	raw := runScript(t, node, "mcp-sdk.mjs", gateways{root: gw}, "{}", "MCP_SESSION=ts-run-1", "E2E_MCP_CALLS="+string(calls))
	b, _ := json.Marshal(raw)
	var r mcpScriptReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if r.Error != nil {
		t.Fatalf("the client failed: %s", *r.Error)
	}
	if r.Server != "upstream" || !r.MCPSession {
		t.Errorf("connected to server %q, MCP session %v: want the upstream's name and its session", r.Server, r.MCPSession)
	}
	if got := strings.Join(sorted(r.Tools), ","); got != "deploy,echo,whoami" {
		t.Errorf("tools/list through the gateway = %s, want delete_repo withheld", got)
	}
	if len(r.Calls) != 4 {
		t.Fatalf("calls %+v", r.Calls)
	}
	for i, c := range r.Calls {
		if c.Error != nil {
			t.Fatalf("call %d raised %s: a deny must be a tool result", i, *c.Error)
		}
	}
	if c := r.Calls[0]; c.IsError || c.Text != "echo: hello" {
		t.Errorf("allowed call: %+v", c)
	}
	if c := r.Calls[1]; !c.IsError || !strings.Contains(c.Text, mcpDenyMessage) {
		t.Errorf("denied call answered %+v, want an error result with %q", c, mcpDenyMessage)
	} else if v, _ := c.Meta["hooks-gateway/verdict"].(map[string]any); v["code"] != mcpDenyReason {
		t.Errorf("denied call's _meta = %v, want the verdict's code %s", c.Meta, mcpDenyReason)
	}
	if c := r.Calls[2]; !c.IsError || !strings.Contains(c.Text, "not allowed by policy mcp-tools") {
		t.Errorf("withheld tool's call answered %+v, want an error result naming the policy", c)
	}
	if c := r.Calls[3]; c.IsError || c.Text != "operator: [email]" {
		t.Errorf("redacted call: %+v", c)
	}
	if got, want := fmt.Sprint(up.Called()), fmt.Sprint([]string{`echo {"text":"hello"}`, `whoami {}`}); got != want {
		t.Errorf("the server received %s, want %s", got, want)
	}

	recs := pointRecords(trail.since(0))
	session, points := checkTrail(t, recs)
	if !memoryTrailOf(session, "ts-run-1") {
		t.Errorf("the records are in session %q, want the client's Agent-Hooks-Session ts-run-1 (and the memory store's incarnation)", session)
	}
	// initialize, tools/list, then the four calls.
	if got, want := fmt.Sprint(preToolDecisions(recs)), "[allow allow allow deny deny allow]"; got != want {
		t.Errorf("pre_tool_call decisions %s, want %s", got, want)
	}
	t.Logf("protocol %s; points %v", r.ProtocolVersion, points)
	t.Logf("MCP requests (method, Mcp-Method, Mcp-Protocol-Version): %q", seen.calls)
	t.Logf("MCP request headers: %v; session headers %v", seen.names(), seen.values(false, runHeaders...))
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// claudeMCPArgs runs one non-interactive turn of claudeModel as
// claudeArgs does, with server as Claude Code's only MCP server ("fs"),
// the tools of allowed usable without asking.
func claudeMCPArgs(t *testing.T, server map[string]any, prompt string, allowed ...string) []string {
	t.Helper()
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"fs": server}})
	if err != nil {
		t.Fatal(err)
	}
	return []string{"-p", prompt, "--model", claudeModel, "--output-format", "stream-json", "--verbose",
		"--mcp-config", string(cfg), "--strict-mcp-config", "--allowedTools", strings.Join(allowed, ",")}
}

// mcpRunID is the run id the CLI tests give an agent and its MCP
// requests: a UUID, as Claude Code's --session-id requires.
const mcpRunID = "3f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"

// mcpToolTurn is the mock's prompt: in one answer, a call of the tool the
// policy denies, then one it allows.
var mcpToolTurn = "/tool " + mcpDeploy + ` {"env":"prod"}` + "\n/tool " + mcpEcho + ` {"text":"after the deny"}`

// TestClaudeCodeMCP runs Claude Code with an MCP server through the
// gateway: the model asks for a deploy (denied by policy) and an echo in
// one answer; Claude Code must show the policy's reason as the deploy's
// result, run the echo, and finish its run; the server sees only the
// echo. Claude Code sends no session header of its own on MCP requests
// (measured: only its MCP session id), so the configuration names the
// run in both places: --session-id for the model calls, which carry it
// as X-Claude-Code-Session-Id, and the same header in the MCP server's
// headers (Claude Code expands ${RUN_ID} there); then the run's model
// and tool calls are one session.
func TestClaudeCodeMCP(t *testing.T) {
	bin := cliBinary(t, "claude")
	up := startMCPUpstream(t)
	trail := &recordTrail{}
	gw, seen := serveMCPGateway(t, up.url, trail)
	server := map[string]any{
		"type":    "http",
		"url":     gw + "/mcp/fs",
		"headers": map[string]any{"X-Claude-Code-Session-Id": "${RUN_ID}"},
	}
	args := append(claudeMCPArgs(t, server, mcpToolTurn, mcpDeploy, mcpEcho), "--session-id", mcpRunID)
	run := runCLI(t, bin, append(claudeEnv(gw), "RUN_ID="+mcpRunID), args...)
	if run.err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
	}
	events := jsonLines(run.stdout)

	// Claude Code lists what the gateway's tools/list answered.
	var tools []string
	var result map[string]any
	names := map[string]string{} // tool_use id -> name
	type toolResult struct {
		text    string
		isError bool
	}
	results := map[string]toolResult{} // tool name -> its result
	for _, ev := range events {
		switch ev["type"] {
		case "system":
			if ev["subtype"] == "init" {
				for _, n := range ev["tools"].([]any) {
					tools = append(tools, fmt.Sprint(n))
				}
			}
		case "assistant":
			msg, _ := ev["message"].(map[string]any)
			blocks, _ := msg["content"].([]any)
			for _, b := range blocks {
				if block, _ := b.(map[string]any); block["type"] == "tool_use" {
					names[fmt.Sprint(block["id"])] = fmt.Sprint(block["name"])
				}
			}
		case "user":
			msg, _ := ev["message"].(map[string]any)
			blocks, _ := msg["content"].([]any)
			for _, b := range blocks {
				block, _ := b.(map[string]any)
				if block["type"] != "tool_result" {
					continue
				}
				one := map[string]any{"message": map[string]any{"content": []any{block}}}
				isError, _ := block["is_error"].(bool)
				results[names[fmt.Sprint(block["tool_use_id"])]] = toolResult{strings.Join(blockTexts(one, "tool_result"), ""), isError}
			}
		case "result":
			result = ev
		}
	}
	if !slices.Contains(tools, mcpDeploy) || !slices.Contains(tools, mcpEcho) || slices.Contains(tools, mcpDelete) {
		t.Errorf("Claude Code's tools %v: want the gateway's listing, without %s", tools, mcpDelete)
	}
	if r := results[mcpDeploy]; !r.isError || !strings.Contains(r.text, mcpDenyMessage) {
		t.Errorf("the denied call's result shown: %+v, want an error carrying %q", r, mcpDenyMessage)
	}
	if r := results[mcpEcho]; r.isError || r.text != "echo: after the deny" {
		t.Errorf("the allowed call's result shown: %+v", r)
	}
	if answer, _ := result["result"].(string); result["subtype"] != "success" || result["is_error"] != false || !strings.HasPrefix(answer, "tool results:") {
		t.Errorf("the run ended with %v %v %q, want a success with the model's answer to the results", result["subtype"], result["is_error"], answer)
	}
	if got, want := fmt.Sprint(up.Called()), fmt.Sprint([]string{`echo {"text":"after the deny"}`}); got != want {
		t.Errorf("the server received %s, want %s", got, want)
	}

	recs := pointRecords(trail.since(0))
	session, points := checkTrail(t, recs)
	if !memoryTrailOf(session, "claude-code:"+mcpRunID) {
		t.Errorf("the run's session is %q, want claude-code:%s (and the memory store's incarnation)", session, mcpRunID)
	}
	wantMCPToolRound(t, points, recs)
	t.Logf("MCP requests (method, Mcp-Method, Mcp-Protocol-Version): %q", seen.calls)
	t.Logf("MCP request headers: %v; %v", seen.names(), seen.values(false, runHeaders...))
	t.Logf("model request headers: %v", seen.values(true, runHeaders...))
	t.Logf("points %v", points)
}

// wantMCPToolRound checks the points of a run whose model asked for the
// denied and the allowed call in one answer: between that answer's
// post_model_call and the next pre_model_call, two pre_tool_call (one
// denied) and one post_tool_call, in the agent's order.
func wantMCPToolRound(t *testing.T, points []string, recs []map[string]any) {
	t.Helper()
	first := slices.Index(points, "post_model_call")
	next := first + 1 + slices.Index(points[first+1:], "pre_model_call")
	if first < 0 || next <= first {
		t.Fatalf("points %v: want a model call, tool calls, a model call", points)
	}
	var pre, post, denied int
	for i := first + 1; i < next; i++ {
		switch points[i] {
		case "pre_tool_call":
			pre++
			if v, _ := recs[i]["verdict"].(map[string]any); v["decision"] == "deny" {
				denied++
			}
		case "post_tool_call":
			post++
		}
	}
	if pre != 2 || post != 1 || denied != 1 {
		t.Errorf("points %v: between the model calls %d pre_tool_call (%d denied), %d post_tool_call; want 2 (1), 1", points, pre, denied, post)
	}
}

// TestCodexMCP runs Codex with an MCP server through the gateway, as
// TestClaudeCodeMCP runs Claude Code. Codex sends no run id on MCP
// requests either (measured: only Mcp-Session-Id), and its model calls'
// Session-Id is a thread id it makes up at start, so the configuration
// sends Agent-Hooks-Session, from the environment, on both: the model
// provider's env_http_headers and the MCP server's. Codex declares MCP
// tools as namespace tools (mcp__fs with deploy, echo, whoami): the mock's
// "mcp__fs.deploy" is a call into that namespace.
func TestCodexMCP(t *testing.T) {
	bin := cliBinary(t, "codex")
	up := startMCPUpstream(t)
	trail := &recordTrail{}
	gw, seen := serveMCPGateway(t, up.url, trail)
	prompt := "/tool mcp__fs.deploy" + ` {"env":"prod"}` + "\n/tool mcp__fs.echo" + ` {"text":"after the deny"}`
	args := []string{
		"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json",
		"-m", codexModel,
		"-c", `model_provider="gateway"`,
		"-c", `model_providers.gateway={name="gateway", base_url="` + gw + `/v1", wire_api="responses", env_key="GATEWAY_API_KEY", env_http_headers={"Agent-Hooks-Session"="RUN_ID"}}`,
		"-c", `mcp_servers.fs={url="` + gw + `/mcp/fs", env_http_headers={"Agent-Hooks-Session"="RUN_ID"}}`,
		prompt,
	}
	run := runCLI(t, bin, []string{"CODEX_HOME=" + t.TempDir(), "GATEWAY_API_KEY=unused-with-the-mock", "RUN_ID=codex-run-1"}, args...)
	if run.err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
	}
	type mcpItem struct {
		status, text string
	}
	calls := map[string]mcpItem{}
	var answer string
	for _, ev := range jsonLines(run.stdout) {
		item, _ := ev["item"].(map[string]any)
		if ev["type"] != "item.completed" || item == nil {
			continue
		}
		switch item["type"] {
		case "mcp_tool_call":
			result, _ := item["result"].(map[string]any)
			one := map[string]any{"message": map[string]any{"content": []any{map[string]any{"type": "r", "content": result["content"]}}}}
			calls[fmt.Sprint(item["tool"])] = mcpItem{fmt.Sprint(item["status"]), strings.Join(blockTexts(one, "r"), "")}
		case "agent_message":
			answer, _ = item["text"].(string)
		}
	}
	if c := calls["deploy"]; c.status != "failed" || !strings.Contains(c.text, mcpDenyMessage) {
		t.Errorf("the denied call shown as %+v, want a failed call carrying %q", c, mcpDenyMessage)
	}
	if c := calls["echo"]; c.status != "completed" || c.text != "echo: after the deny" {
		t.Errorf("the allowed call shown as %+v", c)
	}
	if !strings.HasPrefix(answer, "tool results:") {
		t.Errorf("final answer %q, want the model's answer to the results", answer)
	}
	if got, want := fmt.Sprint(up.Called()), fmt.Sprint([]string{`echo {"text":"after the deny"}`}); got != want {
		t.Errorf("the server received %s, want %s", got, want)
	}
	recs := pointRecords(trail.since(0))
	session, points := checkTrail(t, recs)
	if !memoryTrailOf(session, "codex-run-1") {
		t.Errorf("the run's session is %q, want the Agent-Hooks-Session codex-run-1 (and the memory store's incarnation)", session)
	}
	wantMCPToolRound(t, points, recs)
	t.Logf("MCP requests (method, Mcp-Method, Mcp-Protocol-Version): %q", seen.calls)
	t.Logf("MCP request headers: %v; %v", seen.names(), seen.values(false, runHeaders...))
	t.Logf("model request headers: %v", seen.values(true, runHeaders...))
	t.Logf("points %v", points)
}

// memoryTrailOf reports whether trail is the trail id the gateway's
// memory store gives the session named name: name, "~" and
// sessions.IncarnationLen lowercase hex digits.
func memoryTrailOf(trail, name string) bool {
	inc, ok := strings.CutPrefix(trail, name+"~")
	return ok && len(inc) == sessions.IncarnationLen && strings.Trim(inc, "0123456789abcdef") == ""
}
