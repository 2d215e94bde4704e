package providers

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

const testBody = `{"model":"gpt-4o","messages":[{"role":"user","content":"hi <b> & \u00e9"}],"temperature":0.10000000000000000001}`

// clientHeaders is what an agent might send the gateway: forwardable
// headers and several that must stay at the gateway.
func clientHeaders() http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer client-key")
	h.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.Add("Tracestate", "a=1")
	h.Add("Tracestate", "b=2")
	h.Set("OpenAI-Organization", "org-client")
	h.Set("OpenAI-Project", "proj-client")
	h.Set("Cookie", "session=secret")
	h.Set("Agent-Hooks-Session", "sess-1")
	h.Set("Agent-Hooks-Turn-Points", "client")
	h.Set("X-Forwarded-For", "10.0.0.1")
	h.Set("Accept-Encoding", "br")
	return h
}

// captured is what a test server saw of one request.
type captured struct {
	method, path, rawQuery string
	header                 http.Header
	body                   []byte
}

// recordingServer answers every request with status, a custom header and
// respBody, and hands what it saw to the returned channel.
func recordingServer(t *testing.T, status int, respBody string) (*httptest.Server, <-chan captured) {
	t.Helper()
	seen := make(chan captured, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen <- captured{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), body}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req_123")
		w.WriteHeader(status)
		io.WriteString(w, respBody)
	}))
	t.Cleanup(srv.Close)
	return srv, seen
}

func TestOpenAIForwardsRequest(t *testing.T) {
	tests := []struct {
		name       string
		cfg        OpenAIConfig
		clientAuth bool
		wantAuth   string
		// wantAccount: OpenAI-Organization and -Project go upstream only
		// with the client's own key.
		wantAccount bool
	}{
		{"configured key", OpenAIConfig{APIKey: "sk-gateway"}, true, "Bearer sk-gateway", false},
		{"client key pass-through", OpenAIConfig{PassClientKey: true}, true, "Bearer client-key", true},
		{"pass-through over configured key", OpenAIConfig{PassClientKey: true, APIKey: "sk-gateway"}, true, "Bearer client-key", true},
		{"configured key when the client sent none", OpenAIConfig{PassClientKey: true, APIKey: "sk-gateway"}, false, "Bearer sk-gateway", false},
		{"pass-through without a client key", OpenAIConfig{PassClientKey: true}, false, "", false},
		{"no key", OpenAIConfig{}, true, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const respBody = `{"error":{"message":"slow down","type":"rate_limit"}}`
			srv, seen := recordingServer(t, http.StatusTooManyRequests, respBody)
			cfg := tt.cfg
			cfg.BaseURL = srv.URL + "/v1/"
			up, err := NewOpenAI(cfg)
			if err != nil {
				t.Fatal(err)
			}
			h := clientHeaders()
			if !tt.clientAuth {
				h.Del("Authorization")
			}
			resp, err := up.Send(t.Context(), wire.OpChatCompletions, []byte(testBody), h)
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, resp)
			if resp.StatusCode != http.StatusTooManyRequests || got != respBody || resp.Header.Get("X-Request-Id") != "req_123" {
				t.Errorf("response = %d %q %v, want the upstream's untouched", resp.StatusCode, got, resp.Header)
			}

			req := <-seen
			if req.method != http.MethodPost || req.path != "/v1/chat/completions" || req.rawQuery != "" {
				t.Errorf("request line = %s %s?%s", req.method, req.path, req.rawQuery)
			}
			if !bytes.Equal(req.body, []byte(testBody)) {
				t.Errorf("body = %s, want byte-identical", req.body)
			}
			if a := req.header.Get("Authorization"); a != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", a, tt.wantAuth)
			}
			want := map[string]string{
				"Content-Type":        "application/json",
				"User-Agent":          "hooks-gateway",
				"Accept":              "application/json",
				"Traceparent":         "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
				"Openai-Organization": "",
				"Openai-Project":      "",
			}
			if tt.wantAccount {
				want["Openai-Organization"], want["Openai-Project"] = "org-client", "proj-client"
			}
			for k, v := range want {
				if got := req.header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if ts := strings.Join(req.header.Values("Tracestate"), ","); ts != "a=1,b=2" {
				t.Errorf("Tracestate = %q", ts)
			}
			for _, k := range []string{"Cookie", "Agent-Hooks-Session", "Agent-Hooks-Turn-Points", "X-Forwarded-For"} {
				if v := req.header.Values(k); len(v) > 0 {
					t.Errorf("client header %s leaked upstream: %q", k, v)
				}
			}
			if ae := req.header.Get("Accept-Encoding"); ae != "gzip" {
				t.Errorf("Accept-Encoding = %q, want the transport's gzip, not the client's", ae)
			}
		})
	}
}

func TestOpenAIAccept(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		client string
		want   string
	}{
		{"client's", `{"model":"m","stream":true}`, "application/json", "application/json"},
		{"stream", `{"model":"m","stream":true}`, "", "text/event-stream"},
		{"non-stream", `{"model":"m","stream":false}`, "", "application/json"},
		{"unreadable body", `[1,2]`, "", "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, seen := recordingServer(t, http.StatusOK, `{}`)
			up, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			if tt.client != "" {
				h.Set("Accept", tt.client)
			}
			resp, err := up.Send(t.Context(), wire.OpChatCompletions, []byte(tt.body), h)
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, resp)
			if got := (<-seen).header.Get("Accept"); got != tt.want {
				t.Errorf("Accept = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewOpenAIErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  OpenAIConfig
		want string
	}{
		{"relative base URL", OpenAIConfig{BaseURL: "api.openai.com/v1"}, "absolute"},
		{"bad scheme", OpenAIConfig{BaseURL: "ftp://host/v1"}, "absolute"},
		{"unparsable base URL", OpenAIConfig{BaseURL: "http://user:hunter2@host:port/"}, "invalid URL"},
		{"key with newline", OpenAIConfig{APIKey: "sk-secret\n"}, "control characters"},
		{"bad model pattern", OpenAIConfig{Models: []string{"gpt-["}}, "syntax error"},
		{"negative timeout", OpenAIConfig{Timeout: -time.Second}, "negative timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewOpenAI(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			if msg := err.Error(); strings.Contains(msg, "sk-secret") || strings.Contains(msg, "hunter2") {
				t.Errorf("error leaks a secret: %v", err)
			}
		})
	}
}

