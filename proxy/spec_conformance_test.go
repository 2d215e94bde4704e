package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/specschema"
	"github.com/hooks-gateway/hooks-gateway/records"
)

// contextRecorder is a remote verdict service (type: http) that keeps
// every context it is sent and decides by content: "deny-me" is denied,
// "escalate-me" is denied with an approval request, a pre_tool_call whose
// cmd is "ls ~" is transformed, "rm -rf /" denied; the rest is allowed.
type contextRecorder struct {
	mu       sync.Mutex
	contexts [][]byte
}

func (c *contextRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.contexts = append(c.contexts, b)
	c.mu.Unlock()
	var ctx map[string]any
	json.Unmarshal(b, &ctx)
	text := string(b)
	verdict := map[string]any{"decision": "allow"}
	switch point, _ := ctx["interception_point"].(string); {
	case point == "input" && strings.Contains(text, "deny-me"):
		verdict = map[string]any{"decision": "deny", "reason": "policy:denied", "message": "denied"}
	case point == "input" && strings.Contains(text, "escalate-me"):
		verdict = map[string]any{"decision": "deny", "reason": "policy:needs_approval", "message": "ask", "approval": map[string]any{}}
	case point == "pre_tool_call" && strings.Contains(text, `"ls ~"`):
		verdict = map[string]any{"decision": "transform", "reason": "policy:rewrite", "transform": map[string]any{"path": "$target.cmd", "value": "ls /tmp"}}
	case point == "pre_tool_call" && strings.Contains(text, `"rm -rf /"`):
		verdict = map[string]any{"decision": "deny", "reason": "policy:destructive", "message": "no"}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(verdict)
}

func (c *contextRecorder) take() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.contexts...)
}

