package proxy

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// nativePolicy allows everything, except that the route of model
// "solo-*" keeps per-request sessions.
const nativePolicy = `interceptors:
  - {name: ok, type: allow}
routes:
  - name: solo
    match: {model: "solo-*"}
    interceptors: [ok]
    native_sessions: false
`

// The agents' own run ids (Claude Code's X-Claude-Code-Session-Id,
// Codex's Session-Id) make one managed session of the run's requests:
// one agent_startup, sequence numbers continuing across requests, the id
// in the Agent-Hooks-Session response header. Agent-Hooks-Session wins
// over them; a route, the configuration or an id the gateway will not
// echo keep per-request sessions.
func TestNativeSessionIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writeAtomically(t, path, nativePolicy)
	start := func(extra string) *policyGateway {
		return startConfiguredGateway(t, "upstreams: [{name: mock, type: mock}]\npolicy: {path: "+path+", watch: false}\nrecords: {sinks: [{type: stdout}]}\n"+extra)
	}
	send := func(t *testing.T, g *policyGateway, model string, header map[string]string) string {
		t.Helper()
		h := map[string]string{"Content-Type": "application/json"}
		for k, v := range header {
			h[k] = v
		}
		st, rh, b := do(t, http.MethodPost, g.main.URL+"/v1/chat/completions", `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`, h)
		if st != http.StatusOK {
			t.Fatalf("status %d: %s", st, b)
		}
		return rh.Get(HeaderSession)
	}
	const run = "9b2f1c4e-6a7d-4e0b-8c31-2f5d6e7a8b90"

	g := start("")
	for _, tc := range []struct{ header, want string }{
		{"X-Claude-Code-Session-Id", "claude-code:" + run},
		{"Session-Id", "session-id:" + run},
	} {
		first := send(t, g, "mock", map[string]string{tc.header: run})
		second := send(t, g, "mock", map[string]string{tc.header: run})
		if first != tc.want || second != tc.want {
			t.Fatalf("%s: sessions %q, %q; want both %q", tc.header, first, second, tc.want)
		}
		var startups int
		var seqs []int64
		trail := oneTrail{name: tc.want} // the run's trail id: its name and an incarnation
		for _, r := range g.records(t) {
			if !trail.is(t, r.SessionID) {
				continue
			}
			seqs = append(seqs, r.Sequence)
			if r.Point == "agent_startup" {
				startups++
			}
			if r.Point == "agent_shutdown" {
				t.Fatalf("%s: the run's session ended after a request", tc.header)
			}
		}
		if startups != 1 {
			t.Fatalf("%s: %d agent_startup records in the run, want 1", tc.header, startups)
		}
		for i, s := range seqs {
			if s != int64(i) {
				t.Fatalf("%s: sequences %v are not gapless across the run's requests", tc.header, seqs)
			}
		}
	}
	if got := send(t, g, "mock", map[string]string{"X-Claude-Code-Session-Id": run, HeaderSession: "explicit-1"}); got != "explicit-1" {
		t.Fatalf("with Agent-Hooks-Session too: session %q, want explicit-1", got)
	}
	for name, header := range map[string]map[string]string{
		"an id the gateway will not echo": {"X-Claude-Code-Session-Id": "<redacted>"},
		"a route that opts out":           {"X-Claude-Code-Session-Id": run, "model": "solo-1"},
		"no native id":                    {},
	} {
		model := "mock"
		if m, ok := header["model"]; ok {
			model = m
			delete(header, "model")
		}
		if got := send(t, g, model, header); !strings.HasPrefix(got, "req-") {
			t.Errorf("%s: session %q, want a per-request one", name, got)
		}
	}

	off := start("sessions: {native_ids: false}\n")
	if got := send(t, off, "mock", map[string]string{"X-Claude-Code-Session-Id": run}); !strings.HasPrefix(got, "req-") {
		t.Errorf("sessions.native_ids: false: session %q, want a per-request one", got)
	}
}

func TestNativeSessionIDShape(t *testing.T) {
	for v, ok := range map[string]bool{
		"9b2f1c4e-6a7d-4e0b-8c31-2f5d6e7a8b90": true,
		"thread_01.a:b":                        true,
		"":                                     false,
		"a/b":                                  false,
		"a b":                                  false,
		strings.Repeat("a", 129):               false,
		"é":                                    false,
	} {
		if isNativeID(v) != ok {
			t.Errorf("isNativeID(%q) = %v, want %v", v, !ok, ok)
		}
	}
}
