package conformance

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// TestGatewayMCPConformance runs every vendored vector through the gateway
// with its tool calls on the MCP route, on every model surface: the same
// totals as the gateway harness whose tool points go through the emit API.
func TestGatewayMCPConformance(t *testing.T) {
	for _, api := range GatewayAPIs() {
		t.Run(string(api), func(t *testing.T) {
			requireConformant(t, mustGatewayMCPHarness(t, api))
		})
	}
}

// TestGatewayMCPToolPointParity runs every applicable vendored vector
// through the gateway twice, its tool points emitted through the emit API
// and through the MCP route: the tool points must come from the MCP route
// (api mcp, server ctk, tools/call) in the agent's one session, and every
// context must equal the emit-API run's apart from what names the call
// (request_id, timestamp, extensions, model.params) and what the gateway
// builds itself at a tool point (agent.framework is the gateway's, as at
// the model points, and tool_result.duration_ms is measured).
func TestGatewayMCPToolPointParity(t *testing.T) {
	vectors, err := EmbeddedVectors()
	if err != nil {
		t.Fatal(err)
	}
	api := wire.ChatCompletions
	decl := GatewayMCPDeclaration(api)
	toolPoints := 0
	for _, v := range vectors {
		if len(MissingCapabilities(v, decl)) > 0 {
			continue
		}
		want := runContexts(t, mustGatewayHarness(t, api), v)
		got := runContexts(t, mustGatewayMCPHarness(t, api), v)
		if len(got) != len(want) {
			t.Errorf("%s: %d contexts through MCP, %d through the emit API", v.ID, len(got), len(want))
			continue
		}
		for k := range want {
			point := enforcement.Point(got[k].ctx["interception_point"].(string))
			if point == enforcement.PreToolCall || point == enforcement.PostToolCall {
				toolPoints++
				gw, _ := got[k].ext["hooks_gateway"].(map[string]any)
				if gw["api"] != "mcp" || gw["mcp_server"] != mcpServerName || gw["mcp_method"] != "tools/call" {
					t.Errorf("%s: context %d (%s) did not come from the MCP route: extensions %v", v.ID, k, point, got[k].ext)
				}
				delete(got[k].ctx, "agent")
				delete(want[k].ctx, "agent")
				if tr, ok := got[k].ctx["tool_result"].(map[string]any); ok {
					if _, ok := tr["duration_ms"]; !ok {
						t.Errorf("%s: context %d (%s) has no tool_result.duration_ms", v.ID, k, point)
					}
					delete(tr, "duration_ms")
				}
			}
			g, w := mustJSON(t, got[k].ctx), mustJSON(t, want[k].ctx)
			if g != w {
				t.Errorf("%s: context %d differs from the emit-API run:\n got %s\nwant %s", v.ID, k, g, w)
			}
		}
	}
	if toolPoints == 0 {
		t.Fatal("no vector reached a tool point")
	}
}

// callContext is a recorded context without the members that name the
// call, and its extensions.
type callContext struct {
	ctx map[string]any
	ext map[string]any
}

