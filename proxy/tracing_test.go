package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/tracing"
)

// tracedRun is one chat request through a gateway whose upstream records
// the traceparent it received and whose interceptor records each
// context's trace member.
type tracedRun struct {
	mu          sync.Mutex
	upstreamTP  []string
	traces      map[enforcement.Point]any
	hasTraceKey map[enforcement.Point]bool
}

func (tr *tracedRun) gateway(t *testing.T, tracer trace.Tracer) *gateway {
	t.Helper()
	tr.traces = map[enforcement.Point]any{}
	tr.hasTraceKey = map[enforcement.Point]bool{}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		tr.mu.Lock()
		tr.upstreamTP = append(tr.upstreamTP, r.Header.Get("traceparent"))
		tr.mu.Unlock()
		jsonReply(completionJSON)(w, r, body)
	})
	return newGateway(t, gatewayConfig{upstream: up.URL + "/v1", tracer: tracer, policy: func(c enforcement.Context) enforcement.Verdict {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		p := enforcement.Point(c["interception_point"].(string))
		tr.traces[p], tr.hasTraceKey[p] = c["trace"], c["trace"] != nil
		return enforcement.Allow()
	}})
}

const secretText = "my private message SECRET-CONTENT-42"

func tracedChatBody() string {
	return `{"model":"gpt-test","messages":[{"role":"user","content":"` + secretText + `"}]}`
}

