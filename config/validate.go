package config

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

var (
	// namePattern keeps upstream and interceptor names payload-free: they
	// appear on records and metrics labels.
	namePattern    = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)
	envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	hmacPattern    = regexp.MustCompile(`^hmac-sha256-[a-z0-9_-]+$`)
	azurePattern   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// maxDepthLimit is the deepest nesting max_depth may allow: the JSON value
// code refuses deeper trees whatever the configuration says.
const maxDepthLimit = 10000

// validator checks a resolved Config, placing each problem at the line the
// field was read from.
type validator struct {
	c  *Config
	ps *problems
}

// Validate checks every rule that the file's shape alone does not: required
// and allowed keys per type, names, URLs, globs, modes, composition, the
// identity provider, secrets present in the environment, bounds. It returns
// nil or an *Error listing every problem. Parse calls it; call it yourself
// after changing a Config, or on Default. Validate reads no environment:
// secrets must already be resolved, as Parse and Default leave them.
func (c *Config) Validate() error {
	v := &validator{c: c, ps: &problems{file: c.Source}}
	v.listeners()
	v.upstreams()
	v.enforcement()
	v.interceptors()
	v.policy()
	v.sessions()
	v.records()
	v.streaming()
	v.auth()
	v.limits()
	v.server()
	v.runtime()
	v.contextBound()
	v.tracing()
	v.approvals()
	v.wire()
	v.seal()
	v.mcp()
	return v.ps.err()
}

// lineOf returns the line field was read from, or that of the nearest
// enclosing field (so a missing key is reported where its parent starts).
func (c *Config) lineOf(field string) int {
	for f := field; f != ""; f = parent(f) {
		if line, ok := c.lines[f]; ok {
			return line
		}
	}
	return 0
}

// parent drops the last segment of a field path.
func parent(field string) string {
	if strings.HasSuffix(field, "]") {
		return field[:strings.LastIndexByte(field, '[')]
	}
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		return field[:i]
	}
	return ""
}

// problem records a problem at field. A value that came from the
// environment has no line; the message names the variable instead.
func (v *validator) problem(field, format string, args ...any) {
	v.ps.add(v.c.where(field, format, args...))
}

func (c *Config) where(field, format string, args ...any) (int, string, string) {
	msg := fmt.Sprintf(format, args...)
	if env, ok := c.envFrom[field]; ok {
		return 0, field, msg + " (set by $" + env + ")"
	}
	return c.lineOf(field), field, msg
}

func (v *validator) listeners() {
	l := v.c.Listeners
	if l.HTTP == "" {
		v.problem("listeners.http", "is required, such as :8080")
	} else if !validAddr(l.HTTP) {
		v.problem("listeners.http", "must be host:port, such as :8080 (got %q)", l.HTTP)
	}
	if l.Admin != "" {
		if !validAddr(l.Admin) {
			v.problem("listeners.admin", "must be host:port, such as 127.0.0.1:9090 (got %q)", l.Admin)
		} else if l.Admin == l.HTTP {
			v.problem("listeners.admin", "must differ from listeners.http (leave it empty to serve admin endpoints there)")
		} else if v.c.Auth.AdminTokenEnv == "" && !IsLoopback(l.Admin) {
			v.problem("listeners.admin", "must be a loopback address such as 127.0.0.1:9090 while auth.admin_token_env is not set: the admin endpoints would be open to the network (got %q)", l.Admin)
		}
	}
	if l.Probes != "" {
		if !validAddr(l.Probes) {
			v.problem("listeners.probes", "must be host:port, such as :9091 (got %q)", l.Probes)
		} else if l.Probes == l.HTTP || l.Probes == l.Admin {
			v.problem("listeners.probes", "must differ from listeners.http and listeners.admin")
		}
	}
}

func validAddr(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535
}

