// Package metrics is hooks-gateway's Prometheus instrumentation: the
// engine's [enforcement.Observer] (emissions, interceptor calls), the
// gateway's HTTP, upstream and stream-buffer measurements, a counting
// decorator for the session store, record-sink wrappers and the policy's
// reload state.
//
// Every [Metrics] owns its own registry (no global registry, no
// package-level mutable state), so two gateways in one process, or two
// tests, never share a series. Label values are bounded by construction:
// interception points, decisions, modes, the reserved host_error:* reasons,
// a configured list of policy reasons, configured interceptor, upstream,
// MCP server and sink names, the gateway's known MCP methods, chi route
// patterns and HTTP status codes. Session ids, model names sent by
// clients, MCP tool names and arguments, and free text never become
// labels.
//
// # Metrics
//
// Engine (AGENT-HOOKS):
//
//	agent_hooks_emissions_total{point, decision, reason_class, mode}          counter
//	agent_hooks_emission_duration_seconds{point}                              histogram
//	agent_hooks_interceptor_verdicts_total{interceptor, point, decision}      counter
//	agent_hooks_interceptor_duration_seconds{interceptor, point}              histogram
//	agent_hooks_interceptor_failures_total{interceptor, reason}               counter
//	agent_hooks_transforms_applied_total{point}                               counter
//	agent_hooks_fold_truncated_total                                          counter
//	agent_hooks_approvals_total{outcome}                                      counter
//	agent_hooks_records_total{sink, result}                                   counter
//	agent_hooks_records_dropped_total{sink}                                   counter
//	agent_hooks_sessions_active                                               gauge
//	agent_hooks_policy_reloads_total{result}                                  counter
//	agent_hooks_policy_info{version}                                          gauge
//
// Gateway:
//
//	hooks_gateway_requests_total{route, api, code}                            counter
//	hooks_gateway_request_duration_seconds{route, stream}                     histogram
//	hooks_gateway_overhead_seconds{route}                                     histogram
//	hooks_gateway_upstream_requests_total{upstream, code}                     counter
//	hooks_gateway_upstream_duration_seconds{upstream}                         histogram
//	hooks_gateway_stream_buffer_bytes                                         histogram
//	hooks_gateway_stream_buffer_overflows_total                               counter
//	hooks_gateway_stream_first_byte_seconds{api, mode}                        histogram
//	hooks_gateway_stream_segments_total{api}                                  counter
//	hooks_gateway_buffer_budget_bytes                                         gauge
//	hooks_gateway_buffer_budget_limit_bytes                                   gauge
//	hooks_gateway_buffer_budget_refusals_total{stage}                         counter
//	hooks_gateway_session_store_errors_total{op}                              counter
//	hooks_gateway_internal_errors_total{api, stage}                           counter
//	hooks_gateway_overload_refusals_total{reason}                             counter
//	hooks_gateway_requests_in_flight                                          gauge
//	hooks_gateway_connections_open{pool}                                      gauge
//	hooks_gateway_mcp_requests_total{server, method, outcome}                 counter
//
// plus the Go runtime (go_*), process (process_*) and promhttp_* series.
//
// reason_class is the combined verdict's reason: the reserved host_error:*
// reason itself (host_error:other for an unreserved one, which the engine
// never produces), the reason itself when it is one of
// [Options.PolicyReasons], "policy" for any other reason, "none" when the
// verdict has no reason. Evaluate-only emissions carry mode="evaluate_only"
// and never blocked anything, so the enforced deny rate is
//
//	sum(rate(agent_hooks_emissions_total{decision="deny",mode="enforce"}[5m]))
//	  / sum(rate(agent_hooks_emissions_total[5m]))
//
// and the would-have-denied rate of a shadow policy is the same with
// mode="evaluate_only".
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Options configures a Metrics.
type Options struct {
	// PolicyReasons are interceptor reasons (not host_error:*) kept as their
	// own reason_class value; every other policy reason is counted as
	// "policy". Keep the list short and payload-free: each entry multiplies
	// the emissions series.
	PolicyReasons []string
	// NoRuntimeCollectors leaves out the Go runtime and process collectors
	// (tests that compare whole expositions).
	NoRuntimeCollectors bool
}

