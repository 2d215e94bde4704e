package proxy

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/metrics"
	"github.com/hooks-gateway/hooks-gateway/records"
)

// Metrics returns the server's instrumentation (GET /metrics serves its
// registry).
func (s *Server) Metrics() *metrics.Metrics { return s.metrics }

// ReloadFailed counts a policy reload that was rejected; the policy in
// effect stays.
func (s *Server) ReloadFailed() { s.metrics.ReloadFailed() }

// PolicyOption adjusts the engine options BuildPolicy builds the emitter with.
type PolicyOption func(*enforcement.Options)

// WithObserver sets the emitter's observer, normally the server's
// [metrics.Metrics]: a policy built for Server.SetPolicy should carry
// WithObserver(server.Metrics()) so its emissions are counted.
func WithObserver(o enforcement.Observer) PolicyOption {
	return func(opts *enforcement.Options) { opts.Observer = o }
}

// requestObs is what a handler tells the request instrumentation: whether
// the model call streamed and on which API, and how long upstream calls
// took.
type requestObs struct {
	// api is the surface of a model call; empty on other routes.
	api      wire.API
	stream   bool
	upstream time.Duration
	// start is when the request arrived; firstData is set once the first
	// event carrying data was written to a streaming client.
	start     time.Time
	firstData bool
	// mcpServer, mcpMethod and mcpOutcome label an MCP request's count
	// (hooks_gateway_mcp_requests_total); mcpServer is empty on requests
	// not counted there.
	mcpServer, mcpMethod, mcpOutcome string
}

// streamData observes the first data written to a streaming client (o may
// be nil outside the instrumented handler).
func (o *requestObs) streamData(m *metrics.Metrics, mode string) {
	if o == nil || o.firstData {
		return
	}
	o.firstData = true
	m.ObserveStreamFirstByte(string(o.api), mode, time.Since(o.start))
}

type requestObsKey struct{}

func observation(ctx context.Context) *requestObs {
	o, _ := ctx.Value(requestObsKey{}).(*requestObs)
	return o
}

// requestContext is a request's context carrying its observation and its
// held records: it answers their keys itself, sparing a context.WithValue
// per request for each.
type requestContext struct {
	context.Context
	obs  *requestObs
	held *enforcement.HeldRecords
}

// Value answers the request's own keys and passes any other on.
func (c *requestContext) Value(key any) any {
	switch key.(type) {
	case requestObsKey:
		return c.obs
	case enforcement.HeldRecordsKey:
		return c.held
	}
	return c.Context.Value(key)
}

// instrument counts and times every request by its route pattern.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		// One allocation for all of them: they live exactly as long as
		// the request.
		both := &struct {
			obs  requestObs
			sw   statusWriter
			held enforcement.HeldRecords
			ctx  requestContext
		}{obs: requestObs{start: start}, sw: statusWriter{ResponseWriter: w}}
		obs, sw, held, ctx := &both.obs, &both.sw, &both.held, &both.ctx
		*ctx = requestContext{Context: r.Context(), obs: obs, held: held}
		// The request's records are held and written together, before
		// anything reaches the client (statusWriter) or the upstream
		// (callUpstream), and at the latest when the handler returns or
		// panics (deferred).
		held.Start(ctx)
		defer held.Flush()
		sw.held = held
		next.ServeHTTP(sw, r.WithContext(ctx))
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil {
			switch len(rc.RoutePatterns) {
			case 0:
			case 1:
				route = rc.RoutePatterns[0]
			default:
				route = rc.RoutePattern()
			}
		}
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		s.metrics.ObserveRequest(route, string(obs.api), sw.status, obs.stream, time.Since(start), obs.upstream)
		if obs.mcpServer != "" {
			s.metrics.ObserveMCP(obs.mcpServer, obs.mcpMethod, obs.mcpOutcome)
		}
	})
}

// statusWriter remembers the status a handler answered with. It passes
// Flush through (streams and keep-alive flush) and unwraps for
// http.ResponseController.
//
// It also writes the request's held records before anything of the
// answer: a record reaches its sinks before what
// its verdict allowed reaches the client.
type statusWriter struct {
	http.ResponseWriter
	status int
	held   *enforcement.HeldRecords
}

func (w *statusWriter) WriteHeader(code int) {
	w.held.Flush()
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.held.Flush()
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	w.held.Flush()
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// upstreamCall times one upstream model call, from the request until its
// body was fully read (or the call failed), for the upstream metrics and
// the request's overhead. done records it once; later calls are no-ops.
type upstreamCall struct {
	m      *metrics.Metrics
	obs    *requestObs
	name   string
	start  time.Time
	status int
	ended  bool
	// span is the upstream call's trace span; nil when tracing is off.
	span trace.Span
}

func (s *Server) startUpstream(ctx context.Context, name string) *upstreamCall {
	return &upstreamCall{m: s.metrics, obs: observation(ctx), name: name, start: time.Now()}
}

// done records the call with code (an HTTP status, or metrics.Upstream*).
func (u *upstreamCall) done(code string) {
	if u == nil || u.ended {
		return
	}
	u.ended = true
	u.endUpstreamSpan(code)
	d := time.Since(u.start)
	u.m.ObserveUpstream(u.name, code, d)
	if u.obs != nil {
		u.obs.upstream += d
	}
}

// doneStatus records the call with the status the upstream answered.
func (u *upstreamCall) doneStatus() {
	if u != nil {
		u.done(metrics.StatusCode(u.status))
	}
}

// doneErr records a call whose body could not be read: the request's
// context ended (canceled), the provider's deadline passed (timeout), or
// the read failed (error).
func (u *upstreamCall) doneErr(ctx context.Context, err error) {
	switch {
	case ctx.Err() != nil:
		u.done(metrics.UpstreamCanceled)
	case errors.Is(err, context.DeadlineExceeded):
		u.done(metrics.UpstreamTimeout)
	default:
		u.done(metrics.UpstreamError)
	}
}

// instrumentSinks wraps each configured sink of built (a single sink or a
// records.Fanout in configuration order) to count its writes.
func instrumentSinks(m *metrics.Metrics, cfg []config.Sink, built enforcement.RecordSink) enforcement.RecordSink {
	labels := sinkLabels(cfg)
	switch b := built.(type) {
	case records.Fanout:
		if len(b) != len(labels) {
			return built
		}
		out := make(records.Fanout, len(b))
		for i, s := range b {
			out[i] = m.InstrumentSink(labels[i], s)
		}
		return out
	case nil:
		return nil
	default:
		if len(labels) != 1 {
			return built
		}
		return m.InstrumentSink(labels[0], built)
	}
}

// sinkLabels names sinks by type, adding "#<index>" to types configured
// more than once ("jsonl#1", "jsonl#2").
func sinkLabels(cfg []config.Sink) []string {
	count := map[string]int{}
	for _, s := range cfg {
		count[s.Type]++
	}
	out := make([]string, len(cfg))
	for i, s := range cfg {
		out[i] = s.Type
		if count[s.Type] > 1 {
			out[i] += "#" + strconv.Itoa(i)
		}
	}
	return out
}
