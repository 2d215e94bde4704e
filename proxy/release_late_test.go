package proxy

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// gatedRelease is a store whose Release waits for gate: it shows whether
// the client has its answer before the lease is given up.
type gatedRelease struct {
	sessions.Store
	gate chan struct{}
}

func (g gatedRelease) Release(ctx context.Context, k sessions.Key, lease string) error {
	<-g.gate
	return g.Store.Release(ctx, k, lease)
}

// answerUntilDone posts a managed turn and reads its answer as a client
// does: a JSON body to its Content-Length, a stream to its [DONE] event
// (the chunked body's own end is written when the handler returns). It
// returns the status, or 0 when the answer was incomplete.
func answerUntilDone(base, body string) int {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderSession, "late-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		if _, err := io.ReadAll(resp.Body); err != nil {
			return 0
		}
		return resp.StatusCode
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if sc.Text() == "data: [DONE]" {
			return resp.StatusCode
		}
	}
	return 0
}

// TestManagedLeaseReleasedAfterAnswer: a managed turn's answer (JSON and
// a buffered stream) reaches the client while the store has not yet
// released its lease, and the lease is released right after.
func TestManagedLeaseReleasedAfterAnswer(t *testing.T) {
	for _, stream := range []bool{false, true} {
		mem := sessions.NewMemory(sessions.Options{})
		store := gatedRelease{Store: mem, gate: make(chan struct{})}
		up := newUpstream(t, jsonReply(completionJSON))
		if stream {
			up = newUpstream(t, sseReply(chunk(`{"role":"assistant","content":"Hi"}`, ""), chunk(`{}`, "stop"), "[DONE]"))
		}
		gw := newGateway(t, gatewayConfig{upstream: up.URL, store: store})
		got := make(chan int, 1)
		go func() { got <- answerUntilDone(gw.URL, chatBody("hi", stream)) }()
		select {
		case status := <-got:
			if status != http.StatusOK {
				t.Fatalf("stream %v: status %d", stream, status)
			}
		case <-time.After(5 * time.Second):
			close(store.gate) // let the handler end, or the server's Close waits for it
			t.Fatalf("stream %v: the answer waited for the lease's release", stream)
		}
		k := sessions.Key{ID: "late-1"}
		if n, err := mem.InFlight(context.Background(), k); err != nil || n != 1 {
			t.Fatalf("stream %v: InFlight with the release held = %d, %v; want 1", stream, n, err)
		}
		close(store.gate)
		for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			n, err := mem.InFlight(context.Background(), k)
			if err == nil && n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("stream %v: InFlight after the release = %d, %v; want 0", stream, n, err)
			}
		}
	}
}
