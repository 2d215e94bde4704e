package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/records"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// Keys of the fleet's clients: two keys of tenant acme (two agents), one
// of tenant globex.
const (
	acmeKey   = "acme-key-0001"
	acmeOps   = "acme-key-0002"
	globexKey = "globex-key-001"
)

// verdictService is a remote interceptor (type http) that logs every
// context it judges, takes startupDelay over each agent_startup (so other
// requests of the session must wait for it) and denies the startup of
// sessions whose id ends in "deny-me", and pre_tool_call of the tool
// "forbidden".
type verdictService struct {
	startupDelay time.Duration
	mu           sync.Mutex
	ctxs         []map[string]any
	// judged maps a trail session id to when its agent_startup verdict
	// was answered; arrived holds when each context came in.
	judged  map[string]time.Time
	arrived []time.Time
}

func (v *verdictService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var c map[string]any
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	v.mu.Lock()
	v.ctxs = append(v.ctxs, c)
	v.arrived = append(v.arrived, time.Now())
	v.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	session, _ := c["session"].(map[string]any)
	id, _ := session["id"].(string)
	if c["interception_point"] == "agent_startup" {
		defer func() {
			v.mu.Lock()
			if v.judged == nil {
				v.judged = map[string]time.Time{}
			}
			v.judged[id] = time.Now()
			v.mu.Unlock()
		}()
	}
	if call, _ := c["tool_call"].(map[string]any); c["interception_point"] == "pre_tool_call" && call["name"] == "forbidden" {
		fmt.Fprint(w, `{"decision":"deny","reason":"policy:tool_forbidden"}`)
		return
	}
	if c["interception_point"] == "agent_startup" {
		time.Sleep(v.startupDelay)
		if strings.HasSuffix(id, "deny-me") {
			fmt.Fprint(w, `{"decision":"deny","reason":"policy:startup_denied"}`)
			return
		}
	}
	fmt.Fprint(w, `{"decision":"allow"}`)
}

// beforeStartup counts the contexts of session other than agent_startup
// that arrived before its startup verdict was answered.
func (v *verdictService) beforeStartup(session string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for i, c := range v.ctxs {
		if s, _ := c["session"].(map[string]any); s["id"] == session && c["interception_point"] != "agent_startup" && v.arrived[i].Before(v.judged[session]) {
			n++
		}
	}
	return n
}

// seen returns the contexts of session (its trail id) in arrival order.
func (v *verdictService) seen(session string) []map[string]any {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []map[string]any
	for _, c := range v.ctxs {
		if s, _ := c["session"].(map[string]any); s["id"] == session {
			out = append(out, c)
		}
	}
	return out
}

// fleet is several gateway replicas built from one configuration, sharing
// a real Redis and one record trail.
type fleet struct {
	urls     []string
	servers  []*Server
	trail    *lockedBuffer
	verdicts *verdictService
}

// startFleet starts replicas gateways with three client keys, the verdict
// service, a budget of eight model calls per agent per hour and the
// sessions block sessionsYAML (indented under "sessions:").
func startFleet(t *testing.T, replicas int, sessionsYAML string) *fleet {
	t.Helper()
	t.Setenv("OWN_ACME_KEY", acmeKey)
	t.Setenv("OWN_ACME_OPS_KEY", acmeOps)
	t.Setenv("OWN_GLOBEX_KEY", globexKey)
	rs := redistest.StartServer(t)
	f := &fleet{trail: &lockedBuffer{}, verdicts: &verdictService{startupDelay: 300 * time.Millisecond}}
	vs := httptest.NewServer(f.verdicts)
	t.Cleanup(vs.Close)
	src := fmt.Sprintf(`upstreams:
  - {name: mock, type: mock}
sessions:
  store: redis
  redis_url: %s
%s
records:
  sinks: [{type: stdout}]
auth:
  api_keys:
    - {key_env: OWN_ACME_KEY, tenant: acme, agent_id: acme-bot}
    - {key_env: OWN_ACME_OPS_KEY, tenant: acme, agent_id: acme-ops}
    - {key_env: OWN_GLOBEX_KEY, tenant: globex, agent_id: globex-bot}
enforcement:
  interceptor_timeout: 5s
interceptors:
  - {name: verdicts, type: http, url: %q, timeout: 4s}
  - name: calls
    type: budget
    points: [pre_model_call]
    limits: [{scope: agent, window: 1h, requests: 8}]
    reason: policy:budget_exhausted
`, rs.URL(), sessionsYAML, vs.URL)
	cfg, err := config.Parse("fleet.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for range replicas {
		asm, err := Build(context.Background(), cfg, f.trail, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(asm.Server)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); asm.Server.RunSweeper(ctx) }()
		t.Cleanup(func() { cancel(); <-done; hs.Close(); asm.Close() })
		f.urls = append(f.urls, hs.URL)
		f.servers = append(f.servers, asm.Server)
	}
	return f
}

