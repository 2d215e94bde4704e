package config

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// decoder turns yaml.Nodes into values, recording a problem (with the node's
// line) for every value of the wrong shape and the line of every field it
// reads, so that Validate can place its own problems afterwards.
type decoder struct {
	ps    *problems
	lines map[string]int
}

// handler decodes the value of one known key; field is its full path.
type handler func(field string, v *yaml.Node)

// newConfig returns a Config holding every default, for the file to
// override key by key (so an explicit zero stays distinguishable from an
// absent key and is reported).
func newConfig(source string) *Config {
	return &Config{
		Source:    source,
		Listeners: Listeners{HTTP: DefaultListen},
		Enforcement: Enforcement{
			Mode:               string(enforcement.Enforce),
			Composition:        Composition{Profile: string(enforcement.SequentialFirstDeny)},
			IdentityProvider:   enforcement.IdentityJCSSHA256,
			InterceptorTimeout: enforcement.DefaultTimeout,
			MaxContextBytes:    DefaultMaxContextBytes,
			MaxDepth:           enforcement.DefaultMaxDepth,
		},
		Sessions: Sessions{
			Store:            StoreMemory,
			KeyPrefix:        DefaultKeyPrefix,
			IdleTimeout:      DefaultIdleTimeout,
			SweepInterval:    DefaultSweepInterval,
			Retention:        DefaultRetention,
			EndWait:          DefaultEndWait,
			StartupWait:      DefaultStartupWait,
			CallLease:        DefaultCallLease,
			DenyReplayWindow: DefaultDenyReplayWindow,
			CacheBytes:       DefaultSessionCacheBytes,
		},
		Streaming: Streaming{BufferLimit: DefaultBufferLimit, Mode: StreamingBuffered, Segment: Segment{
			Bytes: DefaultSegmentBytes, Interval: DefaultSegmentInterval, SentenceEnd: true, MaxSegments: DefaultSegmentMaxSegments, First: SegmentFirstArrival}},
		Limits: Limits{MaxRequestBytes: DefaultMaxRequestBytes, MaxResponseBytes: DefaultMaxResponseBytes,
			MaxMessages: DefaultMaxMessages, MaxInputMessages: DefaultMaxInputMessages},
		Server:    defaultServer(),
		Runtime:   Runtime{GCPercent: DefaultGCPercent},
		Tracing:   Tracing{ServiceName: DefaultServiceName, SampleRatio: 1},
		Approvals: defaultApprovals(),
		Records:   Records{Format: RecordsFormatRecord, PolicyMarkers: true},
		lines:     make(map[string]int),
	}
}

// decode reads one YAML document into a Config with defaults filled in. It
// reports shape problems (unknown keys, wrong types, bad durations); rules
// that relate values to each other are Validate's. The Config is nil when
// the text is not YAML at all.
func decode(name string, data []byte) (*Config, *problems) {
	ps := &problems{file: name}
	doc, err := readDocument(data)
	if err != nil {
		syntaxProblem(ps, err)
		return nil, ps
	}
	c := newConfig(name)
	if doc != nil && len(doc.Content) > 0 {
		root := resolve(doc.Content[0])
		if root.Kind != yaml.MappingNode && !isNull(root) {
			// Nothing below can be read; validating the defaults would
			// only add noise.
			ps.add(root.Line, "", "the configuration must be a YAML mapping")
			return nil, ps
		}
		d := &decoder{ps: ps, lines: c.lines}
		d.config(root, c)
	}
	if c.Records.Sinks == nil {
		c.Records.Sinks = []Sink{{Type: SinkStdout}}
	}
	if _, set := c.lines["records.policy_version"]; set {
		if _, both := c.lines["records.policy_markers"]; !both {
			c.Records.PolicyMarkers = c.Records.policyVersion
		}
	}
	if _, set := c.lines["policy.watch"]; !set && c.Policy.Path != "" {
		c.Policy.Watch = true
	}
	c.deriveContextBound()
	return c, ps
}

// extensionPrefix marks top-level keys the gateway ignores, as in Compose
// files: a home for YAML anchors shared by several entries.
const extensionPrefix = "x-"

