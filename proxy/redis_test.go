package proxy

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// redisGateway is one gateway replica with its own Redis client.
func redisGateway(t *testing.T, rs *redistest.Server, upstreamURL string, idle time.Duration, p policy) *gateway {
	t.Helper()
	store, err := sessions.NewRedis(context.Background(), sessions.RedisOptions{URL: rs.URL(), Options: sessions.Options{IdleTimeout: idle}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return newGateway(t, gatewayConfig{upstream: upstreamURL, store: store, policy: p})
}

// runSweeper runs the gateway's idle sweeper every interval until the test
// ends.
func (g *gateway) runSweeper(t *testing.T, interval time.Duration) {
	g.srv.opts.SweepInterval = interval
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.srv.RunSweeper(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// Two replicas sharing one Redis serve one session: exactly one startup,
// one gapless sequence across both replicas' records, exactly one shutdown.
func TestRedisReplicasShareSession(t *testing.T) {
	rs := redistest.StartServer(t)
	replicasShareSession(t, sessions.RedisOptions{URL: rs.URL()})
}

// The same on a Redis Cluster of three masters, the store built the way
// sessions.redis_cluster builds it.
func TestRedisClusterReplicasShareSession(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	replicasShareSession(t, sessions.RedisOptions{Cluster: c.Addrs()})
}

func replicasShareSession(t *testing.T, ro sessions.RedisOptions) {
	up := newUpstream(t, jsonReply(completionJSON))
	var log ctxLog
	replica := func() *gateway {
		store, err := sessions.NewRedis(context.Background(), ro)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		return newGateway(t, gatewayConfig{upstream: up.URL, store: store, policy: log.wrap(nil)})
	}
	gws := []*gateway{replica(), replica()}
	const n = 40
	hdr := map[string]string{HeaderSession: "shared-1", HeaderAgent: "my-agent"}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			status, _, body, err := send(context.Background(), http.MethodPost, gws[i%2].URL+"/v1/chat/completions", chatBody(fmt.Sprintf("q%d", i), false), hdr)
			if err == nil && status != http.StatusOK {
				err = fmt.Errorf("request %d: status %d: %s", i, status, body)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	all := func() []*enforcement.Record { return append(gws[0].records.all(), gws[1].records.all()...) }
	recs := all()
	if len(of(recs, "shared-1")) != len(recs) {
		t.Fatal("records of another session")
	}
	if got := countPoint(recs, enforcement.AgentStartup); got != 1 {
		t.Fatalf("%d agent_startup records, want exactly 1", got)
	}
	if len(gws[0].records.all()) == 0 || len(gws[1].records.all()) == 0 {
		t.Fatal("one replica served nothing")
	}
	for _, r := range recs {
		if r.InterceptionPoint == enforcement.AgentStartup && r.Sequence != 0 {
			t.Fatalf("agent_startup has sequence %d", r.Sequence)
		}
	}
	if len(recs) != 1+4*n {
		t.Fatalf("%d records, want %d", len(recs), 1+4*n)
	}
	checkGapless(t, recs)

	// Both replicas end the session at once: exactly one wins.
	statuses := make([]int, 2)
	for i, g := range gws {
		wg.Go(func() {
			status, _, _, err := send(context.Background(), http.MethodPost, g.URL+"/v1/agent-hooks/sessions/shared-1/end", `{"reason":"completed"}`, nil)
			if err != nil {
				t.Error(err)
			}
			statuses[i] = status
		})
	}
	wg.Wait()
	if !(statuses[0] == 200 && statuses[1] == 409 || statuses[0] == 409 && statuses[1] == 200) {
		t.Fatalf("end statuses = %v, want one 200 and one 409", statuses)
	}
	recs = all()
	if got := countPoint(recs, enforcement.AgentShutdown); got != 1 {
		t.Fatalf("%d agent_shutdown records, want exactly 1", got)
	}
	checkGapless(t, recs)
	if got := log.shutdownReasons("shared-1"); len(got) != 1 || got[0] != "completed" {
		t.Fatalf("shutdown reasons = %v", got)
	}
	// Both replicas refuse the ended session.
	for _, g := range gws {
		if status, _, body := g.post(t, chatBody("late", false), hdr); status != http.StatusConflict {
			t.Fatalf("late request: %d %s", status, body)
		}
	}
}

// An idle session is ended by exactly one of the replicas sweeping, with
// reason cancelled.
func TestRedisIdleExpiryAcrossReplicas(t *testing.T) {
	rs := redistest.StartServer(t)
	up := newUpstream(t, jsonReply(completionJSON))
	var log ctxLog
	const idle = 200 * time.Millisecond
	gws := []*gateway{
		redisGateway(t, rs, up.URL, idle, log.wrap(nil)),
		redisGateway(t, rs, up.URL, idle, log.wrap(nil)),
	}
	hdr := map[string]string{HeaderSession: "idle-1"}
	for _, g := range gws {
		if status, _, body := g.post(t, chatBody("hi", false), hdr); status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
	}
	start := time.Now()
	for _, g := range gws {
		g.runSweeper(t, 10*time.Millisecond)
	}
	all := func() []*enforcement.Record { return append(gws[0].records.all(), gws[1].records.all()...) }
	waitFor(t, 5*time.Second, "the idle session's agent_shutdown", func() bool {
		return countPoint(all(), enforcement.AgentShutdown) > 0
	})
	if d := time.Since(start); d < idle/2 {
		t.Fatalf("the session was ended after %v, before its idle timeout", d)
	}
	// Let both sweepers run many more times: nobody ends it again.
	time.Sleep(idle)
	recs := all()
	if got := countPoint(recs, enforcement.AgentShutdown); got != 1 {
		t.Fatalf("%d agent_shutdown records, want exactly 1", got)
	}
	if got := log.shutdownReasons("idle-1"); len(got) != 1 || got[0] != enforcement.ShutdownCancelled {
		t.Fatalf("shutdown reasons = %v, want [cancelled]", got)
	}
	checkGapless(t, recs)
	if status, _, body := gws[0].post(t, chatBody("late", false), hdr); status != http.StatusConflict {
		t.Fatalf("request on the expired session: %d %s", status, body)
	}
}

// Redis goes away: managed requests fail closed (503, nothing of the
// upstream released, a fail-closed record), readiness drops, and the
// gateway recovers by itself when Redis returns.
func TestRedisDownFailsClosed(t *testing.T) {
	rs := redistest.StartServer(t)
	var (
		mu      sync.Mutex
		hold    chan struct{} // when set, the upstream waits for it to close
		arrived = make(chan struct{}, 1)
	)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		mu.Lock()
		h := hold
		mu.Unlock()
		if h != nil {
			arrived <- struct{}{}
			select {
			case <-h:
			case <-r.Context().Done():
				return
			}
		}
		jsonReply(completionJSON)(w, r, body)
	})
	gw := redisGateway(t, rs, up.URL, 0, nil)
	hdr := map[string]string{HeaderSession: "r-1"}
	for range 2 {
		if status, _, body := gw.post(t, chatBody("hi", false), hdr); status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
	}
	if status, _, body := do(t, http.MethodGet, gw.URL+"/readyz", "", nil); status != http.StatusOK {
		t.Fatalf("readyz: %d %s", status, body)
	}

	checkFailClosed := func(t *testing.T, status int, body []byte, point enforcement.Point, before int) {
		t.Helper()
		e := errorBody(t, body)
		if status != http.StatusServiceUnavailable || e.Type != typeHostError || e.Code != enforcement.ReasonContextInvalid ||
			e.InterceptionPoint != string(point) || e.SessionID != "r-1" {
			t.Fatalf("status %d: %s", status, body)
		}
		noContent(t, body, "Hello", "FRIEND", "chatcmpl")
		recs := gw.records.all()[before:]
		if len(recs) != 1 {
			t.Fatalf("%d records for the failed request, want the one fail-closed record: %v", len(recs), pointsOf(recs))
		}
		r := recs[0]
		if r.InterceptionPoint != point || r.Verdict.Decision != enforcement.DecisionDeny ||
			r.Verdict.Reason != enforcement.ReasonContextInvalid || r.SessionID != "r-1" {
			t.Fatalf("fail-closed record = %+v", r)
		}
	}

	t.Run("killed mid-request", func(t *testing.T) {
		mu.Lock()
		hold = make(chan struct{})
		mu.Unlock()
		type result struct {
			status int
			body   []byte
			err    error
		}
		res := make(chan result, 1)
		before := len(gw.records.all())
		go func() {
			status, _, body, err := send(context.Background(), http.MethodPost, gw.URL+"/v1/chat/completions", chatBody("hi", false), hdr)
			res <- result{status, body, err}
		}()
		select {
		case <-arrived:
		case <-time.After(5 * time.Second):
			t.Fatal("the request never reached the upstream")
		}
		rs.Kill()
		mu.Lock()
		close(hold)
		hold = nil
		mu.Unlock()
		r := <-res
		if r.err != nil {
			t.Fatal(r.err)
		}
		// pre_model_call was recorded before the kill ("hi" was judged as
		// an input in the session already); the post_model_call could not
		// get a sequence number.
		before++
		checkFailClosed(t, r.status, r.body, enforcement.PostModelCall, before)
	})

	t.Run("down before the request", func(t *testing.T) {
		rs.Kill() // no-op when already down
		before := len(gw.records.all())
		status, _, body := gw.post(t, chatBody("hi", false), hdr)
		checkFailClosed(t, status, body, enforcement.AgentStartup, before)
		if status, _, body := do(t, http.MethodGet, gw.URL+"/readyz", "", nil); status != http.StatusServiceUnavailable {
			t.Fatalf("readyz with Redis down: %d %s", status, body)
		}
		if status, body := gw.endSession(t, "r-1", "", nil); status != http.StatusServiceUnavailable {
			t.Fatalf("end with Redis down: %d %s", status, body)
		}
	})

	t.Run("recovers", func(t *testing.T) {
		rs.Restart()
		waitFor(t, 5*time.Second, "/readyz to answer 200", func() bool {
			status, _, _, err := send(context.Background(), http.MethodGet, gw.URL+"/readyz", "", nil)
			return err == nil && status == http.StatusOK
		})
		before := len(gw.records.all())
		status, _, body := gw.post(t, chatBody("hi", false), map[string]string{HeaderSession: "r-2"})
		if status != http.StatusOK {
			t.Fatalf("after restart: %d %s", status, body)
		}
		recs := gw.records.all()[before:]
		equalPoints(t, pointsOf(recs), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall, enforcement.PostModelCall, enforcement.Output)
		checkGapless(t, recs)
	})
}

// A managed session's turns take their first number with the call's
// lease (one store step): a denied input, a request asserting another
// agent and a request of another key leave no hole, and no lease behind,
// across two replicas on one Redis.
func TestRedisTurnNumbersGapless(t *testing.T) {
	rs := redistest.StartServer(t)
	up := newUpstream(t, jsonReply(completionJSON))
	deny := func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.Input {
			if s, _ := c["input"].(map[string]any)["content"].(string); s == "forbidden" {
				return enforcement.Deny("policy:test", "denied by the test policy")
			}
		}
		return enforcement.Allow()
	}
	store, err := sessions.NewRedis(context.Background(), sessions.RedisOptions{URL: rs.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	gws := []*gateway{redisGateway(t, rs, up.URL, time.Hour, deny), redisGateway(t, rs, up.URL, time.Hour, deny)}
	hdr := map[string]string{HeaderSession: "gapless-1", HeaderAgent: "my-agent"}
	steps := []struct {
		text   string
		agent  string
		status int
	}{
		{"hello", "my-agent", http.StatusOK}, // claims: startup 0, then input 1…
		{"forbidden", "my-agent", http.StatusForbidden},
		{"hello again", "my-agent", http.StatusOK},
		{"hello", "other-agent", http.StatusConflict}, // agent mismatch: nothing taken
		{"forbidden", "my-agent", http.StatusForbidden},
		{"last", "my-agent", http.StatusOK},
	}
	for i, s := range steps {
		hdr[HeaderAgent] = s.agent
		if status, _, body := gws[i%2].post(t, chatBody(s.text, false), hdr); status != s.status {
			t.Fatalf("step %d (%s as %s): status %d, want %d: %s", i, s.text, s.agent, status, s.status, body)
		}
	}
	k := sessions.Key{ID: "gapless-1"}
	if _, exists, err := store.Status(context.Background(), k); err != nil || !exists {
		t.Fatalf("session not found in the store under %+v: %v", k, err)
	}
	// A turn gives its lease up once its answer is on the wire: allow the
	// last one that round trip.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		n, err := store.InFlight(context.Background(), k)
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("InFlight after the turns = %d, %v; want 0", n, err)
		}
	}
	recs := append(gws[0].records.all(), gws[1].records.all()...)
	// startup, 3 allowed turns of 4, 2 denied inputs.
	if len(recs) != 1+3*4+2 {
		t.Fatalf("%d records, want %d", len(recs), 1+3*4+2)
	}
	checkGapless(t, recs)
	hdr[HeaderAgent] = "my-agent"
	if status, body := gws[1].endSession(t, "gapless-1", `{"reason":"completed"}`, hdr); status != http.StatusOK {
		t.Fatalf("end: %d %s", status, body)
	}
	checkGapless(t, append(gws[0].records.all(), gws[1].records.all()...))
}