// exchange is one HTTP exchange with a replica.
type exchange struct {
	status int
	body   []byte
	err    envelopeBody
}

// do sends body to path on replica i with key and extra headers.
func (f *fleet) do(t *testing.T, i int, path, key, body string, header map[string]string) exchange {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
	for k, v := range header {
		h[k] = v
	}
	status, _, b, err := send(context.Background(), http.MethodPost, f.urls[i]+path, body, h)
	if err != nil {
		t.Fatal(err)
	}
	c := exchange{status: status, body: b}
	if status != http.StatusOK {
		c.err = errorBody(t, b)
	}
	return c
}

// chat sends a chat request in session (none when "").
func (f *fleet) chat(t *testing.T, i int, key, session, text string, header map[string]string) exchange {
	t.Helper()
	h := map[string]string{}
	if session != "" {
		h[HeaderSession] = session
	}
	for k, v := range header {
		h[k] = v
	}
	return f.do(t, i, "/v1/chat/completions", key, chatBody(text, false), h)
}

// emit submits a context to the emit API.
func (f *fleet) emit(t *testing.T, i int, key string, ctx map[string]any) exchange {
	t.Helper()
	b, _ := json.Marshal(ctx)
	return f.do(t, i, "/v1/agent-hooks/emit", key, string(b), nil)
}

// end ends session with reason ("" sends no body).
func (f *fleet) end(t *testing.T, i int, key, session, reason string) exchange {
	t.Helper()
	body := ""
	if reason != "" {
		body = `{"reason":"` + reason + `"}`
	}
	return f.do(t, i, "/v1/agent-hooks/sessions/"+session+"/end", key, body, nil)
}

// verify runs the trail through records verify --strict and checks that
// agent_shutdown is the last record of each of sessions.
func (f *fleet) verify(t *testing.T, sessions ...string) []wireRecord {
	t.Helper()
	v := records.NewVerifier()
	if err := v.Read("trail.jsonl", strings.NewReader(f.trail.String())); err != nil {
		t.Fatal(err)
	}
	rep := v.Report()
	for _, fd := range rep.Findings {
		t.Errorf("records verify --strict: %s", fd)
	}
	var all []wireRecord
	for _, line := range strings.Split(strings.TrimSpace(f.trail.String()), "\n") {
		var r wireRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		all = append(all, r)
	}
	for _, s := range sessions {
		var last *wireRecord
		n := 0
		for i, r := range all {
			if r.SessionID != s {
				continue
			}
			n++
			if last == nil || r.Sequence > last.Sequence {
				last = &all[i]
			}
		}
		if last == nil || last.Point != "agent_shutdown" {
			t.Errorf("session %s: last record %+v, want its agent_shutdown (%d records)", s, last, n)
		}
	}
	return all
}

// callInFlight opens acme's session with one call, then starts a second
// call with text in it on replica 0 and returns once that call has passed
// pre_model_call (it is at the upstream); the channel yields its answer.
func (f *fleet) callInFlight(t *testing.T, session, text string) <-chan exchange {
	t.Helper()
	if c := f.chat(t, 0, acmeKey, session, "hello", nil); c.status != 200 {
		t.Fatalf("open: %d %s", c.status, c.body)
	}
	slow := make(chan exchange, 1)
	go func() { slow <- f.chat(t, 0, acmeKey, session, text, nil) }()
	waitFor(t, 5*time.Second, "the call at the upstream", func() bool {
		n := 0
		for _, c := range f.verdicts.seen("acme/" + session) {
			if c["interception_point"] == "pre_model_call" {
				n++
			}
		}
		return n == 2
	})
	return slow
}