func (d *decoder) config(n *yaml.Node, c *Config) {
	keys := map[string]handler{
		"listeners": func(f string, v *yaml.Node) {
			d.mapping(v, f, map[string]handler{
				"http":   func(f string, v *yaml.Node) { c.Listeners.HTTP = d.str(v, f) },
				"admin":  func(f string, v *yaml.Node) { c.Listeners.Admin = d.str(v, f) },
				"probes": func(f string, v *yaml.Node) { c.Listeners.Probes = d.str(v, f) },
			})
		},
		"upstreams": func(f string, v *yaml.Node) {
			d.sequence(v, f, func(f string, i int, v *yaml.Node) {
				c.Upstreams = append(c.Upstreams, d.upstream(v, f))
			})
		},
		"enforcement":  func(f string, v *yaml.Node) { d.enforcement(v, f, &c.Enforcement) },
		"interceptors": func(f string, v *yaml.Node) { c.Interceptors = d.interceptors(v, f) },
		"policy": func(f string, v *yaml.Node) {
			p := &c.Policy
			d.mapping(v, f, map[string]handler{
				"path":  func(f string, v *yaml.Node) { p.Path = d.str(v, f) },
				"watch": func(f string, v *yaml.Node) { p.Watch = d.bool(v, f) },
			})
		},
		"sessions": func(f string, v *yaml.Node) {
			s := &c.Sessions
			d.mapping(v, f, map[string]handler{
				"store":         func(f string, v *yaml.Node) { s.Store = d.str(v, f) },
				"redis_url":     func(f string, v *yaml.Node) { s.RedisURL = d.str(v, f) },
				"key_prefix":    func(f string, v *yaml.Node) { s.KeyPrefix = d.str(v, f) },
				"redis_cluster": func(f string, v *yaml.Node) { s.RedisCluster = d.strings(v, f) },
				"redis_sentinel": func(f string, v *yaml.Node) {
					rs := &RedisSentinel{}
					s.RedisSentinel = rs
					d.mapping(v, f, map[string]handler{
						"master": func(f string, v *yaml.Node) { rs.Master = d.str(v, f) },
						"addrs":  func(f string, v *yaml.Node) { rs.Addrs = d.strings(v, f) },
					})
				},
				"idle_timeout":   func(f string, v *yaml.Node) { s.IdleTimeout = d.duration(v, f, s.IdleTimeout) },
				"sweep_interval": func(f string, v *yaml.Node) { s.SweepInterval = d.duration(v, f, s.SweepInterval) },
				"retention":      func(f string, v *yaml.Node) { s.Retention = d.duration(v, f, s.Retention) },
				"end_wait":       func(f string, v *yaml.Node) { s.EndWait = d.duration(v, f, s.EndWait) },
				"startup_wait":   func(f string, v *yaml.Node) { s.StartupWait = d.duration(v, f, s.StartupWait) },
				"call_lease":     func(f string, v *yaml.Node) { s.CallLease = d.duration(v, f, s.CallLease) },
				"native_ids":     func(f string, v *yaml.Node) { s.IgnoreNativeIDs = !d.bool(v, f) },
				"deny_replay_window": func(f string, v *yaml.Node) {
					s.DenyReplayWindow = d.duration(v, f, s.DenyReplayWindow)
				},
				"cache_bytes": func(f string, v *yaml.Node) { s.CacheBytes = d.size(v, f, s.CacheBytes) },
			})
		},
		"records": func(f string, v *yaml.Node) {
			d.mapping(v, f, map[string]handler{
				"format":         func(f string, v *yaml.Node) { c.Records.Format = d.str(v, f) },
				"policy_markers": func(f string, v *yaml.Node) { c.Records.PolicyMarkers = d.bool(v, f) },
				"policy_version": func(f string, v *yaml.Node) { c.Records.policyVersion = d.bool(v, f) },
				"sinks": func(f string, v *yaml.Node) {
					c.Records.Sinks = []Sink{}
					d.sequence(v, f, func(f string, i int, v *yaml.Node) {
						c.Records.Sinks = append(c.Records.Sinks, d.sink(v, f))
					})
				},
			})
		},
		"streaming": func(f string, v *yaml.Node) {
			s := &c.Streaming
			d.mapping(v, f, map[string]handler{
				"buffer_limit": func(f string, v *yaml.Node) { s.BufferLimit = d.size(v, f, s.BufferLimit) },
				"keep_alive":   func(f string, v *yaml.Node) { s.KeepAlive = d.duration(v, f, s.KeepAlive) },
				"mode":         func(f string, v *yaml.Node) { s.Mode = d.str(v, f) },
				"surfaces": func(f string, v *yaml.Node) {
					d.mapping(v, f, map[string]handler{
						"chat_completions": func(f string, v *yaml.Node) { s.Surfaces.ChatCompletions = d.str(v, f) },
						"responses":        func(f string, v *yaml.Node) { s.Surfaces.Responses = d.str(v, f) },
						"messages":         func(f string, v *yaml.Node) { s.Surfaces.Messages = d.str(v, f) },
					})
				},
				"segment": func(f string, v *yaml.Node) {
					g := &s.Segment
					d.mapping(v, f, map[string]handler{
						"bytes":        func(f string, v *yaml.Node) { g.Bytes = d.size(v, f, g.Bytes) },
						"interval":     func(f string, v *yaml.Node) { g.Interval = d.duration(v, f, g.Interval) },
						"sentence_end": func(f string, v *yaml.Node) { g.SentenceEnd = d.bool(v, f) },
						"max_segments": func(f string, v *yaml.Node) { g.MaxSegments = d.int(v, f, g.MaxSegments) },
						"first":        func(f string, v *yaml.Node) { g.First = d.str(v, f) },
					})
				},
			})
		},
		"auth":      func(f string, v *yaml.Node) { d.auth(v, f, &c.Auth) },
		"server":    func(f string, v *yaml.Node) { d.server(v, f, &c.Server) },
		"runtime":   func(f string, v *yaml.Node) { d.runtime(v, f, &c.Runtime) },
		"approvals": func(f string, v *yaml.Node) { d.approvals(v, f, &c.Approvals) },
		"wire":      func(f string, v *yaml.Node) { d.wire(v, f, &c.Wire) },
		"seal":      func(f string, v *yaml.Node) { d.seal(v, f, &c.Seal) },
		"mcp":       func(f string, v *yaml.Node) { d.mcp(v, f, &c.MCP) },
		"limits": func(f string, v *yaml.Node) {
			l := &c.Limits
			d.mapping(v, f, map[string]handler{
				"max_request_bytes":  func(f string, v *yaml.Node) { l.MaxRequestBytes = d.size(v, f, l.MaxRequestBytes) },
				"max_response_bytes": func(f string, v *yaml.Node) { l.MaxResponseBytes = d.size(v, f, l.MaxResponseBytes) },
				"buffer_budget": func(f string, v *yaml.Node) {
					if l.BufferBudget = d.size(v, f, 0); l.BufferBudget == 0 {
						d.ps.add(v.Line, f, "must be positive (leave it out to derive it from the memory limit)")
					}
				},
				"max_messages":       func(f string, v *yaml.Node) { l.MaxMessages = d.int(v, f, l.MaxMessages) },
				"max_input_messages": func(f string, v *yaml.Node) { l.MaxInputMessages = d.int(v, f, l.MaxInputMessages) },
			})
		},
		"tracing": func(f string, v *yaml.Node) {
			t := &c.Tracing
			d.mapping(v, f, map[string]handler{
				"otlp_endpoint": func(f string, v *yaml.Node) { t.OTLPEndpoint = d.str(v, f) },
				"service_name":  func(f string, v *yaml.Node) { t.ServiceName = d.str(v, f) },
				"sample_ratio":  func(f string, v *yaml.Node) { t.SampleRatio = d.float(v, f, t.SampleRatio) },
			})
		},
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; strings.HasPrefix(k, extensionPrefix) {
			keys[k] = func(string, *yaml.Node) {}
		}
	}
	d.mapping(n, "", keys)
}

