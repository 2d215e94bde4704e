package proxy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire/wiretest"
)

// TestUpstreamAccept: the upstream gets the client's Accept, or, when the
// client sent none, the one for a stream exactly when the request
// streams, on every surface.
func TestUpstreamAccept(t *testing.T) {
	var mu sync.Mutex
	var got string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Get("Accept")
		mu.Unlock()
		b, _ := io.ReadAll(r.Body)
		stream := bytes.Contains(b, []byte(`"stream":true`))
		switch {
		case strings.HasSuffix(r.URL.Path, "/responses") && stream:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(wiretest.ResponsesStream200())
		case strings.HasSuffix(r.URL.Path, "/messages") && stream:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(messagesStream200())
		case stream:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(stream200())
		case strings.HasSuffix(r.URL.Path, "/responses"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, cannedResponse)
		case strings.HasSuffix(r.URL.Path, "/messages"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, cannedMessage)
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, cannedChat)
		}
	}))
	defer up.Close()
	bodies := map[string]func(stream bool) []byte{
		"/v1/chat/completions": request2KiB,
		"/v1/responses": func(stream bool) []byte {
			return []byte(`{"model":"gpt-bench","stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"store":false,"input":"hello"}`)
		},
		"/v1/messages": func(stream bool) []byte {
			return []byte(`{"model":"claude-bench","max_tokens":64,"stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"messages":[{"role":"user","content":"hello"}]}`)
		},
	}
	for path, body := range bodies {
		asm, err := Build(context.Background(), cannedGatewayConfig(t, up.URL, path), io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			stream       bool
			accept, want string
		}{
			{false, "", "application/json"},
			{true, "", "text/event-stream"},
			{true, "text/event-stream, application/json", "text/event-stream, application/json"},
		} {
			req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body(c.stream)))
			req.Header.Set("Content-Type", "application/json")
			if c.accept != "" {
				req.Header.Set("Accept", c.accept)
			}
			rec := httptest.NewRecorder()
			asm.Server.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s stream %v: status %d (upstream Accept %q): %s", path, c.stream, rec.Code, got, rec.Body.String())
			}
			mu.Lock()
			if got != c.want {
				t.Errorf("%s stream %v, client Accept %q: upstream got %q, want %q", path, c.stream, c.accept, got, c.want)
			}
			if c.accept == "" && req.Header.Get("Accept") != "" {
				t.Errorf("%s: the client's header was modified", path)
			}
			mu.Unlock()
		}
		asm.Close()
	}
}