// ctxOf builds an emit API context.
func ctxOf(point, agent, session string, members map[string]any) map[string]any {
	c := map[string]any{
		"interception_point": point,
		"agent":              map[string]any{"id": agent, "framework": "test"},
		"session":            map[string]any{"id": session},
	}
	for k, v := range members {
		c[k] = v
	}
	return c
}

func TestSessionsBelongToTheirKey(t *testing.T) {
	f := startFleet(t, 2, "")
	// acme's agent opens a session on replica 0.
	if c := f.chat(t, 0, acmeKey, "s1", "hello", nil); c.status != 200 {
		t.Fatalf("acme chat: %d %s", c.status, c.body)
	}
	// The other acme key, on either replica: the session does not exist
	// for it, on every route.
	for i := range 2 {
		if c := f.chat(t, i, acmeOps, "s1", "hello", nil); c.status != 404 || c.err.Code != "session_not_found" {
			t.Errorf("replica %d: other key's chat: %d %s", i, c.status, c.body)
		}
		if c := f.end(t, i, acmeOps, "s1", ""); c.status != 404 {
			t.Errorf("replica %d: other key's end: %d %s", i, c.status, c.body)
		}
		c := f.emit(t, i, acmeOps, ctxOf("input", "acme-ops", "s1", map[string]any{"input": map[string]any{"content": "x", "role": "user"}}))
		if c.status != 404 {
			t.Errorf("replica %d: other key's emit: %d %s", i, c.status, c.body)
		}
		if c := f.emit(t, i, acmeOps, ctxOf("agent_startup", "acme-ops", "s1", map[string]any{"agent_init": map[string]any{"tools_registered": []any{}}})); c.status != 404 {
			t.Errorf("replica %d: other key's startup claim: %d %s", i, c.status, c.body)
		}
	}
	// globex using the same id gets a session of its own, in its own
	// namespace and its own trail.
	if c := f.chat(t, 1, globexKey, "s1", "hello", nil); c.status != 200 {
		t.Fatalf("globex chat: %d %s", c.status, c.body)
	}
	if c := f.end(t, 0, globexKey, "s1", ""); c.status != 200 {
		t.Fatalf("globex end: %d %s", c.status, c.body)
	}
	// acme's session is untouched: it still serves acme.
	if c := f.chat(t, 1, acmeKey, "s1", "again", nil); c.status != 200 {
		t.Fatalf("acme after globex ended its own s1: %d %s", c.status, c.body)
	}
	if c := f.end(t, 1, acmeKey, "s1", "completed"); c.status != 200 {
		t.Fatalf("acme end: %d %s", c.status, c.body)
	}
	// Retired: neither tenant can reuse its ended id.
	for _, k := range []string{acmeKey, globexKey} {
		if c := f.chat(t, 0, k, "s1", "late", nil); c.status != 409 || c.err.Code != "session_ended" {
			t.Errorf("reuse of an ended id: %d %s", c.status, c.body)
		}
	}
	all := f.verify(t, "acme/s1", "globex/s1")
	for _, r := range all {
		if r.SessionID == "s1" {
			t.Fatalf("a record carries the unqualified id: %+v", r)
		}
	}
	// Every context of a session carries the session's agent and tenant.
	for session, want := range map[string][2]string{"acme/s1": {"acme-bot", "acme"}, "globex/s1": {"globex-bot", "globex"}} {
		ctxs := f.verdicts.seen(session)
		if len(ctxs) == 0 {
			t.Fatalf("no contexts for %s", session)
		}
		for _, c := range ctxs {
			agent, _ := c["agent"].(map[string]any)
			tenant, _ := c["tenant"].(map[string]any)
			if agent["id"] != want[0] || tenant["id"] != want[1] {
				t.Errorf("%s: %s context with agent %v, tenant %v; want %v", session, c["interception_point"], agent["id"], tenant["id"], want)
			}
		}
	}
}