func (d *decoder) upstream(n *yaml.Node, field string) Upstream {
	u := Upstream{Timeout: DefaultUpstreamTimeout, ConnectTimeout: DefaultConnectTimeout, Line: resolve(n).Line}
	d.mapping(n, field, map[string]handler{
		"name":              func(f string, v *yaml.Node) { u.Name = d.str(v, f) },
		"type":              func(f string, v *yaml.Node) { u.Type = d.str(v, f) },
		"base_url":          func(f string, v *yaml.Node) { u.BaseURL = d.str(v, f) },
		"api_key_env":       func(f string, v *yaml.Node) { u.APIKeyEnv = d.str(v, f) },
		"pass_client_key":   func(f string, v *yaml.Node) { u.PassClientKey = d.bool(v, f) },
		"models":            func(f string, v *yaml.Node) { u.Models = d.strings(v, f) },
		"api_version":       func(f string, v *yaml.Node) { u.APIVersion = d.str(v, f) },
		"deployments":       func(f string, v *yaml.Node) { u.Deployments = d.stringMap(v, f) },
		"anthropic_version": func(f string, v *yaml.Node) { u.AnthropicVersion = d.str(v, f) },
		"timeout":           func(f string, v *yaml.Node) { u.Timeout = d.duration(v, f, u.Timeout) },
		"connect_timeout":   func(f string, v *yaml.Node) { u.ConnectTimeout = d.duration(v, f, u.ConnectTimeout) },
	})
	switch {
	case u.Type == TypeOpenAI && u.BaseURL == "":
		u.BaseURL = DefaultOpenAIBaseURL
	case u.Type == TypeAnthropic && u.BaseURL == "":
		u.BaseURL = DefaultAnthropicBaseURL
	}
	if u.Models == nil {
		u.Models = []string{"*"}
	}
	return u
}