// A scripted gateway run over real HTTP, every interception point, every
// decision (allow, deny, transform, an escalation approved), per-request
// and managed sessions and the emit API, has every record it writes
// validate against interception-record.schema.json and every context its
// interceptor receives against its point's context schema.
func TestLiveRunValidatesAgainstTheSpecSchemas(t *testing.T) {
	schemas, err := specschema.Load()
	if err != nil {
		t.Fatal(err)
	}
	svc := &contextRecorder{}
	remote := httptest.NewServer(svc)
	t.Cleanup(remote.Close)
	t.Setenv("APPROVALS_ADMIN_TOKEN_T", approvalsAdminToken)
	t.Setenv(config.EnvRedisURL, "")
	cfg, err := config.Parse("gateway.yaml", []byte(`upstreams:
  - {name: mock, type: mock}
interceptors:
  - name: remote
    type: http
    url: `+remote.URL+`/v1/verdict
    points: [agent_startup, input, pre_model_call, post_model_call, pre_tool_call, post_tool_call, output, agent_shutdown]
approvals:
  resolver: queue
  timeout: 1m
auth:
  admin_token_env: APPROVALS_ADMIN_TOKEN_T
records:
  sinks: [{type: stdout}]
streaming:
  mode: incremental
  segment: {bytes: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	stdout := &lockedBuffer{}
	asm, err := Build(context.Background(), cfg, stdout, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(asm.Server)
	g := &gateway{Server: hs, srv: asm.Server}

	// Per-request sessions: allowed, denied.
	if st, _, body := g.post(t, `{"model":"mock","messages":[{"role":"user","content":"hello"}]}`, nil); st != 200 {
		t.Fatalf("allowed chat: %d %s", st, body)
	}
	if st, _, body := g.post(t, `{"model":"mock","messages":[{"role":"user","content":"deny-me"}]}`, nil); st != http.StatusForbidden {
		t.Fatalf("denied chat: %d %s", st, body)
	}
	// Incremental streams: segments over prefixes (finish_reason
	// incremental), and a cut stream's residue refused (stream_incomplete).
	if st, _, body := g.post(t, `{"model":"mock","stream":true,"messages":[{"role":"user","content":"/chunks 4 one two three four"}]}`, nil); st != 200 || !strings.Contains(string(body), "[DONE]") {
		t.Fatalf("incremental stream: %d %s", st, body)
	}
	if st, _, body := g.post(t, `{"model":"mock","stream":true,"messages":[{"role":"user","content":"/cut one two three four five six"}]}`, nil); st != 200 || !strings.Contains(string(body), enforcement.ReasonStreamingUnsupported) {
		t.Fatalf("cut incremental stream: %d %s", st, body)
	}
	// A managed session, and an escalation approved by an operator.
	if st, _, body := g.post(t, `{"model":"mock","messages":[{"role":"user","content":"hi"}]}`, map[string]string{HeaderSession: "managed-1"}); st != 200 {
		t.Fatalf("managed chat: %d %s", st, body)
	}
	done := chatAsync(hs.URL, "escalated-1", "escalate-me")
	a := pendingFor(t, hs.URL, "escalated-1")
	if st, body := admin(t, http.MethodPost, hs.URL+"/admin/approvals/"+a.ID, "application/json", `{"decision":"approve"}`); st != http.StatusOK {
		t.Fatalf("approve: %d %s", st, body)
	}
	if r := result(t, done); r.err != nil {
		t.Fatalf("approved chat: %v", r.err)
	}
	// The emit API: a whole session with a transform, a deny and a tool result.
	const agent = `"agent":{"id":"py-agent","framework":"langgraph"},"session":{"id":"emitted-1"}`
	for _, body := range []string{
		`{"interception_point":"agent_startup",` + agent + `,"agent_init":{"tools_registered":["shell"]}}`,
		`{"interception_point":"input",` + agent + `,"input":{"content":"list files","role":"user"}}`,
		`{"interception_point":"pre_tool_call",` + agent + `,"tool_call":{"id":"c1","name":"shell","args":{"cmd":"ls ~"}}}`,
		`{"interception_point":"post_tool_call",` + agent + `,"tool_call":{"id":"c1","name":"shell","args":{"cmd":"ls /tmp"}},"tool_result":{"value":"a b","is_error":false}}`,
		`{"interception_point":"pre_tool_call",` + agent + `,"tool_call":{"id":"c2","name":"shell","args":{"cmd":"rm -rf /"}}}`,
		`{"interception_point":"output",` + agent + `,"output":{"content":"done"}}`,
		`{"interception_point":"agent_shutdown",` + agent + `,"summary":{"reason":"completed"}}`,
	} {
		if st, out := g.emit(t, body); st != 200 {
			t.Fatalf("emit %s: %d %v", body, st, out)
		}
	}
	hs.Close()
	if err := asm.Close(); err != nil { // ends the managed sessions, flushes the sink
		t.Fatal(err)
	}

	points := map[string]bool{}
	decisions := map[string]bool{}
	var recs []map[string]any
	markers := 0
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		if _, ok := rec[records.MarkerKey]; ok {
			markers++
			continue
		}
		if err := schemas.ValidateJSON("", []byte(line)); err != nil {
			t.Errorf("record violates interception-record.schema.json: %v\n%s", err, line)
		}
		recs = append(recs, rec)
		points[rec["interception_point"].(string)] = true
		decisions[rec["verdict"].(map[string]any)["decision"].(string)] = true
		if rec["resolved_by"] == "approval" {
			decisions["approved"] = true
		}
	}
	if markers == 0 {
		t.Error("the trail has no policy marker")
	}
	for _, p := range enforcement.Points() {
		if !points[string(p)] {
			t.Errorf("no %s record: the run does not cover every point", p)
		}
	}
	refused := false
	for _, rec := range recs {
		v := rec["verdict"].(map[string]any)
		refused = refused || rec["interception_point"] == "post_model_call" && v["reason"] == enforcement.ReasonStreamingUnsupported
	}
	if !refused {
		t.Error("no post_model_call record refusing a cut stream's residue")
	}
	for _, d := range []string{"allow", "deny", "transform", "approved"} {
		if !decisions[d] {
			t.Errorf("no %s record: the run does not cover every decision (%v)", d, decisions)
		}
	}
	contexts := svc.take()
	ctxPoints := map[string]bool{}
	incrementalSeen := false
	for _, c := range contexts {
		var ctx map[string]any
		if err := json.Unmarshal(c, &ctx); err != nil {
			t.Fatalf("context %s: %v", c, err)
		}
		p, _ := ctx["interception_point"].(string)
		ctxPoints[p] = true
		if r, ok := ctx["response"].(map[string]any); ok && r["finish_reason"] == enforcement.FinishIncremental {
			incrementalSeen = true
		}
		if err := schemas.ValidateJSON(p, c); err != nil {
			t.Errorf("%s context violates its schema: %v\n%s", p, err, c)
		}
	}
	if !incrementalSeen {
		t.Error("no post_model_call context over a prefix (finish_reason incremental)")
	}
	if len(ctxPoints) != len(enforcement.Points()) {
		t.Errorf("contexts seen at %v, want every point", ctxPoints)
	}

	// The checks bite: a record with an extension, or a context with a
	// member of the wrong type, is rejected.
	mutated := recs[0]
	mutated["extensions"] = map[string]any{"hooks_gateway": map[string]any{"policy_version": "sha256:0"}}
	b, _ := json.Marshal(mutated)
	var v *specschema.Violation
	if err := schemas.ValidateJSON("", b); !errors.As(err, &v) {
		t.Errorf("a record with extensions passed the schema check: %v", err)
	}
	for _, c := range contexts {
		if !strings.Contains(string(c), `"post_tool_call"`) {
			continue
		}
		bad := strings.Replace(string(c), `"is_error":false`, `"is_error":"false"`, 1)
		if err := schemas.ValidateJSON("post_tool_call", []byte(bad)); !errors.As(err, &v) || v.Path != "tool_result.is_error" {
			t.Errorf("a context with a string is_error passed the schema check: %v", err)
		}
	}
}
