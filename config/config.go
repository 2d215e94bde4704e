// Package config loads the gateway's YAML configuration.
//
// Decoding goes through yaml.Node so that every problem names its file, line
// and field ("gateway.yaml:14: upstreams[0].type: must be one of openai,
// azure-openai, anthropic, mock (got "opneai")"). Unknown keys are errors, and all
// problems of a file are collected into one *Error so the binary can refuse
// to start and list them together.
//
// Secrets never live in the file: keys are named by environment variable
// (api_key_env, key_env, admin_token_env, identity_key_env, and the record
// sinks' token_env and redis_url_env) and read at load. Client keys are
// better written as their SHA-256 (auth.api_keys[].sha256, auth.keys_file);
// a key read from key_env is hashed at load and only the hash is kept.
// HOOKS_GATEWAY_LISTEN and HOOKS_GATEWAY_REDIS_URL override
// listeners.http and sessions.redis_url for containers.
package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Upstream types.
const (
	TypeOpenAI    = "openai"
	TypeAzure     = "azure-openai"
	TypeAnthropic = "anthropic"
	TypeMock      = "mock"
)

// Session stores.
const (
	StoreMemory = "memory"
	StoreRedis  = "redis"
)

// Record sink types.
const (
	SinkStdout      = "stdout"
	SinkJSONL       = "jsonl"
	SinkRedisStream = "redis-stream"
	SinkHTTP        = "http"
)

// Record line formats (records.format).
const (
	// RecordsFormatRecord writes each record as one spec-valid line, with
	// policy marker lines between them (Records.PolicyMarkers).
	RecordsFormatRecord = "record"
	// RecordsFormatEnvelope wraps each record with its policy version and
	// route: {"record":{…},"hooks_gateway":{…}}.
	RecordsFormatEnvelope = "envelope"
)

// Defaults of the record sinks' keys, by sink type.
const (
	// DefaultSinkMaxFiles is a rotating jsonl sink's max_files.
	DefaultSinkMaxFiles = 10
	// DefaultSinkStream, DefaultSinkMaxLen and DefaultSinkRedisTimeout are
	// a redis-stream sink's stream, max_len and timeout.
	DefaultSinkStream       = "hooks-gateway:records"
	DefaultSinkMaxLen       = 1_000_000
	DefaultSinkRedisTimeout = time.Second
	// The rest are an http sink's max_batch, flush_interval, queue,
	// max_attempts, timeout and close_timeout.
	DefaultSinkMaxBatch      = 100
	DefaultSinkFlushInterval = time.Second
	DefaultSinkQueue         = 10_000
	DefaultSinkMaxAttempts   = 3
	DefaultSinkHTTPTimeout   = 5 * time.Second
	DefaultSinkCloseTimeout  = 5 * time.Second
)

// Identity provider names besides enforcement.IdentityJCSSHA256; keyed
// providers are HMACPrefix + key id.
const (
	IdentityNull = "null"
	HMACPrefix   = "hmac-sha256-"
)

// Environment variables read at load.
const (
	// EnvListen overrides listeners.http.
	EnvListen = "HOOKS_GATEWAY_LISTEN"
	// EnvRedisURL overrides sessions.redis_url. It may carry a password,
	// which the file may not.
	EnvRedisURL = "HOOKS_GATEWAY_REDIS_URL"
	// EnvOpenAIKey selects the OpenAI upstream of the embedded default.
	EnvOpenAIKey = "OPENAI_API_KEY"
	// EnvOpenAIBaseURL sets that upstream's base URL.
	EnvOpenAIBaseURL = "OPENAI_BASE_URL"
)

// Defaults applied to keys the file leaves out.
const (
	DefaultListen           = ":8080"
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultUpstreamTimeout  = 10 * time.Minute
	DefaultConnectTimeout   = 10 * time.Second
	DefaultKeyPrefix        = "hooks-gateway:"
	DefaultIdleTimeout      = 30 * time.Minute
	DefaultSweepInterval    = 30 * time.Second
	DefaultRetention        = 24 * time.Hour
	DefaultEndWait          = 30 * time.Second
	DefaultStartupWait      = 30 * time.Second
	DefaultCallLease        = 15 * time.Minute
	// DefaultDenyReplayWindow covers a client's retries of a denied
	// request (Codex's five take about 25 s).
	DefaultDenyReplayWindow = time.Minute
	// DefaultSessionCacheBytes holds a few hundred coding-agent sessions'
	// histories (an 84 KiB conversation takes about 250–280 KiB).
	DefaultSessionCacheBytes = 128 << 20
	DefaultBufferLimit       = 8 << 20
	DefaultMaxRequestBytes   = 10 << 20
	DefaultMaxResponseBytes  = DefaultBufferLimit // both wire forms are held whole until judged
	DefaultMaxMessages       = 10_000
	DefaultMaxInputMessages  = 100
)

