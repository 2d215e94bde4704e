package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHealthcheck(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	ctx := context.Background()
	if code := run(ctx, []string{"healthcheck", "--url", srv.URL + "/healthz"}, io.Discard, io.Discard, nil); code != 0 {
		t.Fatalf("healthy gateway: exit %d, want 0", code)
	}
	status = http.StatusServiceUnavailable
	if code := run(ctx, []string{"healthcheck", "--url", srv.URL + "/healthz"}, io.Discard, io.Discard, nil); code != 1 {
		t.Fatalf("unhealthy gateway: exit %d, want 1", code)
	}
	srv.Close()
	if code := run(ctx, []string{"healthcheck", "--url", srv.URL + "/healthz", "--timeout", "500ms"}, io.Discard, io.Discard, nil); code != 1 {
		t.Fatalf("unreachable gateway: exit %d, want 1", code)
	}
}