func TestAssertedIdentitiesAreRefused(t *testing.T) {
	f := startFleet(t, 1, "")
	cases := []struct {
		name string
		c    func() exchange
	}{
		{"agent header", func() exchange {
			return f.chat(t, 0, globexKey, "", "hi", map[string]string{HeaderAgent: "acme-bot"})
		}},
		{"emit agent.id", func() exchange {
			return f.emit(t, 0, globexKey, ctxOf("agent_startup", "acme-bot", "g1", map[string]any{"agent_init": map[string]any{"tools_registered": []any{}}}))
		}},
		{"emit tenant", func() exchange {
			return f.emit(t, 0, globexKey, ctxOf("agent_startup", "globex-bot", "g2", map[string]any{"agent_init": map[string]any{"tools_registered": []any{}}, "tenant": map[string]any{"id": "acme"}}))
		}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c()
			if c.status != http.StatusForbidden || c.err.Code != "identity_mismatch" {
				t.Fatalf("%d %s, want 403 identity_mismatch", c.status, c.body)
			}
		})
	}
	// The key's own agent in the header, and its own tenant in a context,
	// are fine.
	if c := f.chat(t, 0, globexKey, "", "hi", map[string]string{HeaderAgent: "globex-bot"}); c.status != 200 {
		t.Fatalf("own agent header: %d %s", c.status, c.body)
	}
	if c := f.emit(t, 0, globexKey, ctxOf("agent_startup", "globex-bot", "g3", map[string]any{"agent_init": map[string]any{"tools_registered": []any{}}, "tenant": map[string]any{"id": "globex"}})); c.status != 200 {
		t.Fatalf("own tenant: %d %s", c.status, c.body)
	}
}

func TestBudgetsCountTheKeysIdentity(t *testing.T) {
	f := startFleet(t, 2, "")
	// globex cannot spend acme's budget: asserting acme's agent is refused
	// before anything is counted.
	for range 3 {
		if c := f.chat(t, 0, globexKey, "", "hi", map[string]string{HeaderAgent: "acme-bot"}); c.status != 403 {
			t.Fatalf("globex as acme: %d %s", c.status, c.body)
		}
		c := f.emit(t, 1, globexKey, ctxOf("pre_model_call", "acme-bot", "x", map[string]any{"model": map[string]any{"id": "mock"}, "messages": []any{}}))
		if c.status != 403 {
			t.Fatalf("globex emitting as acme: %d %s", c.status, c.body)
		}
	}
	// acme's agent has its whole budget, across replicas, and no more.
	for i := range 8 {
		if c := f.chat(t, i%2, acmeKey, "", "hi", nil); c.status != 200 {
			t.Fatalf("acme call %d: %d %s", i, c.status, c.body)
		}
	}
	if c := f.chat(t, 1, acmeKey, "", "hi", nil); c.status != 403 || c.err.Code != "policy:budget_exhausted" {
		t.Fatalf("acme's ninth call: %d %s", c.status, c.body)
	}
	// The other acme key is another agent with a budget of its own.
	if c := f.chat(t, 0, acmeOps, "", "hi", nil); c.status != 200 {
		t.Fatalf("acme-ops: %d %s", c.status, c.body)
	}
}

func TestClientTurnPointsNeedAManagedSessionAndTheKeysLeave(t *testing.T) {
	f := startFleet(t, 1, "")
	h := map[string]string{HeaderTurnPoints: "client"}
	if c := f.chat(t, 0, acmeKey, "", "hi", h); c.status != 400 || c.err.Code != "turn_points_unmanaged" {
		t.Fatalf("per-request session: %d %s", c.status, c.body)
	}
	if c := f.chat(t, 0, acmeKey, "t1", "hi", h); c.status != 403 || c.err.Code != "turn_points_not_allowed" {
		t.Fatalf("key without client_turn_points: %d %s", c.status, c.body)
	}
	// Nothing was emitted for either refusal.
	if n := len(f.verdicts.seen("acme/t1")); n != 0 {
		t.Fatalf("%d contexts for a refused request", n)
	}
}

// Ending a session while one of its model calls is in flight waits for
// the call: its post_model_call and output come before agent_shutdown, and
// its answer is released.
func TestEndWaitsForCallsInFlight(t *testing.T) {
	f := startFleet(t, 2, "")
	slow := f.callInFlight(t, "e1", "/sleep 800ms late answer")
	start := time.Now()
	if c := f.end(t, 1, acmeKey, "e1", "completed"); c.status != 200 {
		t.Fatalf("end: %d %s", c.status, c.body)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("end returned after %v, before the call in flight finished", waited)
	}
	if c := <-slow; c.status != 200 || !strings.Contains(string(c.body), "late answer") {
		t.Fatalf("the call in flight: %d %s", c.status, c.body)
	}
	f.verify(t, "acme/e1")
}