func (v *validator) upstreams() {
	if len(v.c.Upstreams) == 0 {
		v.problem("upstreams", "at least one upstream is required")
		return
	}
	names := make(map[string]int)
	for i, u := range v.c.Upstreams {
		f := index("upstreams", i)
		switch {
		case u.Name == "":
			v.problem(f+".name", "is required")
		case !namePattern.MatchString(u.Name):
			v.problem(f+".name", "must match ^[a-z0-9][a-z0-9_.-]*$ (got %q)", u.Name)
		default:
			if j, dup := names[u.Name]; dup {
				v.problem(f+".name", "duplicate upstream name %q (also upstreams[%d])", u.Name, j)
			} else {
				names[u.Name] = i
			}
		}
		v.upstream(f, u)
	}
}

func (v *validator) upstream(f string, u Upstream) {
	const notMock = "is not used by a mock upstream"
	switch u.Type {
	case "":
		v.problem(f+".type", "is required (one of openai, azure-openai, anthropic, mock)")
	case TypeMock:
		for _, k := range []struct {
			key string
			set bool
		}{
			{"base_url", u.BaseURL != ""}, {"api_key_env", u.APIKeyEnv != ""}, {"pass_client_key", u.PassClientKey},
			{"api_version", u.APIVersion != ""}, {"deployments", len(u.Deployments) > 0},
			{"anthropic_version", u.AnthropicVersion != ""},
		} {
			if k.set {
				v.problem(f+"."+k.key, notMock)
			}
		}
	case TypeOpenAI, TypeAzure, TypeAnthropic:
		switch {
		case u.BaseURL == "" && u.Type == TypeAzure:
			v.problem(f+".base_url", "is required for azure-openai, such as https://<resource>.openai.azure.com")
		case u.BaseURL == "":
			v.problem(f+".base_url", "is required")
		default:
			v.baseURL(f+".base_url", u.BaseURL)
		}
		if u.Type == TypeAzure {
			switch {
			case u.APIVersion == "":
				v.problem(f+".api_version", "is required for azure-openai, such as 2024-10-21")
			case !azurePattern.MatchString(u.APIVersion):
				v.problem(f+".api_version", "must be an api-version such as 2024-10-21 (got %q)", u.APIVersion)
			}
			for model, dep := range u.Deployments {
				df := mapKey(f+".deployments", model)
				if !azurePattern.MatchString(dep) {
					v.problem(df, "must be a deployment name of letters, digits, '.', '_' and '-' (got %q)", dep)
				}
			}
		} else {
			if u.APIVersion != "" {
				v.problem(f+".api_version", "is only used by azure-openai upstreams")
			}
			if len(u.Deployments) > 0 {
				v.problem(f+".deployments", "is only used by azure-openai upstreams")
			}
		}
		switch {
		case u.AnthropicVersion == "":
		case u.Type != TypeAnthropic:
			v.problem(f+".anthropic_version", "is only used by anthropic upstreams")
		case !azurePattern.MatchString(u.AnthropicVersion):
			v.problem(f+".anthropic_version", "must be an anthropic-version such as 2023-06-01 (got %q)", u.AnthropicVersion)
		}
		if u.APIKeyEnv != "" {
			v.secret(f+".api_key_env", u.APIKeyEnv, u.APIKey, u.PassClientKey)
		}
		if u.PassClientKey && v.c.Auth.RequiresKeys() {
			v.problem(f+".pass_client_key", "cannot be combined with client keys (auth.api_keys, auth.keys_file): the client's bearer token is its gateway key, which must not reach the upstream")
		}
	default:
		v.problem(f+".type", "must be one of openai, azure-openai, anthropic, mock (got %q)", u.Type)
	}
	if u.Models != nil && len(u.Models) == 0 {
		v.problem(f+".models", `must list at least one model glob (leave it out, or use "*", for every model)`)
	}
	for j, g := range u.Models {
		gf := index(f+".models", j)
		if g == "" {
			v.problem(gf, "must not be empty")
		} else if _, err := path.Match(g, ""); err != nil {
			v.problem(gf, "invalid glob %q: %v", g, err)
		}
	}
	if u.Timeout <= 0 {
		v.problem(f+".timeout", "must be positive (got %s)", u.Timeout)
	}
	if u.ConnectTimeout <= 0 {
		v.problem(f+".connect_timeout", "must be positive (got %s)", u.ConnectTimeout)
	}
}

