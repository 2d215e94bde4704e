package proxy_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/mcptest"
	"github.com/hooks-gateway/hooks-gateway/internal/specschema"
	"github.com/hooks-gateway/hooks-gateway/proxy"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// mcpUpstream is a real MCP server (the official Go SDK) over Streamable
// HTTP, recording the tool calls that reach it: echo, fetch, whoami and
// delete_repo.
type mcpUpstream struct {
	*mcptest.Upstream
	url string
}

func newMCPUpstream(t *testing.T, stateless bool) *mcpUpstream {
	t.Helper()
	u := mcptest.New(&mcp.ServerOptions{Instructions: "Use echo to repeat text."})
	mcptest.TextTool(u, "echo", "Repeats text.", func(in struct {
		Text string `json:"text"`
	}) string {
		return "echo: " + in.Text
	})
	mcptest.TextTool(u, "fetch", "Fetches a URL.", func(in struct {
		URL string `json:"url"`
	}) string {
		return "fetched " + in.URL
	})
	mcptest.TextTool(u, "whoami", "Says who the operator is.", func(struct{}) string { return "operator: ops@example.com" })
	mcptest.TextTool(u, "delete_repo", "Deletes a repository.", func(struct{}) string { return "deleted" })
	return &mcpUpstream{Upstream: u, url: u.Serve(t, &mcp.StreamableHTTPOptions{Stateless: stateless})}
}

// headerTransport adds headers to every request, as an agent's MCP client
// configuration does.
type headerTransport struct {
	h    map[string]string
	base http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// startMCPGateway serves a gateway with the MCP server up as "fs" under
// the interceptors of policy.
func startMCPGateway(t *testing.T, up *mcpUpstream, policy string) (string, *syncBuffer) {
	t.Helper()
	records := &syncBuffer{}
	doc := `listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: mock
    type: mock
mcp:
  servers:
    - name: fs
      url: ` + up.url + `
sessions:
  store: memory
records:
  sinks:
    - type: stdout
interceptors:
` + policy
	return serveDoc(t, "mcp.yaml", doc, records, nil), records
}

const mcpPolicy = `  - name: tools
    type: tools
    points: [pre_tool_call, post_tool_call]
    deny: ["mcp__fs__delete_*"]
    arguments:
      - tool: mcp__fs__fetch
        properties:
          url: {type: string, pattern: "^https://docs[.]example/", on_violation: replace, replacement: "https://docs.example/"}
  - name: redact-email
    type: regex
    points: [post_tool_call]
    action: redact
    scope: target
    patterns: ['[a-z]+@example[.]com']
    replacement: "[email]"
`

func connectMCP(t *testing.T, url string, headers map[string]string, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1.0.0"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: headerTransport{h: headers, base: http.DefaultTransport}},
		MaxRetries: -1,
	}
	cs, err := client.Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect through the gateway: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func textOf(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range r.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %T, want text", c)
		}
		b.WriteString(tc.Text)
	}
	return b.String()
}

// mcpRecords are the records of the stdout sink, decoded, each checked
// against the spec's record schema.
func mcpRecords(t *testing.T, out string) []map[string]any {
	t.Helper()
	schemas, err := specschema.Load()
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(line, `"interception_point"`) {
			continue
		}
		if err := schemas.ValidateJSON("", []byte(line)); err != nil {
			t.Errorf("record not schema-valid: %v\n%s", err, line)
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

func TestMCPToolCallsThroughTheGateway(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stateless bool
		version   string
	}{
		{"2025-06-18 session", false, "2025-06-18"},
		{"2025-11-25 session", false, "2025-11-25"},
		{"2026-07-28 stateless", true, "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newMCPUpstream(t, tc.stateless)
			gw, out := startMCPGateway(t, up, mcpPolicy)
			cs := connectMCP(t, gw+"/mcp/fs", map[string]string{"Agent-Hooks-Session": "run-1"}, tc.version)
			ctx := context.Background()

			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			if strings.Join(names, ",") != "echo,fetch,whoami" {
				t.Errorf("tools/list through the gateway = %v, want the denied delete_repo withheld", names)
			}

			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
			if err != nil || r.IsError || textOf(t, r) != "echo: hello" {
				t.Fatalf("allowed call: %v %+v", err, r)
			}

			r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete_repo", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if !r.IsError || !strings.Contains(textOf(t, r), "not allowed by policy tools") {
				t.Errorf("denied call answered %+v, want an error result with the policy's reason", r)
			}
			if v, ok := r.Meta["hooks-gateway/verdict"].(map[string]any); !ok || v["code"] != "policy:tool_not_allowed" || v["interception_point"] != "pre_tool_call" {
				t.Errorf("denied call's _meta verdict = %v", r.Meta)
			}

			r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": "https://evil.example/x"}})
			if err != nil || r.IsError || textOf(t, r) != "fetched https://docs.example/" {
				t.Errorf("rewritten call: %v %+v", err, r)
			}

			r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
			if err != nil || r.IsError || textOf(t, r) != "operator: [email]" {
				t.Errorf("redacted result: %v %+v", err, r)
			}

			calls := up.Called()
			want := []string{`echo {"text":"hello"}`, `fetch {"url":"https://docs.example/"}`, `whoami {}`}
			if fmt.Sprint(calls) != fmt.Sprint(want) {
				t.Errorf("the server received %q, want %q (the denied call never, the rewrite applied)", calls, want)
			}

			cs.Close()
			recs := mcpRecords(t, out.String())
			var points []string
			trail := proxy.NewOneTrail("run-1") // run-1 and the incarnation the memory store minted
			for i, rec := range recs {
				if id, _ := rec["session_id"].(string); !trail.Is(t, id) {
					t.Errorf("record %d in session %v, want run-1's trail", i, rec["session_id"])
				}
				if seq, _ := rec["sequence"].(float64); int(seq) != i {
					t.Errorf("record %d has sequence %v: the trail has a gap", i, rec["sequence"])
				}
				points = append(points, fmt.Sprint(rec["interception_point"]))
			}
			if len(points) == 0 || points[0] != "agent_startup" {
				t.Fatalf("points %v, want the session's agent_startup first", points)
			}
			pre, post := strings.Count(strings.Join(points, " "), "pre_tool_call"), strings.Count(strings.Join(points, " "), "post_tool_call")
			if pre != post+1 { // the denied call has no post
				t.Errorf("points %v: %d pre_tool_call, %d post_tool_call", points, pre, post)
			}
		})
	}
}

