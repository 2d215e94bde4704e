package proxy

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

// A tenant's client names its session by the id it chose: the
// Agent-Hooks-Session response header gives that id, not the trail's
// "<tenant>/<id>", and the end endpoint, which looks the id up in the
// key's tenant, ends the session by it, as the docs tell clients to.
// The records name it <tenant>/<id>~<incarnation>.
func TestTenantEndsSessionByResponseHeader(t *testing.T) {
	t.Setenv("TENANT_END_KEY", acmeKey)
	g := startConfiguredGateway(t, `upstreams: [{name: mock, type: mock}]
records: {sinks: [{type: stdout}]}
interceptors: [{name: pass, type: allow}]
auth:
  api_keys:
    - {key_env: TENANT_END_KEY, tenant: acme, agent_id: acme-bot}
`)
	auth := map[string]string{"Authorization": "Bearer " + acmeKey, "Content-Type": "application/json"}
	h := map[string]string{HeaderSession: "s1"}
	for k, v := range auth {
		h[k] = v
	}
	for range 2 {
		st, rh, b := do(t, http.MethodPost, g.main.URL+"/v1/chat/completions", `{"model":"mock","messages":[{"role":"user","content":"hi"}]}`, h)
		if st != http.StatusOK {
			t.Fatalf("chat: %d %s", st, b)
		}
		if got := rh.Get(HeaderSession); got != "s1" {
			t.Fatalf("%s response header %q, want the client's id s1", HeaderSession, got)
		}
	}
	st, _, b := do(t, http.MethodPost, g.main.URL+"/v1/agent-hooks/sessions/"+url.PathEscape("s1")+"/end", "", auth)
	var er endResponse
	if err := json.Unmarshal(b, &er); err != nil {
		t.Fatalf("end: %d %s: %v", st, b, err)
	}
	if st != http.StatusOK || !er.Ended || er.SessionID != "s1" || er.Record.InterceptionPoint != "agent_shutdown" || !memoryTrail(er.Record.SessionID, "acme/s1") {
		t.Fatalf("end with the header's id: %d %s", st, b)
	}
	recs := g.records(t)
	if len(recs) == 0 || recs[len(recs)-1].Point != "agent_shutdown" {
		t.Fatalf("records %+v, want the session's agent_shutdown last", recs)
	}
	for _, r := range recs {
		if r.SessionID != er.Record.SessionID {
			t.Fatalf("record %s %d in session %q, the shutdown's %q", r.Point, r.Sequence, r.SessionID, er.Record.SessionID)
		}
	}
}
