package proxy_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP traffic shows in /metrics by server, method and outcome, and at
// the tool points, with no tool name or argument in any label.
func TestMCPMetrics(t *testing.T) {
	up := newMCPUpstream(t, true)
	gw, _ := startMCPGateway(t, up, mcpPolicy)
	cs := connectMCP(t, gw+"/mcp/fs", map[string]string{"Agent-Hooks-Session": "run-m"}, "2026-07-28")
	ctx := context.Background()

	if _, err := cs.ListTools(ctx, nil); err != nil { // delete_repo withheld: transformed
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"echo", map[string]any{"text": "hello"}},                  // allowed
		{"delete_repo", map[string]any{}},                          // denied at pre_tool_call
		{"fetch", map[string]any{"url": "https://evil.example/x"}}, // arguments rewritten
		{"whoami", nil}, // result redacted
	} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args}); err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// A method the gateway does not mediate, named like a tool: refused,
	// counted as "other".
	rpc(t, gw+"/mcp/fs", `{"jsonrpc":"2.0","id":9,"method":"delete_repo/now","params":{}}`)
	// A body that is not JSON-RPC: an error, counted as "other".
	rpc(t, gw+"/mcp/fs", `{"jsonrpc":"2.0","id":10,"method":`)
	// A notification is not a request: not counted.
	rpc(t, gw+"/mcp/fs", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}}`)

	text := scrapeMetrics(t, gw)
	for _, want := range []string{
		`hooks_gateway_mcp_requests_total{method="tools/call",outcome="allowed",server="fs"} 1`,
		`hooks_gateway_mcp_requests_total{method="tools/call",outcome="denied",server="fs"} 1`,
		`hooks_gateway_mcp_requests_total{method="tools/call",outcome="transformed",server="fs"} 2`,
		`hooks_gateway_mcp_requests_total{method="tools/list",outcome="transformed",server="fs"} 1`,
		`hooks_gateway_mcp_requests_total{method="ping",outcome="allowed",server="fs"} 1`,
		`hooks_gateway_mcp_requests_total{method="other",outcome="denied",server="fs"} 1`,
		`hooks_gateway_mcp_requests_total{method="other",outcome="error",server="fs"} 1`,
		`hooks_gateway_mcp_requests_total{method="server/discover",outcome="allowed",server="fs"} 1`,
		`agent_hooks_emissions_total{decision="deny",mode="enforce",point="pre_tool_call",reason_class="policy"} 1`,
		`agent_hooks_interceptor_verdicts_total{decision="deny",interceptor="tools",point="pre_tool_call"} 1`,
		`agent_hooks_transforms_applied_total{point="pre_tool_call"} 1`,
		`agent_hooks_transforms_applied_total{point="post_tool_call"} 2`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, re := range []string{
		`agent_hooks_emissions_total\{decision="allow",mode="enforce",point="post_tool_call",reason_class="none"\} [1-9]`,
		`hooks_gateway_requests_total\{api="mcp",code="200",route="/mcp/\{server\}"\} [1-9]`,
		`hooks_gateway_overhead_seconds_count\{route="/mcp/\{server\}"\} [1-9]`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("/metrics has no series matching %s", re)
		}
	}
	if n := strings.Count(text, "hooks_gateway_mcp_requests_total{"); n != 8 {
		t.Errorf("%d hooks_gateway_mcp_requests_total series, want 8:\n%s", n, grepLines(text, "hooks_gateway_mcp_requests_total{"))
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, payload := range []string{"echo", "delete_repo", "whoami", "fetch", "hello", "evil.example", "run-m"} {
			if strings.Contains(line, payload) {
				t.Errorf("a series carries %q from the traffic: %s", payload, line)
			}
		}
	}
}

// rpc posts one JSON-RPC body to url and drains the answer.
func rpc(t *testing.T, url, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// scrapeMetrics is the gateway's /metrics exposition.
func scrapeMetrics(t *testing.T, gw string) string {
	t.Helper()
	resp, err := http.Get(gw + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