// DefaultSource is Config.Source for the embedded default.
const DefaultSource = "embedded default"

// Config is a loaded, resolved configuration. Parse and Load return it with
// defaults filled in and secrets read from the environment.
type Config struct {
	// Source is the file path, or DefaultSource.
	Source    string
	Listeners Listeners
	Upstreams []Upstream
	// Enforcement configures the emitter.
	Enforcement Enforcement
	// Interceptors run in this order; names are unique and payload-free.
	// They are the inline policy, used when Policy.Path is empty.
	Interceptors []Interceptor
	// Policy locates a policy kept apart from this file (see package
	// policy); empty Path keeps the inline interceptors.
	Policy    PolicySource
	Sessions  Sessions
	Records   Records
	Streaming Streaming
	Auth      Auth
	Limits    Limits
	// Server bounds the connections and requests of the main listener.
	Server Server
	// Runtime tunes the Go runtime of the process (read at startup).
	Runtime Runtime
	// Tracing configures the optional OTLP span export (off by default).
	Tracing Tracing
	// Approvals configures the approval seam (no resolver by default).
	Approvals Approvals
	// Wire widens the closed world of the API surfaces (nothing extra by
	// default).
	Wire Wire
	// Seal holds the keys that seal opaque provider blobs for clients.
	Seal Seal
	// MCP configures the MCP servers served at /mcp/{name}.
	MCP MCP

	// lines maps a field path to the line it was read from; Validate uses
	// it to place problems, falling back to the nearest enclosing field.
	lines map[string]int
	// envFrom maps a field path to the environment variable that set it.
	envFrom map[string]string
}

// Listeners are the addresses the gateway serves on.
type Listeners struct {
	// HTTP is the main listener (default ":8080").
	HTTP string
	// Admin is a separate listener for admin endpoints. "" serves them on
	// the main listener, guarded by auth.admin_token_env when set.
	Admin string
	// Probes, when set, is a listener serving /healthz, /readyz and
	// /metrics only, on its own small connection cap: probes keep
	// answering while clients hold every connection of the main listener.
	Probes string
}

// Upstream is one model provider.
type Upstream struct {
	Name string
	// Type is TypeOpenAI, TypeAzure, TypeAnthropic or TypeMock.
	Type    string
	BaseURL string
	// APIKeyEnv names the variable holding the key; APIKey is its value,
	// read at load. Never print APIKey.
	APIKeyEnv string
	APIKey    string
	// PassClientKey forwards the client's own bearer token upstream.
	PassClientKey bool
	// Models are routing globs (path.Match syntax); requests go to the first
	// upstream, in file order, with a matching glob.
	Models []string
	// APIVersion and Deployments are Azure's: the api-version query value,
	// and model name → deployment name (unlisted models use their own name).
	APIVersion  string
	Deployments map[string]string
	// AnthropicVersion is Anthropic's: the anthropic-version header sent
	// when the client sends none ("" means the provider's default).
	AnthropicVersion string
	// Timeout bounds a whole upstream call, ConnectTimeout its dial.
	Timeout        time.Duration
	ConnectTimeout time.Duration
	// Line is where the upstream starts in the file (0 when not from a file).
	Line int
}

// Enforcement configures the engine.
type Enforcement struct {
	// Mode is "enforce" or "evaluate_only"; PointModes overrides it per
	// point name.
	Mode        string
	PointModes  map[string]string
	Composition Composition
	// IdentityProvider is "jcs-sha256", "null" or "hmac-sha256-<key-id>";
	// IdentityKeyEnv names the variable holding the HMAC key, IdentityKey is
	// its value.
	IdentityProvider   string
	IdentityKeyEnv     string
	IdentityKey        []byte
	InterceptorTimeout time.Duration
	MaxContextBytes    int
	MaxDepth           int
}

// Composition is the composition profile and its knobs (spec §7.2), as
// strings; see enforcement.Composition.
type Composition struct {
	Profile             string
	OnApproval          string
	OnDisagreement      string
	OnTransformConflict string
}

