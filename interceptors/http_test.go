package interceptors

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// verdictService answers every POST with status, content type and body,
// after checking the request is a JSON context; it counts requests.
type verdictService struct {
	*httptest.Server
	requests atomic.Int64
	last     atomic.Value // the last decoded request body
}

func newVerdictService(t *testing.T, status int, body string) *verdictService {
	t.Helper()
	s := &verdictService{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		var got map[string]any
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" ||
			json.NewDecoder(r.Body).Decode(&got) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		s.last.Store(got)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

// buildHTTP builds an http interceptor for url with extra option lines.
func buildHTTP(t *testing.T, url, extra string) *httpInterceptor {
	t.Helper()
	reg, err := Build(specsOf(t, "  - name: remote\n    type: http\n    url: "+url+"\n"+extra)[0], Env{InterceptorTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return reg.Interceptor.(*httpInterceptor)
}

// toolContext is a pre_tool_call context carrying secret in its target.
func toolContext(secret string) enforcement.Context {
	return enforcement.Context{
		"spec": "agent-hooks/0.1", "interception_point": "pre_tool_call",
		"session": map[string]any{"id": "s1"},
		"target":  map[string]any{"name": "search", "args": map[string]any{"q": secret}},
	}
}

func TestHTTPVerdicts(t *testing.T) {
	cases := []struct {
		name, answer string
		want         enforcement.Verdict
	}{
		{"allow", `{"decision":"allow"}`, enforcement.Allow()},
		{"deny", `{"decision":"deny","reason":"policy:remote","message":"no"}`, enforcement.Deny("policy:remote", "no")},
		{"transform", `{"decision":"transform","reason":"policy:rewrite","transform":{"path":"$target.args.q","value":"safe"}}`,
			enforcement.Verdict{Decision: enforcement.DecisionTransform, Reason: "policy:rewrite",
				Transform: &enforcement.Transform{Path: "$target.args.q", Value: "safe"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc := newVerdictService(t, http.StatusOK, tc.answer)
			h := buildHTTP(t, svc.URL+"/v1/verdict", "")
			v := intercept(t, h, toolContext("kittens"))
			if !samePlain(v, tc.want) {
				t.Errorf("verdict = %+v; want %+v", v, tc.want)
			}
			// The body is the context itself.
			got, _ := svc.last.Load().(map[string]any)
			if got["interception_point"] != "pre_tool_call" || got["target"].(map[string]any)["name"] != "search" {
				t.Errorf("service received %v", got)
			}
		})
	}
	if _, ok := any(&httpInterceptor{}).(enforcement.NonBlocking); ok {
		t.Error("http does I/O and must not be NonBlocking")
	}
}

// TestHTTPBadAnswers: every answer that is not 200 with a JSON verdict is
// an error that names the problem, never the body.
func TestHTTPBadAnswers(t *testing.T) {
	const secret = "LEAKED-BODY-TEXT"
	cases := []struct {
		name        string
		status      int
		ctype, body string
		invalid     bool // the error is a verdict_invalid one
		want        string
	}{
		{"server error", 500, "application/json", `{"error":"` + secret + `"}`, false, "status 500"},
		{"created", 201, "application/json", `{"decision":"allow"}`, false, "status 201"},
		{"garbage", 200, "application/json", secret + "{", false, "not JSON"},
		{"html", 200, "text/html", `<p>` + secret, false, "content type"},
		{"oversized", 200, "application/json", `{"decision":"allow","x":"` + strings.Repeat("a", maxRemoteBody) + `"}`, false, "more than 1048576 bytes"},
		{"not a verdict", 200, "application/json", `{"reason":"` + secret + `"}`, true, "decision is missing"},
		{"unknown member", 200, "application/json", `{"decision":"allow","` + secret + `":1}`, true, "does not define"},
		{"duplicate member", 200, "application/json", `{"decision":"allow","x":{"` + secret + `":1,"` + secret + `":2}}`, true, "more than once"},
		{"unknown decision", 200, "application/json", `{"decision":"` + secret + `"}`, true, "not allow, deny or transform"},
		{"array", 200, "application/json", `["` + secret + `"]`, true, "not a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			_, err := buildHTTP(t, srv.URL, "").Intercept(context.Background(), toolContext("q"))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), secret) {
				t.Errorf("error %q: want it to mention %q and not the body", err, tc.want)
			}
			if got := errors.Is(err, enforcement.ErrVerdictInvalid); got != tc.invalid {
				t.Errorf("errors.Is(err, ErrVerdictInvalid) = %v; want %v", got, tc.invalid)
			}
		})
	}
}

func TestHTTPTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	h := buildHTTP(t, srv.URL, "    timeout: 100ms\n    retries: 3\n")
	_, err := h.Intercept(context.Background(), toolContext("q"))
	if !errors.Is(err, enforcement.ErrInterceptorTimeout) {
		t.Fatalf("err = %v; want ErrInterceptorTimeout", err)
	}
	// The caller's own cancellation is not the interceptor's timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Intercept(ctx, toolContext("q")); err == nil || errors.Is(err, enforcement.ErrInterceptorTimeout) {
		t.Errorf("cancelled call: err = %v", err)
	}
}

// countDials wraps h's dialer so the test sees every connection attempt.
func countDials(h *httpInterceptor) *atomic.Int64 {
	var n atomic.Int64
	tr := h.client.client.Transport.(*http.Transport)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		n.Add(1)
		return dial(ctx, network, addr)
	}
	return &n
}

