package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/sessions"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// cutConfig marks each agent_shutdown with its reason (a warn verdict
// names it on the record, which carries no context), on Redis sessions so
// the test can read the leases after the process is gone.
const cutConfig = `listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: mock
    type: mock
interceptors:
  - name: shutdown-reason
    type: cel
    points: [agent_shutdown]
    rules:
      - when: target.reason == "cancelled"
        warn: {reason: "policy:shutdown_cancelled"}
      - when: target.reason == "completed"
        warn: {reason: "policy:shutdown_completed"}
  - name: pass
    type: allow
sessions:
  store: redis
  redis_url: REDIS_URL
records:
  sinks:
    - type: stdout
`

// cutRecord is what the test reads of a record.
type cutRecord struct {
	Point   string `json:"interception_point"`
	Session string `json:"session_id"`
	Verdict struct {
		Reason   string `json:"reason"`
		Warnings []struct {
			Reason string `json:"reason"`
		} `json:"warnings"`
	} `json:"verdict"`
}

// SIGTERM with requests still running past the drain timeout: the process
// cuts them off instead of dying under them. Each cut call gets its
// post_model_call (the host failure of a call without a response), and the
// per-request session of a call in flight its agent_shutdown (cancelled)
// after it, before the process exits; its client gets no answer, the
// managed session's call releases its lease (the session stays open for
// another replica), and run reports the incomplete drain.
func TestRunCutsOffPastDrainTimeout(t *testing.T) {
	redis := redistest.StartServer(t)
	g := start(t, "--config", writeConfig(t, strings.Replace(cutConfig, "REDIS_URL", redis.URL(), 1)), "--drain-timeout", "300ms")

	type answer struct {
		name   string
		status int
		body   []byte
		err    error
	}
	var (
		mu      sync.Mutex
		answers []answer
		wg      sync.WaitGroup
	)
	send := func(name string, stream bool, session string) {
		defer wg.Done()
		body, _ := json.Marshal(map[string]any{"model": "mock", "stream": stream,
			"messages": []any{map[string]any{"role": "user", "content": "/sleep 5s too late"}}})
		req, _ := http.NewRequest(http.MethodPost, "http://"+g.addr+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if session != "" {
			req.Header.Set("Agent-Hooks-Session", session)
		}
		a := answer{name: name}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			a.status = resp.StatusCode
			a.body, a.err = io.ReadAll(resp.Body)
			resp.Body.Close()
		} else {
			a.err = err
		}
		mu.Lock()
		answers = append(answers, a)
		mu.Unlock()
	}
	wg.Add(3)
	go send("json", false, "")
	go send("stream", true, "")
	go send("managed", false, "kept-open")
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(g.stdout.String(), `"pre_model_call"`) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the calls never reached the model; stdout:\n%s", g.stdout.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopped := time.Now()
	code := g.stop(t)
	if d := time.Since(stopped); d > 4*time.Second {
		t.Fatalf("run returned %s after the stop: it waited for the model instead of cutting off", d)
	}
	wg.Wait()
	if code != 1 {
		t.Fatalf("exit %d, want 1 (drain incomplete); stderr:\n%s", code, g.stderr.String())
	}
	if !strings.Contains(g.stderr.String(), "cutting off the requests still running") {
		t.Errorf("no cut-off logged; stderr:\n%s", g.stderr.String())
	}
	for _, a := range answers {
		if a.err == nil || strings.Contains(string(a.body), "too late") {
			t.Errorf("%s: answered after the cut: status %d, %q (err %v)", a.name, a.status, a.body, a.err)
		}
	}

	var recs []cutRecord
	for _, line := range strings.Split(strings.TrimSpace(g.stdout.String()), "\n") {
		if strings.HasPrefix(line, `{"hooks_gateway_policy":`) {
			continue // the policy marker, not a record
		}
		var r cutRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("stdout line is not a record: %q", line)
		}
		recs = append(recs, r)
	}
	bySession := map[string][]cutRecord{}
	for _, r := range recs {
		bySession[r.Session] = append(bySession[r.Session], r)
		if r.Point == "post_model_call" && r.Verdict.Reason != "host_error:context_invalid" {
			t.Errorf("session %s: a cut call's post_model_call has reason %q, want host_error:context_invalid", r.Session, r.Verdict.Reason)
		}
	}
	if len(bySession) != 3 {
		t.Fatalf("%d sessions in the trail, want 3", len(bySession))
	}
	for id, rs := range bySession {
		var points []string
		for _, r := range rs {
			points = append(points, r.Point)
		}
		got := strings.Join(points, ",")
		if id == "kept-open" {
			// The managed session is not ended: another replica may go on.
			if got != "agent_startup,input,pre_model_call,post_model_call" {
				t.Errorf("managed session trail %s", got)
			}
			continue
		}
		if got != "agent_startup,input,pre_model_call,post_model_call,agent_shutdown" {
			t.Errorf("session %s: trail %s, want it closed by agent_shutdown", id, got)
			continue
		}
		last := rs[len(rs)-1]
		if w := last.Verdict.Warnings; len(w) != 1 || w[0].Reason != "policy:shutdown_cancelled" {
			t.Errorf("session %s: agent_shutdown warnings %+v, want the reason cancelled", id, w)
		}
	}

	store, err := sessions.NewRedis(context.Background(), sessions.RedisOptions{URL: redis.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	n, err := store.InFlight(context.Background(), sessions.Key{ID: "kept-open"})
	if err != nil || n != 0 {
		t.Fatalf("managed session: %d calls still hold a lease (%v), want 0", n, err)
	}
	st, exists, err := store.Status(context.Background(), sessions.Key{ID: "kept-open"})
	if err != nil || !exists || st.Ended {
		t.Fatalf("managed session status %+v (exists %v, %v): it must stay open", st, exists, err)
	}
}

// SIGTERM past the drain timeout on the memory store: the managed
// session's cut call gets its post_model_call, and the session, which
// ends with the process, its agent_shutdown (cancelled) after it.
func TestRunCutsOffMemorySessionPastDrainTimeout(t *testing.T) {
	g := start(t, "--config", writeConfig(t, strings.Replace(strings.Replace(cutConfig, "store: redis", "store: memory", 1), "  redis_url: REDIS_URL\n", "", 1)), "--drain-timeout", "300ms")
	done := make(chan struct{})
	go func() {
		defer close(done)
		body := `{"model":"mock","messages":[{"role":"user","content":"/sleep 5s too late"}]}`
		req, _ := http.NewRequest(http.MethodPost, "http://"+g.addr+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Agent-Hooks-Session", "cut-run")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(g.stdout.String(), `"pre_model_call"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the call never reached the model; stdout:\n%s", g.stdout.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code := g.stop(t); code != 1 {
		t.Fatalf("exit %d, want 1 (drain incomplete); stderr:\n%s", code, g.stderr.String())
	}
	<-done
	var points []string
	var last cutRecord
	for _, line := range strings.Split(strings.TrimSpace(g.stdout.String()), "\n") {
		var r cutRecord
		if json.Unmarshal([]byte(line), &r) != nil || r.Point == "" {
			continue
		}
		// One trail: cut-run and the incarnation the memory store minted.
		if name, ok := memoryTrailName(r.Session); !ok || name != "cut-run" || (last.Session != "" && r.Session != last.Session) {
			t.Fatalf("record of session %q", r.Session)
		}
		points = append(points, r.Point)
		last = r
		if r.Point == "post_model_call" && r.Verdict.Reason != "host_error:context_invalid" {
			t.Errorf("the cut call's post_model_call has reason %q", r.Verdict.Reason)
		}
	}
	if got := strings.Join(points, ","); got != "agent_startup,input,pre_model_call,post_model_call,agent_shutdown" {
		t.Fatalf("trail %s, want the cut call's post before the session's shutdown", got)
	}
	if w := last.Verdict.Warnings; len(w) != 1 || w[0].Reason != "policy:shutdown_cancelled" {
		t.Errorf("agent_shutdown warnings %+v, want the reason cancelled", w)
	}
}