// Interceptor is one configured interceptor. The type's own options are
// decoded from Spec by the interceptors package (see DecodeOptions).
type Interceptor struct {
	Name string
	Type string
	// Points restricts the interceptor to these points; empty means all.
	Points []string
	// Spec is the interceptor's whole YAML mapping, name/type/points
	// included.
	Spec yaml.Node
	// File and Line locate the interceptor; Index is its position in the
	// interceptors list.
	File  string
	Line  int
	Index int
}

// RedisSentinel locates a Sentinel-managed Redis master.
type RedisSentinel struct {
	// Master is the master's name in the Sentinel configuration.
	Master string
	// Addrs are the Sentinels' host:port addresses.
	Addrs []string
}

// Sessions configures the session store.
type Sessions struct {
	// Store is StoreMemory or StoreRedis.
	Store string
	// RedisURL is a redis:// or rediss:// URL (redis store only). With
	// RedisCluster or RedisSentinel it only supplies credentials, database
	// and TLS, and may be empty.
	RedisURL string
	// RedisCluster lists seed host:port addresses of a Redis Cluster.
	RedisCluster []string
	// RedisSentinel locates a Sentinel-managed master; nil when unset.
	RedisSentinel *RedisSentinel
	KeyPrefix     string
	IdleTimeout   time.Duration
	SweepInterval time.Duration
	// Retention is how long an ended session's id stays retired (refused
	// with 409) before it may be claimed afresh.
	Retention time.Duration
	// EndWait bounds how long ending a session waits for its model calls
	// in flight before sealing it (its agent_shutdown takes the last
	// sequence number).
	EndWait time.Duration
	// StartupWait bounds how long a request of a managed session waits for
	// the agent_startup verdict another request (or replica) is getting.
	StartupWait time.Duration
	// CallLease is the longest a model call holds its session open (keeps
	// it from idle expiry); a replica that dies mid-call holds the session
	// no longer than that.
	CallLease time.Duration
	// DenyReplayWindow is how long a managed session answers a request
	// identical to its last policy deny with that deny, without an
	// emission or an upstream call (0: off).
	DenyReplayWindow time.Duration
	// IgnoreNativeIDs keeps requests without Agent-Hooks-Session in
	// per-request sessions even when their agent names its run
	// (sessions.native_ids: false).
	IgnoreNativeIDs bool
	// CacheBytes bounds, per replica, the memory of what managed sessions'
	// earlier requests were parsed and judged into, reused when the next
	// request sends the same history (0: off). See internal/sessioncache.
	CacheBytes int64
}

// PolicySource locates the policy when it lives in its own files.
type PolicySource struct {
	// Path is a policy file, or a directory whose *.yaml and *.yml files
	// are read in lexical order as one policy.
	Path string
	// Watch reloads the policy when the files change (default true when
	// Path is set).
	Watch bool
}

// Records configures where interception records go.
type Records struct {
	Sinks []Sink
	// Format is RecordsFormatRecord (default: every line a record the
	// spec's schema accepts) or RecordsFormatEnvelope (every record
	// wrapped with the policy version and route that produced it).
	Format string
	// PolicyMarkers has each sink of the record format write a policy
	// marker line whenever the policy version of the records it writes
	// changes (default true). The deprecated records.policy_version key
	// sets it.
	PolicyMarkers bool
	// policyVersion is the deprecated records.policy_version as set.
	policyVersion bool
}

// Sink is one record sink. Each type reads its own keys (Validate rejects
// the others); decoding fills the defaults of the keys its type reads.
type Sink struct {
	// Type is SinkStdout, SinkJSONL, SinkRedisStream or SinkHTTP.
	Type string

	// Path is the file a jsonl sink appends to. MaxBytes rotates it before
	// a record would take it past that size (0: never); MaxFiles is how
	// many rotated files (Path.1 … Path.N) are kept.
	Path     string
	MaxBytes int64
	MaxFiles int

	// RedisURL is a redis-stream sink's server, resolved at load: the
	// sink's redis_url, else the value of the variable RedisURLEnv names,
	// else the session store's URL (sessions.redis_url, or
	// $HOOKS_GATEWAY_REDIS_URL). Never print it: it may hold a password.
	RedisURL    string
	RedisURLEnv string
	// Stream is the stream key; MaxLen caps it with MAXLEN ~ MaxLen.
	Stream string
	MaxLen int64

	// URL receives an http sink's batches. TokenEnv names the variable
	// holding its bearer token; Token is its value, read at load. Never
	// print Token, nor URL beyond its host.
	URL      string
	TokenEnv string
	Token    string
	// MaxBatch records per POST, or whatever FlushInterval after the
	// first of them has gathered; Queue bounds the records waiting (the
	// overflow is dropped, never waited for); MaxAttempts bounds the
	// attempts per batch; CloseTimeout bounds the drain at shutdown.
	MaxBatch      int
	FlushInterval time.Duration
	Queue         int
	MaxAttempts   int
	CloseTimeout  time.Duration

	// Timeout bounds one XADD (redis-stream) or one POST attempt (http).
	Timeout time.Duration

	// sharedURL marks a RedisURL taken from the session store.
	sharedURL bool
}