// spansOf waits for the server span (it ends after the answer is out) and
// returns all ended spans.
func spansOf(t *testing.T, exp *tracetest.InMemoryExporter) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		spans := exp.GetSpans()
		for _, s := range spans {
			if s.SpanKind == trace.SpanKindServer {
				return spans
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no server span; got %d spans", len(spans))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func newTestProvider(t *testing.T) (*tracetest.InMemoryExporter, trace.Tracer) {
	exp := tracetest.NewInMemoryExporter()
	tp := tracing.NewProvider(config.Tracing{ServiceName: "hooks-gateway-test", SampleRatio: 1}, sdktrace.NewSimpleSpanProcessor(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return exp, tp.Tracer(tracing.TracerName)
}

// checkSpans verifies the span tree of one chat request and returns the
// server span and the upstream span.
func checkSpans(t *testing.T, spans tracetest.SpanStubs) (server, upstream tracetest.SpanStub) {
	t.Helper()
	var emissions []tracetest.SpanStub
	nServer, nUpstream := 0, 0
	for _, s := range spans {
		switch s.Name {
		case "POST /v1/chat/completions":
			server = s
			nServer++
		case SpanUpstream:
			upstream = s
			nUpstream++
		case SpanEmission:
			emissions = append(emissions, s)
		default:
			t.Errorf("unexpected span %q", s.Name)
		}
	}
	if nServer != 1 || nUpstream != 1 {
		t.Fatalf("server spans = %d, upstream spans = %d; want 1 and 1", nServer, nUpstream)
	}
	if server.SpanKind != trace.SpanKindServer || upstream.SpanKind != trace.SpanKindClient {
		t.Errorf("kinds: server %v, upstream %v", server.SpanKind, upstream.SpanKind)
	}
	wantPoints := []string{"agent_startup", "input", "pre_model_call", "post_model_call", "output", "agent_shutdown"}
	if len(emissions) != len(wantPoints) {
		t.Fatalf("emission spans = %d, want %d", len(emissions), len(wantPoints))
	}
	serverID := server.SpanContext.SpanID()
	traceID := server.SpanContext.TraceID()
	if upstream.Parent.SpanID() != serverID || upstream.SpanContext.TraceID() != traceID {
		t.Errorf("upstream span's parent = %s, want the server span %s", upstream.Parent.SpanID(), serverID)
	}
	attrs := func(s tracetest.SpanStub) map[string]string {
		m := map[string]string{}
		for _, kv := range s.Attributes {
			m[string(kv.Key)] = kv.Value.Emit()
		}
		return m
	}
	if a := attrs(upstream); a["http.response.status_code"] != "200" || a[attrUpstream] != "test-upstream" {
		t.Errorf("upstream attributes = %v", a)
	}
	if a := attrs(server); a["http.response.status_code"] != "200" || a["http.request.method"] != "POST" {
		t.Errorf("server attributes = %v", a)
	}
	for i, s := range emissions {
		if s.Parent.SpanID() != serverID || s.SpanContext.TraceID() != traceID {
			t.Errorf("emission %d's parent = %s, want the server span %s", i, s.Parent.SpanID(), serverID)
		}
		a := attrs(s)
		if a[attrPoint] != wantPoints[i] {
			t.Errorf("emission %d point = %q, want %q", i, a[attrPoint], wantPoints[i])
		}
		if a[attrDecision] != "allow" || a[attrMode] != "enforce" || a[attrSequence] != string(rune('0'+i)) {
			t.Errorf("emission %d attributes = %v", i, a)
		}
		if _, ok := a[attrReason]; !ok {
			t.Errorf("emission %d has no reason attribute: %v", i, a)
		}
	}
	// No attribute of any span carries message content.
	for _, s := range spans {
		for k, v := range attrs(s) {
			if strings.Contains(v, "SECRET-CONTENT") || strings.Contains(v, "FRIEND") || strings.Contains(v, "private") {
				t.Errorf("span %q attribute %s carries content: %q", s.Name, k, v)
			}
		}
		for _, e := range s.Events {
			for _, kv := range e.Attributes {
				if strings.Contains(kv.Value.Emit(), "SECRET-CONTENT") {
					t.Errorf("span %q event carries content", s.Name)
				}
			}
		}
	}
	return server, upstream
}

func TestTracingSpansWithoutClientTraceparent(t *testing.T) {
	exp, tracer := newTestProvider(t)
	var tr tracedRun
	g := tr.gateway(t, tracer)
	status, _, body := g.post(t, tracedChatBody(), nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	server, upstream := checkSpans(t, spansOf(t, exp))
	if server.Parent.IsValid() {
		t.Errorf("server span has a parent %v; the client sent none", server.Parent)
	}
	// The contexts' trace member names the gateway's server span.
	want := map[string]any{"trace_id": server.SpanContext.TraceID().String(), "span_id": server.SpanContext.SpanID().String()}
	for p, got := range tr.traces {
		m, _ := got.(map[string]any)
		if m == nil || m["trace_id"] != want["trace_id"] || m["span_id"] != want["span_id"] {
			t.Errorf("%s trace = %v, want %v", p, got, want)
		}
	}
	if recs := g.records.all(); len(recs) == 0 || recs[0].Trace == nil || recs[0].Trace.TraceID != want["trace_id"] {
		t.Errorf("records do not echo the gateway trace")
	}
	// The upstream's parent is the gateway's upstream span.
	wantTP := "00-" + upstream.SpanContext.TraceID().String() + "-" + upstream.SpanContext.SpanID().String() + "-01"
	if len(tr.upstreamTP) != 1 || tr.upstreamTP[0] != wantTP {
		t.Errorf("upstream traceparent = %v, want %s", tr.upstreamTP, wantTP)
	}
}

func TestTracingClientTraceparentIsParent(t *testing.T) {
	exp, tracer := newTestProvider(t)
	var tr tracedRun
	g := tr.gateway(t, tracer)
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	status, _, body := g.post(t, tracedChatBody(), map[string]string{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"})
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	server, upstream := checkSpans(t, spansOf(t, exp))
	if server.Parent.TraceID().String() != clientTrace || server.Parent.SpanID().String() != clientSpan || !server.Parent.IsRemote() {
		t.Errorf("server span parent = %v, want the client's %s/%s", server.Parent, clientTrace, clientSpan)
	}
	if server.SpanContext.TraceID().String() != clientTrace {
		t.Errorf("server span trace = %s, want the client's", server.SpanContext.TraceID())
	}
	// Contexts keep echoing the client's ids, as without tracing.
	for p, got := range tr.traces {
		m, _ := got.(map[string]any)
		if m == nil || m["trace_id"] != clientTrace || m["span_id"] != clientSpan {
			t.Errorf("%s trace = %v, want the client's", p, got)
		}
	}
	wantTP := "00-" + clientTrace + "-" + upstream.SpanContext.SpanID().String() + "-01"
	if len(tr.upstreamTP) != 1 || tr.upstreamTP[0] != wantTP {
		t.Errorf("upstream traceparent = %v, want %s", tr.upstreamTP, wantTP)
	}
}

// TestTracingOffUnchanged: without a tracer, or with a disabled
// provider's no-op tracer, no trace member appears and nothing is injected.
func TestTracingOffUnchanged(t *testing.T) {
	for name, tracer := range map[string]trace.Tracer{"nil": nil, "noop": noop.NewTracerProvider().Tracer("x")} {
		t.Run(name, func(t *testing.T) {
			var tr tracedRun
			g := tr.gateway(t, tracer)
			if g.srv.tracer != nil {
				t.Fatalf("tracer kept: %T", g.srv.tracer)
			}
			status, _, body := g.post(t, tracedChatBody(), nil)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			for p, has := range tr.hasTraceKey {
				if has {
					t.Errorf("%s carries a trace member with tracing off", p)
				}
			}
			if len(tr.upstreamTP) != 1 || tr.upstreamTP[0] != "" {
				t.Errorf("upstream traceparent = %q, want none", tr.upstreamTP)
			}
		})
	}
}

// TestTracingOTLPExport runs the real Setup against an OTLP/HTTP receiver:
// one chat request, then shutdown flushes the batch to /v1/traces.
func TestTracingOTLPExport(t *testing.T) {
	var mu sync.Mutex
	var got []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()
	ctx := context.Background()
	tp, shutdown, err := tracing.Setup(ctx, config.Tracing{OTLPEndpoint: recv.URL, ServiceName: "gw-export-test", SampleRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	var tr tracedRun
	g := tr.gateway(t, tp.Tracer(tracing.TracerName))
	if status, _, body := g.post(t, tracedChatBody(), nil); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	// The server span ends just after the answer; give it a moment.
	time.Sleep(50 * time.Millisecond)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := shutdown(sctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("no OTLP export arrived")
	}
	all := strings.Join(got, "\n")
	if !strings.HasPrefix(got[0], "POST /v1/traces application/x-protobuf ") {
		t.Errorf("export request = %.80q", got[0])
	}
	// The protobuf carries names and attribute values as plain strings.
	for _, want := range []string{"gw-export-test", SpanEmission, SpanUpstream, "POST /v1/chat/completions", "pre_model_call"} {
		if !strings.Contains(all, want) {
			t.Errorf("export lacks %q", want)
		}
	}
	if strings.Contains(all, "SECRET-CONTENT") {
		t.Error("export carries message content")
	}
}
