package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// A client that goes on sending its session id to a restarted gateway on
// the memory store opens a new session, from agent_startup at 0, under a
// trail id of its own: no (session_id, sequence) pair of the earlier trail
// appears twice. The client's name for the session (the response header)
// stays its id.
func TestRestartedMemoryStoreOpensANewTrail(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	hdr := map[string]string{HeaderSession: "kept-id"}
	var trails []string
	for range 2 { // the gateway, then the gateway restarted (a fresh memory store)
		gw := newGateway(t, gatewayConfig{upstream: up.URL})
		for range 2 {
			status, h, body := gw.post(t, chatBody("hi", false), hdr)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			if got := h.Get(HeaderSession); got != "kept-id" {
				t.Fatalf("%s response header %q, want the client's id", HeaderSession, got)
			}
		}
		recs := gw.records.all()
		checkGapless(t, recs)
		if recs[0].InterceptionPoint != enforcement.AgentStartup || recs[0].Sequence != 0 {
			t.Fatalf("first record %s %d, want agent_startup 0", recs[0].InterceptionPoint, recs[0].Sequence)
		}
		for _, r := range recs {
			if r.SessionID != recs[0].SessionID {
				t.Fatalf("one session, two trail ids: %q and %q", recs[0].SessionID, r.SessionID)
			}
		}
		trails = append(trails, recs[0].SessionID)
	}
	for _, id := range trails {
		if !strings.HasPrefix(id, "kept-id~") || trailName(id) != "kept-id" {
			t.Fatalf("trail id %q, want kept-id~<incarnation>", id)
		}
	}
	if trails[0] == trails[1] {
		t.Fatalf("both incarnations of the session recorded as %q: the second restarts the first's sequence", trails[0])
	}
}

// In Redis, whose sessions outlive the gateway's processes, a session's
// trail id is its id, the same on every replica and across restarts.
func TestRedisTrailIDIsTheID(t *testing.T) {
	rs := redistest.StartServer(t)
	up := newUpstream(t, jsonReply(completionJSON))
	for range 2 { // two replicas (or a restart) on one Redis
		gw := redisGateway(t, rs, up.URL, 0, nil)
		if status, _, body := gw.post(t, chatBody("hi", false), map[string]string{HeaderSession: "redis-id"}); status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		for _, r := range gw.records.all() {
			if r.SessionID != "redis-id" {
				t.Fatalf("trail id %q, want the id", r.SessionID)
			}
		}
	}
}