// sink decodes one record sink. Keys of every type are read whatever the
// type (Validate rejects those the type does not use); the defaults of the
// keys the type uses are filled in where the file leaves them out.
func (d *decoder) sink(n *yaml.Node, field string) Sink {
	var s Sink
	d.mapping(n, field, map[string]handler{
		"type":           func(f string, v *yaml.Node) { s.Type = d.str(v, f) },
		"path":           func(f string, v *yaml.Node) { s.Path = d.str(v, f) },
		"max_bytes":      func(f string, v *yaml.Node) { s.MaxBytes = d.size(v, f, 0) },
		"max_files":      func(f string, v *yaml.Node) { s.MaxFiles = int(d.int(v, f, 0)) },
		"redis_url":      func(f string, v *yaml.Node) { s.RedisURL = d.str(v, f) },
		"redis_url_env":  func(f string, v *yaml.Node) { s.RedisURLEnv = d.str(v, f) },
		"stream":         func(f string, v *yaml.Node) { s.Stream = d.str(v, f) },
		"max_len":        func(f string, v *yaml.Node) { s.MaxLen = d.int(v, f, 0) },
		"url":            func(f string, v *yaml.Node) { s.URL = d.str(v, f) },
		"token_env":      func(f string, v *yaml.Node) { s.TokenEnv = d.str(v, f) },
		"max_batch":      func(f string, v *yaml.Node) { s.MaxBatch = int(d.int(v, f, 0)) },
		"flush_interval": func(f string, v *yaml.Node) { s.FlushInterval = d.duration(v, f, 0) },
		"queue":          func(f string, v *yaml.Node) { s.Queue = int(d.int(v, f, 0)) },
		"max_attempts":   func(f string, v *yaml.Node) { s.MaxAttempts = int(d.int(v, f, 0)) },
		"timeout":        func(f string, v *yaml.Node) { s.Timeout = d.duration(v, f, 0) },
		"close_timeout":  func(f string, v *yaml.Node) { s.CloseTimeout = d.duration(v, f, 0) },
	})
	absent := func(key string) bool {
		_, ok := d.lines[join(field, key)]
		return !ok
	}
	def := func(key string, set func()) {
		if absent(key) {
			set()
		}
	}
	switch s.Type {
	case SinkJSONL:
		if s.MaxBytes > 0 {
			def("max_files", func() { s.MaxFiles = DefaultSinkMaxFiles })
		}
	case SinkRedisStream:
		def("stream", func() { s.Stream = DefaultSinkStream })
		def("max_len", func() { s.MaxLen = DefaultSinkMaxLen })
		def("timeout", func() { s.Timeout = DefaultSinkRedisTimeout })
	case SinkHTTP:
		def("max_batch", func() { s.MaxBatch = DefaultSinkMaxBatch })
		def("flush_interval", func() { s.FlushInterval = DefaultSinkFlushInterval })
		def("queue", func() { s.Queue = DefaultSinkQueue })
		def("max_attempts", func() { s.MaxAttempts = DefaultSinkMaxAttempts })
		def("timeout", func() { s.Timeout = DefaultSinkHTTPTimeout })
		def("close_timeout", func() { s.CloseTimeout = DefaultSinkCloseTimeout })
	}
	return s
}

