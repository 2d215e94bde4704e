package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

func (g *gateway) emit(t *testing.T, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(g.URL+"/v1/agent-hooks/emit", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("emit answer is not JSON: %s", b)
	}
	return resp.StatusCode, out
}

const emitAgent = `"agent":{"id":"py-agent","framework":"langgraph"},"session":{"id":"emit-1"}`

func TestEmitSessionLifecycle(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: func(c enforcement.Context) enforcement.Verdict {
		if c.Point() != enforcement.PreToolCall {
			return enforcement.Allow()
		}
		args := c["tool_call"].(map[string]any)["args"].(map[string]any)
		switch args["cmd"] {
		case "rm -rf /":
			return enforcement.Deny("policy:destructive", "destructive command")
		case "ls ~":
			return enforcement.TransformTo("$target.cmd", "ls /tmp")
		}
		return enforcement.Allow()
	}})
	// Nothing before agent_startup.
	if st, out := gw.emit(t, `{"interception_point":"input",`+emitAgent+`,"input":{"content":"hi","role":"user"}}`); st != http.StatusConflict || out["error"].(map[string]any)["code"] != "session_not_started" {
		t.Fatalf("input before startup: %d %v", st, out)
	}
	if st, out := gw.emit(t, `{"interception_point":"agent_startup",`+emitAgent+`,"agent_init":{"tools_registered":["shell"]}}`); st != 200 || out["proceed"] != true {
		t.Fatalf("startup: %d %v", st, out)
	}
	if st, out := gw.emit(t, `{"interception_point":"agent_startup",`+emitAgent+`,"agent_init":{"tools_registered":[]}}`); st != http.StatusConflict || out["error"].(map[string]any)["code"] != "session_already_started" {
		t.Fatalf("second startup: %d %v", st, out)
	}
	st, out := gw.emit(t, `{"interception_point":"pre_tool_call",`+emitAgent+`,"tool_call":{"id":"c1","name":"shell","args":{"cmd":"ls ~"}}}`)
	if st != 200 || out["proceed"] != true || out["target"].(map[string]any)["cmd"] != "ls /tmp" {
		t.Fatalf("transform: %d %v", st, out)
	}
	if v := out["verdict"].(map[string]any); v["decision"] != "transform" || v["transform"].(map[string]any)["value"] != "ls /tmp" {
		t.Fatalf("full verdict expected in the answer: %v", v)
	}
	if rec := out["record"].(map[string]any); rec["verdict"].(map[string]any)["transform"].(map[string]any)["value"] != nil {
		t.Fatalf("the record must be the payload-free projection: %v", rec)
	}
	st, out = gw.emit(t, `{"interception_point":"pre_tool_call",`+emitAgent+`,"tool_call":{"id":"c2","name":"shell","args":{"cmd":"rm -rf /"}}}`)
	if st != 200 || out["proceed"] != false || out["verdict"].(map[string]any)["reason"] != "policy:destructive" {
		t.Fatalf("deny: %d %v", st, out)
	}
	// A model call through the gateway joins the same session.
	status, _, body := gw.post(t, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, map[string]string{HeaderSession: "emit-1", HeaderTurnPoints: "client"})
	if status != 200 {
		t.Fatalf("chat in the session: %d %s", status, body)
	}
	if st, out := gw.emit(t, `{"interception_point":"agent_shutdown",`+emitAgent+`,"summary":{"reason":"completed"}}`); st != 200 {
		t.Fatalf("shutdown: %d %v", st, out)
	}
	if st, out := gw.emit(t, `{"interception_point":"agent_shutdown",`+emitAgent+`,"summary":{"reason":"completed"}}`); st != http.StatusConflict || out["error"].(map[string]any)["code"] != "session_ended" {
		t.Fatalf("second shutdown: %d %v", st, out)
	}
	equalPoints(t, gw.records.points("emit-1"), enforcement.AgentStartup, enforcement.PreToolCall, enforcement.PreToolCall,
		enforcement.PreModelCall, enforcement.PostModelCall, enforcement.AgentShutdown)
	for i, r := range gw.records.all() {
		if r.Sequence != int64(i) {
			t.Errorf("record %d (%s) has sequence %d", i, r.InterceptionPoint, r.Sequence)
		}
	}
}

func TestEmitRejectsMalformedBodies(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	gw := newGateway(t, gatewayConfig{upstream: up.URL})
	for _, tc := range []struct{ body, param string }{
		{`[1]`, ""},
		{`{"interception_point":"nope",` + emitAgent + `}`, "interception_point"},
		{`{"interception_point":"input","session":{"id":"x"},"input":{"content":"a","role":"user"}}`, "agent"},
		{`{"interception_point":"input","agent":{"id":"a","framework":"f"},"session":{"id":"has space"},"input":{"content":"a","role":"user"}}`, "session.id"},
		{`{"interception_point":"input",` + emitAgent + `,"sequence":3,"input":{"content":"a","role":"user"}}`, "sequence"},
		{`{"interception_point":"pre_tool_call",` + emitAgent + `,"tool_call":{"id":"c","name":"t"}}`, "tool_call.args"},
		{`{"interception_point":"input","agent":{"id":"a","framework":"Bad Framework"},"session":{"id":"x"},"input":{"content":"a","role":"user"}}`, "agent.framework"},
	} {
		st, out := gw.emit(t, tc.body)
		e, _ := out["error"].(map[string]any)
		if st != http.StatusBadRequest || (tc.param != "" && e["param"] != tc.param) {
			t.Errorf("%s: %d %v, want 400 naming %q", tc.body, st, out, tc.param)
		}
	}
	if n := len(gw.records.all()); n != 0 {
		t.Fatalf("malformed emits produced %d records", n)
	}
}
