package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// A request refused for load keeps its connection when its small body has
// arrived (the client's retry reuses it), and closes it when the body is
// of unknown length; both answer 503 with Retry-After at once.
func TestOverloadRefusalKeepsTheConnectionOfASmallBody(t *testing.T) {
	release := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		jsonReply(completionJSON)(w, r, nil)
	})
	gw := newGateway(t, gatewayConfig{upstream: up.URL, maxRequests: 1})
	held := make(chan int, 1)
	go func() {
		st, _, _ := gw.post(t, chatBody("hold the slot", false), nil)
		held <- st
	}()
	waitFor(t, 5*time.Second, "the slot to be taken", func() bool { return gw.srv.inFlight.Load() == 1 })

	client := &http.Client{Transport: &http.Transport{}}
	for _, tc := range []struct {
		name      string
		body      io.Reader
		wantClose bool
	}{
		// The small body comes last: the retry below takes its connection.
		{"unknown length", io.MultiReader(strings.NewReader(chatBody("refused", false))), true},
		{"small body", strings.NewReader(chatBody("refused", false)), false},
	} {
		req, _ := http.NewRequest(http.MethodPost, gw.URL+"/v1/chat/completions", tc.body)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: status %d, Retry-After %q", tc.name, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if resp.Close != tc.wantClose {
			t.Errorf("%s: connection closed = %v, want %v", tc.name, resp.Close, tc.wantClose)
		}
	}
	close(release)
	if st := <-held; st != http.StatusOK {
		t.Fatalf("the held request: %d", st)
	}

	// The retry rides the kept connection and is served: that connection
	// is still usable, its context not cancelled by the refusal's drain.
	var reused bool
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
	})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/v1/chat/completions", strings.NewReader(chatBody("retried", false)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !reused {
		t.Fatalf("retry: status %d, connection reused %v; want 200 on the kept connection", resp.StatusCode, reused)
	}
}