func (d *decoder) enforcement(n *yaml.Node, field string, e *Enforcement) {
	d.mapping(n, field, map[string]handler{
		"mode":        func(f string, v *yaml.Node) { e.Mode = d.str(v, f) },
		"point_modes": func(f string, v *yaml.Node) { e.PointModes = d.stringMap(v, f) },
		"composition": func(f string, v *yaml.Node) {
			c := &e.Composition
			d.mapping(v, f, map[string]handler{
				"profile":               func(f string, v *yaml.Node) { c.Profile = d.str(v, f) },
				"on_approval":           func(f string, v *yaml.Node) { c.OnApproval = d.str(v, f) },
				"on_disagreement":       func(f string, v *yaml.Node) { c.OnDisagreement = d.str(v, f) },
				"on_transform_conflict": func(f string, v *yaml.Node) { c.OnTransformConflict = d.str(v, f) },
			})
		},
		"identity_provider": func(f string, v *yaml.Node) {
			// YAML reads a bare null as "no value"; here it names the
			// null provider.
			if rv := resolve(v); isNull(rv) && rv.Value == IdentityNull {
				e.IdentityProvider = IdentityNull
				return
			}
			e.IdentityProvider = d.str(v, f)
		},
		"identity_key_env":    func(f string, v *yaml.Node) { e.IdentityKeyEnv = d.str(v, f) },
		"interceptor_timeout": func(f string, v *yaml.Node) { e.InterceptorTimeout = d.duration(v, f, e.InterceptorTimeout) },
		"max_context_bytes":   func(f string, v *yaml.Node) { e.MaxContextBytes = int(d.size(v, f, int64(e.MaxContextBytes))) },
		"max_depth":           func(f string, v *yaml.Node) { e.MaxDepth = int(d.int(v, f, int64(e.MaxDepth))) },
	})
}

// isCommonInterceptorKey reports whether k is one of the keys every
// interceptor has; the rest of its mapping belongs to its type.
func isCommonInterceptorKey(k string) bool { return k == "name" || k == "type" || k == "points" }

// interceptors decodes the common keys of each interceptor and keeps its
// whole mapping for the type's own decoder.
func (d *decoder) interceptors(n *yaml.Node, field string) []Interceptor {
	var out []Interceptor
	d.sequence(n, field, func(f string, i int, v *yaml.Node) {
		v = resolve(v)
		ic := Interceptor{File: d.ps.file, Line: v.Line, Index: i}
		if v.Kind != yaml.MappingNode {
			d.ps.add(v.Line, f, "must be a mapping with at least name and type")
			return
		}
		ic.Spec = *v
		d.lines[f] = v.Line
		d.pairs(v, f, join, "", func(key, kf string, kv *yaml.Node) bool {
			switch key {
			case "name":
				ic.Name = d.str(kv, kf)
			case "type":
				ic.Type = d.str(kv, kf)
			case "points":
				ic.Points = d.strings(kv, kf)
			}
			return true // the type's decoder judges the other keys
		})
		out = append(out, ic)
	})
	return out
}

// valueLine is the line a field is reported at: its value's for a scalar,
// its key's for a mapping or list (whose node starts at its first entry).
func valueLine(key, v *yaml.Node) int {
	if rv := resolve(v); rv.Kind == yaml.ScalarNode {
		return rv.Line
	}
	return key.Line
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// join appends a key to a field path.
func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// mapKey appends a free-form map key (a point name, a model name), quoting
// it when it would not read as one path segment.
func mapKey(field, key string) string {
	if plainKey.MatchString(key) {
		return join(field, key)
	}
	return field + "[" + strconv.Quote(key) + "]"
}

func index(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

// pairs walks a mapping's entries, rejecting non-string and duplicate keys
// and recording the line of each value under keyField(field, key). visit
// returns false for a key it does not know; unknown explains why that is a
// problem.
func (d *decoder) pairs(n *yaml.Node, field string, keyField func(field, key string) string, unknown string, visit func(key, keyField string, v *yaml.Node) bool) {
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.ps.add(k.Line, field, "keys must be strings")
			continue
		}
		kf := keyField(field, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.ps.add(k.Line, kf, fmt.Sprintf("duplicate key (first at line %d)", first))
			continue
		}
		seen[k.Value] = k.Line
		d.lines[kf] = valueLine(k, v)
		if !visit(k.Value, kf, v) {
			d.ps.add(k.Line, kf, unknown)
		}
	}
}

// mapping decodes a mapping whose keys are fixed: each known key goes to its
// handler, and an unknown key is a problem naming the keys that are known.
// A null value (a key with nothing after the colon) is an empty mapping.
func (d *decoder) mapping(n *yaml.Node, field string, keys map[string]handler) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.ps.add(n.Line, field, "must be a mapping")
		return
	}
	d.pairs(n, field, join, "unknown key (expected one of "+knownKeys(keys)+")", func(key, kf string, v *yaml.Node) bool {
		h, ok := keys[key]
		if ok {
			h(kf, v)
		}
		return ok
	})
}