// baseURL checks an upstream URL: absolute http(s), no credentials (they
// belong in the environment), no query or fragment (paths are appended).
func (v *validator) baseURL(field, raw string) {
	v.httpURL(field, raw, "name the key's environment variable in api_key_env", false)
}

// httpURL checks an absolute http(s) URL without credentials (hint says
// where they belong) or fragment, and without a query unless allowQuery.
// A problem never quotes a password.
func (v *validator) httpURL(field, raw, hint string, allowQuery bool) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		v.problem(field, "must be an absolute http:// or https:// URL")
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		v.problem(field, "must be an absolute http:// or https:// URL (got %q)", u.Redacted())
	case u.User != nil:
		v.problem(field, "must not carry credentials; %s", hint)
	case u.Fragment != "" || (!allowQuery && (u.RawQuery != "" || strings.HasSuffix(raw, "?"))):
		what := "a fragment"
		if !allowQuery {
			what = "a query or fragment"
		}
		v.problem(field, "must not have %s (got %q)", what, raw)
	}
}

// secret checks a key named by an environment variable: a valid name, and
// a value present at load unless the key is optional.
func (v *validator) secret(field, env, value string, optional bool) {
	switch {
	case !envNamePattern.MatchString(env):
		v.problem(field, "must be an environment variable name (got %q)", env)
	case value == "" && !optional:
		v.problem(field, "environment variable %s is not set", env)
	}
}

func (v *validator) enforcement() {
	e := v.c.Enforcement
	checkModes(v.problem, "enforcement", e.Mode, e.PointModes)
	checkComposition(v.problem, "enforcement.composition", e.Composition)
	const idf, kf = "enforcement.identity_provider", "enforcement.identity_key_env"
	switch id := e.IdentityProvider; {
	case id == enforcement.IdentityJCSSHA256 || id == IdentityNull:
		if e.IdentityKeyEnv != "" {
			v.problem(kf, "is only used by hmac-sha256-<key-id> identity providers")
		}
	case hmacPattern.MatchString(id):
		switch {
		case e.IdentityKeyEnv == "":
			v.problem(kf, "is required by the %s identity provider", id)
		case !envNamePattern.MatchString(e.IdentityKeyEnv) || len(e.IdentityKey) == 0:
			v.secret(kf, e.IdentityKeyEnv, string(e.IdentityKey), false)
		default:
			if _, err := enforcement.HMACSHA256(strings.TrimPrefix(id, HMACPrefix), e.IdentityKey); err != nil {
				v.problem(kf, "the key in $%s is unusable: %v", e.IdentityKeyEnv, err)
			}
		}
	default:
		v.problem(idf, "must be jcs-sha256, null or hmac-sha256-<key-id> with a key id of a-z, 0-9, '_' and '-' (got %q)", id)
	}
	if e.InterceptorTimeout <= 0 {
		v.problem("enforcement.interceptor_timeout", "must be positive (got %s)", e.InterceptorTimeout)
	}
	if e.MaxContextBytes <= 0 {
		v.problem("enforcement.max_context_bytes", "must be positive (got %d)", e.MaxContextBytes)
	}
	if e.MaxDepth <= 0 || e.MaxDepth > maxDepthLimit {
		v.problem("enforcement.max_depth", "must be between 1 and %d (got %d)", maxDepthLimit, e.MaxDepth)
	}
}

