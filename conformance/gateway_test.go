package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/proxy"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// TestGatewayConformance runs every vendored vector through the gateway
// harness: the real gateway over HTTP, driven by the SDK's remote session
// and openai-go. It must match the SDK-local result: every applicable
// vector passes, and the only skips are the streaming/incremental part.
func TestGatewayConformance(t *testing.T) { requireConformant(t, NewGatewayHarness) }

// modelPointVectors exercise the model seam, which the upstream corpus
// never scripts a verdict at (CTK.md §2.2: "pre_model_call … No vector
// tests this"): deny and transform at pre_model_call and post_model_call,
// in both modes. Both harnesses must agree on them.
var modelPointVectors = []string{
	`{"id":"AH-CTK-901","title":"deny at pre_model_call blocks the run","spec_clause":"6",
	  "capabilities":["model_calls"],
	  "scenario":{"input":{"content":"hi","role":"user"},
	    "model_script":[{"respond":{"content":"UNREACHED","tool_calls":[],"finish_reason":"stop"}}]},
	  "interceptor_script":[{"at":"pre_model_call","return":{"decision":"deny","reason":"ctk:no-model"}}],
	  "expect":{"sequence_strict":true,
	    "interceptions":[{"interception_point":"agent_startup"},{"interception_point":"input"},
	      {"interception_point":"pre_model_call","context":{"messages[0].content":"hi"}},
	      {"interception_point":"agent_shutdown","context":{"summary.reason":"error"}}],
	    "interceptions_absent":["post_model_call","output"],
	    "records":[{"interception_point":"pre_model_call","assert":{"verdict.decision":"deny","verdict.reason":"ctk:no-model","decided_by":0}}],
	    "final_output":null,"run_outcome":"blocked","identities_equal":true}}`,

	`{"id":"AH-CTK-902","title":"deny at post_model_call discards the response and blocks the run","spec_clause":"6.1",
	  "capabilities":["model_calls","tool_calls"],
	  "scenario":{"input":{"content":"hi","role":"user"},
	    "tools":[{"name":"calculator","behavior":[{"return":"UNREACHED"}]}],
	    "model_script":[{"respond":{"content":null,"tool_calls":[{"id":"tc-1","name":"calculator","args":{"expr":"2+2"}}],"finish_reason":"tool_calls"}}]},
	  "interceptor_script":[{"at":"post_model_call","match":{"response.tool_calls[0].name":"calculator"},
	    "return":{"decision":"deny","reason":"ctk:bad-plan"}}],
	  "expect":{"sequence_strict":true,
	    "interceptions":[{"interception_point":"agent_startup"},{"interception_point":"input"},
	      {"interception_point":"pre_model_call"},
	      {"interception_point":"post_model_call","context":{"response.content":null,"response.tool_calls[0].args.expr":"2+2","response.finish_reason":"tool_calls"}},
	      {"interception_point":"agent_shutdown","context":{"summary.reason":"error"}}],
	    "tool_not_invoked":["calculator"],
	    "records":[{"interception_point":"post_model_call","assert":{"verdict.decision":"deny","verdict.reason":"ctk:bad-plan"}}],
	    "final_output":null,"run_outcome":"blocked"}}`,

	`{"id":"AH-CTK-903","title":"transform at post_model_call rewrites tool-call arguments the agent acts on","spec_clause":"5.2, 6",
	  "capabilities":["model_calls","tool_calls"],
	  "scenario":{"input":{"content":"what is 2+2","role":"user"},
	    "tools":[{"name":"calculator","behavior":[{"when_args":{"expr":"1+1"},"return":"2"},{"return":"WRONG"}]}],
	    "model_script":[
	      {"respond":{"content":null,"tool_calls":[{"id":"tc-1","name":"calculator","args":{"expr":"2+2"}}],"finish_reason":"tool_calls"}},
	      {"respond":{"content":"The answer is 2.","tool_calls":[],"finish_reason":"stop"}}]},
	  "interceptor_script":[{"at":"post_model_call","match":{"response.tool_calls[0].args.expr":"2+2"},
	    "return":{"decision":"transform","reason":"ctk:rewrite","transform":{"path":"$target.tool_calls[0].args.expr","value":"1+1"}}}],
	  "expect":{"sequence_strict":true,
	    "interceptions":[{"interception_point":"agent_startup"},{"interception_point":"input"},
	      {"interception_point":"pre_model_call"},{"interception_point":"post_model_call"},
	      {"interception_point":"pre_tool_call","context":{"tool_call.args.expr":"1+1"}},
	      {"interception_point":"post_tool_call","context":{"tool_result.value":"2"}},
	      {"interception_point":"pre_model_call"},
	      {"interception_point":"post_model_call"},
	      {"interception_point":"output","context":{"output.content":"The answer is 2."}},
	      {"interception_point":"agent_shutdown","context":{"summary.reason":"completed"}}],
	    "tool_invocations":[{"name":"calculator","args":{"expr":"1+1"}}],
	    "final_output":"The answer is 2.","run_outcome":"completed"}}`,

	`{"id":"AH-CTK-904","title":"transform at post_model_call rewrites the final content","spec_clause":"5.2, 6",
	  "capabilities":["model_calls"],
	  "scenario":{"input":{"content":"hi","role":"user"},
	    "model_script":[{"respond":{"content":"the secret is X","tool_calls":[],"finish_reason":"stop"}}]},
	  "interceptor_script":[{"at":"post_model_call",
	    "return":{"decision":"transform","reason":"ctk:redact","transform":{"path":"$target.content","value":"[redacted]"}}}],
	  "expect":{"sequence_strict":true,
	    "interceptions":[{"interception_point":"agent_startup"},{"interception_point":"input"},
	      {"interception_point":"pre_model_call"},
	      {"interception_point":"post_model_call","context":{"response.content":"the secret is X"}},
	      {"interception_point":"output","context":{"output.content":"[redacted]"}},
	      {"interception_point":"agent_shutdown"}],
	    "records":[{"interception_point":"post_model_call","assert":{"verdict.decision":"transform","verdict.transform.path":"$target.content"},"absent":["verdict.transform.value"]}],
	    "final_output":"[redacted]","run_outcome":"completed","identities_equal":false}}`,

	`{"id":"AH-CTK-905","title":"evaluate_only: denies at the model points are recorded and change nothing","spec_clause":"8",
	  "capabilities":["model_calls"],"mode":"evaluate_only",
	  "scenario":{"input":{"content":"hi","role":"user"},
	    "model_script":[{"respond":{"content":"Hello!","tool_calls":[],"finish_reason":"stop"}}]},
	  "interceptor_script":[{"at":"pre_model_call","return":{"decision":"deny","reason":"ctk:pre"}},
	    {"at":"post_model_call","return":{"decision":"deny","reason":"ctk:post"}}],
	  "expect":{"sequence_strict":true,
	    "interceptions":[{"interception_point":"agent_startup"},{"interception_point":"input"},
	      {"interception_point":"pre_model_call"},{"interception_point":"post_model_call"},
	      {"interception_point":"output"},{"interception_point":"agent_shutdown","context":{"summary.reason":"completed"}}],
	    "records":[{"interception_point":"pre_model_call","assert":{"mode":"evaluate_only","verdict.reason":"ctk:pre"}},
	      {"interception_point":"post_model_call","assert":{"mode":"evaluate_only","verdict.reason":"ctk:post"}}],
	    "final_output":"Hello!","run_outcome":"completed"}}`,
}