// TestMCPSessionIDsAreSealed: the client holds the gateway's seal of the
// MCP session id the server issued, never the id itself; an id the
// gateway did not seal is an unknown session (404: start a new one).
func TestMCPSessionIDsAreSealed(t *testing.T) {
	up := newMCPUpstream(t, false)
	gw, _ := startMCPGateway(t, up, mcpPolicy)
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	status, hdr, body := mcpPost(t, gw+"/mcp/fs", initBody, h)
	sid := hdr.Get("Mcp-Session-Id")
	if status != 200 || !strings.HasPrefix(sid, "hgs1_") {
		t.Fatalf("initialize: %d, session id %q, body %s; want the gateway's seal", status, sid, body)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	h["Mcp-Session-Id"] = sid
	h["Mcp-Protocol-Version"] = "2025-11-25"
	if status, _, body := mcpPost(t, gw+"/mcp/fs", list, h); status != 200 || !strings.Contains(string(body), `"echo"`) {
		t.Fatalf("tools/list in the sealed session: %d %s", status, body)
	}
	t.Cleanup(func() { // end the server's session: its goroutines with it
		req, _ := http.NewRequest(http.MethodDelete, gw+"/mcp/fs", nil)
		req.Header.Set("Mcp-Session-Id", sid)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	for _, forged := range []string{"not-a-seal", sid[:len(sid)-2] + "AA"} {
		h["Mcp-Session-Id"] = forged
		if status, _, body := mcpPost(t, gw+"/mcp/fs", list, h); status != http.StatusNotFound || !strings.Contains(string(body), "initialize a new one") {
			t.Errorf("session id %q: %d %s, want 404", forged, status, body)
		}
	}
}

// mcpPost posts body to url with headers h.
func mcpPost(t *testing.T, url, body string, h map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// One agent run across two replicas on one Redis: its model calls through
// one replica and its MCP tool calls through the other are one trail, in
// the order they were made, gapless.
func TestMCPAndModelCallsShareOneTrailAcrossReplicas(t *testing.T) {
	rs := redistest.StartServer(t)
	t.Setenv(config.EnvRedisURL, "")
	up := newMCPUpstream(t, true)
	replica := func() (string, *syncBuffer) {
		records := &syncBuffer{}
		doc := `listeners:
  http: "127.0.0.1:0"
upstreams:
  - {name: mock, type: mock}
mcp:
  servers:
    - {name: fs, url: "` + up.url + `"}
sessions:
  store: redis
  redis_url: ` + rs.URL() + `
records:
  sinks:
    - type: stdout
interceptors:
  - {name: pass, type: allow}
`
		return serveDoc(t, "replica.yaml", doc, records, nil), records
	}
	a, recA := replica()
	b, recB := replica()
	session := map[string]string{"Agent-Hooks-Session": "run-across"}

	chat := func() {
		status, _, body := mcpPost(t, a+"/v1/chat/completions", `{"model":"mock","messages":[{"role":"user","content":"hi"}]}`,
			map[string]string{"Content-Type": "application/json", "Agent-Hooks-Session": "run-across"})
		if status != 200 {
			t.Fatalf("model call: %d %s", status, body)
		}
	}
	chat()
	cs := connectMCP(t, b+"/mcp/fs", session, "2026-07-28")
	if r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil || r.IsError {
		t.Fatalf("tool call: %v %+v", err, r)
	}
	chat()

	recs := append(mcpRecords(t, recA.String()), mcpRecords(t, recB.String())...)
	slices.SortFunc(recs, func(x, y map[string]any) int { return cmp.Compare(x["sequence"].(float64), y["sequence"].(float64)) })
	var got []string
	for i, r := range recs {
		if r["session_id"] != "run-across" || int(r["sequence"].(float64)) != i {
			t.Fatalf("record %d: session %v sequence %v: want one gapless trail", i, r["session_id"], r["sequence"])
		}
		if p := r["interception_point"].(string); p != "input" && p != "output" {
			got = append(got, p)
		}
	}
	want := "agent_startup pre_model_call post_model_call pre_tool_call post_tool_call pre_tool_call post_tool_call pre_model_call post_model_call"
	if strings.Join(got, " ") != want { // server/discover, then the tool call
		t.Errorf("trail %v\nwant %s", got, want)
	}
}

// Resources and prompts carry a server's text to the model: they reach
// the client only through post_tool_call, where the redaction applies, and
// a deny glob on a method refuses it before the server is asked.
func TestMCPResourcesAndPromptsAreJudged(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	var reads atomic.Int32
	server.AddResource(&mcp.Resource{URI: "file:///team.md", Name: "team", MIMEType: "text/markdown"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			reads.Add(1)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: "owner: lead@example.com"}}}, nil
		})
	server.AddPrompt(&mcp.Prompt{Name: "review", Description: "Review as ops@example.com would."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "ask ops@example.com first"}}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(hs.Close)
	policy := mcpPolicy + `  - name: no-templates
    type: tools
    deny: ["mcp__fs__/resources/templates/list"]
`
	gw, _ := startMCPGateway(t, &mcpUpstream{url: hs.URL}, policy)
	cs := connectMCP(t, gw+"/mcp/fs", nil, "2025-11-25")
	ctx := context.Background()

	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///team.md"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "owner: [email]" {
		t.Fatalf("resources/read: %v %+v", err, r)
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Description != "Review as [email] would." {
		t.Fatalf("prompts/list: %v %+v", err, prompts)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review"})
	if err != nil || len(p.Messages) != 1 || p.Messages[0].Content.(*mcp.TextContent).Text != "ask [email] first" {
		t.Fatalf("prompts/get: %v %+v", err, p)
	}
	if _, err := cs.ListResourceTemplates(ctx, nil); err == nil || !strings.Contains(err.Error(), "not allowed by policy no-templates") {
		t.Errorf("a denied method: %v, want the policy's refusal", err)
	}
	if reads.Load() != 1 {
		t.Errorf("the server read the resource %d times", reads.Load())
	}
}

// A session-based server answers server/discover (2026-07-28) with the
// revisions it speaks; the answer is judged like any other and the
// official client, asking for its latest revision first, negotiates down
// to 2025-11-25 through the gateway.
func TestMCPVersionNegotiationThroughTheGateway(t *testing.T) {
	up := newMCPUpstream(t, false)
	gw, out := startMCPGateway(t, up, mcpPolicy)
	cs := connectMCP(t, gw+"/mcp/fs", map[string]string{"Agent-Hooks-Session": "negotiate"}, "") // the client's latest: 2026-07-28
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("negotiated %s, want 2025-11-25", v)
	}
	if r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil || r.IsError {
		t.Fatalf("a call after negotiating: %v %+v", err, r)
	}
	cs.Close()
	var methods []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, `"interception_point":"pre_tool_call"`) {
			methods = append(methods, line)
		}
	}
	if len(methods) != 3 { // server/discover, initialize, tools/call
		t.Errorf("%d pre_tool_call records, want 3 (discover, initialize, the call)", len(methods))
	}
}

// A session-based server refuses a 2026-07-28 request with HTTP 400 and a
// JSON-RPC error listing the revisions it speaks: the client receives the
// error, judged, with the revisions to negotiate with.
func TestMCPServerRefusalIsJudged(t *testing.T) {
	up := newMCPUpstream(t, false)
	gw, out := startMCPGateway(t, up, mcpPolicy)
	list := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	status, _, body := mcpPost(t, gw+"/mcp/fs", list, map[string]string{"Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
	var answer struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
			Data struct {
				Supported []string `json:"supported"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || status != 200 || answer.ID != 7 || answer.Error.Code != -32022 || !slices.Contains(answer.Error.Data.Supported, "2025-11-25") {
		t.Fatalf("refused tools/list: %d %s; want the server's -32022 with its revisions", status, body)
	}
	if !strings.Contains(out.String(), `"interception_point":"post_tool_call"`) {
		t.Error("the refusal reached the client without post_tool_call")
	}
}