func pointList() string {
	ps := enforcement.Points()
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

func (v *validator) interceptors() {
	names := make(map[string]int)
	for _, ic := range v.c.Interceptors {
		f := ic.Field() // not the slice position: entries that failed to decode are absent
		switch {
		case ic.Name == "":
			v.problem(f+".name", "is required")
		case !namePattern.MatchString(ic.Name):
			v.problem(f+".name", "must match ^[a-z0-9][a-z0-9_.-]*$ (got %q)", ic.Name)
		default:
			if j, dup := names[ic.Name]; dup {
				v.problem(f+".name", "duplicate interceptor name %q (also interceptors[%d])", ic.Name, j)
			} else {
				names[ic.Name] = ic.Index
			}
		}
		if ic.Type == "" {
			v.problem(f+".type", "is required")
		}
		seen := make(map[string]bool, len(ic.Points))
		for j, p := range ic.Points {
			pf := index(f+".points", j)
			switch {
			case !enforcement.Point(p).Valid():
				v.problem(pf, "unknown interception point %q (one of %s)", p, pointList())
			case seen[p]:
				v.problem(pf, "duplicate point %q", p)
			}
			seen[p] = true
		}
	}
}

// redisTopology checks sessions.redis_cluster and sessions.redis_sentinel.
func (v *validator) redisTopology(s Sessions) {
	const cf, sf = "sessions.redis_cluster", "sessions.redis_sentinel"
	if s.RedisCluster != nil {
		if s.RedisSentinel != nil {
			v.problem(sf, "cannot be combined with %s", cf)
		}
		if len(s.RedisCluster) == 0 {
			v.problem(cf, "must list at least one host:port")
		}
		v.hostPorts(cf, s.RedisCluster)
		if u, err := url.Parse(s.RedisURL); err == nil && strings.Trim(u.Path, "/") != "" && strings.Trim(u.Path, "/") != "0" {
			v.problem("sessions.redis_url", "must name database 0 (or none) with %s: Redis Cluster has only database 0", cf)
		}
		if v.c.Approvals.Resolver == ResolverQueue {
			v.problem("approvals.resolver", "queue keeps approvals in the session store's Redis, which does not run on Redis Cluster yet (%s)", cf)
		}
	}
	if rs := s.RedisSentinel; rs != nil {
		if rs.Master == "" {
			v.problem(sf+".master", "must name the master (as in the Sentinel configuration)")
		}
		if len(rs.Addrs) == 0 {
			v.problem(sf+".addrs", "must list at least one Sentinel host:port")
		}
		v.hostPorts(sf+".addrs", rs.Addrs)
		if v.c.Approvals.Resolver == ResolverQueue {
			v.problem("approvals.resolver", "queue keeps approvals in the session store's Redis, which is not reached through Sentinel yet (%s)", sf)
		}
	}
}

// hostPorts checks every entry of list field f is host:port.
func (v *validator) hostPorts(f string, addrs []string) {
	for i, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			v.problem(index(f, i), "must be host:port (got %q)", a)
		}
	}
}

func (v *validator) sessions() {
	s := v.c.Sessions
	const rf = "sessions.redis_url"
	switch s.Store {
	case StoreMemory:
		if s.RedisURL != "" && v.c.envFrom[rf] == "" {
			v.problem(rf, "is only used by the redis store (set sessions.store: redis)")
		}
		if s.RedisCluster != nil {
			v.problem("sessions.redis_cluster", "is only used by the redis store (set sessions.store: redis)")
		}
		if s.RedisSentinel != nil {
			v.problem("sessions.redis_sentinel", "is only used by the redis store (set sessions.store: redis)")
		}
	case StoreRedis:
		if s.RedisURL == "" && s.RedisCluster == nil && s.RedisSentinel == nil {
			v.problem(rf, "is required by the redis store (or set $%s)", EnvRedisURL)
		}
		v.redisTopology(s)
	default:
		v.problem("sessions.store", "must be one of memory, redis (got %q)", s.Store)
	}
	if s.RedisURL != "" {
		// The URL may hold a password, so it is never quoted back.
		u, err := url.Parse(s.RedisURL)
		switch {
		case err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "":
			v.problem(rf, "must be a redis:// or rediss:// URL with a host")
		case v.c.envFrom[rf] == "" && u.User != nil && hasPassword(u.User):
			v.problem(rf, "must not carry a password in the file; set the whole URL in $%s", EnvRedisURL)
		}
	}
	if s.KeyPrefix == "" {
		v.problem("sessions.key_prefix", "must not be empty (other data may share the Redis database)")
	}
	if s.IdleTimeout <= 0 {
		v.problem("sessions.idle_timeout", "must be positive (got %s)", s.IdleTimeout)
	}
	if s.SweepInterval <= 0 {
		v.problem("sessions.sweep_interval", "must be positive (got %s)", s.SweepInterval)
	}
	if s.Retention <= 0 {
		v.problem("sessions.retention", "must be positive (got %s)", s.Retention)
	}
	if s.EndWait <= 0 {
		v.problem("sessions.end_wait", "must be positive (got %s)", s.EndWait)
	}
	if s.StartupWait <= 0 {
		v.problem("sessions.startup_wait", "must be positive (got %s)", s.StartupWait)
	}
	if s.CallLease <= 0 {
		v.problem("sessions.call_lease", "must be positive (got %s)", s.CallLease)
	}
	if s.CacheBytes < 0 {
		v.problem("sessions.cache_bytes", "must be 0 (off) or positive (got %d)", s.CacheBytes)
	}
	if s.DenyReplayWindow < 0 {
		v.problem("sessions.deny_replay_window", "must be 0 (off) or positive (got %s)", s.DenyReplayWindow)
	}
}