// A session does not expire idle while a call is in flight: the idle timer
// starts when the call ends.
func TestIdleTimerStopsDuringACall(t *testing.T) {
	f := startFleet(t, 1, "  idle_timeout: 300ms\n  sweep_interval: 50ms")
	if c := f.chat(t, 0, acmeKey, "i1", "/sleep 1s slow answer", nil); c.status != 200 {
		t.Fatalf("a call three idle timeouts long: %d %s", c.status, c.body)
	}
	waitFor(t, 3*time.Second, "idle expiry after the call", func() bool {
		return strings.Contains(f.trail.String(), `"agent_shutdown"`)
	})
	all := f.verify(t, "acme/i1")
	if got := countWire(all, "acme/i1"); got != 6 {
		t.Errorf("%d records, want startup, input, pre, post, output, shutdown", got)
	}
	ctxs := f.verdicts.seen("acme/i1")
	last := ctxs[len(ctxs)-1]
	if summary, _ := last["summary"].(map[string]any); last["interception_point"] != "agent_shutdown" || summary["reason"] != "cancelled" {
		t.Fatalf("last context %v, want agent_shutdown with reason cancelled", last)
	}
	if agent, _ := last["agent"].(map[string]any); agent["id"] != "acme-bot" {
		t.Fatalf("idle shutdown under agent %v, want the session's acme-bot", agent["id"])
	}
}

// Concurrent first requests of one session on two replicas: exactly one
// claims it, the others wait for its agent_startup verdict.
func TestConcurrentFirstRequestsWaitForStartup(t *testing.T) {
	f := startFleet(t, 2, "")
	for _, tt := range []struct {
		session string
		want    int
	}{{"c1", 200}, {"c2-deny-me", 403}} {
		t.Run(tt.session, func(t *testing.T) {
			const n = 6
			results := make(chan exchange, n)
			for i := range n {
				go func() { results <- f.chat(t, i%2, acmeKey, tt.session, fmt.Sprintf("q%d", i), nil) }()
			}
			for range n {
				if c := <-results; c.status != tt.want {
					t.Errorf("status %d %s, want %d", c.status, c.body, tt.want)
				}
			}
			trail := "acme/" + tt.session
			ctxs := f.verdicts.seen(trail)
			if len(ctxs) == 0 || ctxs[0]["interception_point"] != "agent_startup" {
				t.Fatalf("first context judged is not agent_startup: %v", ctxs)
			}
			if n := f.verdicts.beforeStartup(trail); n != 0 {
				t.Fatalf("%d contexts judged before the session's agent_startup verdict", n)
			}
			if tt.want == 403 && len(ctxs) != 1 {
				t.Fatalf("%d contexts judged in a session denied at startup, want only the startup", len(ctxs))
			}
			if c := f.end(t, 1, acmeKey, tt.session, "completed"); c.status != 200 {
				t.Fatalf("end: %d %s", c.status, c.body)
			}
			f.verify(t, trail)
			if tt.want == 403 {
				last := f.verdicts.seen(trail)
				if s, _ := last[len(last)-1]["summary"].(map[string]any); s["reason"] != "error" {
					t.Fatalf("startup-denied session ended with %v, want error", s["reason"])
				}
			}
		})
	}
}

// A session denied at startup and left alone is ended by idle expiry with
// reason error (spec §6.1a).
func TestStartupDeniedSessionExpiresWithError(t *testing.T) {
	f := startFleet(t, 1, "  idle_timeout: 200ms\n  sweep_interval: 50ms")
	if c := f.chat(t, 0, acmeKey, "d-deny-me", "hi", nil); c.status != 403 {
		t.Fatalf("startup deny: %d %s", c.status, c.body)
	}
	waitFor(t, 3*time.Second, "idle expiry", func() bool {
		return strings.Contains(f.trail.String(), `"agent_shutdown"`)
	})
	f.verify(t, "acme/d-deny-me")
	ctxs := f.verdicts.seen("acme/d-deny-me")
	if len(ctxs) != 2 {
		t.Fatalf("%d contexts, want startup and shutdown", len(ctxs))
	}
	if s, _ := ctxs[1]["summary"].(map[string]any); s["reason"] != "error" {
		t.Fatalf("shutdown reason %v, want error", s["reason"])
	}
}

