package proxy

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	policyfile "github.com/hooks-gateway/hooks-gateway/policy"
)

const routedPolicy = `interceptors:
  - {name: deny-alpha, type: regex, points: [input], action: deny, reason: "policy:alpha", patterns: [alpha]}
  - {name: deny-beta, type: regex, points: [input], action: deny, reason: "policy:beta", patterns: [beta]}
routes:
  - name: payments
    match: {agent_id: "pay-*"}
    interceptors: [deny-beta]
  - name: acme-shadow
    match: {tenant: acme}
    interceptors: [deny-alpha]
    point_modes: {input: evaluate_only}
  - name: big-model
    match: {model: "big-*"}
    interceptors: [deny-beta]
  - name: keyed
    match: {api_key: ROUTE_KEY_B}
    interceptors: [deny-beta]
`

func TestRouteSelection(t *testing.T) {
	t.Setenv("ROUTE_KEY_A", "key-a")
	t.Setenv("ROUTE_KEY_B", "key-b")
	t.Setenv("ROUTE_KEY_C", "key-c")
	t.Setenv("ROUTE_KEY_D", "key-d")
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writeAtomically(t, path, routedPolicy)
	// The envelope format names each record's route.
	g := startConfiguredGateway(t, "upstreams: [{name: mock, type: mock}]\npolicy: {path: "+path+", watch: false}\n"+
		"records: {format: envelope, sinks: [{type: stdout}]}\n"+`auth:
  api_keys:
    - {key_env: ROUTE_KEY_A, agent_id: client-a, tenant: acme}
    - {key_env: ROUTE_KEY_B, agent_id: client-b}
    - {key_env: ROUTE_KEY_C, agent_id: ops}
    - {key_env: ROUTE_KEY_D, agent_id: pay-7}
`)
	version := g.asm.Server.Policy().Version
	tests := []struct {
		name, key, agent, model string
		status                  int
		reason, mode, route     string
	}{
		{"agent glob", "key-d", "", "mock", 403, "policy:beta", "enforce", "payments"},
		{"agent glob, the key's agent repeated", "key-d", "pay-7", "mock", 403, "policy:beta", "enforce", "payments"},
		{"tenant, shadowed point", "key-a", "", "mock", 200, "policy:alpha", "evaluate_only", "acme-shadow"},
		{"model glob", "key-c", "", "big-1", 403, "policy:beta", "enforce", "big-model"},
		{"api key", "key-b", "", "mock", 403, "policy:beta", "enforce", "keyed"},
		{"no match: default chain", "key-c", "", "mock", 403, "policy:alpha", "enforce", ""},
		// A key's agent is its identity: a header naming another is refused.
		{"another agent in the header", "key-c", "pay-7", "mock", 403, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"Authorization": "Bearer " + tt.key}
			if tt.agent != "" {
				h[HeaderAgent] = tt.agent
			}
			a, err := g.tryChat("alpha beta", tt.model, h)
			if err != nil {
				t.Fatal(err)
			}
			if a.status != tt.status {
				t.Fatalf("status %d (%+v), want %d", a.status, a, tt.status)
			}
			if tt.reason == "" {
				if a.code != "identity_mismatch" {
					t.Fatalf("code %q, want identity_mismatch", a.code)
				}
				return
			}
			// The allowed request has no session in its answer: find its
			// record by route.
			var rec *wireRecord
			for _, r := range g.records(t) {
				if r.Point == "input" && r.Route == tt.route && (a.session == "" || r.SessionID == a.session) {
					rec = &r
				}
			}
			if rec == nil {
				t.Fatalf("no input record on route %q", tt.route)
			}
			if rec.Verdict.Reason != tt.reason || rec.Mode != tt.mode || rec.PolicyVersion != version {
				t.Errorf("input record %+v, want reason %s, mode %s, version %s", *rec, tt.reason, tt.mode, version)
			}
		})
	}
}

func TestRouteNamingAnUnknownKeyIsRejected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writeAtomically(t, path, routedPolicy)
	cfg, err := config.Parse("gateway.yaml", []byte("upstreams: [{name: mock, type: mock}]\npolicy: {path: "+path+"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), cfg, io.Discard, slog.New(slog.DiscardHandler))
	want := path + ":16: routes[3].match.api_key: names no client key of the gateway (auth.api_keys[].name or the key file's; got ROUTE_KEY_B)"
	if err == nil || err.Error() != want {
		t.Errorf("Build = %v\nwant %s", err, want)
	}
}

func TestContextsCarryThePolicyVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writeAtomically(t, path, denyWordPolicy("alpha"))
	g := startPolicyGateway(t, path, "")
	compiled := g.asm.Server.Policy()
	var mu sync.Mutex
	seen := map[enforcement.Point]any{}
	em, err := enforcement.NewEmitter(enforcement.Options{Interceptors: []enforcement.Registration{{Name: "capture",
		Interceptor: enforcement.InterceptorFunc(func(_ context.Context, c enforcement.Context) (enforcement.Verdict, error) {
			mu.Lock()
			seen[c.Point()] = c["extensions"]
			mu.Unlock()
			return enforcement.Allow(), nil
		})}}})
	if err != nil {
		t.Fatal(err)
	}
	// The compiled policy's context extensions, with a capturing chain.
	swapped := *compiled
	swapped.Emitter = em
	g.asm.Server.SetPolicy(&swapped)
	if a := g.chat(t, "hello", nil); a.status != 200 {
		t.Fatalf("chat: %+v", a)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("no context reached the interceptor")
	}
	for p, ext := range seen {
		gw, _ := ext.(map[string]any)[ExtensionNamespace].(map[string]any)
		if gw["policy_version"] != compiled.Version {
			t.Errorf("%s context extensions = %v, want policy_version %s", p, ext, compiled.Version)
		}
	}
}

// TestChainForStreaming: the first matching route gives both the chain
// and its streaming mode; no route keeps the default chain and "".
func TestChainForStreaming(t *testing.T) {
	def, routed := &enforcement.Emitter{}, &enforcement.Emitter{}
	pol := &Policy{Emitter: def, Routes: []PolicyRoute{
		{Name: "live", Match: policyfile.Match{AgentID: "live-*"}, Emitter: routed, Streaming: config.StreamingIncremental},
		{Name: "later", Match: policyfile.Match{AgentID: "*"}, Emitter: def, Streaming: config.StreamingBuffered},
	}}
	if em, mode := pol.chainFor(policyfile.Request{AgentID: "live-1"}); em != routed || mode != config.StreamingIncremental {
		t.Fatalf("live-1: emitter %p mode %q, want the live route's and incremental", em, mode)
	}
	empty := &Policy{Emitter: def}
	if em, mode := empty.chainFor(policyfile.Request{AgentID: "x"}); em != def || mode != "" {
		t.Fatalf("no routes: emitter %p mode %q, want the default and \"\"", em, mode)
	}
}