func hasPassword(u *url.Userinfo) bool {
	_, set := u.Password()
	return set
}

// Bounds of the record sinks' keys. The http sink allocates its queue and
// batch up front, so they are bounded too.
const (
	minSinkMaxBytes    = 1 << 10
	maxSinkMaxFiles    = 1000
	maxSinkMaxBatch    = 10_000
	maxSinkQueue       = 1_000_000
	maxSinkMaxAttempts = 10
)

func (v *validator) records() {
	switch v.c.Records.Format {
	case RecordsFormatRecord, RecordsFormatEnvelope:
	default:
		v.problem("records.format", "must be %s or %s (got %q)", RecordsFormatRecord, RecordsFormatEnvelope, v.c.Records.Format)
	}
	_, legacy := v.c.lines["records.policy_version"]
	if _, markers := v.c.lines["records.policy_markers"]; legacy && markers && v.c.Records.policyVersion != v.c.Records.PolicyMarkers {
		v.problem("records.policy_version", "is deprecated and contradicts records.policy_markers: remove it")
	}
	stdout := -1
	paths := make(map[string]int)
	streams := make(map[string]int)
	urls := make(map[string]int)
	for i, s := range v.c.Records.Sinks {
		f := index("records.sinks", i)
		switch s.Type {
		case SinkStdout:
			if stdout >= 0 {
				v.problem(f+".type", "duplicate stdout sink (also records.sinks[%d])", stdout)
			}
			stdout = i
		case SinkJSONL:
			v.jsonlSink(f, i, s, paths)
		case SinkRedisStream:
			v.redisSink(f, i, s, streams)
		case SinkHTTP:
			v.httpSink(f, i, s, urls)
		case "":
			v.problem(f+".type", "is required (one of stdout, jsonl, redis-stream, http)")
			continue
		default:
			v.problem(f+".type", "must be one of stdout, jsonl, redis-stream, http (got %q)", s.Type)
			continue
		}
		v.foreignSinkKeys(f, s)
	}
}

// foreignSinkKeys reports the keys s sets that its type does not use.
func (v *validator) foreignSinkKeys(f string, s Sink) {
	jsonl, rs, hs := []string{SinkJSONL}, []string{SinkRedisStream}, []string{SinkHTTP}
	for _, k := range []struct {
		key   string
		users []string
		set   bool // a non-zero value (a hand-built Config has no lines)
	}{
		{"path", jsonl, s.Path != ""},
		{"max_bytes", jsonl, s.MaxBytes != 0},
		{"max_files", jsonl, s.MaxFiles != 0},
		{"redis_url", rs, s.RedisURL != ""},
		{"redis_url_env", rs, s.RedisURLEnv != ""},
		{"stream", rs, s.Stream != ""},
		{"max_len", rs, s.MaxLen != 0},
		{"url", hs, s.URL != ""},
		{"token_env", hs, s.TokenEnv != ""},
		{"max_batch", hs, s.MaxBatch != 0},
		{"flush_interval", hs, s.FlushInterval != 0},
		{"queue", hs, s.Queue != 0},
		{"max_attempts", hs, s.MaxAttempts != 0},
		{"close_timeout", hs, s.CloseTimeout != 0},
		{"timeout", []string{SinkRedisStream, SinkHTTP}, s.Timeout != 0},
	} {
		if slices.Contains(k.users, s.Type) {
			continue
		}
		if _, inFile := v.c.lines[f+"."+k.key]; inFile || k.set {
			v.problem(f+"."+k.key, "is only used by %s sinks", strings.Join(k.users, " and "))
		}
	}
}