// The emit API pairs each post_tool_call with a pre_tool_call of the same
// id that proceeded, once.
func TestEmitPairsToolCalls(t *testing.T) {
	f := startFleet(t, 2, "")
	agent := "acme-bot"
	startup := ctxOf("agent_startup", agent, "p1", map[string]any{"agent_init": map[string]any{"tools_registered": []any{"lookup"}}})
	if c := f.emit(t, 0, acmeKey, startup); c.status != 200 {
		t.Fatalf("startup: %d %s", c.status, c.body)
	}
	pre := func(id, tool string) map[string]any {
		return ctxOf("pre_tool_call", agent, "p1", map[string]any{"tool_call": map[string]any{"id": id, "name": tool, "args": map[string]any{}}})
	}
	post := func(id string) map[string]any {
		return ctxOf("post_tool_call", agent, "p1", map[string]any{
			"tool_call":   map[string]any{"id": id, "name": "lookup", "args": map[string]any{}},
			"tool_result": map[string]any{"value": "ok", "is_error": false},
		})
	}
	if c := f.emit(t, 1, acmeKey, post("never-pre")); c.status != 409 || c.err.Code != "tool_call_unpaired" {
		t.Fatalf("post without pre: %d %s", c.status, c.body)
	}
	if c := f.emit(t, 0, acmeKey, pre("call-1", "lookup")); c.status != 200 {
		t.Fatalf("pre: %d %s", c.status, c.body)
	}
	var denied struct{ Proceed bool }
	c := f.emit(t, 0, acmeKey, pre("call-2", "forbidden"))
	if json.Unmarshal(c.body, &denied); c.status != 200 || denied.Proceed {
		t.Fatalf("denied pre: %d %s", c.status, c.body)
	}
	if c := f.emit(t, 1, acmeKey, post("call-2")); c.status != 409 || c.err.Code != "tool_call_unpaired" {
		t.Fatalf("post after a denied pre: %d %s", c.status, c.body)
	}
	if c := f.emit(t, 1, acmeKey, post("call-1")); c.status != 200 {
		t.Fatalf("post after pre: %d %s", c.status, c.body)
	}
	if c := f.emit(t, 0, acmeKey, post("call-1")); c.status != 409 || c.err.Code != "tool_call_unpaired" {
		t.Fatalf("second post for one pre: %d %s", c.status, c.body)
	}
	shutdown := ctxOf("agent_shutdown", agent, "p1", map[string]any{"summary": map[string]any{"reason": "completed"}})
	if c := f.emit(t, 1, acmeKey, shutdown); c.status != 200 {
		t.Fatalf("shutdown: %d %s", c.status, c.body)
	}
	f.verify(t, "acme/p1")
}

// countWire counts the records of session.
func countWire(recs []wireRecord, session string) int {
	n := 0
	for _, r := range recs {
		if r.SessionID == session {
			n++
		}
	}
	return n
}

// A call still in flight when the end's wait runs out has its answer
// withheld: the session's agent_shutdown is its trail's last record
// (nothing is written after it, not even the withholding, which is logged).
func TestEndWithholdsCallsPastTheWait(t *testing.T) {
	f := startFleet(t, 1, "  end_wait: 200ms")
	slow := f.callInFlight(t, "w1", "/sleep 1s secret late answer")
	if c := f.end(t, 0, acmeKey, "w1", "completed"); c.status != 200 {
		t.Fatalf("end: %d %s", c.status, c.body)
	}
	c := <-slow
	if c.status != http.StatusConflict || c.err.Code != "session_ended" || strings.Contains(string(c.body), "late answer") {
		t.Fatalf("the call past the wait: %d %s, want 409 session_ended and no answer", c.status, c.body)
	}
	v := records.NewVerifier()
	if err := v.Read("trail.jsonl", strings.NewReader(f.trail.String())); err != nil {
		t.Fatal(err)
	}
	rep := v.Report()
	if rep.Errors() != 0 {
		t.Fatalf("trail errors: %v", rep.Findings)
	}
	var last wireRecord
	var shutdowns int
	for _, line := range strings.Split(strings.TrimSpace(f.trail.String()), "\n") {
		var r wireRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.SessionID != "acme/w1" {
			continue
		}
		if r.Point == "agent_shutdown" {
			shutdowns++
		}
		last = r
	}
	if shutdowns != 1 || last.Point != "agent_shutdown" {
		t.Fatalf("%d agent_shutdown records, the last record is %s #%d: want the shutdown last", shutdowns, last.Point, last.Sequence)
	}
}