// TestHTTPRetriesRefusedConnections: a refused connection sent nothing, so
// it is retried, exactly retries times.
func TestHTTPRetriesRefusedConnections(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: connections are refused
	for _, retries := range []int{0, 2} {
		h := buildHTTP(t, "http://"+addr, fmt.Sprintf("    retries: %d\n", retries))
		dials := countDials(h)
		if _, err := h.Intercept(context.Background(), toolContext("q")); err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("retries %d: err = %v", retries, err)
		}
		if got := dials.Load(); got != int64(retries+1) {
			t.Errorf("retries %d: %d connection attempts; want %d", retries, got, retries+1)
		}
	}
}

// TestHTTPNoRetryAfterSending: a server that takes the request and hangs up
// mid-answer may have acted on it; the call fails without a retry.
func TestHTTPNoRetryAfterSending(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var accepted atomic.Int64
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"deci")
			}()
		}
	}()
	h := buildHTTP(t, "http://"+l.Addr().String(), "    retries: 3\n")
	dials := countDials(h)
	if _, err := h.Intercept(context.Background(), toolContext("q")); err == nil {
		t.Fatal("a truncated answer was accepted")
	}
	if d, a := dials.Load(), accepted.Load(); d != 1 || a != 1 {
		t.Errorf("%d dials, %d accepted connections; want 1 and 1 (no retry)", d, a)
	}
}

func TestHTTPBearerAndHeaders(t *testing.T) {
	t.Setenv("TEST_POLICY_TOKEN", "s3cret-token")
	var auth, custom atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		custom.Store(r.Header.Get("X-Tenant-Policy"))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"decision":"allow"}`)
	}))
	t.Cleanup(srv.Close)
	h := buildHTTP(t, srv.URL, "    bearer_token_env: TEST_POLICY_TOKEN\n    headers: {X-Tenant-Policy: strict}\n")
	intercept(t, h, toolContext("q"))
	if auth.Load() != "Bearer s3cret-token" || custom.Load() != "strict" {
		t.Errorf("Authorization %q, X-Tenant-Policy %q", auth.Load(), custom.Load())
	}
}

func TestHTTPMutualTLS(t *testing.T) {
	pki := newTestPKI(t, "policy.test")
	var sawClientCert atomic.Bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawClientCert.Store(len(r.TLS.PeerCertificates) > 0)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"decision":"deny","reason":"policy:mtls"}`)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{pki.server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pki.pool,
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tlsOpts := fmt.Sprintf("    tls: {ca_file: %s, cert_file: %s, key_file: %s, server_name: policy.test}\n", pki.caFile, pki.certFile, pki.keyFile)
	v := intercept(t, buildHTTP(t, srv.URL, tlsOpts), toolContext("q"))
	if v.Decision != enforcement.DecisionDeny || v.Reason != "policy:mtls" || !sawClientCert.Load() {
		t.Errorf("verdict %+v, client certificate seen %v", v, sawClientCert.Load())
	}
	// Without a client certificate the server refuses the handshake.
	noCert := fmt.Sprintf("    retries: 0\n    tls: {ca_file: %s, server_name: policy.test}\n", pki.caFile)
	if _, err := buildHTTP(t, srv.URL, noCert).Intercept(context.Background(), toolContext("q")); err == nil {
		t.Error("call without a client certificate succeeded")
	}
	// A server the CA did not sign is not trusted.
	other := httptest.NewUnstartedServer(http.NotFoundHandler())
	other.Config.ErrorLog = log.New(io.Discard, "", 0)
	other.StartTLS()
	t.Cleanup(other.Close)
	if _, err := buildHTTP(t, other.URL, tlsOpts).Intercept(context.Background(), toolContext("q")); err == nil {
		t.Error("call to an untrusted server succeeded")
	}
}

// TestHTTPKeepAlive: calls reuse one pooled connection.
func TestHTTPKeepAlive(t *testing.T) {
	var newConns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"decision":"allow"}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	h := buildHTTP(t, srv.URL, "")
	for range 10 {
		intercept(t, h, toolContext("q"))
	}
	if n := newConns.Load(); n != 1 {
		t.Errorf("%d connections for 10 sequential calls; want 1", n)
	}
}

func TestHTTPProblems(t *testing.T) {
	t.Setenv("EMPTY_TOKEN", "")
	t.Setenv("CRLF_TOKEN", "abc\r\nX-Injected: 1")
	specs := specsOf(t, `  - name: a
    type: http
  - name: b
    type: http
    url: ftp://policy
    timeout: 5s
    retries: 9
    bearer_token_env: EMPTY_TOKEN
    headers: {Authorization: x, "bad name": y}
  - name: c
    type: http
    url: http://policy
    tls: {cert_file: c.pem}
  - name: e
    type: http
    url: http://policy
    bearer_token_env: CRLF_TOKEN
  - name: d
    type: opa
    url: http://opa:8181
    path: "../x"
`)
	_, err := BuildAll(specs, Env{InterceptorTimeout: 5 * time.Second})
	if err == nil {
		t.Fatal("built a bad policy")
	}
	msg := err.Error()
	for _, w := range []string{
		"interceptors[0].url: is required",
		"interceptors[1].url: must be an absolute http:// or https:// URL",
		"interceptors[1].timeout: 5s must be less than enforcement.interceptor_timeout (5s)",
		"interceptors[1].retries: must be between 0 and 5",
		"interceptors[1].bearer_token_env: environment variable EMPTY_TOKEN is not set",
		"interceptors[1].headers.Authorization: is set by the gateway",
		"interceptors[1].headers.bad name: is not a valid header name",
		"interceptors[2].tls: cert_file and key_file go together",
		"interceptors[2].tls: needs an https:// url",
		"interceptors[3].bearer_token_env: environment variable CRLF_TOKEN holds control characters",
		"interceptors[4].path: must be rule names",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("problems lack %q:\n%s", w, msg)
		}
	}
}
