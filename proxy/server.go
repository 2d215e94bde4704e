// Package proxy is hooks-gateway's HTTP surface: a reverse proxy for the
// model APIs agents speak (OpenAI Chat Completions and Responses,
// Anthropic Messages; one pipeline, the formats in internal/wire) that
// turns every model call into AGENT-HOOKS
// emissions (agent_startup, input, pre_model_call, post_model_call,
// output, agent_shutdown), enforces the combined verdicts (rewriting the
// upstream request, the response and its tool-call arguments, buffering
// streams until the verdict) and fails closed on every error in the
// enforcement path.
package proxy

import (
	"context"
	"github.com/hooks-gateway/hooks-gateway/internal/sessioncache"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/hooks-gateway/hooks-gateway/approvals"
	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/membudget"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	chatwire "github.com/hooks-gateway/hooks-gateway/internal/wire/chat"
	"github.com/hooks-gateway/hooks-gateway/metrics"
	"github.com/hooks-gateway/hooks-gateway/providers"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// Framework is agent.framework on every context the gateway builds.
const Framework = "hooks-gateway"

// Request and response headers (stable names).
const (
	HeaderSession    = "Agent-Hooks-Session"
	HeaderAgent      = "Agent-Hooks-Agent"
	HeaderTurnPoints = "Agent-Hooks-Turn-Points"
	HeaderDecision   = "Agent-Hooks-Decision"
	HeaderMode       = "Agent-Hooks-Mode"
)

// Policy is everything a request is evaluated against. The server swaps it
// atomically, so a reload never affects a request in flight.
type Policy struct {
	Emitter *enforcement.Emitter
	Router  *providers.Router
	// Principals maps the SHA-256 of each usable client key to its
	// identity (see authenticate).
	Principals map[KeyHash]Principal
	// RequireKeys makes every client request carry a key (auth.mode
	// keys), even when no key is usable: with Principals empty too, every
	// request is refused. Without it, a non-empty Principals still
	// requires keys.
	RequireKeys bool
	// KeysVersion identifies the key set the policy was built with, so a
	// reload can tell whether only the keys changed.
	KeysVersion string
	// revokedKeys names revoked keys by hash, for the log line of a
	// refusal.
	revokedKeys map[KeyHash]string
	// Version names the policy in logs, records and responses.
	Version string
	// Sources are the files the policy was read from.
	Sources []string
	// Routes select another emitter per request (EmitterFor); Emitter is
	// the default chain's.
	Routes []PolicyRoute
	// MCP are the MCP servers served at /mcp/{server}; nil serves none.
	MCP *mcpRoutes
	// ContextExtensions, when set, is the "extensions" member of the
	// contexts the gateway builds for model calls (extensions take no
	// part in context identity). Read-only.
	ContextExtensions map[string]any
	// apiExtensions is each model-call surface's extensions member, built
	// from ContextExtensions when the policy is compiled (see
	// contextExtensionsFor); nil builds them per call.
	apiExtensions *[modelCallSurfaces]map[string]any
	// extensionsOnlyMembers is {"extensions": ContextExtensions}, built when
	// the policy is compiled (see extensionsOnly); nil builds it per call.
	extensionsOnlyMembers map[string]any
}

// Options configures a Server.
type Options struct {
	Policy *Policy
	// Store keeps managed sessions (Agent-Hooks-Session).
	Store sessions.Store
	// MaxRequestBytes bounds request bodies (413 beyond); default 10 MiB.
	MaxRequestBytes int64
	// MaxResponseBytes bounds non-streamed upstream bodies; default 8 MiB,
	// the stream buffer's default.
	MaxResponseBytes int64
	// StreamBufferLimit bounds a buffered upstream stream; default 8 MiB.
	StreamBufferLimit int64
	// BufferBudget bounds the upstream bytes all in-flight model calls
	// buffer at once (limits.buffer_budget); 0 derives it from the
	// container's memory limit (membudget.DefaultLimit). It is never
	// less than the largest single response the limits above accept.
	BufferBudget int64
	// MaxInputMessages bounds the trailing user messages of a request,
	// each an input emission (limits.max_input_messages); default 100.
	MaxInputMessages int
	// KeepAlive, when positive, sends SSE comments while a stream is being
	// buffered, committing the 200 status early (a deny then arrives as one
	// SSE error event).
	KeepAlive time.Duration
	// Streaming selects incremental mediation per surface and closes its
	// segments (streaming.mode, streaming.surfaces, streaming.segment); a
	// policy route's streaming overrides the mode. The zero value buffers
	// every stream.
	Streaming config.Streaming
	// DefaultAgentID is agent.id when neither a principal nor the
	// Agent-Hooks-Agent header names the agent; default "agent".
	DefaultAgentID string
	// SweepInterval is how often idle managed sessions are ended; default 30s.
	SweepInterval time.Duration
	// EndWait bounds how long ending a managed session waits for its model
	// calls in flight; calls still running then have their answers
	// withheld. Default 30s.
	EndWait time.Duration
	// CallLease is the longest a model call holds its managed session open
	// against idle expiry (a replica that dies mid-call releases it no
	// later than that); default 15m.
	CallLease time.Duration
	// StartupWait bounds how long a request of a managed session waits for
	// the agent_startup verdict another request is getting; default 30s.
	StartupWait time.Duration
	Logger      *slog.Logger
	// Metrics is served on GET /metrics; nil builds a fresh one. The
	// policy's emitter reports engine metrics only when it was built with
	// it as its observer (see WithObserver).
	Metrics *metrics.Metrics
	// AdminToken guards the admin endpoints (see AdminHandler). With
	// AdminOnMain they are also served under /admin on the main handler,
	// and only when a token is set: the main listener faces clients.
	AdminToken  string
	AdminOnMain bool
	// Approvals, when set, is the approval queue the admin endpoints and
	// page serve (see ApprovalSeam).
	Approvals *approvals.Queue
	// Tracer, when set (and not a no-op tracer), opens a server span per
	// chat and emit request, a child span per emission and per upstream
	// call, and injects W3C trace context upstream; nil is no tracing.
	Tracer trace.Tracer
	// Counters count the client keys' rate limits; nil takes them from
	// Store when it keeps counters (both built-in stores do).
	Counters rateCounters
	// AdminAddr is the address the admin handler is served on
	// (listeners.admin); without AdminToken, requests must name it, or
	// localhost, 127.0.0.1 or [::1] with its port, as their Host.
	AdminAddr string
	// MaxRequests caps the requests handled at once (probes not counted):
	// beyond it a request is answered 503 with Retry-After at once. 0 is
	// no cap.
	MaxRequests int
	// NativeSessions makes a request without Agent-Hooks-Session whose
	// agent names its run (nativeSessionHeaders) a call of the managed
	// session that id names, so one agent run is one session; routes may
	// say otherwise (native_sessions).
	NativeSessions bool
	// DenyReplayWindow is how long a managed session answers a request
	// identical to its last policy deny with that deny again, without an
	// emission or an upstream call; 0 turns it off.
	DenyReplayWindow time.Duration
	// Now stamps the contexts the gateway builds (nil: time.Now): tests
	// fix it to compare two runs record by record.
	Now func() time.Time
	// SessionCache keeps what managed sessions' requests were parsed and
	// judged into, for their next requests (nil: off).
	SessionCache *sessioncache.Store
	// MaxRequestsPerClient caps the requests one client (its key, or its
	// remote address without keys) holds at once, within MaxRequests; 0 is
	// no per-client cap.
	MaxRequestsPerClient int
	// Surfaces are the API surfaces served, each on its model-call route
	// (see surfacePath); nil serves chat completions with the standard
	// members only. Build makes them from the wire configuration.
	Surfaces []wire.Surface
	// MCPSeal seals the MCP session ids servers issue before clients hold
	// them; nil seals under a key of this process.
	MCPSeal *seal.Keyring
}

// Server is the gateway's HTTP handler and its background session sweeper.
type Server struct {
	policy atomic.Pointer[Policy]
	opts   Options
	log    *slog.Logger
	mux    http.Handler

	metrics *metrics.Metrics
	// reloader serves POST /admin/reload and the policy status; nil until
	// NewReloader attaches one.
	reloader atomic.Pointer[Reloader]
	// tracer is nil when tracing is off.
	tracer trace.Tracer
	// budget bounds the upstream bytes buffered across model calls.
	budget *membudget.Budget
	// inFlight counts the requests admit let through (probes not counted).
	inFlight atomic.Int64
	// denies remembers each managed session's last policy deny.
	denies denyMemory
	// localStore is the session store when its sessions end with this
	// process (memory), else nil.
	localStore openClaimer
	// clientSlots counts each client's requests in flight.
	clientSlots clientSlots
	// schemas check emitted contexts (the emit API only).
	schemas contextSchemas
	// stamps is shared by every request's builder: a timestamp is
	// formatted once per millisecond, not once per request.
	stamps enforcement.Stamps
	// agents is shared by the model calls' builders: their agent members
	// are built once per agent, not once per request.
	agents enforcement.AgentMembers
}

// New builds a server.
func New(opts Options) *Server {
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = 10 << 20
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = 8 << 20
	}
	if opts.StreamBufferLimit <= 0 {
		opts.StreamBufferLimit = 8 << 20
	}
	if opts.BufferBudget <= 0 {
		opts.BufferBudget, _ = membudget.DefaultLimit(os.DirFS("/"))
	}
	opts.BufferBudget = max(opts.BufferBudget, opts.MaxResponseBytes, opts.StreamBufferLimit)
	if opts.MaxInputMessages <= 0 {
		opts.MaxInputMessages = config.DefaultMaxInputMessages
	}
	if opts.DefaultAgentID == "" {
		opts.DefaultAgentID = "agent"
	}
	if opts.SweepInterval <= 0 {
		opts.SweepInterval = 30 * time.Second
	}
	if opts.EndWait <= 0 {
		opts.EndWait = 30 * time.Second
	}
	if opts.CallLease <= 0 {
		opts.CallLease = 15 * time.Minute
	}
	if opts.StartupWait <= 0 {
		opts.StartupWait = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MCPSeal == nil {
		opts.MCPSeal = seal.Ephemeral()
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New(metrics.Options{})
	}
	if c, ok := opts.Store.(rateCounters); ok && opts.Counters == nil {
		opts.Counters = c
	}
	local, _ := opts.Store.(openClaimer)
	opts.Store = opts.Metrics.InstrumentStore(opts.Store)
	if opts.Surfaces == nil {
		opts.Surfaces = []wire.Surface{chatwire.New(chatwire.Options{MaxMessages: config.DefaultMaxMessages})}
	}
	s := &Server{opts: opts, log: opts.Logger, metrics: opts.Metrics, tracer: tracerOf(opts.Tracer),
		budget: membudget.New(opts.BufferBudget), schemas: loadContextSchemas(), localStore: local}
	s.metrics.WatchBufferBudget(s.budget.InUse, s.budget.Limit())
	s.policy.Store(opts.Policy)
	if opts.Policy != nil {
		s.metrics.PolicyLoaded(opts.Policy.Version, false)
	}
	s.mux = s.routes()
	s.metrics.ObserveRequestsInFlight(s.RequestsInFlight)
	if c := s.opts.SessionCache; c != nil {
		s.metrics.ObserveSessionCache(func() (int, int64, uint64, uint64) {
			st := c.Stats()
			return st.Sessions, st.Bytes, st.Hits, st.Misses
		})
	}
	return s
}

// SetPolicy swaps the policy; requests already running keep the old one.
// It counts a successful reload. Build p with WithObserver(s.Metrics()) so
// its emissions are counted.
func (s *Server) SetPolicy(p *Policy) {
	s.policy.Store(p)
	if p != nil {
		s.metrics.PolicyLoaded(p.Version, true)
	}
}

// Reloader returns the reloader attached by NewReloader, or nil.
func (s *Server) Reloader() *Reloader { return s.reloader.Load() }

// Policy returns the policy in effect.
func (s *Server) Policy() *Policy { return s.policy.Load() }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(s.instrument, s.admit)
	for _, surf := range s.opts.Surfaces {
		path := surfacePath(surf.API())
		r.Post(path, s.traced("POST "+path, s.handleModelCall(surf)))
		if tc, ok := surf.(tokenCounter); ok {
			r.Post(path+"/count_tokens", s.traced("POST "+path+"/count_tokens", s.handleCountTokens(surf, tc)))
		}
	}
	r.Get("/v1/models", s.handleModels)
	r.Post("/mcp/{server}", s.traced("POST /mcp/{server}", s.handleMCP))
	r.Get("/mcp/{server}", s.handleMCPGet)
	r.Delete("/mcp/{server}", s.handleMCPDelete)
	r.Post("/v1/agent-hooks/emit", s.traced("POST /v1/agent-hooks/emit", s.handleEmit))
	r.Post("/v1/agent-hooks/sessions/{id}/end", s.handleEndSession)
	r.Get("/healthz", s.handleHealth)
	r.Get("/readyz", s.handleReady)
	r.Method(http.MethodGet, "/metrics", s.metrics.Handler())
	if s.opts.AdminOnMain && s.opts.AdminToken != "" {
		r.Mount("/admin", s.adminRoutes())
	}
	// Clients probe the base URL before their first call (Claude Code
	// sends HEAD /); the answer carries nothing.
	r.Head("/", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	s.refuseStoredState(r)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.log.Info("no route", "method", r.Method, "path", loggablePath(r.URL.Path))
		writeError(w, errorf(http.StatusNotFound, typeNotFound, "not_found", "no route for %s %s", r.Method, loggablePath(r.URL.Path)))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(http.StatusMethodNotAllowed, typeInvalid, "method_not_allowed", "%s is not allowed on %s", r.Method, r.URL.Path))
	})
	return r
}