// TestModelPointParity runs the model-seam vectors through the SDK-local
// harness and the gateway on every surface it serves.
func TestModelPointParity(t *testing.T) {
	vectors := make([]*Vector, 0, len(modelPointVectors))
	for i, src := range modelPointVectors {
		v, err := ParseVector(fmt.Sprintf("model-point-%d.json", i), []byte(src))
		if err != nil {
			t.Fatalf("vector %d: %v", i, err)
		}
		vectors = append(vectors, v)
	}
	factories := map[string]HarnessFactory{"sdk-local": NewSDKLocalHarness}
	for _, api := range parityAPIs() {
		factories["gateway/"+string(api)] = mustGatewayHarness(t, api)
	}
	for name, factory := range factories {
		report := Run(context.Background(), factory, vectors)
		for _, r := range report.Results {
			if r.Status != StatusPass {
				t.Errorf("%s: %s (%s) %s:\n  - %s", name, r.ID, r.Title, r.Status, strings.Join(r.Failures, "\n  - "))
			}
		}
	}
}

// TestCompletionBody pins the scripted upstream's wire shape: null content
// stays null, arguments are the exact JSON text of the args (big integer
// tokens intact), missing args are {}, no tool_calls member without calls.
func TestCompletionBody(t *testing.T) {
	big := Response{
		Content: nil,
		ToolCalls: []ToolCall{
			{ID: "tc-1", Name: "wire_transfer", Args: map[string]any{"id": json.Number("9007199254740993")}},
			{ID: "tc-2", Name: "noop"},
		},
		FinishReason: "tool_calls",
	}
	b, err := completionBody(0, big)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"content":null`,
		`"arguments":"{\"id\":9007199254740993}"`,
		`"arguments":"{}"`,
		`"finish_reason":"tool_calls"`,
		`"type":"function"`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("body lacks %s:\n%s", want, b)
		}
	}
	b, err = completionBody(1, Response{Content: "Hello!", ToolCalls: []ToolCall{}, FinishReason: "stop"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "tool_calls") || !strings.Contains(string(b), `"content":"Hello!"`) {
		t.Errorf("tool-free body = %s", b)
	}
}

// TestModelCallError pins which gateway answers end the run as blocked.
func TestModelCallError(t *testing.T) {
	apiError := func(status int, envelope string) error {
		e := &openai.Error{StatusCode: status}
		if err := e.UnmarshalJSON([]byte(envelope)); err != nil {
			t.Fatal(err)
		}
		return fmt.Errorf("wrapped: %w", e)
	}
	cases := []struct {
		name    string
		err     error
		blocked bool
	}{
		{"policy deny at pre_model_call", apiError(403, `{"type":"agent_hooks_denied","code":"ctk:no","message":"m","interception_point":"pre_model_call"}`), true},
		{"host error at post_model_call", apiError(503, `{"type":"agent_hooks_host_error","code":"host_error:context_invalid","message":"m","interception_point":"post_model_call"}`), true},
		{"interceptor timeout", apiError(504, `{"type":"agent_hooks_host_error","code":"host_error:interceptor_timeout","message":"m","interception_point":"pre_model_call"}`), true},
		{"verdict at a point the harness emits", apiError(403, `{"type":"agent_hooks_denied","code":"x","message":"m","interception_point":"agent_startup"}`), false},
		{"session conflict", apiError(409, `{"type":"agent_hooks_session_error","code":"session_ended","message":"m"}`), false},
		{"upstream failure", apiError(502, `{"type":"upstream_error","code":"upstream_status_500","message":"m"}`), false},
		{"transport", errors.New("connection refused"), false},
	}
	for _, c := range cases {
		err := modelCallError(3, c.err)
		if got := errors.Is(err, errModelCallBlocked); got != c.blocked {
			t.Errorf("%s: blocked = %v, want %v (%v)", c.name, got, c.blocked, err)
		}
		if !strings.Contains(err.Error(), "model_script[3]") {
			t.Errorf("%s: error %q does not name the model call", c.name, err)
		}
	}
}

// TestGatewayUnreachableIsHarnessError: when the SDK fails closed by itself
// (here, the gateway is gone), its deny is not the policy's, so the run is
// a harness error instead of a "blocked" outcome that a vector could
// mistake for a verdict.
func TestGatewayUnreachableIsHarnessError(t *testing.T) {
	vectors, err := EmbeddedVectors()
	if err != nil {
		t.Fatal(err)
	}
	h := NewGatewayHarness().(*gatewayHarness)
	if err := h.Setup(vectors[0].Clone()); err != nil {
		t.Fatal(err)
	}
	defer h.Teardown()
	h.gateway.Close()
	rr, err := h.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "the SDK failed closed at agent_startup") {
		t.Fatalf("Run = %+v, %v; want the SDK's fail-closed reported as a harness error", rr, err)
	}
}

// TestGatewayConformanceResponses runs every vendored vector through the
// gateway on the Responses API: the same results as chat completions.
func TestGatewayConformanceResponses(t *testing.T) {
	requireConformant(t, mustGatewayHarness(t, wire.Responses))
}

// TestGatewayConformanceMessages runs every vendored vector through the
// gateway on the Messages API: the same results as chat completions.
func TestGatewayConformanceMessages(t *testing.T) {
	if !slices.Contains(servedAPIs(), wire.Messages) {
		t.Skip("the gateway serves no Messages surface (proxy.Surfaces)")
	}
	requireConformant(t, mustGatewayHarness(t, wire.Messages))
}

// servedAPIs are the harness's surfaces the gateway serves, in report
// order.
// parityAPIs are the served surfaces whose official Go client sends the
// CTK's string contents as strings, so their contexts can equal chat's.
// anthropic-sdk-go sends every text as a block array, which the gateway
// projects faithfully as a part array: same verdicts, other JSON.
func parityAPIs() []wire.API {
	return slices.DeleteFunc(servedAPIs(), func(api wire.API) bool { return api == wire.Messages })
}

func servedAPIs() []wire.API {
	var out []wire.API
	surfaces, err := proxy.Surfaces(config.Default())
	if err != nil {
		panic(err) // the embedded default's keys: an ephemeral keyring
	}
	for _, surf := range surfaces {
		if slices.Contains(GatewayAPIs(), surf.API()) {
			out = append(out, surf.API())
		}
	}
	return out
}

func mustGatewayHarness(t *testing.T, api wire.API) HarnessFactory {
	t.Helper()
	f, err := GatewayHarness(api)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// projectionParityVectors script model turns whose contexts the surfaces
// must project identically: tool calls and their results, number-exact
// arguments, a blocked tool result, transforms at post_model_call.
var projectionParityVectors = []string{"AH-CTK-001", "AH-CTK-020", "AH-CTK-090", "AH-CTK-100"}

// TestGatewayProjectionParity runs vectors through the gateway on every
// surface it serves and compares each recorded context with the chat completions
// run's: one policy must see the same messages, tools and responses
// whatever API the agent speaks. Only what names the call differs:
// request_id, timestamp, extensions (extensions.hooks_gateway.api names
// the surface) and model.params (each surface's own request members).
func TestGatewayProjectionParity(t *testing.T) {
	all, err := EmbeddedVectors()
	if err != nil {
		t.Fatal(err)
	}
	var vectors []*Vector
	for _, v := range all {
		if slices.Contains(projectionParityVectors, v.ID) {
			vectors = append(vectors, v)
		}
	}
	for i, src := range modelPointVectors {
		v, err := ParseVector(fmt.Sprintf("model-point-%d.json", i), []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		vectors = append(vectors, v)
	}
	for _, v := range vectors {
		want := surfaceContexts(t, wire.ChatCompletions, v)
		for _, api := range parityAPIs()[1:] {
			got := surfaceContexts(t, api, v)
			if len(got) != len(want) {
				t.Errorf("%s on %s: %d contexts, chat completions %d", v.ID, api, len(got), len(want))
				continue
			}
			for k := range want {
				if got[k] != want[k] {
					t.Errorf("%s on %s: context %d differs from chat completions:\n got %s\nwant %s", v.ID, api, k, got[k], want[k])
				}
			}
		}
	}
}

// surfaceContexts runs v through the gateway on api and returns the
// recorded contexts as JSON text, without the members that name the call.
func surfaceContexts(t *testing.T, api wire.API, v *Vector) []string {
	t.Helper()
	h := mustGatewayHarness(t, api)()
	if err := h.Setup(v.Clone()); err != nil {
		t.Fatal(err)
	}
	defer h.Teardown()
	rr, err := h.Run(context.Background())
	if err != nil {
		t.Fatalf("%s on %s: %v", v.ID, api, err)
	}
	out := make([]string, 0, len(rr.Interceptions))
	var trail string
	for _, c := range rr.Interceptions {
		m, ok := c.(map[string]any)
		if !ok {
			t.Fatalf("%s on %s: a context is a %T", v.ID, api, c)
		}
		nameSession(t, m, "ctk-"+v.ID, &trail)
		delete(m, "request_id")
		delete(m, "timestamp")
		if model, ok := m["model"].(map[string]any); ok {
			delete(model, "params")
		}
		delete(m, "extensions") // extensions.hooks_gateway.api names the surface
		b, err := jsonvalue.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// nameSession checks that context m names its session by a memory-store
// trail id of the session named name (name~<incarnation>), the same as
// *trail, the run's trail id (set from the run's first context), and puts
// name in its place: two gateway runs mint two incarnations.
func nameSession(t *testing.T, m map[string]any, name string, trail *string) {
	t.Helper()
	s, _ := m["session"].(map[string]any)
	id, _ := s["id"].(string)
	inc, ok := strings.CutPrefix(id, name+"~")
	if !ok || len(inc) != sessions.IncarnationLen || strings.Trim(inc, "0123456789abcdef") != "" {
		t.Errorf("%s context: session.id %q, want %s~<incarnation>", m["interception_point"], id, name)
		return
	}
	if *trail == "" {
		*trail = id
	} else if id != *trail {
		t.Errorf("%s context: session.id %q, the run's earlier contexts %q", m["interception_point"], id, *trail)
	}
	s["id"] = name
}