func (v *validator) jsonlSink(f string, i int, s Sink, paths map[string]int) {
	switch j, dup := paths[s.Path]; {
	case s.Path == "":
		v.problem(f+".path", "is required by a jsonl sink")
	case dup:
		v.problem(f+".path", "duplicate jsonl path %q (also records.sinks[%d])", s.Path, j)
	default:
		paths[s.Path] = i
	}
	switch _, inFile := v.c.lines[f+".max_files"]; {
	case s.MaxBytes < 0 || (s.MaxBytes > 0 && s.MaxBytes < minSinkMaxBytes):
		v.problem(f+".max_bytes", "must be 0 (no rotation) or at least 1KiB (got %d)", s.MaxBytes)
	case s.MaxBytes == 0 && (inFile || s.MaxFiles != 0):
		v.problem(f+".max_files", "is only used with max_bytes (rotation)")
	case s.MaxBytes > 0 && (s.MaxFiles < 1 || s.MaxFiles > maxSinkMaxFiles):
		v.problem(f+".max_files", "must be between 1 and %d (got %d)", maxSinkMaxFiles, s.MaxFiles)
	}
}

func (v *validator) redisSink(f string, i int, s Sink, streams map[string]int) {
	uf, ef := f+".redis_url", f+".redis_url_env"
	_, fromEnv := v.c.envFrom[uf]
	switch {
	case s.RedisURLEnv != "" && s.RedisURL != "" && !fromEnv && !s.sharedURL:
		v.problem(ef, "cannot be combined with redis_url (name the variable holding the whole URL, or write a URL without a password)")
	case s.RedisURLEnv != "":
		v.secret(ef, s.RedisURLEnv, s.RedisURL, false)
		if s.RedisURL != "" {
			v.redisURL(uf, s.RedisURL, true)
		}
	case s.sharedURL && (v.c.Sessions.RedisCluster != nil || v.c.Sessions.RedisSentinel != nil):
		v.problem(uf, "is required by a redis-stream sink when the session store uses sessions.redis_cluster or sessions.redis_sentinel (the sink reaches one Redis by URL)")
	case s.RedisURL == "":
		v.problem(uf, "is required by a redis-stream sink (or name a variable in redis_url_env, or share the session store's: sessions.redis_url or $%s)", EnvRedisURL)
	case !s.sharedURL: // the session store's URL is checked there
		v.redisURL(uf, s.RedisURL, fromEnv)
	}
	if s.Stream == "" {
		v.problem(f+".stream", "must not be empty")
	} else if s.RedisURL != "" {
		key := s.RedisURL + "\x00" + s.Stream
		if j, dup := streams[key]; dup {
			v.problem(f+".stream", "duplicate stream %q on the same Redis (also records.sinks[%d])", s.Stream, j)
		} else {
			streams[key] = i
		}
	}
	if s.MaxLen <= 0 {
		v.problem(f+".max_len", "must be positive (got %d)", s.MaxLen)
	}
	if s.Timeout <= 0 {
		v.problem(f+".timeout", "must be positive (got %s)", s.Timeout)
	}
}

// redisURL checks a sink's Redis URL without quoting it (it may hold a
// password, which only the environment may supply).
func (v *validator) redisURL(field, raw string, fromEnv bool) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "":
		v.problem(field, "must be a redis:// or rediss:// URL with a host")
	case !fromEnv && u.User != nil && hasPassword(u.User):
		v.problem(field, "must not carry a password in the file; name a variable holding the whole URL in redis_url_env")
	}
}

