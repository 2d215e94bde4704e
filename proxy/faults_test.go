package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// loadClients is how many clients the fault tests run at once.
const loadClients = 8

// Outage phases of TestRedisOutageUnderLoad.
const (
	phaseUp       int32 = iota // before the outage
	phaseDown                  // Redis killed
	phaseDraining              // waiting for the outage's requests to finish
	phaseBack                  // Redis restarted
)

// Redis dies and comes back while eight clients send managed-session
// requests without pause. Requests sent while it is down all fail closed
// (503 host_error:context_invalid) and none reaches the model; the gateway
// recovers by itself; and no session has two records with one sequence.
func TestRedisOutageUnderLoad(t *testing.T) {
	rs := redistest.StartServer(t)
	var outageHits atomic.Int64
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if strings.Contains(string(body), "phase-1") {
			outageHits.Add(1)
		}
		jsonReply(completionJSON)(w, r, body)
	})
	gw := redisGateway(t, rs, up.URL, 0, nil)

	var (
		phase    atomic.Int32
		inflight [phaseBack + 1]atomic.Int64
		counts   [phaseBack + 1]struct{ ok, failed atomic.Int64 }
		mu       sync.Mutex
		problems []string
		wg       sync.WaitGroup
		// firstBack is when the first request after the restart succeeded.
		firstBack atomic.Pointer[time.Time]
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fail := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for i := range loadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				p := phase.Load()
				if p == phaseDraining {
					time.Sleep(time.Millisecond)
					continue
				}
				inflight[p].Add(1)
				// A restarted Redis starts empty, so each phase has its own
				// sessions; within a phase a client reuses its session.
				hdr := map[string]string{HeaderSession: fmt.Sprintf("load-%d-phase-%d", i, p)}
				status, _, body, err := send(ctx, http.MethodPost, gw.URL+"/v1/chat/completions", chatBody(fmt.Sprintf("phase-%d client %d request %d", p, i, n), false), hdr)
				inflight[p].Add(-1)
				switch {
				case ctx.Err() != nil:
					return
				case err != nil:
					fail("phase %d: %v", p, err)
				case status == http.StatusOK:
					counts[p].ok.Add(1)
					if now := time.Now(); p == phaseBack {
						firstBack.CompareAndSwap(nil, &now)
					}
					if p == phaseDown {
						fail("a request sent while Redis was down succeeded")
					}
				default:
					counts[p].failed.Add(1)
					e := envelopeOf(body)
					if status != http.StatusServiceUnavailable || e.Type != typeHostError || e.Code != enforcement.ReasonContextInvalid {
						fail("phase %d: status %d: %s", p, status, body)
					}
					if strings.Contains(string(body), "FRIEND") {
						fail("phase %d: a failed request carries upstream content", p)
					}
				}
			}
		}()
	}
	waitPhase := func(p int32, what string, cond func() bool) {
		t.Helper()
		waitFor(t, 20*time.Second, what, cond)
	}
	waitPhase(phaseUp, "successes before the outage", func() bool { return counts[phaseUp].ok.Load() >= 4*loadClients })

	rs.Kill()
	phase.Store(phaseDown)
	waitPhase(phaseDown, "fail-closed answers during the outage", func() bool { return counts[phaseDown].failed.Load() >= 4*loadClients })
	phase.Store(phaseDraining)
	waitPhase(phaseDraining, "the outage's requests to finish", func() bool {
		return inflight[phaseUp].Load() == 0 && inflight[phaseDown].Load() == 0
	})

	rs.Restart()
	restarted := time.Now()
	phase.Store(phaseBack)
	waitPhase(phaseBack, "successes after the restart", func() bool { return counts[phaseBack].ok.Load() >= 4*loadClients })
	cancel()
	wg.Wait()

	for _, p := range problems {
		t.Error(p)
	}
	if n := outageHits.Load(); n != 0 {
		t.Errorf("%d requests sent while Redis was down reached the model", n)
	}
	t.Logf("before: %d ok, %d failed; down: %d failed; after: %d ok, %d failed; first success %v after the restart",
		counts[phaseUp].ok.Load(), counts[phaseUp].failed.Load(), counts[phaseDown].failed.Load(),
		counts[phaseBack].ok.Load(), counts[phaseBack].failed.Load(), firstBack.Load().Sub(restarted))
	// No (session, sequence) pair twice, in any phase; after the restart
	// the sessions are whole: every request a complete turn.
	seen := map[string]bool{}
	for _, r := range gw.records.all() {
		if r.Sequence < 0 {
			continue // a host failure that got no sequence number
		}
		key := fmt.Sprintf("%s#%d", r.SessionID, r.Sequence)
		if seen[key] {
			t.Fatalf("session %s has two records with sequence %d", r.SessionID, r.Sequence)
		}
		seen[key] = true
	}
	for i := range loadClients {
		var recs []*enforcement.Record
		for _, r := range of(gw.records.all(), fmt.Sprintf("load-%d-phase-%d", i, phaseBack)) {
			if r.Sequence >= 0 { // host failures before the session began have none
				recs = append(recs, r)
			}
		}
		if countPoint(recs, enforcement.AgentStartup) != 1 {
			t.Fatalf("client %d: %d agent_startup records after the restart, want 1", i, countPoint(recs, enforcement.AgentStartup))
		}
		checkGapless(t, recs)
	}
}

