package proxy_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// serveDoc parses doc as the configuration file name, and serves the
// gateway Build makes of it until the test ends (serveConfig).
func serveDoc(t *testing.T, name, doc string, records, logs io.Writer) string {
	t.Helper()
	cfg, err := config.Parse(name, []byte(doc))
	if err != nil {
		t.Fatalf("config:\n%v", err)
	}
	return serveConfig(t, cfg, records, logs)
}

// serveConfig serves the gateway Build makes of cfg on a loopback listener
// until the test ends and returns its root URL. records receives its
// stdout record sinks, logs its log lines; nil discards them.
func serveConfig(t *testing.T, cfg *config.Config, records, logs io.Writer) string {
	t.Helper()
	if records == nil {
		records = io.Discard
	}
	if logs == nil {
		logs = io.Discard
	}
	asm, err := proxy.Build(context.Background(), cfg, records, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	t.Cleanup(func() { asm.Close() })
	hs := httptest.NewServer(asm.Server)
	t.Cleanup(hs.Close)
	return hs.URL
}

// fixedUpstream is a model server that answers every request with its
// current body, as JSON or as an event stream (answer), and keeps the
// requests it received since.
type fixedUpstream struct {
	url     string
	mu      sync.Mutex
	body    string
	sse     bool
	split   time.Duration
	got     []string
	headers []http.Header
}

func newFixedUpstream(t *testing.T) *fixedUpstream {
	t.Helper()
	u := &fixedUpstream{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.got = append(u.got, string(b))
		u.headers = append(u.headers, r.Header.Clone())
		body, sse, split := u.body, u.sse, u.split
		u.mu.Unlock()
		if !sse {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if i := strings.LastIndex(body, "data: {"); split > 0 && i > 0 {
			io.WriteString(w, body[:i])
			w.(http.Flusher).Flush()
			time.Sleep(split)
			body = body[i:]
		}
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	u.url = srv.URL
	return u
}

// answer sets the next answer and forgets the requests received so far.
func (u *fixedUpstream) answer(body string, sse bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.body, u.sse, u.got, u.headers = body, sse, nil, nil
}

// splitLastEvent has an event stream's last event written d after the
// ones before it.
func (u *fixedUpstream) splitLastEvent(d time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.split = d
}

// received is the bodies of the requests received since answer.
func (u *fixedUpstream) received() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.got...)
}

// lastHeader is the headers of the last request received, nil when none.
func (u *fixedUpstream) lastHeader() http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.headers) == 0 {
		return nil
	}
	return u.headers[len(u.headers)-1]
}