// runContexts runs v on a harness of factory and returns its recorded
// contexts; it also checks that the records form one session with
// gapless sequence numbers.
func runContexts(t *testing.T, factory HarnessFactory, v *Vector) []callContext {
	t.Helper()
	h := factory()
	name := h.Declaration().Name
	if err := h.Setup(v.Clone()); err != nil {
		t.Fatalf("%s on %s: %v", v.ID, name, err)
	}
	defer h.Teardown()
	rr, err := h.Run(context.Background())
	if err != nil {
		t.Fatalf("%s on %s: %v", v.ID, name, err)
	}
	var sessions []string
	for k, r := range rr.Records {
		rec := r.(map[string]any)
		if id, _ := rec["session_id"].(string); !slices.Contains(sessions, id) {
			sessions = append(sessions, id)
		}
		if seq := mustJSON(t, rec["sequence"]); seq != strconv.Itoa(k) {
			t.Errorf("%s on %s: record %d has sequence %s", v.ID, name, k, seq)
		}
	}
	if len(sessions) > 1 {
		t.Errorf("%s on %s: records in %d sessions %v, want one", v.ID, name, len(sessions), sessions)
	}
	out := make([]callContext, 0, len(rr.Interceptions))
	var trail string
	for _, c := range rr.Interceptions {
		m := c.(map[string]any)
		nameSession(t, m, "ctk-"+v.ID, &trail)
		ext, _ := m["extensions"].(map[string]any)
		delete(m, "extensions")
		delete(m, "request_id")
		delete(m, "timestamp")
		if model, ok := m["model"].(map[string]any); ok {
			delete(model, "params")
		}
		out = append(out, callContext{ctx: m, ext: ext})
	}
	if len(sessions) == 1 && trail != "" && sessions[0] != trail {
		t.Errorf("%s on %s: records in session %q, contexts in %q", v.ID, name, sessions[0], trail)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := jsonvalue.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustGatewayMCPHarness(t *testing.T, api wire.API) HarnessFactory {
	t.Helper()
	f, err := GatewayMCPHarness(api)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// toolErrorVector is a tool answering with its own error (is_error, which
// no upstream vector scripts): post_tool_call sees the value and
// is_error, and the loop goes on with the value as the tool message.
const toolErrorVector = `{"id":"AH-CTK-921","title":"a tool's own error result reaches post_tool_call with is_error","spec_clause":"6.2",
  "capabilities":["model_calls","tool_calls"],
  "scenario":{"input":{"content":"save it","role":"user"},
    "tools":[{"name":"save_file","behavior":[{"return":"disk full","is_error":true}]}],
    "model_script":[
      {"respond":{"content":null,"tool_calls":[{"id":"tc-1","name":"save_file","args":{"path":"a.txt"}}],"finish_reason":"tool_calls"}},
      {"respond":{"content":"Could not save.","tool_calls":[],"finish_reason":"stop"}}]},
  "interceptor_script":[],
  "expect":{"sequence_strict":true,
    "interceptions":[{"interception_point":"agent_startup"},{"interception_point":"input"},
      {"interception_point":"pre_model_call"},{"interception_point":"post_model_call"},
      {"interception_point":"pre_tool_call","context":{"tool_call.id":"tc-1","tool_call.name":"save_file","tool_call.args.path":"a.txt"}},
      {"interception_point":"post_tool_call","context":{"tool_result.value":"disk full","tool_result.is_error":true}},
      {"interception_point":"pre_model_call"},{"interception_point":"post_model_call"},
      {"interception_point":"output"},{"interception_point":"agent_shutdown","context":{"summary.reason":"completed"}}],
    "tool_invocations":[{"name":"save_file","args":{"path":"a.txt"}}],
    "final_output":"Could not save.","run_outcome":"completed"}}`

// TestToolErrorParity runs toolErrorVector on the SDK-local harness and on
// the gateway with its tool points through the emit API and through MCP
// (an isError result of the MCP server).
func TestToolErrorParity(t *testing.T) {
	v, err := ParseVector("tool-error.json", []byte(toolErrorVector))
	if err != nil {
		t.Fatal(err)
	}
	factories := map[string]HarnessFactory{
		"sdk-local":   NewSDKLocalHarness,
		"gateway":     mustGatewayHarness(t, wire.ChatCompletions),
		"gateway-mcp": mustGatewayMCPHarness(t, wire.ChatCompletions),
	}
	for name, factory := range factories {
		for _, r := range Run(context.Background(), factory, []*Vector{v}).Results {
			if r.Status != StatusPass {
				t.Errorf("%s: %s %s:\n  - %s", name, r.ID, r.Status, strings.Join(r.Failures, "\n  - "))
			}
		}
	}
}