// Streaming configures SSE handling.
type Streaming struct {
	// BufferLimit bounds a buffered stream in bytes.
	BufferLimit int64
	// KeepAlive is the interval of SSE comments while buffering; 0 is off.
	KeepAlive time.Duration
	// Mode is how streamed answers are mediated by default:
	// StreamingBuffered (whole, before the first byte) or
	// StreamingIncremental (segment by segment, §12.1 exception).
	Mode string
	// Surfaces overrides Mode per API surface ("" keeps Mode). A policy
	// route's streaming overrides both.
	Surfaces StreamingSurfaces
	// Segment closes the segments of incremental mediation.
	Segment Segment
}

// Streaming modes.
const (
	StreamingBuffered    = "buffered"
	StreamingIncremental = "incremental"
)

// StreamingSurfaces holds a streaming mode per API surface.
type StreamingSurfaces struct {
	ChatCompletions string
	Responses       string
	Messages        string
}

// Segment decides when incremental mediation judges the text waiting. The
// first segment closes at the first text (First); a later one when Bytes of new
// text wait, at a sentence end (SentenceEnd), or when the oldest waiting
// byte has waited Interval (checked as events arrive). Past MaxSegments
// the rest of the answer is judged whole.
type Segment struct {
	Bytes       int64
	Interval    time.Duration
	SentenceEnd bool
	MaxSegments int64
	// First is when the first text is judged: SegmentFirstArrival (at
	// once) or SegmentFirstBoundary (like every later segment).
	First string
}

// When the first segment closes.
const (
	SegmentFirstArrival  = "arrival"
	SegmentFirstBoundary = "boundary"
)

// Segment defaults.
const (
	DefaultSegmentBytes       = 512
	DefaultSegmentInterval    = 250 * time.Millisecond
	DefaultSegmentMaxSegments = 128
)

// ModeFor is the streaming mode of api (a wire.API name) before routes.
func (s Streaming) ModeFor(api string) string {
	var m string
	switch api {
	case "chat_completions":
		m = s.Surfaces.ChatCompletions
	case "responses":
		m = s.Surfaces.Responses
	case "messages":
		m = s.Surfaces.Messages
	}
	if m == "" {
		return s.Mode
	}
	return m
}

// Limits bounds request and response bodies, and what one request may
// cost.
type Limits struct {
	MaxRequestBytes int64
	// MaxResponseBytes bounds non-streaming upstream bodies.
	MaxResponseBytes int64
	// BufferBudget bounds the upstream bytes all in-flight responses
	// buffer at once; 0 derives it from the container's memory limit
	// (see membudget.DefaultLimit).
	BufferBudget int64
	// MaxMessages bounds the messages (input items) of one request.
	MaxMessages int64
	// MaxInputMessages bounds the trailing user messages of one request:
	// each is one input emission.
	MaxInputMessages int64
}

// DefaultServiceName is tracing.service_name when the file leaves it out.
const DefaultServiceName = "hooks-gateway"

// Tracing configures OpenTelemetry span export over OTLP/HTTP.
type Tracing struct {
	// OTLPEndpoint is the collector's base URL, such as
	// http://otel-collector:4318; spans go to its /v1/traces. "" (the
	// default) turns tracing off. An http:// endpoint is used without TLS.
	OTLPEndpoint string
	// ServiceName is the service.name resource attribute.
	ServiceName string
	// SampleRatio is the share of new traces sampled, 0 to 1 (default 1);
	// a sampled parent is always followed.
	SampleRatio float64
}

// Enabled reports whether spans are exported.
func (t Tracing) Enabled() bool { return t.OTLPEndpoint != "" }

