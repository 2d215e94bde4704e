package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An escalated tool call waits in the approval queue; the server sees it
// only once an operator approved it, and a rejected one never.
func TestMCPToolCallEscalatesToTheApprovalQueue(t *testing.T) {
	var calls atomic.Int32
	server := mcp.NewServer(&mcp.Implementation{Name: "deploy", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "deploy"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		calls.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deployed"}}}, nil, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(up.Close)

	src := strings.Replace(approvalsConfig("1m", "mcp:\n  servers:\n    - {name: ops, url: \""+up.URL+"\"}\n"),
		`  - name: ask-first
    type: deny
    points: [pre_model_call]
    reason: policy:needs_approval
    message: every model call needs an operator
    escalate: true
`, `  - name: ask-first
    type: cel
    rules:
      - name: deploys
        points: [pre_tool_call]
        when: 'context.tool_call.name == "mcp__ops__deploy"'
        escalate: {reason: policy:needs_approval, message: a deploy needs an operator}
`, 1)
	src = strings.Replace(src, `redact_paths: ["$target[0].content"]`, `redact_paths: []`, 1)
	gw := approvalsGateway(t, src)

	call := func(session string) <-chan *mcp.CallToolResult {
		out := make(chan *mcp.CallToolResult, 1)
		go func() {
			client := mcp.NewClient(&mcp.Implementation{Name: "ops-agent", Version: "1"}, nil)
			hc := &http.Client{Transport: sessionHeader{session: session, base: http.DefaultTransport}}
			cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: gw.URL + "/mcp/ops", HTTPClient: hc, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
			if err != nil {
				t.Errorf("connect: %v", err)
				out <- nil
				return
			}
			defer cs.Close()
			r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy"})
			if err != nil {
				t.Errorf("call: %v", err)
			}
			out <- r
		}()
		return out
	}

	approved := call("sess-approve")
	a := pendingFor(t, gw.URL, "sess-approve")
	if calls.Load() != 0 {
		t.Fatal("the server was called before the approval")
	}
	if status, body := admin(t, http.MethodPost, gw.URL+"/admin/approvals/"+a.ID, "application/json", `{"decision":"approve"}`); status != http.StatusOK {
		t.Fatalf("approve: %d %s", status, body)
	}
	if r := <-approved; r == nil || r.IsError || calls.Load() != 1 {
		t.Fatalf("approved call: %+v, server calls %d", r, calls.Load())
	}

	rejected := call("sess-reject")
	a = pendingFor(t, gw.URL, "sess-reject")
	if status, body := admin(t, http.MethodPost, gw.URL+"/admin/approvals/"+a.ID, "application/json", `{"decision":"reject"}`); status != http.StatusOK {
		t.Fatalf("reject: %d %s", status, body)
	}
	r := <-rejected
	if r == nil || !r.IsError || calls.Load() != 1 {
		t.Fatalf("rejected call: %+v, server calls %d; want an error result and no call", r, calls.Load())
	}
	if text := r.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "rejected by an administrator") {
		t.Errorf("rejected call's text %q, want the rejection", text)
	}
	if v, _ := r.Meta["hooks-gateway/verdict"].(map[string]any); v["interception_point"] != "pre_tool_call" || v["type"] != "agent_hooks_denied" {
		t.Errorf("rejected call's verdict %v", v)
	}
}

// sessionHeader names the managed session on every request.
type sessionHeader struct {
	session string
	base    http.RoundTripper
}

func (h sessionHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(HeaderSession, h.session)
	return h.base.RoundTrip(r)
}
