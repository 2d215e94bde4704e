// Package tracing sets up the gateway's optional OpenTelemetry span export
// over OTLP/HTTP. It is off unless tracing.otlp_endpoint is configured;
// then spans go to <endpoint>/v1/traces, batched, and W3C trace context
// (traceparent, tracestate) is the propagation format.
package tracing

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// TracerName is the instrumentation scope of the gateway's spans.
const TracerName = "github.com/hooks-gateway/hooks-gateway"

// Propagator is the W3C trace-context propagator the gateway extracts
// incoming and injects outgoing context with.
func Propagator() propagation.TextMapPropagator { return propagation.TraceContext{} }

// Setup returns the tracer provider cfg describes and a shutdown that
// flushes it. With tracing off it returns a no-op provider (whose tracers
// record nothing) and a shutdown that does nothing. Setup does not touch
// the otel globals.
func Setup(ctx context.Context, cfg config.Tracing) (trace.TracerProvider, func(context.Context) error, error) {
	if !cfg.Enabled() {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx, exporterOptions(cfg.OTLPEndpoint)...)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: otlp exporter: %w", err)
	}
	tp := NewProvider(cfg, sdktrace.NewBatchSpanProcessor(exp))
	return tp, tp.Shutdown, nil
}

// NewProvider builds the SDK provider cfg describes around a span
// processor; Setup uses a batching OTLP one, tests a synchronous one over
// an in-memory exporter.
func NewProvider(cfg config.Tracing, sp sdktrace.SpanProcessor) *sdktrace.TracerProvider {
	name := cfg.ServiceName
	if name == "" {
		name = config.DefaultServiceName
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(name)))
	if err != nil {
		res = resource.NewSchemaless(semconv.ServiceName(name))
	}
	return sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(sp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SampleRatio))),
	)
}

// exporterOptions turns the endpoint URL into the exporter's options: its
// host, TLS off for http://, and a base path (spans go to <path>/v1/traces).
func exporterOptions(endpoint string) []otlptracehttp.Option {
	u, err := url.Parse(endpoint)
	if err != nil {
		// Validated by config; let the exporter report it.
		return []otlptracehttp.Option{otlptracehttp.WithEndpointURL(endpoint)}
	}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpoint(u.Host),
		otlptracehttp.WithURLPath(strings.TrimSuffix(u.Path, "/") + "/v1/traces"),
	}
	if u.Scheme == "http" {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	return opts
}