func TestOpenAIDefaultsAndModels(t *testing.T) {
	up, err := NewOpenAI(OpenAIConfig{Models: []string{"gpt-4o", "gpt-*", "o3", "gpt-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	if up.Name() != "openai" || up.endpoints[wire.OpChatCompletions] != "https://api.openai.com/v1/chat/completions" {
		t.Errorf("defaults: name %q endpoint %q", up.Name(), up.endpoints[wire.OpChatCompletions])
	}
	if got := strings.Join(up.Models(), ","); got != "gpt-4o,o3" {
		t.Errorf("Models = %s, want the literal patterns", got)
	}
}

func TestOpenAITransportErrorNamesUpstreamNotKey(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // nothing listens any more
	up, err := NewOpenAI(OpenAIConfig{Name: "primary", BaseURL: srv.URL, APIKey: "sk-secret"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = up.Send(t.Context(), wire.OpChatCompletions, []byte(testBody), nil)
	if err == nil {
		t.Fatal("want a connection error")
	}
	if msg := err.Error(); !strings.Contains(msg, "primary") || strings.Contains(msg, "sk-secret") || strings.Contains(msg, "gpt-4o") {
		t.Errorf("error = %q: want the upstream's name and neither key nor body", msg)
	}
}

func TestOpenAICancelAbortsUpstream(t *testing.T) {
	t.Run("awaiting headers", func(t *testing.T) {
		srv, done := stallingServer(t, false)
		up := mustOpenAI(t, OpenAIConfig{BaseURL: srv.URL})
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err := up.Send(ctx, wire.OpChatCompletions, []byte(testBody), nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		assertPrompt(t, start, done)
	})
	t.Run("reading the body", func(t *testing.T) {
		srv, done := stallingServer(t, true)
		up := mustOpenAI(t, OpenAIConfig{BaseURL: srv.URL})
		ctx, cancel := context.WithCancel(t.Context())
		resp, err := up.Send(ctx, wire.OpChatCompletions, []byte(testBody), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		if _, err := io.ReadAll(resp.Body); err == nil {
			t.Fatal("reading a cancelled body succeeded")
		}
		assertPrompt(t, start, done)
	})
}

func TestOpenAITimeout(t *testing.T) {
	for _, afterHeaders := range []bool{false, true} {
		name := map[bool]string{false: "awaiting headers", true: "reading the body"}[afterHeaders]
		t.Run(name, func(t *testing.T) {
			srv, done := stallingServer(t, afterHeaders)
			up := mustOpenAI(t, OpenAIConfig{BaseURL: srv.URL, Timeout: 100 * time.Millisecond})
			start := time.Now()
			resp, err := up.Send(t.Context(), wire.OpChatCompletions, []byte(testBody), nil)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want one wrapping context.DeadlineExceeded", err)
			}
			assertPrompt(t, start, done)
		})
	}
}

func TestOpenAIDecompressesGzip(t *testing.T) {
	const plain = `{"id":"chatcmpl-1","choices":[]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			t.Errorf("Accept-Encoding = %q, want gzip offered", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, plain)
		zw.Close()
	}))
	defer srv.Close()
	up := mustOpenAI(t, OpenAIConfig{BaseURL: srv.URL})
	resp, err := up.Send(t.Context(), wire.OpChatCompletions, []byte(testBody), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); got != plain {
		t.Errorf("body = %q, want it decompressed", got)
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" || !resp.Uncompressed {
		t.Errorf("Content-Encoding = %q, Uncompressed = %v", ce, resp.Uncompressed)
	}
}

func TestOpenAIDoesNotFollowRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			t.Errorf("redirect followed to %s", r.URL.Path)
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	up := mustOpenAI(t, OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-gateway"})
	resp, err := up.Send(t.Context(), wire.OpChatCompletions, []byte(testBody), nil)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("status = %d, want the redirect relayed", resp.StatusCode)
	}
}

// stallingServer never finishes a response: it stalls before the headers,
// or after flushing them when afterHeaders. done is closed once the
// server sees the request's context end.
func stallingServer(t *testing.T, afterHeaders bool) (*httptest.Server, <-chan struct{}) {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// net/http notices a closed connection only once the body is read.
		io.Copy(io.Discard, r.Body)
		if afterHeaders {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {}\n\n")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
			close(done)
		case <-time.After(10 * time.Second):
			t.Error("upstream request was not aborted")
		}
	}))
	t.Cleanup(srv.Close)
	return srv, done
}

// assertPrompt checks the client gave up quickly and the server noticed.
func assertPrompt(t *testing.T, start time.Time, done <-chan struct{}) {
	t.Helper()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v to give up", d)
	}
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Error("server never saw the request's context end")
	}
}

func mustOpenAI(t *testing.T, cfg OpenAIConfig) *OpenAI {
	t.Helper()
	up, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.CloseIdleConnections)
	return up
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