// Label values that are not taken from the traffic.
const (
	ReasonNone      = "none"
	ReasonPolicy    = "policy"
	ReasonHostOther = "host_error:other"
	unknownLabel    = "unknown"
)

// Metrics is one gateway's instrumentation and its registry. It implements
// [enforcement.Observer]; all methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	// Engine.
	emissions          *prometheus.CounterVec
	emissionDuration   *prometheus.HistogramVec
	interceptorVerdict *prometheus.CounterVec
	interceptorDur     *prometheus.HistogramVec
	interceptorFail    *prometheus.CounterVec
	transforms         *prometheus.CounterVec
	foldTruncated      prometheus.Counter
	approvals          *prometheus.CounterVec
	records            *prometheus.CounterVec
	recordsDropped     *droppedCollector
	policyReloads      *prometheus.CounterVec
	policyInfo         *prometheus.GaugeVec
	sessionsActive     *activeCollector

	// Gateway.
	requests         *prometheus.CounterVec
	requestDuration  *prometheus.HistogramVec
	overhead         *prometheus.HistogramVec
	upstreamRequests *prometheus.CounterVec
	upstreamDuration *prometheus.HistogramVec
	streamBuffer     prometheus.Histogram
	streamOverflows  prometheus.Counter
	streamFirstByte  *prometheus.HistogramVec
	streamSegments   *prometheus.CounterVec
	storeErrors      *prometheus.CounterVec
	internalErrors   *prometheus.CounterVec
	budgetInUse      prometheus.GaugeFunc
	budgetLimit      prometheus.Gauge
	budgetRefusals   *prometheus.CounterVec
	// budgetSource reads the bytes the watched buffer budget holds.
	budgetSource atomic.Pointer[func() int64]
	overload     *overload
	denyReplays  *denyReplays
	// requestSeries and upstreamSeries hold the series a label tuple
	// resolved to: one lookup per request instead of a vector lookup per
	// series, each hashing its label values under a lock.
	requestSeries  seriesCache[requestSeriesKey, requestSeriesSet]
	upstreamSeries seriesCache[upstreamSeriesKey, upstreamSeriesSet]
	mcpRequests    *prometheus.CounterVec
	mcpSeries      seriesCache[mcpSeriesKey, prometheus.Counter]

	labels labelSet
	// Lazily resolved children, indexed by label-value indices, so the hot
	// path is an atomic load and a method call: no label hashing, no
	// allocation.
	emissionCache  []atomic.Pointer[prometheus.Counter]
	emissionDurs   [numPoints]atomic.Pointer[prometheus.Observer]
	transformCache [numPoints]atomic.Pointer[prometheus.Counter]
	approvalCache  [2]atomic.Pointer[prometheus.Counter]

	// Interceptor series by registration index (copy on write).
	interceptors atomic.Pointer[[]*interceptorSeries]
	imu          sync.Mutex
	ibyKey       map[interceptorKey]*interceptorSeries

	policyMu      sync.Mutex
	policyVersion string
	policySet     bool
}

var _ enforcement.Observer = (*Metrics)(nil)

