package interceptors_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
)

// recordingUpstream is a real OpenAI-compatible model server that keeps
// every request body it receives and answers each with a fixed completion.
type recordingUpstream struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newRecordingUpstream(t *testing.T) *recordingUpstream {
	t.Helper()
	u := &recordingUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		u.mu.Lock()
		u.bodies = append(u.bodies, string(body))
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(u.Close)
	return u
}

// received returns the bodies received so far.
func (u *recordingUpstream) received() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.bodies...)
}

// startGatewayTo serves interceptors in front of u.
func startGatewayTo(t *testing.T, u *recordingUpstream, interceptors string) *testGateway {
	t.Helper()
	doc := strings.Replace(gatewayBase, "  - name: mock\n    type: mock\n",
		"  - name: model\n    type: openai\n    base_url: "+u.URL+"/v1\n", 1)
	if doc == gatewayBase {
		t.Fatal("gatewayBase no longer names the mock upstream")
	}
	return startGatewayConfig(t, doc+interceptors)
}

// credentialPolicy is the embedded default's credential deny, run on the
// request as well.
const credentialPolicy = `  - name: deny-credentials
    type: regex
    points: [pre_model_call, post_model_call, output]
    action: deny
    reason: policy:credential_leak
    message: the request or response contained what looks like a credential
    patterns:
      - 'sk-[A-Za-z0-9_-]{20,}'
      - 'AKIA[0-9A-Z]{16}'
      - '-----BEGIN [A-Z ]*PRIVATE KEY-----'
`