//go:embed default.yaml
var defaultYAML []byte

// Load reads and parses the file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes data (named name in problems), fills defaults, applies the
// environment overrides, reads the secrets the file names, and validates.
// Any problem, of any phase, comes back in one *Error.
func Parse(name string, data []byte) (*Config, error) {
	c, ps := decode(name, data)
	if c == nil {
		return nil, ps.err()
	}
	c.resolveEnv(os.LookupEnv)
	c.readKeysFile(ps)
	if err := c.Validate(); err != nil {
		var verr *Error
		if !errors.As(err, &verr) {
			return nil, err
		}
		for _, p := range verr.Problems {
			if !ps.covers(p.Field) {
				ps.list = append(ps.list, p)
			}
		}
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// Default returns the embedded default configuration (config/default.yaml),
// decoded and resolved by the same code as a file. Its one upstream is
// chosen from the environment: with OPENAI_API_KEY set, an OpenAI upstream
// at OPENAI_BASE_URL (default https://api.openai.com/v1) using that key;
// otherwise the built-in mock model. Both serve every model name.
//
// Default does not validate; call Validate. The embedded file is valid (the
// tests prove it), so a problem can only stem from the environment: a bad
// HOOKS_GATEWAY_LISTEN, HOOKS_GATEWAY_REDIS_URL or OPENAI_BASE_URL. A file
// that does not decode is a build defect, and Default panics.
func Default() *Config {
	c, ps := decode(DefaultSource, defaultYAML)
	if c == nil || len(ps.list) > 0 {
		panic(fmt.Sprintf("config: the embedded default does not decode: %v", ps.err()))
	}
	c.chooseDefaultUpstream(os.LookupEnv)
	c.resolveEnv(os.LookupEnv)
	return c
}

// chooseDefaultUpstream keeps the embedded default's openai upstream when
// OPENAI_API_KEY is set, and its mock upstream otherwise. The file declares
// both so that it documents both.
func (c *Config) chooseDefaultUpstream(lookup func(string) (string, bool)) {
	want := TypeMock
	if v, ok := lookup(EnvOpenAIKey); ok && v != "" {
		want = TypeOpenAI
	}
	for i, u := range c.Upstreams {
		if u.Type != want {
			continue
		}
		field := fmt.Sprintf("upstreams[%d]", i)
		c.Upstreams = []Upstream{u}
		c.relocate(field, "upstreams[0]")
		if want == TypeOpenAI {
			if v, ok := lookup(EnvOpenAIBaseURL); ok && v != "" {
				c.Upstreams[0].BaseURL = v
				c.setFromEnv("upstreams[0].base_url", EnvOpenAIBaseURL)
			}
		}
		return
	}
	panic("config: the embedded default lacks a " + want + " upstream")
}

// relocate renames the recorded lines of field (and its subfields) to to,
// dropping every other upstreams[...] entry.
func (c *Config) relocate(from, to string) {
	moved := make(map[string]int, len(c.lines))
	for k, v := range c.lines {
		switch {
		case k == from || strings.HasPrefix(k, from+".") || strings.HasPrefix(k, from+"["):
			moved[to+k[len(from):]] = v
		case strings.HasPrefix(k, "upstreams["):
		default:
			moved[k] = v
		}
	}
	c.lines = moved
}

// resolveEnv applies the container overrides and reads the secrets the
// configuration names. Missing variables are left empty; Validate reports
// them at the line of the key that names them.
func (c *Config) resolveEnv(lookup func(string) (string, bool)) {
	if v, ok := lookup(EnvListen); ok && v != "" {
		c.Listeners.HTTP = v
		c.setFromEnv("listeners.http", EnvListen)
	}
	if v, ok := lookup(EnvRedisURL); ok && v != "" {
		c.Sessions.RedisURL = v
		c.setFromEnv("sessions.redis_url", EnvRedisURL)
	}
	get := func(name string) string {
		if name == "" {
			return ""
		}
		v, _ := lookup(name)
		return v
	}
	for i := range c.Upstreams {
		c.Upstreams[i].APIKey = get(c.Upstreams[i].APIKeyEnv)
	}
	for i := range c.Auth.APIKeys {
		c.Auth.APIKeys[i].resolveKeyEnv(get)
	}
	c.Auth.AdminToken = get(c.Auth.AdminTokenEnv)
	c.Approvals.Webhook.BearerToken = get(c.Approvals.Webhook.BearerTokenEnv)
	for i := range c.Records.Sinks {
		c.resolveSinkEnv(i, get)
	}
	c.resolveSealEnv(get)
	c.resolveMCPEnv(get)
	if k := get(c.Enforcement.IdentityKeyEnv); k != "" {
		c.Enforcement.IdentityKey = []byte(k)
	} else {
		c.Enforcement.IdentityKey = nil
	}
}

// resolveSinkEnv reads the secrets record sink i names and resolves a
// redis-stream sink's URL (see Sink.RedisURL).
func (c *Config) resolveSinkEnv(i int, get func(string) string) {
	s := &c.Records.Sinks[i]
	switch s.Type {
	case SinkHTTP:
		s.Token = get(s.TokenEnv)
	case SinkRedisStream:
		switch {
		case s.RedisURL != "":
			// From the file; naming a variable too is a problem Validate
			// reports.
		case s.RedisURLEnv != "":
			s.RedisURL = get(s.RedisURLEnv)
			c.setFromEnv(index("records.sinks", i)+".redis_url", s.RedisURLEnv)
		default:
			s.RedisURL, s.sharedURL = c.Sessions.RedisURL, true
		}
	}
}

func (c *Config) setFromEnv(field, env string) {
	if c.envFrom == nil {
		c.envFrom = make(map[string]string)
	}
	c.envFrom[field] = env
}

// yamlLine extracts the line from a go-yaml syntax error ("yaml: line 3:
// ..."), returning 0 and the message unchanged when there is none.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

func syntaxProblem(ps *problems, err error) {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		ps.add(line, "", "invalid YAML: "+msg[len(m[0]):])
		return
	}
	ps.add(0, "", "invalid YAML: "+strings.TrimPrefix(msg, "yaml: "))
}

// readDocument parses exactly one YAML document; an empty input yields nil.
func readDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("yaml: line %d: a configuration is one YAML document; found a second", extra.Line)
	}
	return &doc, nil
}

