// Package mcptest serves a real MCP server (the official Go SDK) over
// Streamable HTTP for tests, recording the tool calls that reach it.
package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Upstream is an MCP server whose tools record their calls.
type Upstream struct {
	Server *mcp.Server
	mu     sync.Mutex
	calls  []string // "tool args-json"
}

// New is an Upstream named "upstream" with no tools yet.
func New(opts *mcp.ServerOptions) *Upstream {
	return &Upstream{Server: mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1.0.0"}, opts)}
}

// TextTool adds the tool name to u: each call is recorded, then answered
// with one text block, reply's text for its arguments.
func TextTool[In any](u *Upstream, name, description string, reply func(In) string) {
	mcp.AddTool(u.Server, &mcp.Tool{Name: name, Description: description},
		func(_ context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
			b, _ := json.Marshal(in)
			u.mu.Lock()
			u.calls = append(u.calls, name+" "+string(b))
			u.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: reply(in)}}}, nil, nil
		})
}

// Serve serves u over Streamable HTTP until t ends and returns its URL.
func (u *Upstream) Serve(t testing.TB, opts *mcp.StreamableHTTPOptions) string {
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.Server }, opts))
	t.Cleanup(hs.Close)
	return hs.URL
}

// Called is the calls that reached u, in order, each "tool args-json".
func (u *Upstream) Called() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.calls...)
}
