package proxy

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// FuzzParseEmit: the emit API's decoder never panics; it either refuses a
// body with a 400 naming the problem, or returns a valid point, an agent
// and session the engine accepts, and fields that carry neither the members
// it consumed nor any the gateway owns and that satisfy the point's
// conditional requirements.
func FuzzParseEmit(f *testing.F) {
	for _, s := range []string{
		`{"interception_point":"input","agent":{"id":"a","framework":"f"},"session":{"id":"s"},"input":{"content":"hi","role":"user"}}`,
		`{"interception_point":"agent_startup","agent":{"id":"a","framework":"f","name":"n","version":"1"},"session":{"id":"s"}}`,
		`{"interception_point":"agent_shutdown","agent":{"id":"a","framework":"f"},"session":{"id":"s"},"summary":{"reason":"completed"}}`,
		`{"interception_point":"pre_tool_call","agent":{"id":"a","framework":"f"},"session":{"id":"s"},"tool_call":{"id":"c","name":"t","args":{"n":123456789012345678901234567890}}}`,
		`{"interception_point":"post_tool_call","agent":{"id":"a","framework":"f"},"session":{"id":"s"},"tool_call":{"id":"c","name":"t","args":{}},"tool_result":{"content":"x"}}`,
		`{"interception_point":"input","interception_point":"output"}`,
		`{"interception_point":"input","agent":{"id":"a","framework":"F F"},"session":{"id":"s"}}`,
		`{"interception_point":"input","agent":{"id":"a","framework":"f"},"session":{"id":"\u0000"}}`,
		`{"sequence":1}`, `[]`, `""`, ``, `{`, `{"a":"\ud800"}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	s := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	f.Fuzz(func(t *testing.T, body []byte, principal bool) {
		var p Principal
		if principal {
			p = Principal{KeyID: "k1", AgentID: "bound-agent", Tenant: "t1"}
		}
		point, b, fields, err := s.parseEmit(body, p)
		if err != nil {
			var ae *apiError
			switch {
			case errors.As(err, &ae) && ae.status == http.StatusBadRequest && ae.typ == typeInvalid && ae.message != "":
			case errors.As(err, &ae) && principal && ae.status == http.StatusForbidden && ae.code == "identity_mismatch" && ae.param != "":
			default:
				t.Fatalf("refusal is neither a 400 naming the problem nor an identity mismatch: %#v", err)
			}
			return
		}
		if !point.Valid() {
			t.Fatalf("accepted point %q", point)
		}
		if b.Agent.ID == "" || !enforcement.ValidFramework(b.Agent.Framework) {
			t.Fatalf("accepted agent %+v", b.Agent)
		}
		if principal && b.Agent.ID != p.AgentID {
			t.Fatalf("agent.id %q overrides the principal's %q", b.Agent.ID, p.AgentID)
		}
		if err := sessions.ValidateID(b.SessionID); err != nil {
			t.Fatalf("accepted session id: %v", err)
		}
		for _, k := range append(gatewayOwned[:], "interception_point", "agent") {
			if _, ok := fields[k]; ok {
				t.Fatalf("fields carry %q", k)
			}
		}
		if err := enforcement.CheckConditional(point, fields); err != nil {
			t.Fatalf("accepted fields fail CheckConditional: %v", err)
		}
		if tenant, _ := fields["tenant"].(map[string]any); principal && tenant["id"] != p.Tenant {
			t.Fatalf("tenant = %v, want the principal's", fields["tenant"])
		}
	})
}