// New builds a Metrics with its own registry.
func New(opts Options) *Metrics {
	m := &Metrics{
		reg:    prometheus.NewRegistry(),
		labels: newLabelSet(opts.PolicyReasons),
		ibyKey: map[interceptorKey]*interceptorSeries{},
	}
	fast := latencyBuckets()
	slow := requestBuckets()
	m.emissions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_hooks_emissions_total",
		Help: "Interception records produced, by point, combined decision, reason class (the host_error:* reason, a configured policy reason, policy, or none) and mode.",
	}, []string{"point", "decision", "reason_class", "mode"})
	m.emissionDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agent_hooks_emission_duration_seconds",
		Help:    "Time one emission took in the engine (validation, identity, interceptors, composition, approval), by point. Host-projection failures, where no emission ran, are not observed.",
		Buckets: fast,
	}, []string{"point"})
	m.interceptorVerdict = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_hooks_interceptor_verdicts_total",
		Help: "Interceptor invocations by interceptor (registration name, or #<index> when unnamed), point and post-gate decision.",
	}, []string{"interceptor", "point", "decision"})
	m.interceptorDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agent_hooks_interceptor_duration_seconds",
		Help:    "Time one interceptor invocation took, its verdict gate included, by interceptor and point.",
		Buckets: fast,
	}, []string{"interceptor", "point"})
	m.interceptorFail = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_hooks_interceptor_failures_total",
		Help: "Interceptor invocations that failed, by interceptor and host_error:* reason (interceptor_timeout, interceptor_failed for errors and panics, verdict_invalid, transform_*).",
	}, []string{"interceptor", "reason"})
	m.transforms = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_hooks_transforms_applied_total",
		Help: "Enforce-mode emissions whose combined verdict is transform (the action used the transformed target), by point.",
	}, []string{"point"})
	m.foldTruncated = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "agent_hooks_fold_truncated_total",
		Help: "Records whose transform fold was truncated at a deny (fold_truncated true).",
	})
	m.approvals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_hooks_approvals_total",
		Help: "Approval-seam consultations that resolved, by outcome (approval, rejection).",
	}, []string{"outcome"})
	m.records = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_hooks_records_total",
		Help: "Records written to each configured sink, by result (ok, error).",
	}, []string{"sink", "result"})
	m.recordsDropped = newDroppedCollector()
	m.policyReloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agent_hooks_policy_reloads_total",
		Help: "Policy reloads by result (ok, error).",
	}, []string{"result"})
	m.policyInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "agent_hooks_policy_info",
		Help: "1 for the policy version in effect.",
	}, []string{"version"})
	m.sessionsActive = &activeCollector{desc: prometheus.NewDesc(
		"agent_hooks_sessions_active",
		"Managed sessions begun and not yet ended (idle ones not yet swept included), read from the session store at scrape time.",
		nil, nil)}

	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hooks_gateway_requests_total",
		Help: "HTTP requests answered, by route pattern, API surface (chat, responses, messages, mcp; none elsewhere) and status code.",
	}, []string{"route", "api", "code"})
	m.requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "hooks_gateway_request_duration_seconds",
		Help:    "Time from request to the handler's return, by route pattern and whether the chat request streamed.",
		Buckets: slow,
	}, []string{"route", "stream"})
	m.overhead = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "hooks_gateway_overhead_seconds",
		Help:    "Request time minus the upstream's time (from the upstream call until its body was fully read): what the gateway added.",
		Buckets: fast,
	}, []string{"route"})
	m.upstreamRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hooks_gateway_upstream_requests_total",
		Help: "Upstream model calls by upstream and code: the HTTP status, or error, timeout, canceled (the client went away).",
	}, []string{"upstream", "code"})
	m.upstreamDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "hooks_gateway_upstream_duration_seconds",
		Help:    "Upstream call time until its body was fully read (or the call failed), by upstream.",
		Buckets: slow,
	}, []string{"upstream"})
	m.streamBuffer = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "hooks_gateway_stream_buffer_bytes",
		Help:    "Bytes of each upstream stream buffered before its verdict (completed streams; overflows are counted apart).",
		Buckets: prometheus.ExponentialBuckets(1024, 4, 10), // 1 KiB … 256 MiB
	})
	m.streamFirstByte = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "hooks_gateway_stream_first_byte_seconds",
		Help:    "Time from a streamed request's arrival to the first event carrying data written to the client (keep-alive comments do not count), by API and streaming mode.",
		Buckets: slow,
	}, []string{"api", "mode"})
	m.streamSegments = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hooks_gateway_stream_segments_total",
		Help: "post_model_call emissions over prefixes of incrementally mediated streams, by API.",
	}, []string{"api"})
	m.streamOverflows = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hooks_gateway_stream_buffer_overflows_total",
		Help: "Upstream streams that exceeded the stream buffer limit (refused with host_error:streaming_unsupported).",
	})
	m.budgetInUse = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "hooks_gateway_buffer_budget_bytes",
		Help: "Bytes of the buffer budget (limits.buffer_budget) that in-flight responses hold now.",
	}, func() float64 {
		if f := m.budgetSource.Load(); f != nil {
			return float64((*f)())
		}
		return 0
	})
	m.budgetLimit = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "hooks_gateway_buffer_budget_limit_bytes",
		Help: "The buffer budget in bytes (limits.buffer_budget, or derived from the memory limit).",
	})
	m.budgetRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hooks_gateway_buffer_budget_refusals_total",
		Help: "Model calls refused because the buffer budget was exhausted, by stage: admission (503 before anything ran) or buffering (an admitted response that outgrew what was left).",
	}, []string{"stage"})
	m.storeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hooks_gateway_session_store_errors_total",
		Help: "Session store operations that failed (the request failed closed), by operation.",
	}, []string{"op"})

	m.internalErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hooks_gateway_internal_errors_total",
		Help: "Requests answered internal_error (a failure no part of the pipeline had an answer for: a gateway bug), by API surface (none for the emit API) and the stage the request was at (admission, an interception point, upstream, release); each is also logged.",
	}, []string{"api", "stage"})

	m.reg.MustRegister(
		m.emissions, m.emissionDuration, m.interceptorVerdict, m.interceptorDur, m.interceptorFail,
		m.transforms, m.foldTruncated, m.approvals, m.records, m.recordsDropped,
		m.policyReloads, m.policyInfo, m.sessionsActive,
		m.requests, m.requestDuration, m.overhead, m.upstreamRequests, m.upstreamDuration,
		m.streamBuffer, m.streamOverflows, m.streamFirstByte, m.streamSegments, m.storeErrors,
		m.budgetInUse, m.budgetLimit, m.budgetRefusals, m.internalErrors,
	)
	m.overload = newOverload(m.reg)
	m.mcpRequests = newMCPRequests(m.reg)
	m.denyReplays = newDenyReplays(m.reg)
	if !opts.NoRuntimeCollectors {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	for _, r := range [...]string{"ok", "error"} {
		m.policyReloads.WithLabelValues(r)
	}
	for _, stage := range [...]string{BudgetAdmission, BudgetBuffering} {
		m.budgetRefusals.WithLabelValues(stage)
	}
	for _, op := range storeOps {
		m.storeErrors.WithLabelValues(op)
	}
	m.emissionCache = make([]atomic.Pointer[prometheus.Counter], numPoints*numDecisions*numModes*len(m.labels.reasons))
	return m
}

