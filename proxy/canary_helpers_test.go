package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// canary is planted in every position a payload controls. It is letters
// and digits only, so every check that lets "plain identifiers" through
// would let it through too, and it is searched case-insensitively, since
// hosts and headers are lower-cased on the way.
const canary = "Cn4ryQ7z"

// canaryPolicy routes each model-name prefix to one interceptor type, so a
// single gateway drives every type (the model name carries the canary after
// the prefix). The catch-all route passes.
const canaryPolicy = `interceptors:
  - {name: pass, type: allow}
  - {name: deny-all, type: deny, reason: "policy:denied"}
  - name: regex-deny
    type: regex
    action: deny
    patterns: ['(?i)q7z']
  - name: cel-deny
    type: cel
    rules:
      - name: any-message
        points: [pre_model_call]
        when: 'size(target) > 0'
        deny: {reason: "policy:cel_denied"}
  - name: cel-fail
    type: cel
    rules:
      - name: missing-key
        points: [pre_model_call]
        when: 'target[0].no_such_member == 1'
        deny: {reason: "policy:never"}
  - name: cel-shape
    type: cel
    rules:
      - name: object-content
        points: [pre_model_call]
        when: 'true'
        transform: {path: '$target[0].content', value: '{string(target[0].content): 1}', reason: "policy:rewritten"}
  - name: cel-big
    type: cel
    rules:
      - name: big-integer
        points: [pre_model_call]
        when: 'true'
        transform: {path: '$target[0]', value: '{"role": "user", "content": "x", string(target[0].content): 9007199254740993}', reason: "policy:rewritten"}
  - {name: redact, type: redact, points: [pre_model_call, post_model_call, output]}
  - name: tools
    type: tools
    allow: ["get_*"]
    arguments:
      - tool: "get_*"
        additional: deny
        properties:
          city: {type: string}
  - name: egress
    type: egress
    allow_hosts: [example.com]
  - name: budget
    type: budget
    limits:
      - {scope: agent, window: 1h, requests: 1}
  - {name: http-hang, type: http, url: "REMOTE/hang", timeout: 300ms, retries: 0}
  - {name: http-garbage, type: http, url: "REMOTE/garbage", timeout: 300ms, retries: 0}
  - {name: http-echo, type: http, url: "REMOTE/echo", timeout: 300ms, retries: 0}
  - {name: http-reflect, type: http, url: "REMOTE/reflect", timeout: 300ms, retries: 0}
  - {name: http-status, type: http, url: "REMOTE/status", timeout: 300ms, retries: 0}
  - {name: opa, type: opa, url: "REMOTE/opa", path: agenthooks/decision, timeout: 300ms, retries: 0}
routes:
  - {name: deny, match: {model: "deny-*"}, interceptors: [deny-all]}
  - {name: regex, match: {model: "regex-*"}, interceptors: [regex-deny]}
  - {name: cel, match: {model: "cel-*"}, interceptors: [cel-deny]}
  - {name: celfail, match: {model: "celfail-*"}, interceptors: [cel-fail]}
  - {name: celshape, match: {model: "celshape-*"}, interceptors: [cel-shape]}
  - {name: celbig, match: {model: "celbig-*"}, interceptors: [cel-big]}
  - {name: redact, match: {model: "redact-*"}, interceptors: [redact]}
  - {name: tools, match: {model: "tools-*"}, interceptors: [tools]}
  - {name: egress, match: {model: "egress-*"}, interceptors: [egress]}
  - {name: budget, match: {model: "budget-*"}, interceptors: [budget]}
  - {name: hang, match: {model: "hang-*"}, interceptors: [http-hang]}
  - {name: garbage, match: {model: "garbage-*"}, interceptors: [http-garbage]}
  - {name: echo, match: {model: "echo-*"}, interceptors: [http-echo]}
  - {name: reflect, match: {model: "reflect-*"}, interceptors: [http-reflect]}
  - {name: status, match: {model: "status-*"}, interceptors: [http-status]}
  - {name: opa, match: {model: "opa-*"}, interceptors: [opa]}
  - {name: pass, match: {model: "*"}, interceptors: [pass]}
`

// canaryRig is a gateway built from configuration, with its upstream and
// remote verdict services, whose every output is captured: records (the
// stdout sink), logs (the server's logger and the HTTP server's error log)
// and metrics (GET /metrics).
type canaryRig struct {
	gw      *httptest.Server
	asm     *Assembly
	records *lockedBuffer
	logs    *lockedBuffer

	mu    sync.Mutex
	reply func(w http.ResponseWriter, r *http.Request)
}