// Request pieces; every member is one the OpenAI API defines.
const (
	userTurn     = `{"role":"user","content":"look it up"}`
	cleanSchema  = `{"type":"object","properties":{"id":{"type":"string"}}}`
	toolWith     = `{"type":"function","function":{"name":"lookup","description":%s,"parameters":%s}}`
	toolCallTurn = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":%s}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"found"}`
)

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestScopeGatewayDeniesBesideMessages: a credential anywhere in the
// request (a tool description, a parameter schema, response_format's
// schema, metadata, a key in a tool call's arguments) is refused by the
// default-style deny policy and never reaches the model.
func TestScopeGatewayDeniesBesideMessages(t *testing.T) {
	u := newRecordingUpstream(t)
	g := startGatewayTo(t, u, credentialPolicy)
	for _, tc := range []struct {
		name, body string
		// member, when set, is the top-level member the case needs judged
		// in model.params.
		member string
	}{
		{"tool description", `{"model":"m","messages":[` + userTurn + `],"tools":[` +
			fmt.Sprintf(toolWith, jsonString("Authenticate with "+testKey+" first."), cleanSchema) + `]}`, ""},
		{"parameter schema", `{"model":"m","messages":[` + userTurn + `],"tools":[` +
			fmt.Sprintf(toolWith, jsonString("Looks a record up."), `{"type":"object","properties":{"token":{"type":"string","enum":["`+testKey+`"]}}}`) + `]}`, ""},
		{"parameter schema key", `{"model":"m","messages":[` + userTurn + `],"tools":[` +
			fmt.Sprintf(toolWith, jsonString("Looks a record up."), `{"type":"object","properties":{"`+testKey+`":{"type":"string"}}}`) + `]}`, ""},
		{"response_format json_schema", `{"model":"m","messages":[` + userTurn + `],"response_format":{"type":"json_schema","json_schema":` +
			`{"name":"answer","schema":{"type":"object","properties":{"text":{"type":"string","description":"sign with ` + testKey + `"}}}}}}`, ""},
		{"metadata", `{"model":"m","messages":[` + userTurn + `],"store":true,"metadata":{"note":"` + testKey + `"}}`, "metadata"},
		{"tool_call argument key", `{"model":"m","messages":[` + userTurn + `,` +
			fmt.Sprintf(toolCallTurn, jsonString(`{"`+testKey+`":"v"}`)) + `]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.member != "" && !projectsParam(t, tc.member) {
				t.Skipf("this gateway does not yet project %s into model.params, so no policy sees it", tc.member)
			}
			before := len(u.received())
			status, body := g.post(t, tc.body)
			if status != http.StatusForbidden || !strings.Contains(string(body), `"code":"policy:credential_leak"`) {
				t.Fatalf("status %d, body %s", status, body)
			}
			if got := u.received(); len(got) != before {
				t.Fatalf("the upstream received the request: %.300s", got[len(got)-1])
			}
			assertNotLeaked(t, g, string(body))
		})
	}
	// The same request shapes without the credential reach the model.
	clean := `{"model":"m","messages":[` + userTurn + `],"tools":[` + fmt.Sprintf(toolWith, jsonString("Looks a record up."), cleanSchema) + `],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"answer","schema":` + cleanSchema + `}},"store":true,"metadata":{"note":"n"}}`
	before := len(u.received())
	if status, body := g.post(t, clean); status != http.StatusOK {
		t.Fatalf("clean request: status %d, body %s", status, body)
	}
	if got := u.received(); len(got) != before+1 || !strings.Contains(got[before], `"description":"Looks a record up."`) {
		t.Errorf("upstream received %q", got)
	}
}

// projectsParam reports whether the gateway puts the top-level request
// member into the pre_model_call context's model.params, where the
// content-scanning types judge it: a CEL rule denies when it is there.
func projectsParam(t *testing.T, member string) bool {
	t.Helper()
	g := startGateway(t, `  - name: probe
    type: cel
    rules:
      - points: [pre_model_call]
        when: '`+jsonString(member)+` in context.?model.?params.orValue({})'
        deny: {reason: policy:probe}
`)
	status, body := g.post(t, `{"model":"m","messages":[`+userTurn+`],"store":true,"`+member+`":{"k":"v"}}`)
	switch status {
	case http.StatusForbidden:
		return true
	case http.StatusOK:
		return false
	}
	t.Fatalf("probe: status %d, body %s", status, body)
	return false
}

// TestScopeGatewayTargetScope: scope: target narrows a policy to the
// messages, so a tool description it would otherwise refuse goes through
// verbatim while a credential in a message is still refused.
func TestScopeGatewayTargetScope(t *testing.T) {
	u := newRecordingUpstream(t)
	g := startGatewayTo(t, u, credentialPolicy+"    scope: target\n")
	description := "Authenticate with " + testKey + " first."
	status, body := g.post(t, `{"model":"m","messages":[`+userTurn+`],"tools":[`+fmt.Sprintf(toolWith, jsonString(description), cleanSchema)+`]}`)
	if status != http.StatusOK {
		t.Fatalf("status %d, body %s", status, body)
	}
	got := u.received()
	if quoted, _ := json.Marshal(description); len(got) != 1 || !strings.Contains(got[0], string(quoted)) {
		t.Errorf("upstream received %q, want the description verbatim", got)
	}
	status, body = g.post(t, `{"model":"m","messages":[{"role":"user","content":"use `+testKey+`"}]}`)
	if status != http.StatusForbidden || len(u.received()) != 1 {
		t.Errorf("credential in a message: status %d, body %s, %d upstream requests", status, body, len(u.received()))
	}
}

// TestScopeGatewayRedactRenamesKey: a secret used as an object key is
// renamed. In the arguments of a tool call the client sent, the redaction
// reaches the model; in the arguments of a tool call the model made, the
// client receives the renamed key with the other members intact.
func TestScopeGatewayRedactRenamesKey(t *testing.T) {
	u := newRecordingUpstream(t)
	g := startGatewayTo(t, u, redactPolicy)
	status, body := g.post(t, `{"model":"m","messages":[`+userTurn+`,`+fmt.Sprintf(toolCallTurn, jsonString(`{"`+testKey+`":"v","n":1}`))+`]}`)
	if status != http.StatusOK {
		t.Fatalf("status %d, body %s", status, body)
	}
	got := u.received()
	if len(got) != 1 {
		t.Fatalf("upstream received %d requests", len(got))
	}
	var sent struct {
		Messages []struct {
			ToolCalls []struct {
				Function struct{ Arguments string } `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(got[0]), &sent); err != nil || len(sent.Messages) != 3 || len(sent.Messages[1].ToolCalls) != 1 {
		t.Fatalf("upstream body %s: %v", got[0], err)
	}
	if args := sent.Messages[1].ToolCalls[0].Function.Arguments; args != `{"[openai_key]":"v","n":1}` {
		t.Errorf("arguments sent upstream %s", args)
	}
	assertNotLeaked(t, g, got[0])

	// The model's own tool call, through the mock, redacted on the way back.
	m := startGateway(t, redactAnswers)
	resp, err := m.Client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(`/tool store {"` + testKey + `":{"scope":"all"},"n":3}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "store" {
		t.Fatalf("tool calls = %+v", calls)
	}
	args := decodeArgs(t, calls[0].Function.Arguments)
	if len(args) != 2 || args["n"] != json.Number("3") || args["[openai_key]"].(map[string]any)["scope"] != "all" {
		t.Errorf("arguments %s", calls[0].Function.Arguments)
	}
	if v, _ := m.recordAt(t, "post_model_call")["verdict"].(map[string]any); v["decision"] != "transform" {
		t.Errorf("post_model_call verdict = %v, want the transform", v)
	}
	assertNotLeaked(t, m, resp.RawJSON())

	// Two secret keys of one object would merge: the answer is refused.
	_, err = m.Client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(`/tool store {"` + testKey + `":1,"` + testKey + `x":2}`)},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusForbidden || apiErr.Code != "policy:unredactable" {
		t.Errorf("merging keys: %v, want 403 policy:unredactable", err)
	}
}