// Registry returns the registry the metrics live in (to register more
// collectors, or to gather in tests).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		Registry:      m.reg,
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// latencyBuckets spans 10 µs to 10 s (engine, interceptors, overhead).
func latencyBuckets() []float64 {
	return []float64{
		10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6,
		.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10,
	}
}

// requestBuckets spans 5 ms to 5 min (whole requests, model calls).
func requestBuckets() []float64 {
	return []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300}
}

// PolicyLoaded records the policy version in effect (agent_hooks_policy_info
// = 1 for it, the previous version's series removed). reload counts a
// successful reload (the first policy of a server is not a reload).
func (m *Metrics) PolicyLoaded(version string, reload bool) {
	if version == "" {
		version = unknownLabel
	}
	m.policyMu.Lock()
	defer m.policyMu.Unlock()
	m.policyInfo.WithLabelValues(version).Set(1)
	if m.policySet && m.policyVersion != version {
		m.policyInfo.DeleteLabelValues(m.policyVersion)
	}
	m.policyVersion, m.policySet = version, true
	if reload {
		m.policyReloads.WithLabelValues("ok").Inc()
	}
}

// ReloadFailed counts a policy reload that was rejected (the previous
// policy stays in effect).
func (m *Metrics) ReloadFailed() { m.policyReloads.WithLabelValues("error").Inc() }

// ObserveRequest records one answered HTTP request. route is the router's
// pattern (never the raw path), api the surface of a model call ("" on
// other routes, labelled "none"), upstream the time spent in upstream
// calls.
func (m *Metrics) ObserveRequest(route, api string, code int, stream bool, d, upstream time.Duration) {
	if api == "" {
		api = "none"
	}
	key := requestSeriesKey{route: route, api: api, code: code, stream: stream}
	rs := m.requestSeries.get(key, func() requestSeriesSet {
		s := "false"
		if stream {
			s = "true"
		}
		return requestSeriesSet{
			requests: m.requests.WithLabelValues(route, api, statusLabel(code)),
			duration: m.requestDuration.WithLabelValues(route, s),
			overhead: m.overhead.WithLabelValues(route),
		}
	})
	rs.requests.Inc()
	rs.duration.Observe(d.Seconds())
	rs.overhead.Observe(max(d-upstream, 0).Seconds())
}

