package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Every malformed context the per-point schemas reject is a 400 naming the
// member, before the emission is dispatched, sequenced or recorded: the
// next valid emission of the session gets the next sequence number.
func TestEmitValidatesContextsAgainstTheSchemas(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	dispatched := 0
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: func(enforcement.Context) enforcement.Verdict {
		dispatched++
		return enforcement.Allow()
	}})
	const agent = `"agent":{"id":"py-agent","framework":"langgraph"},"session":{"id":"schema-1"}`
	if st, out := gw.emit(t, `{"interception_point":"agent_startup",`+agent+`,"agent_init":{"tools_registered":["shell"]}}`); st != 200 {
		t.Fatalf("startup: %d %v", st, out)
	}
	before := dispatched
	for _, tc := range []struct{ name, body, param string }{
		{"input role enum", `"interception_point":"input","input":{"content":"hi","role":"robot-xyz"}`, "input.role"},
		{"tool_calls not an array", `"interception_point":"post_model_call","model":{"id":"m"},"response":{"content":"x","tool_calls":{"a":1},"finish_reason":"stop"}`, "response.tool_calls"},
		{"tool call args not an object", `"interception_point":"post_model_call","model":{"id":"m"},"response":{"content":"x","tool_calls":[{"name":"t","args":{}},{"name":"t","args":"rm"}],"finish_reason":"stop"}`, "response.tool_calls[1].args"},
		{"is_error not a bool", `"interception_point":"post_tool_call","tool_call":{"id":"c1","name":"t","args":{}},"tool_result":{"value":1,"is_error":"no"}`, "tool_result.is_error"},
		{"summary reason", `"interception_point":"agent_shutdown","summary":{"reason":"bored-xyz"}`, "summary.reason"},
		{"extension namespace name", `"interception_point":"input","input":{"content":"hi","role":"user"},"extensions":{"Acme-Corp":{}}`, "extensions"},
		{"tools_registered not an array", `"interception_point":"agent_startup","agent_init":{"tools_registered":"shell"}`, "agent_init.tools_registered"},
		{"pre_tool_call args not an object", `"interception_point":"pre_tool_call","tool_call":{"id":"c9","name":"t","args":[1]}`, "tool_call.args"},
		{"tool_call closed", `"interception_point":"pre_tool_call","tool_call":{"id":"c9","name":"t","args":{},"extra":1}`, "tool_call"},
		{"content_hash pattern", `"interception_point":"pre_tool_call","tool_call":{"id":"c9","name":"t","args":{},"content_hash":"md5:xyz"}`, "tool_call.content_hash"},
		{"messages not an array", `"interception_point":"pre_model_call","model":{"id":"m"},"messages":{"role":"user"}`, "messages"},
		{"message without role", `"interception_point":"pre_model_call","model":{"id":"m"},"messages":[{"content":"hi"}]`, "messages[0].role"},
		{"model id type", `"interception_point":"pre_model_call","model":{"id":7},"messages":[]`, "model.id"},
		{"usage negative", `"interception_point":"post_model_call","model":{"id":"m"},"response":{"content":"x","tool_calls":[],"finish_reason":"stop"},"usage":{"prompt_tokens":-1}`, "usage.prompt_tokens"},
		{"actor kind enum", `"interception_point":"input","input":{"content":"hi","role":"user"},"actor":{"kind":"robot-xyz"}`, "actor.kind"},
		{"budget type", `"interception_point":"input","input":{"content":"hi","role":"user"},"budgets":{"cost_usd":"lots"}`, "budgets.cost_usd"},
		{"session turn type", `"interception_point":"input","input":{"content":"hi","role":"user"},"session":{"id":"schema-1","turn":"two"}`, "session.turn"},
		{"agent name type", `"interception_point":"input","input":{"content":"hi","role":"user"},"agent":{"id":"py-agent","framework":"langgraph","name":5}`, "agent.name"},
		{"finish_reason type", `"interception_point":"post_model_call","model":{"id":"m"},"response":{"content":"x","tool_calls":[],"finish_reason":null}`, "response.finish_reason"},
		{"output content missing", `"interception_point":"output","output":{}`, "output.content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := "{" + tc.body
			if !strings.Contains(tc.body, `"agent":`) {
				body += `,"agent":{"id":"py-agent","framework":"langgraph"}`
			}
			if !strings.Contains(tc.body, `"session":`) {
				body += `,"session":{"id":"schema-1"}`
			}
			st, out := gw.emit(t, body+"}")
			e, _ := out["error"].(map[string]any)
			if st != http.StatusBadRequest || e["param"] != tc.param {
				t.Fatalf("%d %v, want 400 naming %q", st, out, tc.param)
			}
			if msg, _ := e["message"].(string); strings.Contains(msg, "xyz") || strings.Contains(msg, "rm") {
				t.Errorf("the error quotes the context: %q", msg)
			}
		})
	}
	if dispatched != before {
		t.Errorf("%d malformed contexts reached the interceptor", dispatched-before)
	}
	if n := len(gw.records.points("schema-1")); n != 1 {
		t.Fatalf("malformed contexts were recorded: %d records, want the startup's only", n)
	}
	st, out := gw.emit(t, `{"interception_point":"input",`+agent+`,"input":{"content":"hi","role":"user"},"extensions":{"acme_corp":{"x":1}}}`)
	if st != 200 {
		t.Fatalf("valid input: %d %v", st, out)
	}
	if seq := out["record"].(map[string]any)["sequence"]; seq != float64(1) {
		t.Errorf("the valid emission after the rejected ones got sequence %v, want 1", seq)
	}
}
