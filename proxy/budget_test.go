package proxy

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/metrics/metricstest"
)

// budgetUpstream streams chat chunks by what the request's user text
// asks for: "hold <n>" streams n bytes of content chunks, then waits for
// release (or the request's end) before it finishes; "big <n>" streams n
// bytes at once; "cut" stops before [DONE]; "json" answers JSON, "jsonbig"
// 1 MiB of JSON; "fail"
// answers 500; anything else a short stream. It returns the release
// function and the exact bytes a held stream sends before it waits.
type budgetUpstream struct {
	*upstream
	release chan struct{}
	once    sync.Once
}

func (u *budgetUpstream) letGo() { u.once.Do(func() { close(u.release) }) }

func newBudgetUpstream(t *testing.T) *budgetUpstream {
	u := &budgetUpstream{release: make(chan struct{})}
	t.Cleanup(u.letGo)
	u.upstream = newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		text := string(body)
		switch {
		case strings.Contains(text, "fail"):
			w.WriteHeader(http.StatusInternalServerError)
			return
		case strings.Contains(text, "jsonbig"):
			jsonReply(`{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"`+strings.Repeat("a", 1<<20)+`"},"finish_reason":"stop"}]}`)(w, r, body)
			return
		case strings.Contains(text, "json"):
			jsonReply(`{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"fine"},"finish_reason":"stop"}]}`)(w, r, body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		switch {
		case strings.Contains(text, "hold"):
			w.Write(contentStream(heldBytes))
			f.Flush()
			select {
			case <-u.release:
			case <-r.Context().Done():
				return
			}
		case strings.Contains(text, "big"):
			w.Write(contentStream(1 << 20))
		case strings.Contains(text, "cut"):
			w.Write(contentStream(100 << 10))
			return
		default:
			w.Write(contentStream(1000))
		}
		w.Write([]byte("data: " + chunk(`{}`, "stop") + "\n\ndata: [DONE]\n\n"))
	})
	return u
}

// heldBytes is about what a held stream sends before it waits.
const heldBytes = 1800 << 10

// contentStream is the start of a chat stream with about n bytes of
// "a" content, in 16 KiB deltas.
//
// The upstream's texts: see newBudgetUpstream.
func contentStream(n int) []byte {
	var b strings.Builder
	b.WriteString("data: " + chunk(`{"role":"assistant","content":""}`, "") + "\n\n")
	for b.Len() < n {
		b.WriteString("data: " + chunk(`{"content":"`+strings.Repeat("a", min(16<<10, max(n-b.Len(), 1)))+`"}`, "") + "\n\n")
	}
	return []byte(b.String())
}

// heldStreamBytes is exactly what a held stream has sent when it waits.
var heldStreamBytes = int64(len(contentStream(heldBytes)))

// fullStream is what a short or released held stream is in all.
func fullStream(n int) []byte {
	return append(contentStream(n), "data: "+chunk(`{}`, "stop")+"\n\ndata: [DONE]\n\n"...)
}

// startHeld starts n held streams and waits until the gateway buffers
// all they sent; their answers arrive on the returned channel once the
// upstream lets them go.
func startHeld(t *testing.T, g *gateway, n int) <-chan answer {
	t.Helper()
	done := make(chan answer, n)
	for range n {
		go func() {
			status, h, b, err := send(context.Background(), http.MethodPost, g.URL+"/v1/chat/completions", chatBody("hold", true), nil)
			if err != nil {
				t.Error(err)
			}
			done <- answer{status: status, header: h, body: string(b)}
		}()
	}
	waitFor(t, 20*time.Second, "the held streams to be buffered", func() bool {
		return g.srv.budget.InUse() == int64(n)*heldStreamBytes
	})
	return done
}

// Streams beyond the budget are refused up front with 503 and
// Retry-After, reach neither the upstream nor the records, and are
// counted; the streams admitted before them complete unchanged; the
// budget returns to 0.
func TestBufferBudgetRefusesStreamsBeyondIt(t *testing.T) {
	u := newBudgetUpstream(t)
	g := newGateway(t, gatewayConfig{upstream: u.URL + "/v1", buffer: 2 << 20, maxResponse: 2 << 20,
		budget: 2*heldStreamBytes + admitBytes/2})
	done := startHeld(t, g, 2)
	records := len(g.records.all())

	const refused = 3
	for range refused {
		status, h, b := do(t, http.MethodPost, g.URL+"/v1/chat/completions", chatBody("hello", true), nil)
		if status != http.StatusServiceUnavailable {
			t.Fatalf("status %d beyond the budget, want 503: %.300s", status, b)
		}
		if h.Get("Retry-After") == "" {
			t.Error("a refusal for the budget carries no Retry-After")
		}
		if e := errorBody(t, b); e.Code != "overloaded" || !strings.Contains(e.Message, "limits.buffer_budget") {
			t.Errorf("error %+v, want code overloaded naming limits.buffer_budget", e)
		}
	}
	// Non-streaming calls share the budget.
	if status, _, b := do(t, http.MethodPost, g.URL+"/v1/chat/completions", chatBody("json", false), nil); status != http.StatusServiceUnavailable {
		t.Fatalf("JSON call beyond the budget: status %d: %.300s", status, b)
	}
	if n := len(u.received()); n != 2 {
		t.Errorf("the upstream received %d requests, want only the 2 admitted", n)
	}
	if n := len(g.records.all()); n != records {
		t.Errorf("refused calls wrote %d records", n-records)
	}

	u.letGo()
	want := fullStream(heldBytes)
	for range 2 {
		a := <-done
		if a.status != http.StatusOK || a.body != asReleased(string(want), a.body) {
			t.Fatalf("an admitted stream: status %d, %d bytes (want %d unchanged)", a.status, len(a.body), len(want))
		}
	}
	waitFor(t, 5*time.Second, "the budget to be released", func() bool { return g.srv.budget.InUse() == 0 })
	fams := scrape(t, g.URL)
	metricstest.WantSeries(t, fams, "hooks_gateway_buffer_budget_refusals_total", map[string]float64{
		"stage=admission": refused + 1, "stage=buffering": 0,
	})
	metricstest.WantSeries(t, fams, "hooks_gateway_buffer_budget_bytes", map[string]float64{"": 0})
	metricstest.WantSeries(t, fams, "hooks_gateway_buffer_budget_limit_bytes", map[string]float64{"": float64(g.srv.budget.Limit())})
}