func knownKeys(keys map[string]handler) string {
	names := make([]string, 0, len(keys))
	for k := range keys {
		if strings.HasPrefix(k, extensionPrefix) {
			continue
		}
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// sequence calls each for every element of a list; null is an empty list.
func (d *decoder) sequence(n *yaml.Node, field string, each func(field string, i int, v *yaml.Node)) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.ps.add(n.Line, field, "must be a list")
		return
	}
	for i, v := range n.Content {
		f := index(field, i)
		d.lines[f] = resolve(v).Line
		each(f, i, v)
	}
}

// str decodes any scalar as its text (so an api_version such as 2024-10-21,
// which YAML would call a timestamp, stays a string); null is "".
func (d *decoder) str(n *yaml.Node, field string) string {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode {
		d.ps.add(n.Line, field, "must be a string")
		return ""
	}
	if isNull(n) {
		return ""
	}
	return n.Value
}

func (d *decoder) bool(n *yaml.Node, field string) bool {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
		var b bool
		if err := n.Decode(&b); err == nil {
			return b
		}
	}
	d.ps.add(n.Line, field, fmt.Sprintf("must be true or false (got %s)", describe(n)))
	return false
}

func (d *decoder) int(n *yaml.Node, field string, def int64) int64 {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		var i int64
		if err := n.Decode(&i); err == nil {
			return i
		}
	}
	d.ps.add(n.Line, field, fmt.Sprintf("must be an integer (got %s)", describe(n)))
	return def
}

// float decodes a number (an integer or a float).
func (d *decoder) float(n *yaml.Node, field string, def float64) float64 {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!float" || n.ShortTag() == "!!int") {
		var f float64
		if err := n.Decode(&f); err == nil {
			return f
		}
	}
	d.ps.add(n.Line, field, fmt.Sprintf("must be a number (got %s)", describe(n)))
	return def
}

// duration decodes a Go duration string such as 30s or 5m. A bare number is
// rejected (its unit would be a guess), except 0.
func (d *decoder) duration(n *yaml.Node, field string, def time.Duration) time.Duration {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		if v, err := time.ParseDuration(strings.TrimSpace(n.Value)); err == nil {
			return v
		}
	}
	d.ps.add(n.Line, field, fmt.Sprintf("must be a duration such as 30s or 5m (got %s)", describe(n)))
	return def
}

var sizePattern = regexp.MustCompile(`^([0-9]+)\s*(B|KiB|MiB|GiB)?$`)

// size decodes a byte count: an integer, or an integer with a B, KiB, MiB or
// GiB suffix.
func (d *decoder) size(n *yaml.Node, field string, def int64) int64 {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		if m := sizePattern.FindStringSubmatch(strings.TrimSpace(n.Value)); m != nil {
			v, err := strconv.ParseInt(m[1], 10, 64)
			mult := int64(1)
			switch m[2] {
			case "KiB":
				mult = 1 << 10
			case "MiB":
				mult = 1 << 20
			case "GiB":
				mult = 1 << 30
			}
			if err == nil && v <= math.MaxInt64/mult {
				return v * mult
			}
			d.ps.add(n.Line, field, fmt.Sprintf("size %s is too large", describe(n)))
			return def
		}
	}
	d.ps.add(n.Line, field, fmt.Sprintf("must be a size in bytes, or with a KiB, MiB or GiB suffix, such as 8MiB (got %s)", describe(n)))
	return def
}

// strings decodes a list of strings; an explicit empty list is non-nil so
// that Validate can tell it from an absent key.
func (d *decoder) strings(n *yaml.Node, field string) []string {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.ps.add(n.Line, field, "must be a list")
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, v := range n.Content {
		f := index(field, i)
		d.lines[f] = resolve(v).Line
		out = append(out, d.str(v, f))
	}
	return out
}

// stringMap decodes a mapping of free-form keys to strings.
func (d *decoder) stringMap(n *yaml.Node, field string) map[string]string {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.ps.add(n.Line, field, "must be a mapping")
		return nil
	}
	out := make(map[string]string, len(n.Content)/2)
	d.pairs(n, field, mapKey, "", func(key, kf string, v *yaml.Node) bool {
		out[key] = d.str(v, kf)
		return true
	})
	return out
}

// describe quotes a scalar for a problem message, or names the node kind.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return "an unsupported YAML node"
}
