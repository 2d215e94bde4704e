package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/hooks-gateway/hooks-gateway/config"
)

func TestSetupOffIsNoop(t *testing.T) {
	tp, shutdown, err := Setup(context.Background(), config.Tracing{ServiceName: "x", SampleRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.(noop.TracerProvider); !ok {
		t.Errorf("provider = %T, want the no-op provider", tp)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if _, ok := Propagator().(propagation.TraceContext); !ok {
		t.Errorf("propagator = %T", Propagator())
	}
}

// TestSetupExportsToBasePath: an endpoint with a path prefix gets spans at
// <prefix>/v1/traces, over plain HTTP for http://.
func TestSetupExportsToBasePath(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
	}))
	defer srv.Close()
	tp, shutdown, err := Setup(context.Background(), config.Tracing{OTLPEndpoint: srv.URL + "/otel/", ServiceName: "x", SampleRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer(TracerName).Start(context.Background(), "probe")
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 1 || paths[0] != "/otel/v1/traces" {
		t.Errorf("export paths = %v, want [/otel/v1/traces]", paths)
	}
}

func TestSampleRatioZeroRecordsNothing(t *testing.T) {
	tp, shutdown, err := Setup(context.Background(), config.Tracing{OTLPEndpoint: "http://127.0.0.1:1", ServiceName: "x", SampleRatio: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	_, span := tp.Tracer(TracerName).Start(context.Background(), "probe")
	if span.IsRecording() || span.SpanContext().IsSampled() {
		t.Error("a span was sampled at ratio 0")
	}
	span.End()
}