func (v *validator) httpSink(f string, i int, s Sink, urls map[string]int) {
	// The URL is never quoted back: its query may hold a credential.
	uf := f + ".url"
	if s.URL == "" {
		v.problem(uf, "is required by an http sink")
	} else if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.problem(uf, "must be an absolute http:// or https:// URL")
	} else if u.User != nil {
		v.problem(uf, "must not carry credentials; name the bearer token's environment variable in token_env")
	} else if u.Fragment != "" {
		v.problem(uf, "must not have a fragment")
	} else if j, dup := urls[s.URL]; dup {
		v.problem(uf, "duplicate http sink URL (also records.sinks[%d])", j)
	} else {
		urls[s.URL] = i
	}
	if s.TokenEnv != "" {
		v.secret(f+".token_env", s.TokenEnv, s.Token, false)
	}
	for _, k := range []struct {
		key    string
		n, max int
	}{{"max_batch", s.MaxBatch, maxSinkMaxBatch}, {"queue", s.Queue, maxSinkQueue}, {"max_attempts", s.MaxAttempts, maxSinkMaxAttempts}} {
		if k.n < 1 || k.n > k.max {
			v.problem(f+"."+k.key, "must be between 1 and %d (got %d)", k.max, k.n)
		}
	}
	for _, k := range []struct {
		key string
		d   time.Duration
	}{{"flush_interval", s.FlushInterval}, {"timeout", s.Timeout}, {"close_timeout", s.CloseTimeout}} {
		if k.d <= 0 {
			v.problem(f+"."+k.key, "must be positive (got %s)", k.d)
		}
	}
}

func (v *validator) streaming() {
	s := v.c.Streaming
	if s.BufferLimit <= 0 {
		v.problem("streaming.buffer_limit", "must be positive (got %d)", s.BufferLimit)
	}
	if s.KeepAlive < 0 {
		v.problem("streaming.keep_alive", "must not be negative (0 turns keep-alives off; got %s)", s.KeepAlive)
	}
	for _, m := range []struct{ field, mode string }{
		{"streaming.mode", s.Mode},
		{"streaming.surfaces.chat_completions", s.Surfaces.ChatCompletions},
		{"streaming.surfaces.responses", s.Surfaces.Responses},
		{"streaming.surfaces.messages", s.Surfaces.Messages},
	} {
		if m.mode != "" && !ValidStreamingMode(m.mode) || m.field == "streaming.mode" && m.mode == "" {
			v.problem(m.field, "must be %s or %s (got %q)", StreamingBuffered, StreamingIncremental, m.mode)
		}
	}
	g := s.Segment
	if g.Bytes <= 0 {
		v.problem("streaming.segment.bytes", "must be positive (got %d)", g.Bytes)
	}
	if g.Interval <= 0 {
		v.problem("streaming.segment.interval", "must be positive (got %s)", g.Interval)
	}
	if g.MaxSegments <= 0 {
		v.problem("streaming.segment.max_segments", "must be positive (got %d)", g.MaxSegments)
	}
	if g.First != SegmentFirstArrival && g.First != SegmentFirstBoundary {
		v.problem("streaming.segment.first", "must be %s or %s (got %q)", SegmentFirstArrival, SegmentFirstBoundary, g.First)
	}
}

// ValidStreamingMode reports whether m names a streaming mode.
func ValidStreamingMode(m string) bool { return m == StreamingBuffered || m == StreamingIncremental }

func (v *validator) limits() {
	l := v.c.Limits
	if l.MaxRequestBytes <= 0 {
		v.problem("limits.max_request_bytes", "must be positive (got %d)", l.MaxRequestBytes)
	}
	if l.MaxResponseBytes <= 0 {
		v.problem("limits.max_response_bytes", "must be positive (got %d)", l.MaxResponseBytes)
	}
	// A budget smaller than one response the limits accept would refuse
	// that response however idle the gateway.
	if largest := max(l.MaxResponseBytes, v.c.Streaming.BufferLimit); l.BufferBudget != 0 && l.BufferBudget < largest {
		v.problem("limits.buffer_budget", "must be at least the largest buffered response, max(limits.max_response_bytes, streaming.buffer_limit) = %d (got %d)", largest, l.BufferBudget)
	}
	if l.MaxMessages <= 0 {
		v.problem("limits.max_messages", "must be positive (got %d)", l.MaxMessages)
	}
	if l.MaxInputMessages <= 0 || l.MaxInputMessages > l.MaxMessages {
		v.problem("limits.max_input_messages", "must be between 1 and limits.max_messages (%d) (got %d)", l.MaxMessages, l.MaxInputMessages)
	}
}

