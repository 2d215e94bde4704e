package proxy

import (
	"context"
	"errors"
	"fmt"
	"github.com/hooks-gateway/hooks-gateway/internal/sessioncache"
	"io"
	"log/slog"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/interceptors"
	chatwire "github.com/hooks-gateway/hooks-gateway/internal/wire/chat"
	"github.com/hooks-gateway/hooks-gateway/metrics"
	policyfile "github.com/hooks-gateway/hooks-gateway/policy"
	"github.com/hooks-gateway/hooks-gateway/providers"
	"github.com/hooks-gateway/hooks-gateway/records"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// Assembly is a server built from configuration, with what it owns.
type Assembly struct {
	Server *Server
	Store  sessions.Store
	// Reloader reloads the policy from its files (watch, SIGHUP, admin).
	Reloader *Reloader
	// Approvals is the approval seam; rebuild policies with its
	// PolicyOption so they share the queue.
	Approvals *ApprovalSeam
	closers   []io.Closer
}

// Close releases the store and the record sinks.
func (a *Assembly) Close() error {
	var errs []error
	for _, c := range a.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// ServerOption adjusts the server options Build derives from the
// configuration, for what the configuration cannot carry (a tracer).
type ServerOption func(*Options)

// WithTracer sets Options.Tracer.
func WithTracer(t trace.Tracer) ServerOption {
	return func(o *Options) { o.Tracer = t }
}

// Build assembles a server from cfg: upstream router, interceptor chain,
// identity provider, record sinks and the session store. stdout receives
// stdout record sinks.
func Build(ctx context.Context, cfg *config.Config, stdout io.Writer, logger *slog.Logger, sopts ...ServerOption) (*Assembly, error) {
	a := &Assembly{}
	sink, markers, err := buildSinks(cfg.Records, stdout, logger, a)
	if err != nil {
		a.Close()
		return nil, err
	}
	m := metrics.New(metrics.Options{})
	sink = instrumentSinks(m, cfg.Records.Sinks, sink)
	if a.Approvals, err = a.buildApprovals(cfg); err != nil {
		a.Close()
		return nil, err
	}
	store, err := buildStore(ctx, cfg.Sessions)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.Store = store
	a.closers = append(a.closers, store)
	// Reloads compile exactly as the first load does: same sink, observer
	// and interceptor environment.
	env := interceptorEnv(cfg, store, logger)
	load := func() (*Source, error) {
		doc, err := policyfile.FromConfig(cfg)
		if err != nil {
			return nil, err
		}
		auth, err := cfg.Auth.ReloadKeys()
		if err != nil {
			return nil, err
		}
		return &Source{Doc: doc, Auth: auth}, nil
	}
	compile := func(src *Source) (*Policy, error) {
		c := *cfg
		c.Auth = src.Auth
		return CompilePolicy(&c, src.Doc, sink, env, WithObserver(m), a.Approvals.PolicyOption())
	}
	src, err := load()
	if err != nil {
		a.Close()
		return nil, err
	}
	pol, err := compile(src)
	if err != nil {
		a.Close()
		return nil, err
	}
	mark := func(ctx context.Context, p *Policy) {
		markPolicy(context.WithoutCancel(ctx), markers, p.Version, logger)
	}
	mark(ctx, pol)
	surfaces, err := Surfaces(cfg)
	if err != nil {
		a.Close()
		return nil, err
	}
	if cfg.Seal.Ephemeral() {
		logger.Warn("no seal.keys configured: opaque provider blobs (encrypted reasoning, thinking signatures, item ids) are sealed under a key of this process only; conversations that carry them do not survive a restart or move to another replica")
	}
	mcpSeal, err := cfg.Seal.Keyring()
	if err != nil {
		a.Close()
		return nil, err
	}
	opts := Options{
		MCPSeal:              mcpSeal,
		Policy:               pol,
		Store:                store,
		MaxRequestBytes:      cfg.Limits.MaxRequestBytes,
		MaxResponseBytes:     cfg.Limits.MaxResponseBytes,
		StreamBufferLimit:    cfg.Streaming.BufferLimit,
		BufferBudget:         cfg.Limits.BufferBudget,
		MaxInputMessages:     int(cfg.Limits.MaxInputMessages),
		KeepAlive:            cfg.Streaming.KeepAlive,
		Streaming:            cfg.Streaming,
		SweepInterval:        cfg.Sessions.SweepInterval,
		EndWait:              cfg.Sessions.EndWait,
		CallLease:            cfg.Sessions.CallLease,
		StartupWait:          cfg.Sessions.StartupWait,
		Logger:               logger,
		Metrics:              m,
		AdminToken:           cfg.Auth.AdminToken,
		AdminOnMain:          cfg.Listeners.Admin == "",
		AdminAddr:            cfg.Listeners.Admin,
		Approvals:            a.Approvals.Queue,
		Surfaces:             surfaces,
		MaxRequests:          cfg.Server.MaxRequests,
		MaxRequestsPerClient: cfg.Server.ClientCap(),
		NativeSessions:       !cfg.Sessions.IgnoreNativeIDs,
		DenyReplayWindow:     cfg.Sessions.DenyReplayWindow,
		SessionCache:         sessioncache.NewStore(cfg.Sessions.CacheBytes),
	}
	for _, o := range sopts {
		o(&opts)
	}
	a.Server = New(opts)
	a.Reloader = NewReloader(a.Server, load, compile, logger)
	a.Reloader.onSwap = mark
	return a, nil
}

// BuildPolicy builds the request-facing policy: router, emitters,
// principals, from the policy cfg names (its policy files, or its inline
// interceptors). env is what the interceptors may use; popts adjust the
// emitters (WithObserver).
func BuildPolicy(cfg *config.Config, sink enforcement.RecordSink, env interceptors.Env, popts ...PolicyOption) (*Policy, error) {
	doc, err := policyfile.FromConfig(cfg)
	if err != nil {
		return nil, err
	}
	return CompilePolicy(cfg, doc, sink, env, popts...)
}

// CompilePolicy builds the request-facing policy of doc, a policy loaded
// for cfg: everything is built and checked before it returns, so a policy
// it returns can be swapped in whole.
func CompilePolicy(cfg *config.Config, doc *policyfile.Document, sink enforcement.RecordSink, env interceptors.Env, popts ...PolicyOption) (*Policy, error) {
	router, err := buildRouter(cfg.Upstreams)
	if err != nil {
		return nil, err
	}
	opts, err := doc.Enforcement.EngineOptions()
	if err != nil {
		return nil, err
	}
	opts.Sink = records.Attributed(sink, records.Attribution{PolicyVersion: doc.Version})
	// The gateway only reads what it projects of a request and what the
	// emissions give back: interceptors may share its unchanged parts.
	opts.FrozenContexts = true
	opts.TargetValidators = map[enforcement.Point]enforcement.TargetValidator{
		enforcement.PreModelCall: chatwire.ValidateMessages,
	}
	regs, err := interceptors.BuildAll(doc.Interceptors, env)
	if err != nil {
		return nil, err
	}
	opts.Interceptors = regs
	for _, o := range popts {
		o(&opts)
	}
	em, err := enforcement.NewEmitter(opts)
	if err != nil {
		return nil, fmt.Errorf("enforcement: %w", err)
	}
	routes, err := buildRoutes(cfg, doc, opts, sink, regs)
	if err != nil {
		return nil, err
	}
	pol := &Policy{Emitter: em, Router: router, Version: doc.Version, Sources: doc.Sources, Routes: routes,
		ContextExtensions: policyExtensions(doc.Version, ""), MCP: buildMCP(cfg.MCP)}
	pol.apiExtensions = surfaceExtensions(pol)
	pol.extensionsOnlyMembers = map[string]any{"extensions": pol.ContextExtensions}
	pol.RequireKeys, pol.KeysVersion = cfg.Auth.RequiresKeys(), cfg.Auth.Version()
	pol.Principals, pol.revokedKeys = principals(cfg.Auth.Keys())
	return pol, nil
}

// interceptorEnv lends the interceptors the session store's counters (for
// budgets, when the store keeps them), the logger and the engine's timeout.
func interceptorEnv(cfg *config.Config, store sessions.Store, logger *slog.Logger) interceptors.Env {
	env := interceptors.Env{Logger: logger, InterceptorTimeout: cfg.Enforcement.InterceptorTimeout}
	if c, ok := store.(interceptors.Counters); ok {
		env.Counters = c
	}
	return env
}

func buildRouter(ups []config.Upstream) (*providers.Router, error) {
	routes := make([]providers.Route, 0, len(ups))
	for _, u := range ups {
		var up providers.Upstream
		var err error
		switch u.Type {
		case "openai":
			up, err = providers.NewOpenAI(providers.OpenAIConfig{
				Name: u.Name, BaseURL: u.BaseURL, APIKey: u.APIKey, PassClientKey: u.PassClientKey,
				Timeout: u.Timeout, ConnectTimeout: u.ConnectTimeout, Models: u.Models,
			})
		case "azure-openai":
			up, err = providers.NewAzure(providers.AzureConfig{
				Name: u.Name, Endpoint: u.BaseURL, APIKey: u.APIKey, APIVersion: u.APIVersion,
				Deployments: u.Deployments, Timeout: u.Timeout, ConnectTimeout: u.ConnectTimeout, Models: u.Models,
			})
		case config.TypeAnthropic:
			up, err = providers.NewAnthropic(providers.AnthropicConfig{
				Name: u.Name, BaseURL: u.BaseURL, APIKey: u.APIKey, Version: u.AnthropicVersion, PassClientKey: u.PassClientKey,
				Timeout: u.Timeout, ConnectTimeout: u.ConnectTimeout, Models: u.Models,
			})
		case "mock":
			// The mock lists the literal names among its globs; with none
			// (the default's ["*"]) it lists its own name, "mock", so
			// GET /v1/models never comes back empty.
			models := u.Models
			if !slices.ContainsFunc(models, func(p string) bool { return !strings.ContainsAny(p, `*?[\`) }) {
				models = nil
			}
			up = providers.NewMock(u.Name, models)
		default:
			err = fmt.Errorf("unknown upstream type %q", u.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("upstream %s: %w", u.Name, err)
		}
		patterns := u.Models
		if len(patterns) == 0 {
			patterns = []string{"*"}
		}
		routes = append(routes, providers.Route{Patterns: patterns, Upstream: up})
	}
	return providers.NewRouter(routes)
}

// buildSinks builds the configured record sinks, registering the closers
// of those that own resources on a. It returns the single sink, or a
// records.Fanout in configuration order (instrumentSinks relies on both),
// and the sinks as policy markers.
func buildSinks(rc config.Records, stdout io.Writer, logger *slog.Logger, a *Assembly) (enforcement.RecordSink, []records.PolicyMarker, error) {
	var fan records.Fanout
	var markers []records.PolicyMarker
	framing := records.Framing{Format: records.Format(rc.Format), Markers: rc.PolicyMarkers}
	for i, s := range rc.Sinks {
		var sink enforcement.RecordSink
		var closer io.Closer
		switch s.Type {
		case config.SinkStdout:
			w := records.NewFramedWriter(stdout, framing)
			sink, closer = w, w // closing flushes; stdout stays open
		case config.SinkJSONL:
			w, err := records.OpenJSONL(s.Path, records.JSONLOptions{MaxBytes: s.MaxBytes, MaxFiles: s.MaxFiles, Framing: framing})
			if err != nil {
				return nil, nil, err
			}
			sink, closer = w, w
		case config.SinkRedisStream:
			rs, err := records.NewRedisStream(records.RedisStreamOptions{
				URL: s.RedisURL, Stream: s.Stream, MaxLen: s.MaxLen, Timeout: s.Timeout, Framing: framing,
			})
			if err != nil {
				return nil, nil, fmt.Errorf("records.sinks[%d]: %w", i, err)
			}
			sink, closer = rs, rs
		case config.SinkHTTP:
			hs, err := records.NewHTTP(records.HTTPOptions{
				URL: s.URL, Token: s.Token, MaxBatch: s.MaxBatch, FlushInterval: s.FlushInterval, Queue: s.Queue,
				MaxAttempts: s.MaxAttempts, Timeout: s.Timeout, CloseTimeout: s.CloseTimeout,
				Logger: sinkLogger(logger, i), Framing: framing,
			})
			if err != nil {
				return nil, nil, fmt.Errorf("records.sinks[%d]: %w", i, err)
			}
			sink, closer = hs, hs
		default:
			return nil, nil, fmt.Errorf("unknown record sink %q", s.Type)
		}
		a.closers = append(a.closers, closer)
		fan = append(fan, sink)
		if m, ok := sink.(records.PolicyMarker); ok {
			markers = append(markers, m)
		}
	}
	if len(fan) == 1 {
		return fan[0], markers, nil
	}
	return fan, markers, nil
}

// markPolicy has every sink mark version as the policy in effect. A sink
// that fails is logged: its next record carries the marker again.
func markPolicy(ctx context.Context, markers []records.PolicyMarker, version string, logger *slog.Logger) {
	for _, m := range markers {
		if err := m.MarkPolicy(ctx, version); err != nil && logger != nil {
			logger.Warn("records: policy marker not written; the next record retries it", "policy_version", version, "error", err.Error())
		}
	}
}

// sinkLogger names sink i on logger's lines; nil stays nil (discard).
func sinkLogger(logger *slog.Logger, i int) *slog.Logger {
	if logger == nil {
		return nil
	}
	return logger.With("sink", fmt.Sprintf("records.sinks[%d]", i))
}

func buildStore(ctx context.Context, sc config.Sessions) (sessions.Store, error) {
	opts := sessions.Options{IdleTimeout: sc.IdleTimeout, Retention: sc.Retention}
	switch sc.Store {
	case "", "memory":
		return sessions.NewMemory(opts), nil
	case "redis":
		ro := sessions.RedisOptions{URL: sc.RedisURL, Cluster: sc.RedisCluster, KeyPrefix: sc.KeyPrefix, Options: opts}
		if rs := sc.RedisSentinel; rs != nil {
			ro.Sentinel = &sessions.Sentinel{Master: rs.Master, Addrs: rs.Addrs}
		}
		return sessions.NewRedis(ctx, ro)
	}
	return nil, fmt.Errorf("unknown session store %q", sc.Store)
}