// requestSeriesKey is the label tuple of one request's series.
type requestSeriesKey struct {
	route, api string
	code       int
	stream     bool
}

// requestSeriesSet is the series a requestSeriesKey resolved to.
type requestSeriesSet struct {
	requests prometheus.Counter
	duration prometheus.Observer
	overhead prometheus.Observer
}

// upstreamSeriesKey is the label tuple of one upstream call's series.
type upstreamSeriesKey struct{ upstream, code string }

// upstreamSeriesSet is the series an upstreamSeriesKey resolved to.
type upstreamSeriesSet struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// Upstream result codes besides HTTP statuses.
const (
	UpstreamError    = "error"
	UpstreamTimeout  = "timeout"
	UpstreamCanceled = "canceled"
)

// ObserveUpstream records one upstream call: code is the HTTP status (see
// [StatusCode]) or UpstreamError, UpstreamTimeout, UpstreamCanceled.
func (m *Metrics) ObserveUpstream(upstream, code string, d time.Duration) {
	us := m.upstreamSeries.get(upstreamSeriesKey{upstream: upstream, code: code}, func() upstreamSeriesSet {
		return upstreamSeriesSet{
			requests: m.upstreamRequests.WithLabelValues(upstream, code),
			duration: m.upstreamDuration.WithLabelValues(upstream),
		}
	})
	us.requests.Inc()
	us.duration.Observe(d.Seconds())
}

// StatusCode is the code label of an HTTP status.
func StatusCode(status int) string { return statusLabel(status) }

func statusLabel(code int) string {
	switch code {
	case 200:
		return "200"
	case 400:
		return "400"
	case 403:
		return "403"
	case 404:
		return "404"
	case 500:
		return "500"
	case 502:
		return "502"
	case 503:
		return "503"
	case 504:
		return "504"
	}
	if code < 100 || code > 999 {
		return unknownLabel
	}
	return strconv.Itoa(code)
}

// ObserveStreamBuffer records the size of one fully buffered stream.
func (m *Metrics) ObserveStreamBuffer(n int64) { m.streamBuffer.Observe(float64(n)) }

// ObserveStreamFirstByte records the time from a streamed request's
// arrival to the first data the client received; mode is buffered or
// incremental.
func (m *Metrics) ObserveStreamFirstByte(api, mode string, d time.Duration) {
	m.streamFirstByte.WithLabelValues(api, mode).Observe(d.Seconds())
}

// StreamSegments counts the segment emissions of one incrementally
// mediated stream.
func (m *Metrics) StreamSegments(api string, n int) {
	if n > 0 {
		m.streamSegments.WithLabelValues(api).Add(float64(n))
	}
}

// InternalError counts a request answered internal_error on api at stage
// (both bounded by the caller: a surface or none, and admission, an
// interception point, upstream or release).
func (m *Metrics) InternalError(api, stage string) {
	m.internalErrors.WithLabelValues(api, stage).Inc()
}

// StreamBufferOverflow counts a stream that exceeded the buffer limit.
func (m *Metrics) StreamBufferOverflow() { m.streamOverflows.Inc() }

// The stages at which the buffer budget refuses a model call.
const (
	BudgetAdmission = "admission"
	BudgetBuffering = "buffering"
)

// WatchBufferBudget reports the buffer budget of limit bytes, whose bytes
// in use inUse returns, in hooks_gateway_buffer_budget_bytes and
// hooks_gateway_buffer_budget_limit_bytes; the last call wins.
func (m *Metrics) WatchBufferBudget(inUse func() int64, limit int64) {
	m.budgetSource.Store(&inUse)
	m.budgetLimit.Set(float64(limit))
}

// BufferBudgetRefusal counts a model call the buffer budget refused at
// stage (BudgetAdmission or BudgetBuffering).
func (m *Metrics) BufferBudgetRefusal(stage string) { m.budgetRefusals.WithLabelValues(stage).Inc() }