// Engine returns the composition as the engine's type.
func (c Composition) Engine() enforcement.Composition {
	return enforcement.Composition{
		Profile:             enforcement.Profile(c.Profile),
		OnApproval:          c.OnApproval,
		OnDisagreement:      c.OnDisagreement,
		OnTransformConflict: c.OnTransformConflict,
	}
}

// EngineMode returns the default mode as the engine's type.
func (e Enforcement) EngineMode() enforcement.Mode { return enforcement.Mode(e.Mode) }

// EnginePointModes returns the per-point modes as the engine's types.
func (e Enforcement) EnginePointModes() map[enforcement.Point]enforcement.Mode {
	if len(e.PointModes) == 0 {
		return nil
	}
	out := make(map[enforcement.Point]enforcement.Mode, len(e.PointModes))
	for p, m := range e.PointModes {
		out[enforcement.Point(p)] = enforcement.Mode(m)
	}
	return out
}

// Identity builds the configured identity provider.
func (e Enforcement) Identity() (enforcement.IdentityProvider, error) {
	switch {
	case e.IdentityProvider == "" || e.IdentityProvider == enforcement.IdentityJCSSHA256:
		return enforcement.JCSSHA256(), nil
	case e.IdentityProvider == IdentityNull:
		return enforcement.NullIdentity(), nil
	case strings.HasPrefix(e.IdentityProvider, HMACPrefix):
		p, err := enforcement.HMACSHA256(strings.TrimPrefix(e.IdentityProvider, HMACPrefix), e.IdentityKey)
		if err != nil {
			return enforcement.IdentityProvider{}, fmt.Errorf("config: identity provider %s: %w", e.IdentityProvider, err)
		}
		return p, nil
	}
	return enforcement.IdentityProvider{}, fmt.Errorf("config: unknown identity provider %q", e.IdentityProvider)
}

// EngineOptions returns the emitter options the enforcement section
// determines. The caller adds interceptors, the sink, the resolver and
// target validators.
func (e Enforcement) EngineOptions() (enforcement.Options, error) {
	id, err := e.Identity()
	if err != nil {
		return enforcement.Options{}, err
	}
	return enforcement.Options{
		Composition:     e.Composition.Engine(),
		Mode:            e.EngineMode(),
		PointModes:      e.EnginePointModes(),
		Identity:        &id,
		Timeout:         e.InterceptorTimeout,
		MaxContextBytes: e.MaxContextBytes,
		MaxDepth:        e.MaxDepth,
	}, nil
}
