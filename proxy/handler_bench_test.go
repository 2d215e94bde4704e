package proxy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// The handler benchmarks measure the gateway's own CPU and allocations per
// request, without sockets: the embedded default configuration (its policy,
// per-request sessions, the in-process mock model, records to a discarded
// stdout) serving requests through its handler. They complement the
// overhead benchmarks, whose figures include both ends of two HTTP hops.

func benchHandler(b *testing.B, stream bool) {
	if _, set := os.LookupEnv("OPENAI_API_KEY"); set {
		b.Setenv("OPENAI_API_KEY", "") // the default then keeps the mock
		os.Unsetenv("OPENAI_API_KEY")
	}
	cfg := config.Default()
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	asm, err := Build(context.Background(), cfg, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer asm.Close()
	body := request2KiB(stream)
	serve := func() {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		asm.Server.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
	serve()
	b.ReportAllocs()
	// CPU time, GC included, is the figure to compare: wall time on a
	// shared machine mostly measures the neighbours.
	cpu0 := processCPU()
	for b.Loop() {
		serve()
	}
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkHandlerJSON: a 2 KiB non-streamed request under the default policy.
func BenchmarkHandlerJSON(b *testing.B) { benchHandler(b, false) }

// BenchmarkHandlerStream: the same request, streamed.
func BenchmarkHandlerStream(b *testing.B) { benchHandler(b, true) }
