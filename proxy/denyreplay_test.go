package proxy

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// A managed session's retry of a request it just had denied gets the same
// deny again without an emission or an upstream call, before the 200 and
// after it (a keep-alive stream's in-stream deny); another request, another
// session, or the window's end run the model again.
func TestRetriedDenyDoesNotRerunTheModel(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: denyAt(enforcement.PostModelCall, "policy:no"), denyReplay: time.Minute})
	hdr := map[string]string{HeaderSession: "retry-1"}
	first, _, firstBody := gw.post(t, chatBody("same request", false), hdr)
	if first != http.StatusForbidden {
		t.Fatalf("first: %d %s", first, firstBody)
	}
	records, calls := len(gw.records.all()), len(up.received())
	for i := range 3 {
		st, _, body := gw.post(t, chatBody("same request", false), hdr)
		if st != http.StatusForbidden || !bytes.Equal(body, firstBody) {
			t.Fatalf("retry %d: %d %s; want the first deny again: %s", i, st, body, firstBody)
		}
	}
	if n := len(up.received()); n != calls {
		t.Fatalf("the retries reached the upstream: %d calls, want %d", n, calls)
	}
	if n := len(gw.records.all()); n != records {
		t.Fatalf("the retries emitted %d records", n-records)
	}
	if m := scrape(t, gw.URL)["hooks_gateway_denies_replayed_total"]; m == nil || m.Metric[0].GetCounter().GetValue() != 3 {
		t.Fatalf("replays counted: %v, want 3", m)
	}

	// Another body, or another session, is judged afresh.
	if st, _, _ := gw.post(t, chatBody("another request", false), hdr); st != http.StatusForbidden || len(up.received()) != calls+1 {
		t.Fatalf("another request: %d, upstream calls %d; want a fresh call", st, len(up.received()))
	}
	if st, _, _ := gw.post(t, chatBody("same request", false), map[string]string{HeaderSession: "retry-2"}); st != http.StatusForbidden || len(up.received()) != calls+2 {
		t.Fatalf("another session: %d, upstream calls %d; want a fresh call", st, len(up.received()))
	}
	// Per-request sessions have no memory: each call is its own session.
	for range 2 {
		gw.post(t, chatBody("same request", false), nil)
	}
	if n := len(up.received()); n != calls+4 {
		t.Fatalf("per-request retries: upstream calls %d, want %d", n, calls+4)
	}
}

// After the 200 (a keep-alive committed the stream), the deny arrives
// in-stream; a retry of that request, streamed or not (Claude Code retries
// a stream that failed without streaming), is answered with the deny
// before any upstream call.
func TestRetriedDenyAfterThe200(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, b []byte) {
		time.Sleep(80 * time.Millisecond)
		sseReply(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`, "[DONE]")(w, r, b)
	})
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: denyAt(enforcement.PostModelCall, "policy:no"), denyReplay: time.Minute, keepAlive: 20 * time.Millisecond})
	hdr := map[string]string{HeaderSession: "retry-stream"}
	st, _, body := gw.post(t, chatBody("stream it", true), hdr)
	if st != http.StatusOK || !strings.Contains(string(body), "policy:no") {
		t.Fatalf("first: %d %s; want the in-stream deny", st, body)
	}
	for _, stream := range []bool{true, false} {
		st, _, body = gw.post(t, chatBody("stream it", stream), hdr)
		if st != http.StatusForbidden || !strings.Contains(string(body), "policy:no") || len(up.received()) != 1 {
			t.Fatalf("retry (stream %v): %d %s, upstream calls %d; want the deny as a 403 and no second call", stream, st, body, len(up.received()))
		}
	}
}

func TestDenyMemoryIsBounded(t *testing.T) {
	var d denyMemory
	now := time.Now()
	deny := &apiError{status: http.StatusForbidden, typ: typeDenied, code: "policy:no", point: enforcement.PreModelCall}
	for i := range maxRememberedDenies + 10 {
		d.remember(sessionKeyOf(i), deniedRequest{api: "chat"}, deny, now, time.Minute)
	}
	if len(d.bySess) != maxRememberedDenies {
		t.Fatalf("%d sessions remembered, want at most %d", len(d.bySess), maxRememberedDenies)
	}
	if d.has(sessionKeyOf(0), now) || !d.has(sessionKeyOf(maxRememberedDenies+9), now) {
		t.Fatal("the oldest session was not the one forgotten")
	}
	if d.has(sessionKeyOf(maxRememberedDenies+9), now.Add(time.Minute)) {
		t.Fatal("a deny is remembered past its window")
	}
}

func sessionKeyOf(i int) sessions.Key { return sessions.Key{ID: "s" + strconv.Itoa(i)} }

// A retry is recognised whatever its members' order and its stream and
// max_tokens values; any other difference is another request.
func TestRetryHash(t *testing.T) {
	withTokens := retryHash([]byte(`{"model":"m","max_tokens":128000,"messages":[{"role":"user","content":"x"}],"stream":true}`))
	if retryHash([]byte(`{"model":"m","max_tokens":64000,"messages":[{"role":"user","content":"x"}],"stream":false}`)) != withTokens {
		t.Error("Claude Code's non-streaming retry (half the max_tokens) is not recognised")
	}
	if retryHash([]byte(`{"model":"m","metadata":{"a":1,"b":2},"messages":[]}`)) != retryHash([]byte(`{ "messages":[], "metadata":{"b":2, "a":1},"model":"m"}`)) {
		t.Error("a retry whose members come in another order is not recognised (Codex's client_metadata)")
	}
	base := retryHash([]byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`))
	for body, same := range map[string]bool{
		`{"model":"m","stream":false,"messages":[{"role":"user","content":"x"}]}`:                    true,
		`{"model":"m","stream":false,"messages":[{"role":"user","content":"x"}],"max_tokens":64000}`: true,
		`{"model":"m","stream":true,"messages":[{"role":"user","content":"y"}]}`:                     false,
		`{"model":"n","stream":true,"messages":[{"role":"user","content":"x"}]}`:                     false,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`:                     true,
		`{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}],"n":1}`:               false,
	} {
		if (retryHash([]byte(body)) == base) != same {
			t.Errorf("retryHash(%s) equal to the streamed request's: %v, want %v", body, !same, same)
		}
	}
}

// A window of 0 turns replay off: the retry of a denied request runs the
// model again (docs/configuration.md, sessions.deny_replay_window).
func TestDenyReplayWindowZeroIsOff(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: denyAt(enforcement.PostModelCall, "policy:no"), denyReplay: 0})
	hdr := map[string]string{HeaderSession: "retry-off"}
	for i := range 2 {
		if st, _, body := gw.post(t, chatBody("same request", false), hdr); st != http.StatusForbidden {
			t.Fatalf("request %d: %d %s", i, st, body)
		}
	}
	if n := len(up.received()); n != 2 {
		t.Fatalf("upstream calls %d, want 2: the retry was replayed with the window off", n)
	}
	if m := scrape(t, gw.URL)["hooks_gateway_denies_replayed_total"]; m != nil && len(m.Metric) > 0 && m.Metric[0].GetCounter().GetValue() != 0 {
		t.Fatalf("replays counted with the window off: %v", m)
	}
}