func newCanaryRig(t *testing.T) *canaryRig {
	t.Helper()
	rig := &canaryRig{records: &lockedBuffer{}, logs: &lockedBuffer{}}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		rig.mu.Lock()
		reply := rig.reply
		rig.mu.Unlock()
		reply(w, r)
	}))
	t.Cleanup(up.Close)
	remote := httptest.NewServer(http.HandlerFunc(remoteVerdicts))
	t.Cleanup(remote.Close)

	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(strings.ReplaceAll(canaryPolicy, "REMOTE", remote.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	// An Azure upstream on a closed port: its URL names the deployment,
	// which is the request's model name.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	t.Setenv("CANARY_AZURE_KEY", "azure-key")
	cfg, err := config.Parse("gateway.yaml", []byte(fmt.Sprintf(`upstreams:
  - name: az
    type: azure-openai
    base_url: %s
    api_version: "2024-10-21"
    api_key_env: CANARY_AZURE_KEY
    models: ["az-*"]
  - name: up
    type: openai
    base_url: %s/v1
    models: ["*-*"]
enforcement:
  interceptor_timeout: 1s
  max_context_bytes: 1536KiB
sessions:
  store: memory
records:
  sinks:
    - type: stdout
limits:
  max_request_bytes: 256KiB
  max_response_bytes: 256KiB
streaming:
  buffer_limit: 256KiB
policy:
  path: %s
  watch: false
`, closed.URL, up.URL, policy)))
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(rig.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	asm, err := Build(context.Background(), cfg, rig.records, logger)
	if err != nil {
		t.Fatal(err)
	}
	rig.asm = asm
	rig.gw = httptest.NewUnstartedServer(asm.Server)
	rig.gw.Config.ErrorLog = log.New(rig.logs, "", 0)
	rig.gw.Start()
	t.Cleanup(func() {
		rig.gw.Close()
		asm.Close()
	})
	return rig
}

// remoteVerdicts is the remote verdict service of every http and opa
// interceptor: each path misbehaves in its own way, several of them by
// reflecting the context they were sent.
func remoteVerdicts(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch r.URL.Path {
	case "/hang":
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	case "/garbage":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"decision": "deny", `+canary+`}`)
	case "/echo":
		// The context itself, as if it were a verdict.
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	case "/reflect":
		// A verdict whose members quote the context's content.
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"decision": reflectedText(body), "reason": reflectedText(body)})
	case "/status":
		http.Error(w, "refused: "+reflectedText(body), http.StatusInternalServerError)
	default: // opa
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"result": map[string]any{"decision": reflectedText(body), reflectedText(body): true}})
	}
}

// reflectedText is the canary-bearing text of a context sent to a remote
// service: its model id.
func reflectedText(ctxJSON []byte) string {
	var c struct {
		Input struct {
			Model struct {
				ID string `json:"id"`
			} `json:"model"`
		} `json:"input"`
		Model struct {
			ID string `json:"id"`
		} `json:"model"`
	}
	json.Unmarshal(ctxJSON, &c)
	if c.Model.ID != "" {
		return c.Model.ID
	}
	if c.Input.Model.ID != "" {
		return c.Input.Model.ID
	}
	return canary + "-reflected"
}

// answer is what a client got back.
type answer struct {
	status int
	header http.Header
	body   string
}

// setReply makes the upstream answer every call with reply.
func (rig *canaryRig) setReply(reply func(w http.ResponseWriter, r *http.Request)) {
	rig.mu.Lock()
	rig.reply = reply
	rig.mu.Unlock()
}

func (rig *canaryRig) do(t *testing.T, method, path, body string, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, rig.gw.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// metricsText is the gateway's /metrics page.
func (rig *canaryRig) metricsText(t *testing.T) string {
	t.Helper()
	a := rig.do(t, http.MethodGet, "/metrics", "", nil)
	if a.status != http.StatusOK || !strings.Contains(a.body, "agent_hooks_") {
		t.Fatalf("metrics: %d %.200s", a.status, a.body)
	}
	return a.body
}

// containsCanary reports whether s holds the canary in any letter case.
func containsCanary(s string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(canary))
}

// canaryLines returns the lines of s that hold the canary, for messages.
func canaryLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if containsCanary(l) {
			out = append(out, l)
		}
	}
	return out
}

// jsonReplyOf answers with a JSON body and status.
func jsonReplyOf(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// sseReplyOf answers with SSE events (each the text after "data: ").
func sseReplyOf(events ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\n\n")
		}
	}
}

// deepUnderKeys is n levels of objects under payload-chosen keys around leaf.
func deepUnderKeys(n int, leaf string) string {
	return strings.Repeat(`{"`+canary+`k":`, n) + leaf + strings.Repeat("}", n)
}

// completion is a chat completion whose message is msg (a JSON object).
func completion(msg, finish string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":` + msg + `,"finish_reason":"` + finish + `"}]}`
}

// toolCallMessage is an assistant message calling name with args (JSON
// text, encoded again as the arguments string).
func toolCallMessage(name, args string) string {
	a, _ := json.Marshal(args)
	return `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"` + name + `","arguments":` + string(a) + `}}]}`
}

// chunkOf is one streamed chunk whose first choice has delta (a JSON
// object) and finish (a JSON value).
func chunkOf(delta, finish string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
}

// userChat is a chat request for model with one user message.
func userChat(model, content string) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"` + content + `"}]}`
}

// emitPath is the emit API.
const emitPath = "/v1/agent-hooks/emit"

// emitCases are the emit API's and the session end endpoint's error paths,
// with the canary in the context members a host sends.
func emitCases() []canaryCase {
	agent := `"agent":{"id":"agent-` + canary + `","framework":"sdk","name":"` + canary + `","version":"` + canary + `"}`
	emit := func(point, session, model, rest string) string {
		return `{"interception_point":"` + point + `",` + agent + `,"session":{"id":"` + session + `"},"model":{"id":"` + model + `"}` + rest + `}`
	}
	call := func(name, args string) string {
		return `,"tool_call":{"id":"call_` + canary + `","name":"` + name + `","args":` + args + `}`
	}
	big := `{"` + canary + `k":{"` + canary + `k2":9007199254740993}}`
	end := func(id string) string { return "/v1/agent-hooks/sessions/" + id + "/end" }
	return []canaryCase{
		{name: "emit: invalid JSON", path: emitPath, body: `{"interception_point":"input","` + canary, status: 400, code: "invalid_request"},
		{name: "emit: duplicate member", path: emitPath, body: emit("input", "emit-s0", "pass-x", `,"input":{"content":"x","role":"user","`+canary+`":1,"`+canary+`":2}`), status: 400, code: "invalid_request"},
		{name: "emit: gateway-owned member", path: emitPath, body: emit("input", "emit-s0", "pass-x", `,"sequence":1`), status: 400, code: "invalid_request"},
		{name: "emit: unknown point", path: emitPath, body: emit(canary, "emit-s0", "pass-x", ""), status: 400, code: "invalid_request"},
		{name: "emit: invalid framework", path: emitPath, body: `{"interception_point":"input","agent":{"id":"a","framework":"` + canary + `!"},"session":{"id":"emit-s0"}}`, status: 400, code: "invalid_request"},
		{name: "emit: invalid session id", path: emitPath, body: emit("input", "s "+canary, "pass-x", `,"input":{"content":"x","role":"user"}`), status: 400, code: "invalid_request"},
		{name: "emit: missing member", path: emitPath, body: emit("pre_tool_call", "emit-s0", "pass-x", `,"`+canary+`":{"`+canary+`":1}`), status: 400, code: "invalid_request"},
		{name: "emit: session not started", path: emitPath, body: emit("pre_tool_call", "emit-none", "pass-x", call(canary, `{}`)), status: 409, code: "session_not_started"},
		{name: "emit: startup", path: emitPath, body: emit("agent_startup", "emit-s1", "pass-x", `,"agent_init":{"tools_registered":["`+canary+`"]}`), status: 200, released: true},
		{name: "emit: integer beyond 2^53", path: emitPath, body: emit("pre_tool_call", "emit-s1", "pass-x", call(canary, big)), status: 200, released: true},
		{name: "emit: nesting too deep", path: emitPath, body: emit("pre_tool_call", "emit-s1", "pass-x", call(canary, deepUnderKeys(140, "1"))), status: 200, released: true},
		{name: "emit: tool not allowed", path: emitPath, body: emit("pre_tool_call", "emit-s1", "tools-x", call("x_"+canary, `{"`+canary+`":"`+canary+`"}`)), status: 200, released: true},
		{name: "emit: argument not listed", path: emitPath, body: emit("pre_tool_call", "emit-s1", "tools-x", call("get_"+canary, `{"`+canary+`":"`+canary+`"}`)), status: 200, released: true},
		{name: "emit: post_tool_call without a pre that proceeded", path: emitPath, body: emit("post_tool_call", "emit-s1", "pass-x", call(canary, `{}`)+`,"tool_result":{"value":"`+canary+`","is_error":false}`), status: 409, code: "tool_call_unpaired"},
		{name: "emit: tool call allowed", path: emitPath, body: emit("pre_tool_call", "emit-s1", "pass-x", call(canary, `{}`)), status: 200, released: true},
		{name: "emit: deny", path: emitPath, body: emit("post_tool_call", "emit-s1", "deny-x", call(canary, `{}`)+`,"tool_result":{"value":{"`+canary+`":"`+canary+`"},"is_error":false}`), status: 200, released: true},
		{name: "end: invalid JSON", path: end("emit-s1"), body: `{"reason":"` + canary, status: 400, code: "invalid_request"},
		{name: "end: reason of the wrong type", path: end("emit-s1"), body: `{"reason":{"` + canary + `":1}}`, status: 400, code: "invalid_request"},
		{name: "end: unknown reason", path: end("emit-s1"), body: `{"reason":"` + canary + `"}`, status: 400, code: "invalid_request"},
		{name: "end: invalid session id", path: end(strings.Repeat(canary, 40)), body: `{}`, status: 400, code: "invalid_session_id"},
		{name: "end", path: end("emit-s1"), body: `{"reason":"error","` + canary + `":"` + canary + `"}`, status: 200},
	}
}

// emitAnswerWithoutTarget is an emit answer less its target, the one member
// that carries payload by design.
func emitAnswerWithoutTarget(t *testing.T, body string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("emit answer: %v: %s", err, body)
	}
	delete(m, "target")
	b, _ := json.Marshal(m)
	return string(b)
}

// closeAssembly flushes the record sinks.
func (rig *canaryRig) closeAssembly(t *testing.T) {
	t.Helper()
	if err := rig.asm.Close(); err != nil {
		t.Fatal(err)
	}
}
