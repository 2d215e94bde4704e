package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP scenario: the mock upstream also serves a real MCP server (the
// official Go SDK, stateless Streamable HTTP) at mcpPath; the gateway
// serves it as the configured server mcpServerName.
const (
	mcpPath       = "/mcp"
	mcpServerName = "bench"
	// mcpTool is the tool the load calls: it answers contentBytes of text.
	mcpTool = "read_report"
	// mcpDeniedTool is the tool configs/mcp.yaml's tools deny list
	// forbids; only the deny check calls it.
	mcpDeniedTool = "delete_repo"
	// mcpVersion is the revision the load speaks: stateless, every
	// request self-describing.
	mcpVersion = "2026-07-28"
)

// mcpGatewayPath is the gateway's route to the bench MCP server.
const mcpGatewayPath = "/mcp/" + mcpServerName

// mcpReportArgs are read_report's arguments.
type mcpReportArgs struct {
	Path string `json:"path"`
}

// mcpHandler is the MCP server the upstream role serves: the SDK's
// stateless Streamable HTTP handler (answers as SSE, its default) with
// read_report, answering contentBytes of text, and delete_repo.
func mcpHandler(contentBytes int) http.Handler {
	text := mcpReportText(contentBytes)
	server := mcp.NewServer(&mcp.Implementation{Name: "bench-mcp", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: mcpTool, Description: "Reads a report."},
		func(context.Context, *mcp.CallToolRequest, mcpReportArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: mcpDeniedTool, Description: "Deletes a repository."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil, nil
		})
	// The SDK refuses a loopback request whose Host is not loopback (DNS
	// rebinding); nginx sends its upstream pool's name.
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, DisableLocalhostProtection: true})
}

// mcpReportText is n bytes of report text.
func mcpReportText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "Line %d: revenue grew, costs fell, the outlook is stable. ", i)
	}
	return b.String()[:n]
}

// mcpToolCall is a tools/call request as the official Go SDK's client
// sends it at 2026-07-28: the protocol version, client info and
// capabilities in the request's _meta (the SDK's server refuses a call
// without _meta's protocolVersion, or one that disagrees with the
// Mcp-Protocol-Version header).
func mcpToolCall(id int, tool string, args map[string]any) []byte {
	b, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{
			"_meta": map[string]any{
				"io.modelcontextprotocol/protocolVersion":    mcpVersion,
				"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "hooks-bench", "version": "1.0.0"},
				"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			},
			"name": tool, "arguments": args,
		},
	})
	if err != nil {
		panic(err) // static shapes: cannot fail
	}
	return b
}

// mcpRequest is the load's tools/call.
func mcpRequest() []byte {
	return mcpToolCall(1, mcpTool, map[string]any{"path": "reports/q3.txt"})
}

// mcpHeaders are the transport headers a 2026-07-28 client sends with a
// tools/call of tool: the server checks Mcp-Method and Mcp-Name against
// the body and Mcp-Protocol-Version against its _meta.
func mcpHeaders(tool string) map[string]string {
	return map[string]string{
		"Accept":               "application/json, text/event-stream",
		"Mcp-Protocol-Version": mcpVersion,
		"Mcp-Method":           "tools/call",
		"Mcp-Name":             tool,
	}
}

// checkMCPResult confirms an answer is read_report's result, not an error
// (the gateway answers JSON; the server, direct, an SSE event).
func checkMCPResult(body string) string {
	switch {
	case strings.Contains(body, `"isError":true`) || strings.Contains(body, `"error":`):
		return "the tools/call was answered with an error"
	case !strings.Contains(body, mcpReportText(64)):
		return "the answer lacks the tool's text"
	}
	return ""
}

// mcpDenyCheck calls the denied tool through the gateway at url and
// checks the answer is the tool-point deny: a 200 with an isError result
// carrying the policy's reason. The load never calls that tool.
func mcpDenyCheck(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(mcpToolCall(7, mcpDeniedTool, map[string]any{}))))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range mcpHeaders(mcpDeniedTool) {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("deny check: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("deny check: %w", err)
	}
	var msg struct {
		Result struct {
			IsError bool           `json:"isError"`
			Meta    map[string]any `json:"_meta"`
		} `json:"result"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &msg) != nil || !msg.Result.IsError {
		return fmt.Errorf("deny check: a tools/call of %s answered HTTP %d %s, want an isError result", mcpDeniedTool, resp.StatusCode, oneLine(string(b)))
	}
	v, _ := msg.Result.Meta["hooks-gateway/verdict"].(map[string]any)
	if v["code"] != "policy:tool_not_allowed" || v["interception_point"] != "pre_tool_call" {
		return fmt.Errorf("deny check: the denied call's verdict is %v, want policy:tool_not_allowed at pre_tool_call", v)
	}
	return nil
}