// RunSweeper ends idle managed sessions until ctx is done: each expired
// session is claimed by exactly one replica, which emits its agent_shutdown
// (reason cancelled; error for a session denied at agent_startup).
func (s *Server) RunSweeper(ctx context.Context) {
	t := time.NewTicker(s.opts.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sweep(ctx)
		}
	}
}

// openClaimer is a store whose sessions end with the process (the memory
// store): EndOpenSessions claims them all.
type openClaimer interface {
	ClaimOpen(ctx context.Context, max int) ([]sessions.Expired, error)
}

// EndOpenSessions ends every managed session a store local to this process
// holds, each with its agent_shutdown (reason cancelled; error for a
// session denied at agent_startup), so no trail stays open when the
// process stops. Call it once the listeners have drained. Sessions in a
// shared store (Redis) live on with the other replicas and are left alone.
// It returns how many sessions it ended.
func (s *Server) EndOpenSessions(ctx context.Context) int {
	oc := s.localStore
	if oc == nil {
		return 0
	}
	var n int
	for {
		open, err := oc.ClaimOpen(ctx, 100)
		if err != nil {
			s.log.Warn("could not end the open sessions", "error", err)
			return n
		}
		for _, e := range open {
			reason := enforcement.ShutdownCancelled
			if e.Blocked {
				reason = enforcement.ShutdownError // spec §6.1a
			}
			s.shutdownManaged(ctx, e.Key, e.Owner, e.Incarnation, reason)
		}
		n += len(open)
		if len(open) < 100 {
			return n
		}
	}
}

func (s *Server) sweep(ctx context.Context) {
	if s.opts.Store == nil {
		return
	}
	for {
		expired, err := s.opts.Store.ClaimExpired(ctx, 100)
		if err != nil {
			s.log.Warn("session sweep failed", "error", err)
			return
		}
		for _, e := range expired {
			reason := enforcement.ShutdownCancelled
			if e.Blocked {
				reason = enforcement.ShutdownError // spec §6.1a
			}
			s.shutdownManaged(ctx, e.Key, e.Owner, e.Incarnation, reason)
		}
		if len(expired) < 100 {
			return
		}
	}
}
