package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/heaptest"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// TestRequestBodyNotRetained pins the retention side of parsing requests
// through one string of the body (jsonvalue.Text): every string of the
// parsed request slices that string, so whatever the gateway keeps past
// the request (the session store, records, metrics) must hold copies. A
// managed-session request of about 4 MiB, carrying a model name, tool
// declarations and tool-call ids, goes through the whole gateway; once it
// is answered and the test dropped the body, nothing may keep it live.
func TestRequestBodyNotRetained(t *testing.T) {
	const answer = `{"id":"c1","object":"chat.completion","created":1,"model":"retain-model","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_answer","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"x\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // keeps nothing of the request
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	t.Cleanup(up.Close)
	store := sessions.NewMemory(sessions.Options{})
	g := newGateway(t, gatewayConfig{upstream: up.URL + "/v1", store: store})
	send := func(session string, pad int) {
		body := `{"model":"retain-model","messages":[` +
			`{"role":"user","content":"` + strings.Repeat("a", pad) + `"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"call_1","content":"ok"}],` +
			`"tools":[{"type":"function","function":{"name":"lookup","description":"looks up","parameters":{"type":"object"}}}],` +
			`"temperature":0.5}`
		status, _, resp := g.post(t, body, map[string]string{HeaderSession: session})
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, resp)
		}
	}
	send("warm-up", 16)  // connections and lazily built state exist from here on
	const size = 4 << 20 // under the emitter's default context limit (5 MiB)
	before := heaptest.Live()
	send("retained", size) // a new session: the store keeps what this request creates
	if live := heaptest.Live() - before; live > size/2 {
		t.Errorf("%d MiB stay live after a %d MiB request was answered: something kept past the request holds a string of its body", live>>20, size>>20)
	}
	runtime.KeepAlive(g)
	runtime.KeepAlive(store)
}
