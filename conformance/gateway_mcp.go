package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	mcpwire "github.com/hooks-gateway/hooks-gateway/internal/wire/mcp"
)

// The MCP server the MCP harness configures on the gateway: its name (the
// route is mcpRoutePrefix + name) and the revision its requests speak.
const (
	mcpServerName      = "ctk"
	mcpRoutePrefix     = "/mcp/"
	mcpProtocolVersion = mcpwire.StatelessVersion
)

// GatewayMCPDeclaration is the declared surface of the MCP harness on
// api: the gateway harness's, under its own name.
func GatewayMCPDeclaration(api wire.API) Declaration {
	d := GatewayDeclaration(api)
	d.Name = "gateway-mcp/" + string(api)
	return d
}

// GatewayMCPHarness returns the factory of gateway harnesses whose tool
// calls go through the gateway's MCP route: the vector's tools are served
// by a real MCP server (the official Go SDK, stateless Streamable HTTP)
// configured on the gateway as mcp server "ctk" with an empty tool prefix,
// so tool_call.name is the vector's tool name. Each tool call is a
// JSON-RPC tools/call POSTed to /mcp/ctk in the agent's managed session
// (Agent-Hooks-Session), its JSON-RPC id the model's tool call id; the
// gateway emits pre_tool_call and post_tool_call itself. Model calls go
// through the surface's official client and startup, input, output and
// shutdown through the emit API, as in GatewayHarness.
func GatewayMCPHarness(api wire.API) (HarnessFactory, error) {
	s, err := gatewaySurfaceFor(api)
	if err != nil {
		return nil, err
	}
	d := GatewayMCPDeclaration(api)
	return func() Harness { return &gatewayHarness{surface: s, declaration: d, mcpTools: true} }, nil
}

// mcpToolServer serves a vector's mock tools over MCP and keeps the
// invocation log: a call is logged when the server runs it, with the
// arguments it received (the verdicted ones).
type mcpToolServer struct {
	srv *httptest.Server

	mu   sync.Mutex
	log  []ToolInvocation
	errs []error
}

// newMCPToolServer serves tools. A return value is a string (one text
// block) or an object (structuredContent, its JSON as the text block):
// the values the gateway projects back as tool_result.value unchanged.
// The corpus returns nothing else; another value is refused rather than
// served in a form the gateway would read as something else.
func newMCPToolServer(tools []Tool) (*mcpToolServer, error) {
	ts := &mcpToolServer{}
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "ctk-tools", Version: "0.1.0"}, nil)
	for _, t := range tools {
		for i, b := range t.Behavior {
			switch b.Return.(type) {
			case string, map[string]any:
			default:
				return nil, fmt.Errorf("tool %s behavior[%d]: an MCP tool result carries a string or an object, not %T", t.Name, i, b.Return)
			}
		}
		server.AddTool(&mcpsdk.Tool{Name: t.Name, InputSchema: map[string]any{"type": "object"}}, ts.handler(t))
	}
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server },
		&mcpsdk.StreamableHTTPOptions{Stateless: true})
	ts.srv = httptest.NewServer(h)
	return ts, nil
}

// config is the gateway's MCP configuration serving ts.
func (ts *mcpToolServer) config() config.MCP {
	noPrefix := ""
	return config.MCP{Servers: []config.MCPServer{{
		Name: mcpServerName, URL: ts.srv.URL, ToolPrefix: &noPrefix, Timeout: gatewayCallTimeout,
	}}}
}

func (ts *mcpToolServer) close() { ts.srv.Close() }

// handler is tool t: the first behavior clause matching the arguments it
// received answers. No match is a harness error, never a verdict outcome.
func (ts *mcpToolServer) handler(t Tool) mcpsdk.ToolHandler {
	return func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		args := map[string]any{}
		if raw := req.Params.Arguments; len(raw) > 0 {
			v, err := jsonvalue.Decode(raw)
			if err != nil {
				return nil, ts.fail(fmt.Errorf("mock tool %q: arguments: %w", t.Name, err))
			}
			if v != nil {
				obj, ok := v.(map[string]any)
				if !ok {
					return nil, ts.fail(fmt.Errorf("mock tool %q: arguments are not an object", t.Name))
				}
				args = obj
			}
		}
		ret, isError, ok := t.Dispatch(args)
		if !ok {
			return nil, ts.fail(fmt.Errorf("mock tool %q has no behavior for its arguments", t.Name))
		}
		ts.mu.Lock()
		ts.log = append(ts.log, ToolInvocation{Name: t.Name, Args: jsonvalue.DeepCopy(args)})
		ts.mu.Unlock()
		return toolResult(ret, isError)
	}
}

