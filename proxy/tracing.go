package proxy

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Span names and attribute keys. Attributes are payload-free: points,
// decisions, reason codes, modes, sequence numbers, names and statuses,
// never message content.
const (
	SpanEmission = "agent_hooks.emission"
	SpanUpstream = "upstream"

	attrPoint    = "agent_hooks.point"
	attrDecision = "agent_hooks.decision"
	attrReason   = "agent_hooks.reason"
	attrMode     = "agent_hooks.mode"
	attrSequence = "agent_hooks.sequence"
	attrSession  = "agent_hooks.session_id"
	attrUpstream = "agent_hooks.upstream"
)

// propagator is W3C trace context, the format the gateway reads from
// clients and writes to upstreams.
var propagator propagation.TextMapPropagator = propagation.TraceContext{}

// tracerOf keeps a tracer only when it records: nil, and the no-op tracer
// of a disabled provider, leave the server exactly as without tracing.
func tracerOf(t trace.Tracer) trace.Tracer {
	if _, off := t.(noop.Tracer); off {
		return nil
	}
	return t
}

// traced wraps a handler in a server span whose parent is the client's
// traceparent, if any. Without a tracer it returns h itself.
func (s *Server) traced(name string, h http.HandlerFunc) http.HandlerFunc {
	if s.tracer == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(
				attribute.String("http.request.method", r.Method),
				attribute.String("url.path", r.URL.Path),
			))
		defer span.End()
		h(w, r.WithContext(ctx))
		status := http.StatusOK
		if sw, ok := w.(*statusWriter); ok && sw.status != 0 {
			status = sw.status
		}
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	}
}

// gatewayTrace is the context's trace member naming the gateway's own
// span, for a request whose client sent no traceparent; nil when tracing
// is off.
func (s *Server) gatewayTrace(ctx context.Context) map[string]any {
	if s.tracer == nil {
		return nil
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	return map[string]any{"trace_id": sc.TraceID().String(), "span_id": sc.SpanID().String()}
}

// startEmissionSpan opens the span of one emission; nil when tracing is off.
func (s *Server) startEmissionSpan(ctx context.Context, point enforcement.Point, session string) (context.Context, trace.Span) {
	if s.tracer == nil {
		return ctx, nil
	}
	return s.tracer.Start(ctx, SpanEmission, trace.WithAttributes(
		attribute.String(attrPoint, string(point)),
		attribute.String(attrSession, session),
	))
}

// endEmissionSpan records an emission's outcome (out may be nil when the
// context could not be built) and ends its span.
func endEmissionSpan(span trace.Span, out *enforcement.Outcome, err error) {
	if span == nil {
		return
	}
	if out != nil {
		span.SetAttributes(
			attribute.String(attrDecision, string(out.Verdict.Decision)),
			attribute.String(attrReason, out.Verdict.Reason),
			attribute.String(attrMode, string(out.Mode)),
		)
		if out.Record != nil {
			span.SetAttributes(attribute.Int64(attrSequence, out.Record.Sequence))
		}
	}
	if err != nil {
		if out != nil && !out.Proceed {
			span.SetStatus(codes.Error, "denied")
		} else {
			span.SetStatus(codes.Error, "emission failed")
		}
	}
	span.End()
}

// startUpstreamSpan opens the span of an upstream call and returns the
// headers to send: h with the span injected as the upstream's parent.
// Without a tracer it returns ctx and h unchanged.
func (s *Server) startUpstreamSpan(ctx context.Context, uc *upstreamCall, h http.Header) (context.Context, http.Header) {
	if s.tracer == nil {
		return ctx, h
	}
	ctx, uc.span = s.tracer.Start(ctx, SpanUpstream, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String(attrUpstream, uc.name)))
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	propagator.Inject(ctx, propagation.HeaderCarrier(h))
	return ctx, h
}

// endUpstreamSpan ends the upstream span with the call's outcome: the
// HTTP status the upstream answered, or why there was none.
func (u *upstreamCall) endUpstreamSpan(code string) {
	if u.span == nil {
		return
	}
	if u.status != 0 {
		u.span.SetAttributes(attribute.Int("http.response.status_code", u.status))
	}
	u.span.SetAttributes(attribute.String("agent_hooks.upstream_outcome", code))
	if u.status < 200 || u.status > 299 {
		u.span.SetStatus(codes.Error, code)
	}
	u.span.End()
}
