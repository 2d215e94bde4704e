package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/cputime"
)

// The handler benchmarks measure the gateway's own CPU and allocations per
// request, without sockets: the embedded default configuration (its policy,
// per-request sessions, the in-process mock model, records to a discarded
// stdout) serving requests through its handler. They complement the
// overhead benchmarks, whose figures include both ends of two HTTP hops.

func benchHandler(b *testing.B, body []byte) {
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
	cpu0 := cputime.Process()
	for b.Loop() {
		serve()
	}
	cputime.ReportPerOp(b, cpu0)
}

// BenchmarkHandlerJSON: a 2 KiB non-streamed request under the default policy.
func BenchmarkHandlerJSON(b *testing.B) { benchHandler(b, request2KiB(false)) }

// BenchmarkHandlerStream: the same request, streamed.
func BenchmarkHandlerStream(b *testing.B) { benchHandler(b, request2KiB(true)) }

// BenchmarkHandlerConv64k: a 64 KiB conversation, non-streamed: the
// per-KiB costs of the emission path.
func BenchmarkHandlerConv64k(b *testing.B) { benchHandler(b, conversation(64<<10)) }

// conversation is a non-streamed chat request of about size bytes.
func conversation(size int) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"model":"gpt-test","messages":[{"role":"system","content":"You are a careful assistant."}`)
	for i := 0; buf.Len() < size; i++ {
		fmt.Fprintf(&buf, `,{"role":"user","content":"Question %d: summarise the quarterly report for the finance team please."}`, i)
		fmt.Fprintf(&buf, `,{"role":"assistant","content":"Answer %d: revenue grew, costs fell, and the outlook is stable overall."}`, i)
	}
	buf.WriteString(`,{"role":"user","content":"And what should we do next quarter?"}],"temperature":0.2}`)
	return buf.Bytes()
}
