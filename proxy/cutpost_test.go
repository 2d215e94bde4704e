package proxy

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// cutUpstream answers nothing until its caller goes away; arrived gets a
// value per call that reached it.
func cutUpstream(t *testing.T) (*upstream, chan struct{}) {
	arrived := make(chan struct{}, 8)
	up := newUpstream(t, func(_ http.ResponseWriter, r *http.Request, _ []byte) {
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	return up, arrived
}

// startCut sends a call in managed session id that the upstream holds, and
// returns once it reached the upstream; cancel cuts it.
func startCut(t *testing.T, gw *gateway, arrived chan struct{}, id string, stream bool) (cancel func(), done chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() {
		defer close(done)
		send(ctx, http.MethodPost, gw.URL+"/v1/chat/completions", chatBody("hi", stream), map[string]string{HeaderSession: id})
	}()
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		cancel()
		t.Fatal("the call never reached the upstream")
	}
	return cancel, done
}

// A managed session's call cut before its response (its client went
// away, as a drain's cut-off makes every client) leaves its
// post_model_call in the trail, numbered after its pre_model_call, and
// the session's agent_shutdown comes after it when the gateway stops.
func TestCutManagedCallPostsBeforeShutdown(t *testing.T) {
	for _, stream := range []bool{false, true} {
		up, arrived := cutUpstream(t)
		var log ctxLog
		gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: log.wrap(nil)})
		cancel, done := startCut(t, gw, arrived, "m-cut", stream)
		cancel()
		<-done
		waitFor(t, 5*time.Second, "the cut call's post_model_call", func() bool {
			return countPoint(gw.records.all(), enforcement.PostModelCall) == 1
		})
		// The lease is given up after the post: stopping ends the session
		// at once, its shutdown last.
		if n := gw.srv.EndOpenSessions(context.Background()); n != 1 {
			t.Fatalf("stream %v: EndOpenSessions ended %d sessions, want 1", stream, n)
		}
		recs := of(gw.records.all(), "m-cut")
		equalPoints(t, pointsOf(recs), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall, enforcement.PostModelCall, enforcement.AgentShutdown)
		checkGapless(t, recs)
		checkCutPost(t, recs[3])
		if len(log.at(enforcement.PostModelCall)) != 0 {
			t.Fatalf("stream %v: an interceptor judged a post_model_call of a call without a response", stream)
		}
	}
}

// A call still in flight when its session is sealed (ending it waited
// end_wait in vain) and cut afterwards records nothing: no record follows
// the session's agent_shutdown.
func TestCutCallAfterShutdownRecordsNothing(t *testing.T) {
	up, arrived := cutUpstream(t)
	logs := &lockedBuffer{}
	gw := newGateway(t, gatewayConfig{upstream: up.URL, endWait: 50 * time.Millisecond, log: logs})
	cancel, done := startCut(t, gw, arrived, "m-sealed", false)
	if n := gw.srv.EndOpenSessions(context.Background()); n != 1 {
		t.Fatalf("EndOpenSessions ended %d sessions, want 1", n)
	}
	cancel()
	<-done
	waitFor(t, 5*time.Second, "the withheld post to be logged", func() bool {
		return strings.Contains(logs.String(), "its post_model_call is withheld")
	})
	recs := of(gw.records.all(), "m-sealed")
	equalPoints(t, pointsOf(recs), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall, enforcement.AgentShutdown)
	checkGapless(t, recs)
}