// A stream admitted while the budget had room, which then outgrows what
// is left, fails closed like a stream over the buffer limit: nothing of
// it is released, post_model_call records host_error:streaming_unsupported.
func TestBufferBudgetFailsAnOutgrownStreamClosed(t *testing.T) {
	u := newBudgetUpstream(t)
	g := newGateway(t, gatewayConfig{upstream: u.URL + "/v1", buffer: 2 << 20, maxResponse: 2 << 20,
		budget: 2*heldStreamBytes + 512<<10})
	done := startHeld(t, g, 2)

	status, _, b := do(t, http.MethodPost, g.URL+"/v1/chat/completions", chatBody("big", true), nil)
	if status != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503: %.300s", status, b)
	}
	if e := errorBody(t, b); e.Code != enforcement.ReasonStreamingUnsupported || !strings.Contains(e.Message, "limits.buffer_budget") {
		t.Errorf("error %+v, want %s naming limits.buffer_budget", e, enforcement.ReasonStreamingUnsupported)
	}
	if strings.Contains(string(b), "aaaa") {
		t.Error("content of the refused stream was released")
	}
	var post *enforcement.Record
	for _, r := range g.records.all() {
		if r.InterceptionPoint == enforcement.PostModelCall {
			post = r
		}
	}
	if post == nil || post.Verdict.Decision != enforcement.DecisionDeny || post.Verdict.Reason != enforcement.ReasonStreamingUnsupported {
		t.Fatalf("post_model_call record %+v, want deny %s", post, enforcement.ReasonStreamingUnsupported)
	}

	u.letGo()
	for range 2 {
		if a := <-done; a.status != http.StatusOK {
			t.Fatalf("an admitted stream: status %d", a.status)
		}
	}
	waitFor(t, 5*time.Second, "the budget to be released", func() bool { return g.srv.budget.InUse() == 0 })
	metricstest.WantSeries(t, scrape(t, g.URL), "hooks_gateway_buffer_budget_refusals_total", map[string]float64{
		"stage=admission": 0, "stage=buffering": 1,
	})
}

// Every way a model call can end gives its reservation back: after many
// calls that completed, were denied, failed upstream, were cut, outgrew
// a limit or were abandoned by their client, the budget holds nothing.
func TestBufferBudgetReleasedOnEveryPath(t *testing.T) {
	u := newBudgetUpstream(t)
	deny := policy(func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.PreModelCall && strings.Contains(stringOf(c["messages"]), "deny") {
			return enforcement.Deny("policy:test", "denied")
		}
		return enforcement.Allow()
	})
	g := newGateway(t, gatewayConfig{upstream: u.URL + "/v1", policy: deny, buffer: 2 << 20, maxResponse: 512 << 10})
	calls := []struct {
		text   string
		stream bool
		status int
	}{
		{"short", true, 200}, {"json", false, 200}, {"short", false, 502}, // a stream answering a JSON call
		{"fail", true, 502}, {"fail", false, 502}, {"cut", true, 502}, {"deny", true, 403}, {"deny", false, 403},
		{"jsonbig", false, 502}, // over max_response_bytes
	}
	var wg sync.WaitGroup
	for range 10 {
		for _, c := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, _, b, err := send(context.Background(), http.MethodPost, g.URL+"/v1/chat/completions", chatBody(c.text, c.stream), nil)
				if err != nil || status != c.status {
					t.Errorf("%s (stream %v): status %d, %v, want %d: %.200s", c.text, c.stream, status, err, c.status, b)
				}
			}()
		}
		// A client that goes away while its stream is buffered.
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				for i := 0; i < 5000 && g.srv.budget.InUse() < heldStreamBytes; i++ {
					time.Sleep(time.Millisecond)
				}
				cancel()
			}()
			send(ctx, http.MethodPost, g.URL+"/v1/chat/completions", chatBody("hold", true), nil)
		}()
	}
	wg.Wait()
	waitFor(t, 10*time.Second, "the budget to be released", func() bool { return g.srv.budget.InUse() == 0 })
}

// stringOf is the text of a context value, for the test policy's matching.
func stringOf(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}