func (v *validator) tracing() {
	t := v.c.Tracing
	if t.OTLPEndpoint != "" {
		// The endpoint is never quoted back: its query may hold a credential.
		u, err := url.Parse(t.OTLPEndpoint)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			v.problem("tracing.otlp_endpoint", "must be an absolute http:// or https:// URL, such as http://otel-collector:4318")
		case u.User != nil:
			v.problem("tracing.otlp_endpoint", "must not carry credentials")
		case u.RawQuery != "" || u.Fragment != "":
			v.problem("tracing.otlp_endpoint", "must not have a query or fragment")
		}
	}
	if t.ServiceName == "" {
		v.problem("tracing.service_name", "must not be empty")
	}
	if math.IsNaN(t.SampleRatio) || t.SampleRatio < 0 || t.SampleRatio > 1 {
		v.problem("tracing.sample_ratio", "must be between 0 and 1 (got %v)", t.SampleRatio)
	}
}

// Warnings lists what is valid but probably unintended, formatted like
// problems. The binary logs them at startup.
func (c *Config) Warnings() []string {
	var out []string
	warn := func(field, format string, args ...any) {
		line, f, msg := c.where(field, format, args...)
		out = append(out, Problem{File: c.Source, Line: line, Field: f, Msg: msg}.String())
	}
	if len(c.Interceptors) == 0 && c.Policy.Path == "" && c.enforcesSomewhere() {
		warn("interceptors", "none configured in enforce mode: every request will be denied with %s", enforcement.ReasonNoInterceptor)
	}
	comp := c.Enforcement.Composition
	resolved := comp.Engine().Resolved()
	for _, k := range []struct{ knob, set, used string }{
		{"on_approval", comp.OnApproval, resolved.OnApproval},
		{"on_disagreement", comp.OnDisagreement, resolved.OnDisagreement},
		{"on_transform_conflict", comp.OnTransformConflict, resolved.OnTransformConflict},
	} {
		if k.set != "" && k.used == "" {
			warn("enforcement.composition."+k.knob, "has no effect under profile %s", comp.Profile)
		}
	}
	if c.Sessions.Store == StoreMemory && c.Sessions.RedisURL != "" && c.envFrom["sessions.redis_url"] != "" && !c.sharesRedisURL() {
		warn("sessions.redis_url", "is ignored: sessions.store is memory")
	}
	if len(c.Records.Sinks) == 0 {
		warn("records.sinks", "is empty: interception records are discarded")
	}
	if _, set := c.lines["records.policy_version"]; set {
		warn("records.policy_version", "is deprecated: records no longer carry extensions.hooks_gateway (the spec's record schema is closed); it now sets records.policy_markers, which attribute records to policy versions with marker lines (or use records.format: envelope)")
	}
	if _, set := c.lines["records.policy_markers"]; set && c.Records.Format == RecordsFormatEnvelope {
		warn("records.policy_markers", "has no effect with records.format envelope: every line carries its policy version")
	}
	c.approvalWarnings(warn)
	return out
}

// sharesRedisURL reports whether a redis-stream sink uses the session
// store's Redis URL.
func (c *Config) sharesRedisURL() bool {
	for _, s := range c.Records.Sinks {
		if s.Type == SinkRedisStream && s.sharedURL {
			return true
		}
	}
	return false
}

// enforcesSomewhere reports whether any point runs in enforce mode.
func (c *Config) enforcesSomewhere() bool {
	for _, p := range enforcement.Points() {
		m, ok := c.Enforcement.PointModes[string(p)]
		if !ok {
			m = c.Enforcement.Mode
		}
		if m == string(enforcement.Enforce) {
			return true
		}
	}
	return false
}