// A request that waits longer than sessions.startup_wait for another
// request's agent_startup verdict is refused, and nothing of it is judged.
func TestStartupWaitIsBounded(t *testing.T) {
	f := startFleet(t, 2, "  startup_wait: 100ms")
	first := make(chan exchange, 1)
	go func() { first <- f.chat(t, 0, acmeKey, "sw1", "first", nil) }()
	time.Sleep(80 * time.Millisecond) // the claim is made; its startup takes 300ms
	c := f.chat(t, 1, acmeKey, "sw1", "second", nil)
	if c.status != http.StatusServiceUnavailable || c.err.Code != "session_starting" {
		t.Fatalf("second request: %d %s, want 503 session_starting", c.status, c.body)
	}
	if c := <-first; c.status != 200 {
		t.Fatalf("the claiming request: %d %s", c.status, c.body)
	}
	for _, ctx := range f.verdicts.seen("acme/sw1") {
		if in, _ := ctx["input"].(map[string]any); in["content"] == "second" {
			t.Fatal("the refused request was judged")
		}
	}
}

// A session's agent is fixed at its claim: a request naming another agent
// is refused, on model calls (anonymous clients name it by header) and on
// the emit API.
func TestSessionAgentIsFixed(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	gw := newGateway(t, gatewayConfig{upstream: up.URL})
	if status, _, body := gw.post(t, chatBody("hi", false), map[string]string{HeaderSession: "ag1", HeaderAgent: "alpha"}); status != 200 {
		t.Fatalf("open: %d %s", status, body)
	}
	status, _, body := gw.post(t, chatBody("hi", false), map[string]string{HeaderSession: "ag1", HeaderAgent: "beta"})
	if e := errorBody(t, body); status != http.StatusConflict || e.Code != "agent_mismatch" {
		t.Fatalf("another agent's call: %d %s", status, body)
	}
	b, _ := json.Marshal(ctxOf("input", "beta", "ag1", map[string]any{"input": map[string]any{"content": "x", "role": "user"}}))
	status, _, body, err := send(context.Background(), http.MethodPost, gw.URL+"/v1/agent-hooks/emit", string(b), map[string]string{"Content-Type": "application/json"})
	if err != nil {
		t.Fatal(err)
	}
	if e := errorBody(t, body); status != http.StatusConflict || e.Code != "agent_mismatch" {
		t.Fatalf("another agent's emission: %d %s", status, body)
	}
	// Naming no agent joins the session as its own agent.
	if status, _, body := gw.post(t, chatBody("hi", false), map[string]string{HeaderSession: "ag1"}); status != 200 {
		t.Fatalf("no agent header: %d %s", status, body)
	}
}

// A session denied at agent_startup ends with reason error on the emit
// API too.
func TestBlockedSessionShutdownReason(t *testing.T) {
	f := startFleet(t, 1, "")
	startup := ctxOf("agent_startup", "acme-bot", "b-deny-me", map[string]any{"agent_init": map[string]any{"tools_registered": []any{}}})
	var ans struct{ Proceed bool }
	c := f.emit(t, 0, acmeKey, startup)
	if json.Unmarshal(c.body, &ans); c.status != 200 || ans.Proceed {
		t.Fatalf("startup: %d %s, want a deny", c.status, c.body)
	}
	shutdown := func(reason string) map[string]any {
		return ctxOf("agent_shutdown", "acme-bot", "b-deny-me", map[string]any{"summary": map[string]any{"reason": reason}})
	}
	if c := f.emit(t, 0, acmeKey, shutdown("completed")); c.status != http.StatusConflict || c.err.Code != "shutdown_reason" {
		t.Fatalf("shutdown completed: %d %s", c.status, c.body)
	}
	if c := f.emit(t, 0, acmeKey, shutdown("error")); c.status != 200 {
		t.Fatalf("shutdown error: %d %s", c.status, c.body)
	}
	f.verify(t, "acme/b-deny-me")
}