// envelopeOf decodes an error envelope; a body that is not one yields the
// zero value, which no assertion accepts. Unlike errorBody it is safe off
// the test goroutine.
func envelopeOf(body []byte) envelopeBody {
	var env envelope
	json.Unmarshal(body, &env)
	return env.Error
}

// resetConn answers by resetting the TCP connection (RST, not FIN).
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// Upstream failures under concurrent load: each fails closed for every
// client with its documented status, no client gets a byte of the upstream
// answer, and no failed model call is followed by a post_model_call.
func TestUpstreamFaultsUnderLoad(t *testing.T) {
	cases := []struct {
		name    string
		stream  bool
		respond func(w http.ResponseWriter, r *http.Request)
		status  int
		code    string
	}{
		{name: "500", respond: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":{"message":"`+partial+`"}}`)
		}, status: http.StatusBadGateway, code: "upstream_status_500"},
		{name: "hang past the timeout", stream: true, respond: func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, status: http.StatusGatewayTimeout, code: "upstream_timeout"},
		{name: "connection reset", respond: func(w http.ResponseWriter, r *http.Request) {
			resetConn(w)
		}, status: http.StatusBadGateway, code: "upstream_unavailable"},
		{name: "reset mid-stream", stream: true, respond: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+chunk(`{"role":"assistant","content":"`+partial+`"}`, "")+"\n\n")
			w.(http.Flusher).Flush()
			resetConn(w)
		}, status: http.StatusBadGateway, code: "upstream_stream_incomplete"},
		{name: "malformed SSE", stream: true, respond: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+chunk(`{"role":"assistant","content":"`+partial+`"}`, "")+"\n\ndata: {\"choices\":[{\"delta\":\n\ndata: [DONE]\n\n")
		}, status: http.StatusBadGateway, code: "upstream_response_invalid"},
		{name: "invalid JSON", respond: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"chatcmpl-1","choices":[{"message":{"content":"`+partial+`"}}`)
		}, status: http.StatusBadGateway, code: "upstream_response_invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int64
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				hits.Add(1)
				tc.respond(w, r)
			})
			gw := newGateway(t, gatewayConfig{upstream: up.URL, timeout: 300 * time.Millisecond})
			const perClient = 3
			var wg sync.WaitGroup
			errs := make(chan string, loadClients*perClient)
			for i := range loadClients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := range perClient {
						status, h, body, err := send(context.Background(), http.MethodPost, gw.URL+"/v1/chat/completions",
							chatBody(fmt.Sprintf("client %d request %d", i, n), tc.stream), nil)
						if err != nil {
							errs <- err.Error()
							continue
						}
						e := envelopeOf(body)
						if status != tc.status || e.Type != typeUpstream || e.Code != tc.code || h.Get("Content-Type") != "application/json" {
							errs <- fmt.Sprintf("status %d %s: %s", status, h.Get("Content-Type"), body)
						}
						if strings.Contains(string(body), partial) {
							errs <- "a failed call released upstream content"
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
			if n := hits.Load(); n != loadClients*perClient {
				t.Errorf("the upstream saw %d calls, want %d (one per request, no retries)", n, loadClients*perClient)
			}
			recs := gw.records.all()
			if n := countPoint(recs, enforcement.PostModelCall); n != 0 {
				t.Fatalf("%d post_model_call records for failed model calls", n)
			}
			if a, b := countPoint(recs, enforcement.PreModelCall), countPoint(recs, enforcement.AgentShutdown); a != loadClients*perClient || b != a {
				t.Fatalf("%d pre_model_call and %d agent_shutdown records, want %d each", a, b, loadClients*perClient)
			}
		})
	}
}

// Clients that go away mid-stream under load, some while the gateway waits
// for the stream to end and some after it has committed the answer (a
// keep-alive comment arrived): every upstream call is cancelled, every
// per-request session still ends with agent_shutdown (cancelled), and no
// goroutine outlives the test (goleak in TestMain).
func TestClientsDisconnectMidStreamUnderLoad(t *testing.T) {
	var (
		arrivals  sync.Map // request text -> chan struct{}, closed when the upstream has it
		cancelled atomic.Int64
	)
	arrival := func(text string) chan struct{} {
		ch, _ := arrivals.LoadOrStore(text, make(chan struct{}))
		return ch.(chan struct{})
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+chunk(`{"role":"assistant","content":"`+partial+`"}`, "")+"\n\n")
		w.(http.Flusher).Flush()
		close(arrival(requestText(t, body)))
		for {
			select {
			case <-r.Context().Done():
				cancelled.Add(1)
				return
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := io.WriteString(w, "data: "+chunk(`{"content":"`+partial+`"}`, "")+"\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	var log ctxLog
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: log.wrap(nil), keepAlive: 10 * time.Millisecond})
	const perClient = 3
	var wg sync.WaitGroup
	errs := make(chan string, loadClients*perClient)
	for i := range loadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range perClient {
				text := fmt.Sprintf("client %d request %d", i, n)
				ctx, cancel := context.WithCancel(context.Background())
				got := make(chan []byte, 1)
				go func() {
					_, _, body, _ := send(ctx, http.MethodPost, gw.URL+"/v1/chat/completions", chatBody(text, true), nil)
					got <- body
				}()
				select {
				case <-arrival(text):
				case <-time.After(20 * time.Second):
					errs <- text + " never reached the upstream"
				}
				if n%2 == 1 {
					// Wait for a keep-alive: the gateway has committed.
					time.Sleep(30 * time.Millisecond)
				}
				cancel()
				if body := <-got; strings.Contains(string(body), partial) {
					errs <- text + ": upstream content released to a client that left"
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	const total = loadClients * perClient
	waitFor(t, 20*time.Second, "every session to end", func() bool {
		return countPoint(gw.records.all(), enforcement.AgentShutdown) == total
	})
	waitFor(t, 20*time.Second, "every upstream call to be cancelled", func() bool {
		return cancelled.Load() == total
	})
	for _, r := range log.shutdownReasons("") {
		if r != enforcement.ShutdownCancelled {
			t.Fatalf("shutdown reason %q for a client that left", r)
		}
	}
	// Each cut call has its post_model_call, the host failure that judges
	// nothing: no interceptor saw a response of a stream that never ended.
	if n := countPoint(gw.records.all(), enforcement.PostModelCall); n != total {
		t.Fatalf("%d post_model_call records for %d cut calls", n, total)
	}
	for _, r := range gw.records.all() {
		if r.InterceptionPoint == enforcement.PostModelCall && r.Verdict.Reason != enforcement.ReasonContextInvalid {
			t.Fatalf("a cut call's post_model_call has reason %q", r.Verdict.Reason)
		}
	}
	if n := len(log.at(enforcement.PostModelCall)); n != 0 {
		t.Fatalf("%d post_model_call contexts judged for streams that never ended", n)
	}
}

// requestText is the content of the last message of a chat request body.
func requestText(t *testing.T, body []byte) string {
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		t.Errorf("the upstream got %s", body)
		return ""
	}
	return req.Messages[len(req.Messages)-1].Content
}
