package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// ctxLog keeps every context the test policy saw, in arrival order.
type ctxLog struct {
	mu   sync.Mutex
	ctxs []enforcement.Context
}

// wrap returns p (allow-all when nil) with every context logged first.
func (l *ctxLog) wrap(p policy) policy {
	if p == nil {
		p = allowAll
	}
	return func(c enforcement.Context) enforcement.Verdict {
		l.mu.Lock()
		l.ctxs = append(l.ctxs, c)
		l.mu.Unlock()
		return p(c)
	}
}

// at returns the logged contexts of point (every point when "").
func (l *ctxLog) at(point enforcement.Point) []enforcement.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []enforcement.Context
	for _, c := range l.ctxs {
		if point == "" || c.Point() == point {
			out = append(out, c)
		}
	}
	return out
}

// shutdownReasons lists summary.reason of every agent_shutdown context seen
// for session (its name, see trailName; "" = any session).
func (l *ctxLog) shutdownReasons(session string) []string {
	var out []string
	for _, c := range l.at(enforcement.AgentShutdown) {
		if session != "" && trailName(c.SessionID()) != session {
			continue
		}
		s, _ := c["summary"].(map[string]any)
		r, _ := s["reason"].(string)
		out = append(out, r)
	}
	return out
}

func agentID(c enforcement.Context) string {
	a, _ := c["agent"].(map[string]any)
	id, _ := a["id"].(string)
	return id
}

// denyAt denies point with reason and allows everything else.
func denyAt(point enforcement.Point, reason string) policy {
	return func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == point {
			return enforcement.Deny(reason, "denied by the test policy")
		}
		return enforcement.Allow()
	}
}

// chatBody is a one-user-message chat request.
func chatBody(text string, stream bool) string {
	b, _ := json.Marshal(map[string]any{
		"model":    "gpt-test",
		"stream":   stream,
		"messages": []any{map[string]any{"role": "user", "content": text}},
	})
	return string(b)
}

// send is a raw request that reports errors instead of failing the test,
// for use from goroutines.
func send(ctx context.Context, method, url, body string, header map[string]string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

// do is send for the test goroutine: transport errors fail the test.
func do(t *testing.T, method, url, body string, header map[string]string) (int, http.Header, []byte) {
	t.Helper()
	status, h, b, err := send(context.Background(), method, url, body, header)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return status, h, b
}

// endSession calls the end endpoint for id (id is put in the path as is).
func (g *gateway) endSession(t *testing.T, id, body string, header map[string]string) (int, []byte) {
	t.Helper()
	status, _, b := do(t, http.MethodPost, g.URL+"/v1/agent-hooks/sessions/"+id+"/end", body, header)
	return status, b
}

// endResponse is the end endpoint's success body.
type endResponse struct {
	SessionID string `json:"session_id"`
	Ended     bool   `json:"ended"`
	Reason    string `json:"reason"`
	Record    struct {
		InterceptionPoint string `json:"interception_point"`
		SessionID         string `json:"session_id"`
		Sequence          int64  `json:"sequence"`
		Verdict           struct {
			Decision string `json:"decision"`
		} `json:"verdict"`
	} `json:"record"`
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// trailName is a session's trail id less the incarnation the memory
// store mints ("~" and sessions.IncarnationLen hex digits): the name the
// tests give the session.
func trailName(trail string) string {
	if n := len(trail) - sessions.IncarnationLen - 1; n > 0 && trail[n] == '~' && isLowerHex(trail[n+1:]) {
		return trail[:n]
	}
	return trail
}

// memoryTrail reports whether trail is the trail id the memory store gives
// the session named name: name~<incarnation>.
func memoryTrail(trail, name string) bool {
	return trail != name && trailName(trail) == name
}

// oneTrail checks that the trail ids it is shown for the session named
// name are one memory-store trail id (memoryTrail), and keeps it.
type oneTrail struct {
	name, id string
}

// is reports whether trail names o's session; a second trail id of it is
// an error.
func (o *oneTrail) is(t *testing.T, trail string) bool {
	t.Helper()
	if !memoryTrail(trail, o.name) {
		return false
	}
	if o.id == "" {
		o.id = trail
	} else if trail != o.id {
		t.Errorf("session %s under two trail ids: %s and %s", o.name, o.id, trail)
	}
	return true
}

// of returns the records of session (its name, see trailName).
func of(recs []*enforcement.Record, session string) []*enforcement.Record {
	var out []*enforcement.Record
	for _, r := range recs {
		if trailName(r.SessionID) == session {
			out = append(out, r)
		}
	}
	return out
}

func pointsOf(recs []*enforcement.Record) []enforcement.Point {
	out := make([]enforcement.Point, len(recs))
	for i, r := range recs {
		out[i] = r.InterceptionPoint
	}
	return out
}

func countPoint(recs []*enforcement.Record, p enforcement.Point) int {
	n := 0
	for _, r := range recs {
		if r.InterceptionPoint == p {
			n++
		}
	}
	return n
}

// checkGapless asserts the records' sequences are exactly 0..len-1 (in any
// order: records of concurrent requests reach the sink interleaved).
func checkGapless(t *testing.T, recs []*enforcement.Record) {
	t.Helper()
	seqs := make([]int64, len(recs))
	for i, r := range recs {
		seqs[i] = r.Sequence
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	for i, s := range seqs {
		if s != int64(i) {
			t.Fatalf("sequences are not 0..%d without gaps or duplicates: %v", len(seqs)-1, seqs)
		}
	}
}

// noContent fails when body carries any of the given upstream texts.
func noContent(t *testing.T, body []byte, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(string(body), s) {
			t.Fatalf("the client body carries upstream content %q: %s", s, body)
		}
	}
}