// toolResult is a behavior's return as an MCP tool result.
func toolResult(ret any, isError bool) (*mcpsdk.CallToolResult, error) {
	switch v := ret.(type) {
	case string:
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: v}}, IsError: isError}, nil
	case map[string]any:
		text, err := jsonvalue.Marshal(v)
		if err != nil {
			return nil, err
		}
		return &mcpsdk.CallToolResult{
			Content:           []mcpsdk.Content{&mcpsdk.TextContent{Text: string(text)}},
			StructuredContent: v,
			IsError:           isError,
		}, nil
	}
	return nil, fmt.Errorf("an MCP tool result carries a string or an object, not %T", ret)
}

func (ts *mcpToolServer) fail(err error) error {
	ts.mu.Lock()
	ts.errs = append(ts.errs, err)
	ts.mu.Unlock()
	return err
}

// failure is the server's harness errors, nil without any.
func (ts *mcpToolServer) failure() error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return errors.Join(ts.errs...)
}

// invocations is the log of the tools that ran, in call order.
func (ts *mcpToolServer) invocations() []ToolInvocation {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]ToolInvocation(nil), ts.log...)
}

// mcpToolSeam sends each tool call to the gateway's MCP route as a
// 2026-07-28 (stateless) tools/call, through client (the session's
// transport: Agent-Hooks-Session joins the call to the agent's session).
type mcpToolSeam struct {
	url    string
	client *http.Client
}

// call posts tc as a tools/call whose JSON-RPC id is tc's id and reads
// the answer: an error result carrying the gateway's verdict is a denied
// call ("blocked: <reason>"); any other result is the tool's, whose value
// is its structuredContent, else its one text block's text.
func (s *mcpToolSeam) call(ctx context.Context, tc enforcement.ToolCall) (any, error) {
	args := tc.Args
	if args == nil {
		args = map[string]any{}
	}
	body, err := jsonvalue.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      tc.ID,
		"method":  mcpwire.MethodToolsCall,
		"params": map[string]any{
			"name":      tc.Name,
			"arguments": args,
			"_meta": map[string]any{
				mcpwire.MetaProtocolVersion:    mcpProtocolVersion,
				mcpwire.MetaClientInfo:         map[string]any{"name": "ctk-reference-agent", "version": "0.1.0"},
				mcpwire.MetaClientCapabilities: map[string]any{},
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("tool call %s: %w", tc.ID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, gatewayCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcpwire.HeaderProtocolVersion, mcpProtocolVersion)
	req.Header.Set(mcpwire.HeaderMethod, mcpwire.MethodToolsCall)
	req.Header.Set(mcpwire.HeaderName, tc.Name)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("tool call %s through the gateway's MCP route: %w", tc.ID, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("tool call %s: read the answer: %w", tc.ID, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("tool call %s: the gateway answered HTTP %d: %s", tc.ID, resp.StatusCode, b)
	}
	return readToolAnswer(tc.ID, b)
}

// readToolAnswer reads the gateway's JSON-RPC answer to tools/call id.
func readToolAnswer(id string, b []byte) (any, error) {
	tree, err := jsonvalue.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("tool call %s: the answer is not JSON: %w", id, err)
	}
	msg, _ := tree.(map[string]any)
	if got, ok := msg["id"].(string); !ok || got != id {
		return nil, fmt.Errorf("tool call %s: the answer's id is %v", id, msg["id"])
	}
	if e, ok := msg["error"]; ok {
		return nil, fmt.Errorf("tool call %s: the gateway answered a JSON-RPC error: %v", id, e)
	}
	result, ok := msg["result"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("tool call %s: the answer has no result object", id)
	}
	if result["isError"] == true {
		meta, _ := result["_meta"].(map[string]any)
		if verdict, ok := meta[mcpwire.VerdictMetaKey].(map[string]any); ok {
			reason, _ := verdict["code"].(string)
			return "blocked: " + reason, nil
		}
	}
	if sc, ok := result["structuredContent"]; ok {
		return sc, nil
	}
	content, _ := result["content"].([]any)
	if len(content) == 1 {
		if block, ok := content[0].(map[string]any); ok && block["type"] == "text" {
			if text, ok := block["text"].(string); ok {
				return text, nil
			}
		}
	}
	return nil, fmt.Errorf("tool call %s: the result is neither structured nor one text block", id)
}
