package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/providers"
)

// capturedRequest is one request a client sent, as a fixture keeps it.
type capturedRequest struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	// Headers are the request's headers, values of credentials and of
	// per-run identifiers replaced by "<redacted>".
	Headers map[string]string `json:"headers"`
	// Body is the request body exactly as sent (a string, so that no
	// re-indentation changes a byte).
	Body string `json:"body,omitempty"`
	// Status is the status the client was answered with: the gateway's,
	// or the bare mock's for a capture made with CAPTURE_UPSTREAM=mock.
	Status int `json:"status"`
}

// recorder is a reverse proxy in front of the gateway that keeps every
// request the client sent, byte for byte, with the gateway's status.
type recorder struct {
	URL  string
	mu   sync.Mutex
	reqs []capturedRequest
}

// sensitiveHeaders never reach a fixture with their value.
var sensitiveHeaders = map[string]bool{
	"Authorization": true, "X-Api-Key": true, "Cookie": true,
	"Session_id": true, "Session-Id": true, "X-Claude-Code-Session-Id": true,
	"Conversation_id": true, "Chatgpt-Account-Id": true,
}

// captureTarget is the root URL a capture test records in front of: the
// fixtures' gateway (fixtureGateway), or with CAPTURE_UPSTREAM=mock the
// bare mock, with no gateway between. The latter captures what an agent
// sends where the gateway refuses its requests (a tool round needs its
// first answer); TestCapturedRequests then shows what the gateway does
// with them. Such a capture holds the mock's own ids where a capture
// through the gateway holds the gateway's seals of them.
func captureTarget(t *testing.T) string {
	t.Helper()
	switch v := os.Getenv("CAPTURE_UPSTREAM"); v {
	case "":
		return fixtureGateway(t, "")
	case "mock":
		return startBareMock(t)
	default:
		t.Fatalf("CAPTURE_UPSTREAM=%q: want mock or nothing", v)
		return ""
	}
}

// The key the fixtures' gateway seals under. Captured requests hand back
// what the gateway sealed in earlier answers (item ids, encrypted
// reasoning, signatures), and a seal opens only under the key that made
// it: captures and replays share this one. A test value, not a secret.
const (
	fixtureSealEnv    = "HOOKS_E2E_FIXTURE_SEAL"
	fixtureSealSecret = "e2e-fixtures-seal-key-a-test-value-not-a-secret"
	fixtureSealConfig = `
seal:
  keys:
    - id: e2efixtures
      secret_env: ` + fixtureSealEnv + `
`
)

// fixtureGateway serves cliPolicy and interceptors (more items of the
// interceptor list) under the fixtures' seal key until the test ends, and
// returns its root URL. It sets the key's variable for the test, so the
// test must not be parallel.
func fixtureGateway(t *testing.T, interceptors string) string {
	t.Helper()
	t.Setenv(fixtureSealEnv, fixtureSealSecret)
	return startGateway(t, fixtureSealConfig, cliPolicy+interceptors)
}

// mockOperations are the paths the bare mock serves, as the gateway
// serves them.
var mockOperations = map[string]wire.Operation{
	"/v1/chat/completions":      wire.OpChatCompletions,
	"/v1/responses":             wire.OpResponses,
	"/v1/messages":              wire.OpMessages,
	"/v1/messages/count_tokens": wire.OpCountTokens,
}

// startBareMock serves the gateway's mock model on its own (POSTs to
// mockOperations' paths, 404 otherwise) until the test ends and returns
// its root URL.
func startBareMock(t *testing.T) string {
	t.Helper()
	mock := providers.NewMock("mock", []string{"*"})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, ok := mockOperations[r.URL.Path]
		if !ok || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp, err := mock.Send(r.Context(), op, body, r.Header)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// startRecorder serves a recording proxy to target until the test ends.
func startRecorder(t *testing.T, target string) *recorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1 // stream SSE through as it arrives
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		proxy.ServeHTTP(sw, r)
		rec.keep(r, body, sw.status)
	}))
	t.Cleanup(srv.Close)
	rec.URL = srv.URL
	return rec
}

// statusWriter remembers the status the proxy answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Flush lets SSE through as the gateway writes it.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (rec *recorder) keep(r *http.Request, body []byte, status int) {
	c := capturedRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Headers: map[string]string{}, Status: status}
	for k, v := range r.Header {
		ck := http.CanonicalHeaderKey(k)
		c.Headers[ck] = strings.Join(v, ", ")
		if sensitiveHeaders[ck] {
			c.Headers[ck] = "<redacted>"
		}
	}
	c.Body = string(body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, c)
	rec.mu.Unlock()
}

// requests returns what was captured so far.
func (rec *recorder) requests() []capturedRequest {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]capturedRequest(nil), rec.reqs...)
}

// writeFixture writes the captured requests as indented JSON to
// testdata/name when UPDATE_FIXTURES=1, else to the test's temp dir (and
// logs where).
func writeFixture(t *testing.T, name string, reqs []capturedRequest) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(reqs); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if os.Getenv("UPDATE_FIXTURES") == "1" {
		dir = "testdata"
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("captured %d requests in %s", len(reqs), path)
}
