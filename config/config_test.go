package config

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// clearEnv unsets every variable the loader reads by itself, so a developer's
// own OPENAI_API_KEY or HOOKS_GATEWAY_* cannot change a test's outcome.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, name := range []string{EnvListen, EnvRedisURL, EnvOpenAIKey, EnvOpenAIBaseURL} {
		t.Setenv(name, "") // registers the restore
		os.Unsetenv(name)
	}
}

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	c, err := Parse("gateway.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

// problemsOf parses src and returns its problems as strings.
func problemsOf(t *testing.T, src string) []string {
	t.Helper()
	_, err := Parse("gateway.yaml", []byte(src))
	if err == nil {
		t.Fatalf("Parse succeeded; want problems")
	}
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("Parse error is %T (%v), want *Error", err, err)
	}
	out := make([]string, len(cerr.Problems))
	for i, p := range cerr.Problems {
		out[i] = p.String()
	}
	return out
}

const mockUpstream = `upstreams:
  - name: mock
    type: mock
`

func TestParseFull(t *testing.T) {
	clearEnv(t)
	t.Setenv("OPENAI_KEY_T", "sk-test-openai")
	t.Setenv("AZURE_KEY_T", "azure-test")
	t.Setenv("CLIENT_A_KEY", "client-a-key")
	t.Setenv("ADMIN_T", "admin-token")
	t.Setenv("ID_KEY_T", "0123456789abcdef0123456789abcdef")
	c := mustParse(t, `listeners:
  http: 127.0.0.1:9000
  admin: 127.0.0.1:9001
upstreams:
  - name: openai
    type: openai
    base_url: https://api.openai.com/v1
    api_key_env: OPENAI_KEY_T
    models: ["gpt-4o*", "o3-*"]
    timeout: 2m
    connect_timeout: 5s
  - name: azure
    type: azure-openai
    base_url: https://contoso.openai.azure.com
    api_key_env: AZURE_KEY_T
    api_version: 2024-10-21
    deployments:
      gpt-4o: prod-gpt4o
      gpt-4.1: prod-gpt41
enforcement:
  mode: evaluate_only
  point_modes:
    output: enforce
  composition:
    profile: parallel/strictest
    on_transform_conflict: approval
  identity_provider: hmac-sha256-k1
  identity_key_env: ID_KEY_T
  interceptor_timeout: 750ms
  max_context_bytes: 160MiB
  max_depth: 64
interceptors:
  - name: block-all
    type: deny
    points: [output]
    reason: policy:closed
sessions:
  store: redis
  redis_url: redis://redis:6379/2
  key_prefix: "gw:"
  idle_timeout: 1h
  sweep_interval: 10s
  retention: 48h
  end_wait: 5s
  call_lease: 20m
records:
  sinks:
    - type: stdout
    - type: jsonl
      path: /var/log/records.jsonl
streaming:
  buffer_limit: 4MiB
  keep_alive: 15s
auth:
  api_keys:
    - key_env: CLIENT_A_KEY
      agent_id: billing-bot
      tenant: acme
  admin_token_env: ADMIN_T
limits:
  max_request_bytes: 2097152
  max_response_bytes: 64MiB
`)
	want := &Config{
		Source:    "gateway.yaml",
		Listeners: Listeners{HTTP: "127.0.0.1:9000", Admin: "127.0.0.1:9001"},
		Upstreams: []Upstream{
			{Name: "openai", Type: TypeOpenAI, BaseURL: "https://api.openai.com/v1", APIKeyEnv: "OPENAI_KEY_T", APIKey: "sk-test-openai",
				Models: []string{"gpt-4o*", "o3-*"}, Timeout: 2 * time.Minute, ConnectTimeout: 5 * time.Second, Line: 5},
			{Name: "azure", Type: TypeAzure, BaseURL: "https://contoso.openai.azure.com", APIKeyEnv: "AZURE_KEY_T", APIKey: "azure-test",
				Models: []string{"*"}, APIVersion: "2024-10-21", Deployments: map[string]string{"gpt-4o": "prod-gpt4o", "gpt-4.1": "prod-gpt41"},
				Timeout: DefaultUpstreamTimeout, ConnectTimeout: DefaultConnectTimeout, Line: 12},
		},
		Enforcement: Enforcement{
			Mode: "evaluate_only", PointModes: map[string]string{"output": "enforce"},
			Composition:      Composition{Profile: "parallel/strictest", OnTransformConflict: "approval"},
			IdentityProvider: "hmac-sha256-k1", IdentityKeyEnv: "ID_KEY_T", IdentityKey: []byte("0123456789abcdef0123456789abcdef"),
			InterceptorTimeout: 750 * time.Millisecond, MaxContextBytes: 160 << 20, MaxDepth: 64,
		},
		Sessions: Sessions{Store: StoreRedis, RedisURL: "redis://redis:6379/2", KeyPrefix: "gw:", IdleTimeout: time.Hour, SweepInterval: 10 * time.Second,
			Retention: 48 * time.Hour, EndWait: 5 * time.Second, StartupWait: 30 * time.Second, CallLease: 20 * time.Minute, DenyReplayWindow: time.Minute, CacheBytes: DefaultSessionCacheBytes},
		Records:   Records{Sinks: []Sink{{Type: SinkStdout}, {Type: SinkJSONL, Path: "/var/log/records.jsonl"}}, Format: RecordsFormatRecord, PolicyMarkers: true},
		Streaming: Streaming{BufferLimit: 4 << 20, KeepAlive: 15 * time.Second, Mode: StreamingBuffered, Segment: defaultSegment},
		Auth: Auth{
			Mode: AuthKeys,
			APIKeys: []APIKey{{Name: "CLIENT_A_KEY", KeyEnv: "CLIENT_A_KEY", Hash: sha256.Sum256([]byte("client-a-key")),
				AgentID: "billing-bot", Tenant: "acme", hashed: true}},
			AdminTokenEnv: "ADMIN_T", AdminToken: "admin-token",
		},
		Limits:    Limits{MaxRequestBytes: 2 << 20, MaxResponseBytes: 64 << 20, MaxMessages: DefaultMaxMessages, MaxInputMessages: DefaultMaxInputMessages},
		Server:    defaultServer(),
		Runtime:   Runtime{GCPercent: DefaultGCPercent},
		Tracing:   Tracing{ServiceName: DefaultServiceName, SampleRatio: 1},
		Approvals: Approvals{Timeout: DefaultApprovalTimeout, Webhook: ApprovalWebhook{Timeout: DefaultApprovalWebhookTimeout}},
	}
	if len(c.Interceptors) != 1 {
		t.Fatalf("interceptors = %d, want 1", len(c.Interceptors))
	}
	ic := c.Interceptors[0]
	if ic.Name != "block-all" || ic.Type != "deny" || !reflect.DeepEqual(ic.Points, []string{"output"}) ||
		ic.File != "gateway.yaml" || ic.Line != 33 || ic.Index != 0 || ic.Field() != "interceptors[0]" {
		t.Errorf("interceptor = %+v", ic)
	}
	c.Interceptors, c.lines, c.envFrom = nil, nil, nil
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", c, want)
	}
	if w := mustParse(t, mockUpstream).Warnings(); len(w) == 0 {
		t.Errorf("a config with no interceptors has no warnings")
	}
}

func TestParseAnthropic(t *testing.T) {
	clearEnv(t)
	t.Setenv("ANTHROPIC_KEY_T", "sk-ant-test")
	c := mustParse(t, `upstreams:
  - name: claude
    type: anthropic
    base_url: https://gateway.example.com/anthropic
    api_key_env: ANTHROPIC_KEY_T
    anthropic_version: "2023-06-01"
    pass_client_key: true
    models: ["claude-*"]
`)
	want := Upstream{Name: "claude", Type: TypeAnthropic, BaseURL: "https://gateway.example.com/anthropic", APIKeyEnv: "ANTHROPIC_KEY_T",
		APIKey: "sk-ant-test", AnthropicVersion: "2023-06-01", PassClientKey: true, Models: []string{"claude-*"},
		Timeout: DefaultUpstreamTimeout, ConnectTimeout: DefaultConnectTimeout, Line: 2}
	if !reflect.DeepEqual(c.Upstreams, []Upstream{want}) {
		t.Errorf("upstreams =\n%+v\nwant\n%+v", c.Upstreams, want)
	}
}

func TestParseDefaults(t *testing.T) {
	clearEnv(t)
	c := mustParse(t, mockUpstream+`  - name: local
    type: openai
  - name: claude
    type: anthropic
`)
	if c.Listeners != (Listeners{HTTP: ":8080"}) {
		t.Errorf("listeners = %+v", c.Listeners)
	}
	if u := c.Upstreams[0]; !reflect.DeepEqual(u.Models, []string{"*"}) || u.Timeout != 10*time.Minute || u.ConnectTimeout != 10*time.Second {
		t.Errorf("mock upstream = %+v", u)
	}
	if got := c.Upstreams[1].BaseURL; got != "https://api.openai.com/v1" {
		t.Errorf("openai base_url defaults to %q", got)
	}
	if u := c.Upstreams[2]; u.BaseURL != "https://api.anthropic.com" || u.AnthropicVersion != "" {
		t.Errorf("anthropic upstream defaults to %+v", u)
	}
	wantEnf := Enforcement{Mode: "enforce", Composition: Composition{Profile: "sequential/first_deny"}, IdentityProvider: "jcs-sha256",
		InterceptorTimeout: 5 * time.Second, MaxContextBytes: 21 << 20, MaxDepth: 128}
	if !reflect.DeepEqual(c.Enforcement, wantEnf) {
		t.Errorf("enforcement = %+v, want %+v", c.Enforcement, wantEnf)
	}
	if want := (Sessions{Store: "memory", KeyPrefix: "hooks-gateway:", IdleTimeout: 30 * time.Minute, SweepInterval: 30 * time.Second,
		Retention: 24 * time.Hour, EndWait: 30 * time.Second, StartupWait: 30 * time.Second, CallLease: 15 * time.Minute, DenyReplayWindow: time.Minute, CacheBytes: DefaultSessionCacheBytes}); !reflect.DeepEqual(c.Sessions, want) {
		t.Errorf("sessions = %+v", c.Sessions)
	}
	if !reflect.DeepEqual(c.Records.Sinks, []Sink{{Type: "stdout"}}) {
		t.Errorf("records = %+v", c.Records)
	}
	if c.Streaming != (Streaming{BufferLimit: 8 << 20, Mode: StreamingBuffered, Segment: defaultSegment}) || c.Limits != (Limits{MaxRequestBytes: 10 << 20, MaxResponseBytes: 8 << 20, MaxMessages: 10_000, MaxInputMessages: 100}) {
		t.Errorf("streaming = %+v, limits = %+v", c.Streaming, c.Limits)
	}
}

// TestProblems pins the exact message of every rule: file, line, field.
func TestProblems(t *testing.T) {
	clearEnv(t)
	t.Setenv("SET_KEY", "a-key-that-is-set")
	t.Setenv("SHORT_KEY", "too-short")
	t.Setenv("SAME_1", "same-key")
	t.Setenv("SAME_2", "same-key")
	os.Unsetenv("UNSET_KEY")
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"empty file", ``, []string{
			"gateway.yaml: upstreams: at least one upstream is required",
		}},
		{"syntax", mockUpstream + "listeners: a\n  http: b\n", []string{
			"gateway.yaml:5: invalid YAML: mapping values are not allowed in this context",
		}},
		{"two documents", mockUpstream + "---\nlisteners: {}\n", []string{
			"gateway.yaml:4: invalid YAML: a configuration is one YAML document; found a second",
		}},
		{"root not a mapping", "- a\n", []string{
			"gateway.yaml:1: the configuration must be a YAML mapping",
		}},
		{"unknown keys", mockUpstream + "    base: x\nlistener:\n  http: :1\n", []string{
			"gateway.yaml:4: upstreams[0].base: unknown key (expected one of anthropic_version, api_key_env, api_version, base_url, connect_timeout, deployments, models, name, pass_client_key, timeout, type)",
			"gateway.yaml:5: listener: unknown key (expected one of approvals, auth, enforcement, interceptors, limits, listeners, mcp, policy, records, runtime, seal, server, sessions, streaming, tracing, upstreams, wire)",
		}},
		{"duplicate key", mockUpstream + "    type: openai\n", []string{
			"gateway.yaml:4: upstreams[0].type: duplicate key (first at line 3)",
		}},
		{"wrong shapes", "upstreams: {name: a}\nlisteners: [a]\n", []string{
			"gateway.yaml:1: upstreams: must be a list",
			"gateway.yaml:2: listeners: must be a mapping",
		}},
		{"listeners", mockUpstream + "listeners:\n  http: 8080\n  admin: localhost\n", []string{
			`gateway.yaml:5: listeners.http: must be host:port, such as :8080 (got "8080")`,
			`gateway.yaml:6: listeners.admin: must be host:port, such as 127.0.0.1:9090 (got "localhost")`,
		}},
		{"admin equals http", mockUpstream + "listeners:\n  http: :80\n  admin: :80\n", []string{
			"gateway.yaml:6: listeners.admin: must differ from listeners.http (leave it empty to serve admin endpoints there)",
		}},
		{"upstream type", "upstreams:\n  - name: a\n    type: opneai\n  - name: b\n", []string{
			`gateway.yaml:3: upstreams[0].type: must be one of openai, azure-openai, anthropic, mock (got "opneai")`,
			"gateway.yaml:4: upstreams[1].type: is required (one of openai, azure-openai, anthropic, mock)",
		}},
		{"upstream names", "upstreams:\n  - type: mock\n  - name: Big\n    type: mock\n  - name: m\n    type: mock\n  - name: m\n    type: mock\n", []string{
			"gateway.yaml:2: upstreams[0].name: is required",
			`gateway.yaml:3: upstreams[1].name: must match ^[a-z0-9][a-z0-9_.-]*$ (got "Big")`,
			`gateway.yaml:7: upstreams[3].name: duplicate upstream name "m" (also upstreams[2])`,
		}},
		{"mock takes no provider keys", mockUpstream + "    base_url: http://x\n    api_key_env: SET_KEY\n    pass_client_key: true\n    api_version: v\n    deployments: {a: b}\n", []string{
			"gateway.yaml:4: upstreams[0].base_url: is not used by a mock upstream",
			"gateway.yaml:5: upstreams[0].api_key_env: is not used by a mock upstream",
			"gateway.yaml:6: upstreams[0].pass_client_key: is not used by a mock upstream",
			"gateway.yaml:7: upstreams[0].api_version: is not used by a mock upstream",
			"gateway.yaml:8: upstreams[0].deployments: is not used by a mock upstream",
		}},
		{"azure requirements", "upstreams:\n  - name: az\n    type: azure-openai\n    deployments:\n      gpt-4.1: bad name\n", []string{
			"gateway.yaml:2: upstreams[0].base_url: is required for azure-openai, such as https://<resource>.openai.azure.com",
			"gateway.yaml:2: upstreams[0].api_version: is required for azure-openai, such as 2024-10-21",
			`gateway.yaml:5: upstreams[0].deployments["gpt-4.1"]: must be a deployment name of letters, digits, '.', '_' and '-' (got "bad name")`,
		}},
		{"anthropic keys", "upstreams:\n  - name: c\n    type: anthropic\n    anthropic_version: 2023 06\n    api_version: v\n  - name: o\n    type: openai\n    anthropic_version: 2023-06-01\n  - name: m\n    type: mock\n    anthropic_version: 2023-06-01\n", []string{
			`gateway.yaml:4: upstreams[0].anthropic_version: must be an anthropic-version such as 2023-06-01 (got "2023 06")`,
			"gateway.yaml:5: upstreams[0].api_version: is only used by azure-openai upstreams",
			"gateway.yaml:8: upstreams[1].anthropic_version: is only used by anthropic upstreams",
			"gateway.yaml:11: upstreams[2].anthropic_version: is not used by a mock upstream",
		}},
		{"anthropic base url and key", "upstreams:\n  - name: c\n    type: anthropic\n    base_url: https://api.anthropic.com?x=1\n    api_key_env: UNSET_KEY\n", []string{
			`gateway.yaml:4: upstreams[0].base_url: must not have a query or fragment (got "https://api.anthropic.com?x=1")`,
			"gateway.yaml:5: upstreams[0].api_key_env: environment variable UNSET_KEY is not set",
		}},
		{"azure keys on openai", "upstreams:\n  - name: o\n    type: openai\n    api_version: 2024-10-21\n    deployments: {a: b}\n", []string{
			"gateway.yaml:4: upstreams[0].api_version: is only used by azure-openai upstreams",
			"gateway.yaml:5: upstreams[0].deployments: is only used by azure-openai upstreams",
		}},
		{"base urls", "upstreams:\n  - name: a\n    type: openai\n    base_url: api.openai.com/v1\n  - name: b\n    type: openai\n    base_url: https://user:pw@example.com/v1\n  - name: c\n    type: openai\n    base_url: https://example.com/v1?x=1\n", []string{
			`gateway.yaml:4: upstreams[0].base_url: must be an absolute http:// or https:// URL (got "api.openai.com/v1")`,
			"gateway.yaml:7: upstreams[1].base_url: must not carry credentials; name the key's environment variable in api_key_env",
			`gateway.yaml:10: upstreams[2].base_url: must not have a query or fragment (got "https://example.com/v1?x=1")`,
		}},
		{"api keys from env", "upstreams:\n  - name: a\n    type: openai\n    api_key_env: UNSET_KEY\n  - name: b\n    type: openai\n    api_key_env: UNSET_KEY\n    pass_client_key: true\n  - name: c\n    type: openai\n    api_key_env: not-a-name\n", []string{
			"gateway.yaml:4: upstreams[0].api_key_env: environment variable UNSET_KEY is not set",
			`gateway.yaml:11: upstreams[2].api_key_env: must be an environment variable name (got "not-a-name")`,
		}},
		{"pass-through with gateway keys", "upstreams:\n  - name: a\n    type: openai\n    pass_client_key: true\nauth:\n  api_keys:\n    - key_env: SET_KEY\n", []string{
			"gateway.yaml:4: upstreams[0].pass_client_key: cannot be combined with client keys (auth.api_keys, auth.keys_file): the client's bearer token is its gateway key, which must not reach the upstream",
		}},
		{"models", mockUpstream + "    models: []\n  - name: b\n    type: mock\n    models: ['gpt-[', '']\n", []string{
			`gateway.yaml:4: upstreams[0].models: must list at least one model glob (leave it out, or use "*", for every model)`,
			`gateway.yaml:7: upstreams[1].models[0]: invalid glob "gpt-[": syntax error in pattern`,
			"gateway.yaml:7: upstreams[1].models[1]: must not be empty",
		}},
		{"upstream timeouts", mockUpstream + "    timeout: 0s\n    connect_timeout: -1s\n", []string{
			"gateway.yaml:4: upstreams[0].timeout: must be positive (got 0s)",
			"gateway.yaml:5: upstreams[0].connect_timeout: must be positive (got -1s)",
		}},
		{"modes", mockUpstream + "enforcement:\n  mode: audit\n  point_modes:\n    pre_model: enforce\n    output: off\n", []string{
			`gateway.yaml:5: enforcement.mode: must be one of enforce, evaluate_only (got "audit")`,
			`gateway.yaml:7: enforcement.point_modes.pre_model: unknown interception point "pre_model" (one of agent_startup, input, pre_model_call, post_model_call, pre_tool_call, post_tool_call, output, agent_shutdown)`,
			`gateway.yaml:8: enforcement.point_modes.output: must be one of enforce, evaluate_only (got "off")`,
		}},
		{"composition", mockUpstream + "enforcement:\n  composition:\n    profile: parallel/fastest\n    on_approval: continue\n    on_disagreement: allow\n    on_transform_conflict: merge\n", []string{
			`gateway.yaml:6: enforcement.composition.profile: must be one of sequential/first_deny, sequential/run_all, parallel/strictest, parallel/unanimous (got "parallel/fastest")`,
			`gateway.yaml:7: enforcement.composition.on_approval: must be stop or resume (got "continue")`,
			`gateway.yaml:8: enforcement.composition.on_disagreement: must be deny or approval (got "allow")`,
			`gateway.yaml:9: enforcement.composition.on_transform_conflict: must be deny or approval (got "merge")`,
		}},
		{"identity provider name", mockUpstream + "enforcement:\n  identity_provider: hmac-sha256-Key1\n", []string{
			`gateway.yaml:5: enforcement.identity_provider: must be jcs-sha256, null or hmac-sha256-<key-id> with a key id of a-z, 0-9, '_' and '-' (got "hmac-sha256-Key1")`,
		}},
		{"hmac without key", mockUpstream + "enforcement:\n  identity_provider: hmac-sha256-k1\n", []string{
			"gateway.yaml:4: enforcement.identity_key_env: is required by the hmac-sha256-k1 identity provider",
		}},
		{"hmac key unset", mockUpstream + "enforcement:\n  identity_provider: hmac-sha256-k1\n  identity_key_env: UNSET_KEY\n", []string{
			"gateway.yaml:6: enforcement.identity_key_env: environment variable UNSET_KEY is not set",
		}},
		{"hmac key short", mockUpstream + "enforcement:\n  identity_provider: hmac-sha256-k1\n  identity_key_env: SHORT_KEY\n", []string{
			"gateway.yaml:6: enforcement.identity_key_env: the key in $SHORT_KEY is unusable: hmac-sha256 identity key must be at least 16 bytes",
		}},
		{"identity key without hmac", mockUpstream + "enforcement:\n  identity_provider: null\n  identity_key_env: SET_KEY\n", []string{
			"gateway.yaml:6: enforcement.identity_key_env: is only used by hmac-sha256-<key-id> identity providers",
		}},
		{"enforcement bounds", mockUpstream + "enforcement:\n  interceptor_timeout: 0s\n  max_context_bytes: 0\n  max_depth: 20000\n", []string{
			"gateway.yaml:5: enforcement.interceptor_timeout: must be positive (got 0s)",
			"gateway.yaml:6: enforcement.max_context_bytes: must be positive (got 0)",
			"gateway.yaml:7: enforcement.max_depth: must be between 1 and 10000 (got 20000)",
		}},
		{"interceptors", mockUpstream + "interceptors:\n  - type: allow\n  - name: Shout\n    type: allow\n  - name: a\n  - name: a\n    type: allow\n    points: [output, outptu, output]\n  - just-a-string\n", []string{
			"gateway.yaml:5: interceptors[0].name: is required",
			`gateway.yaml:6: interceptors[1].name: must match ^[a-z0-9][a-z0-9_.-]*$ (got "Shout")`,
			"gateway.yaml:8: interceptors[2].type: is required",
			`gateway.yaml:9: interceptors[3].name: duplicate interceptor name "a" (also interceptors[2])`,
			`gateway.yaml:11: interceptors[3].points[1]: unknown interception point "outptu" (one of agent_startup, input, pre_model_call, post_model_call, pre_tool_call, post_tool_call, output, agent_shutdown)`,
			`gateway.yaml:11: interceptors[3].points[2]: duplicate point "output"`,
			"gateway.yaml:12: interceptors[4]: must be a mapping with at least name and type",
		}},
		{"interceptor indexes survive a bad entry", mockUpstream + "interceptors:\n  - oops\n  - {name: Bad, type: allow}\n", []string{
			"gateway.yaml:5: interceptors[0]: must be a mapping with at least name and type",
			`gateway.yaml:6: interceptors[1].name: must match ^[a-z0-9][a-z0-9_.-]*$ (got "Bad")`,
		}},
		{"sessions", mockUpstream + "sessions:\n  store: postgres\n  key_prefix: ''\n  idle_timeout: 0s\n  sweep_interval: 1\n  retention: 0s\n  end_wait: -1s\n  call_lease: 0s\n", []string{
			`gateway.yaml:5: sessions.store: must be one of memory, redis (got "postgres")`,
			"gateway.yaml:6: sessions.key_prefix: must not be empty (other data may share the Redis database)",
			"gateway.yaml:7: sessions.idle_timeout: must be positive (got 0s)",
			`gateway.yaml:8: sessions.sweep_interval: must be a duration such as 30s or 5m (got "1")`,
			"gateway.yaml:9: sessions.retention: must be positive (got 0s)",
			"gateway.yaml:10: sessions.end_wait: must be positive (got -1s)",
			"gateway.yaml:11: sessions.call_lease: must be positive (got 0s)",
		}},
		{"sessions durations", mockUpstream + "sessions:\n  retention: 1d\n  end_wait: soon\n  call_lease: 15\n", []string{
			`gateway.yaml:5: sessions.retention: must be a duration such as 30s or 5m (got "1d")`,
			`gateway.yaml:6: sessions.end_wait: must be a duration such as 30s or 5m (got "soon")`,
			`gateway.yaml:7: sessions.call_lease: must be a duration such as 30s or 5m (got "15")`,
		}},
		{"redis needs a url", mockUpstream + "sessions:\n  store: redis\n", []string{
			"gateway.yaml:4: sessions.redis_url: is required by the redis store (or set $HOOKS_GATEWAY_REDIS_URL)",
		}},
		{"redis url", mockUpstream + "sessions:\n  store: redis\n  redis_url: http://redis:6379\n", []string{
			"gateway.yaml:6: sessions.redis_url: must be a redis:// or rediss:// URL with a host",
		}},
		{"redis password in file", mockUpstream + "sessions:\n  store: redis\n  redis_url: rediss://default:hunter2@redis:6380/0\n", []string{
			"gateway.yaml:6: sessions.redis_url: must not carry a password in the file; set the whole URL in $HOOKS_GATEWAY_REDIS_URL",
		}},
		{"redis cluster", mockUpstream + "sessions:\n  store: redis\n  redis_url: redis://u@x:6379/2\n  redis_cluster:\n    - 10.0.0.1:6379\n    - nohost\n    - ':6379'\n    - a:99999\n  redis_sentinel:\n    master: ''\n", []string{
			"gateway.yaml:6: sessions.redis_url: must name database 0 (or none) with sessions.redis_cluster: Redis Cluster has only database 0",
			`gateway.yaml:9: sessions.redis_cluster[1]: must be host:port (got "nohost")`,
			`gateway.yaml:10: sessions.redis_cluster[2]: must be host:port (got ":6379")`,
			`gateway.yaml:11: sessions.redis_cluster[3]: must be host:port (got "a:99999")`,
			"gateway.yaml:12: sessions.redis_sentinel: cannot be combined with sessions.redis_cluster",
		}},
		{"redis sentinel", mockUpstream + "sessions:\n  store: redis\n  redis_sentinel:\n    master: ''\n    addrs:\n      - s1\n", []string{
			"gateway.yaml:7: sessions.redis_sentinel.master: must name the master (as in the Sentinel configuration)",
			`gateway.yaml:9: sessions.redis_sentinel.addrs[0]: must be host:port (got "s1")`,
		}},
		{"redis cluster with memory", mockUpstream + "sessions:\n  redis_cluster: [a:1]\n  redis_sentinel: {master: m, addrs: [b:2]}\n", []string{
			"gateway.yaml:5: sessions.redis_cluster: is only used by the redis store (set sessions.store: redis)",
			"gateway.yaml:6: sessions.redis_sentinel: is only used by the redis store (set sessions.store: redis)",
		}},
		{"redis url with memory", mockUpstream + "sessions:\n  redis_url: redis://redis:6379\n", []string{
			"gateway.yaml:5: sessions.redis_url: is only used by the redis store (set sessions.store: redis)",
		}},
		{"records", mockUpstream + "records:\n  sinks:\n    - type: jsonl\n    - type: stdout\n      path: x\n    - type: stdout\n    - type: jsonl\n      path: a.jsonl\n    - type: jsonl\n      path: a.jsonl\n    - type: kafka\n    - {}\n", []string{
			"gateway.yaml:6: records.sinks[0].path: is required by a jsonl sink",
			"gateway.yaml:8: records.sinks[1].path: is only used by jsonl sinks",
			"gateway.yaml:9: records.sinks[2].type: duplicate stdout sink (also records.sinks[1])",
			`gateway.yaml:13: records.sinks[4].path: duplicate jsonl path "a.jsonl" (also records.sinks[3])`,
			`gateway.yaml:14: records.sinks[5].type: must be one of stdout, jsonl, redis-stream, http (got "kafka")`,
			"gateway.yaml:15: records.sinks[6].type: is required (one of stdout, jsonl, redis-stream, http)",
		}},
		{"streaming", mockUpstream + "streaming:\n  buffer_limit: 0\n  keep_alive: -5s\n", []string{
			"gateway.yaml:5: streaming.buffer_limit: must be positive (got 0)",
			"gateway.yaml:6: streaming.keep_alive: must not be negative (0 turns keep-alives off; got -5s)",
		}},
		{"auth", mockUpstream + "auth:\n  api_keys:\n    - agent_id: x\n    - key_env: UNSET_KEY\n    - key_env: SAME_1\n    - key_env: SAME_2\n  admin_token_env: UNSET_KEY\n", []string{
			"gateway.yaml:6: auth.api_keys[0].name: is required (or key_env, which names the key by default)",
			"gateway.yaml:6: auth.api_keys[0].sha256: is required: the SHA-256 of the key (or key_env, a variable holding the key)",
			"gateway.yaml:7: auth.api_keys[1].key_env: environment variable UNSET_KEY is not set",
			"gateway.yaml:9: auth.api_keys[3]: holds the same key as auth.api_keys[2]; each key must identify one client",
			"gateway.yaml:10: auth.admin_token_env: environment variable UNSET_KEY is not set",
		}},
		{"limits", mockUpstream + "limits:\n  max_request_bytes: 0\n  max_response_bytes: 12 MB\n", []string{
			"gateway.yaml:5: limits.max_request_bytes: must be positive (got 0)",
			`gateway.yaml:6: limits.max_response_bytes: must be a size in bytes, or with a KiB, MiB or GiB suffix, such as 8MiB (got "12 MB")`,
		}},
		{"scalar types", mockUpstream + "    pass_client_key: yes\nenforcement:\n  max_depth: deep\nlisteners:\n  http: [a]\n", []string{
			`gateway.yaml:4: upstreams[0].pass_client_key: must be true or false (got "yes")`,
			`gateway.yaml:6: enforcement.max_depth: must be an integer (got "deep")`,
			"gateway.yaml:8: listeners.http: must be a string",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemsOf(t, tt.src)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// TestErrorsCollected checks that problems of every phase come back
// together, ordered by line, and that a field that failed to decode is not
// reported a second time by validation.
func TestErrorsCollected(t *testing.T) {
	clearEnv(t)
	t.Setenv(EnvListen, "nowhere")
	src := `upstreams:
  - name: main
    type: opneai
    timeout: 30
enforcement:
  mode: strict
interceptors:
  - name: a
    type: allow
    points: [everywhere]
sessions:
  store: redis
  idle_timeout: 10
colour: blue
`
	_, err := Parse("gateway.yaml", []byte(src))
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("err = %v, want *Error", err)
	}
	want := []Problem{
		{"gateway.yaml", 3, "upstreams[0].type", `must be one of openai, azure-openai, anthropic, mock (got "opneai")`},
		{"gateway.yaml", 4, "upstreams[0].timeout", `must be a duration such as 30s or 5m (got "30")`},
		{"gateway.yaml", 6, "enforcement.mode", `must be one of enforce, evaluate_only (got "strict")`},
		{"gateway.yaml", 10, "interceptors[0].points[0]", `unknown interception point "everywhere" (one of agent_startup, input, pre_model_call, post_model_call, pre_tool_call, post_tool_call, output, agent_shutdown)`},
		{"gateway.yaml", 11, "sessions.redis_url", "is required by the redis store (or set $HOOKS_GATEWAY_REDIS_URL)"},
		{"gateway.yaml", 13, "sessions.idle_timeout", `must be a duration such as 30s or 5m (got "10")`},
		{"gateway.yaml", 14, "colour", "unknown key (expected one of approvals, auth, enforcement, interceptors, limits, listeners, mcp, policy, records, runtime, seal, server, sessions, streaming, tracing, upstreams, wire)"},
		{"gateway.yaml", 0, "listeners.http", `must be host:port, such as :8080 (got "nowhere") (set by $HOOKS_GATEWAY_LISTEN)`},
	}
	if !reflect.DeepEqual(cerr.Problems, want) {
		t.Errorf("problems =\n%v\nwant\n%v", cerr.Problems, want)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) || lines[0] != `gateway.yaml:3: upstreams[0].type: must be one of openai, azure-openai, anthropic, mock (got "opneai")` ||
		lines[len(lines)-1] != `gateway.yaml: listeners.http: must be host:port, such as :8080 (got "nowhere") (set by $HOOKS_GATEWAY_LISTEN)` {
		t.Errorf("Error() =\n%s", err)
	}
}

func TestEnvOverrides(t *testing.T) {
	clearEnv(t)
	t.Setenv(EnvListen, "0.0.0.0:9999")
	t.Setenv(EnvRedisURL, "rediss://default:s3cret@cache.internal:6380/1")
	c := mustParse(t, mockUpstream+"listeners:\n  http: :8080\nsessions:\n  store: redis\n  redis_url: redis://localhost:6379\n")
	if c.Listeners.HTTP != "0.0.0.0:9999" {
		t.Errorf("listeners.http = %q, want the override", c.Listeners.HTTP)
	}
	// The environment may carry the password the file may not.
	if c.Sessions.RedisURL != "rediss://default:s3cret@cache.internal:6380/1" {
		t.Errorf("sessions.redis_url = %q, want the override", c.Sessions.RedisURL)
	}
	if s := c.Summary(); strings.Contains(s, "s3cret") || !strings.Contains(s, "sessions redis cache.internal:6380") {
		t.Errorf("Summary() = %q", s)
	}

	// An override of the memory store's unused URL is tolerated, with a warning.
	c = mustParse(t, mockUpstream)
	if !containsPrefix(c.Warnings(), "gateway.yaml: sessions.redis_url: is ignored: sessions.store is memory (set by $HOOKS_GATEWAY_REDIS_URL)") {
		t.Errorf("Warnings() = %q", c.Warnings())
	}

	t.Setenv(EnvRedisURL, "localhost:6379")
	got := problemsOf(t, mockUpstream+"sessions:\n  store: redis\n")
	want := []string{"gateway.yaml: sessions.redis_url: must be a redis:// or rediss:// URL with a host (set by $HOOKS_GATEWAY_REDIS_URL)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems = %q, want %q", got, want)
	}
}

func containsPrefix(list []string, s string) bool {
	for _, x := range list {
		if strings.HasPrefix(x, s) {
			return true
		}
	}
	return false
}

func TestSecretsNeverPrinted(t *testing.T) {
	clearEnv(t)
	t.Setenv("UP_KEY", "sk-secret-upstream-key")
	t.Setenv("CL_KEY", "secret-client-key")
	t.Setenv("ADM", "secret-admin-token")
	c := mustParse(t, `upstreams:
  - name: openai
    type: openai
    base_url: https://gateway.example.com/openai/v1
    api_key_env: UP_KEY
auth:
  api_keys: [{key_env: CL_KEY, agent_id: a}]
  admin_token_env: ADM
interceptors:
  - {name: ok, type: allow}
`)
	if c.Upstreams[0].APIKey != "sk-secret-upstream-key" || c.Auth.APIKeys[0].Hash != sha256.Sum256([]byte("secret-client-key")) || c.Auth.AdminToken != "secret-admin-token" {
		t.Fatalf("secrets not resolved: %+v %+v", c.Upstreams[0], c.Auth)
	}
	s := c.Summary()
	for _, secret := range []string{"secret", "UP_KEY", "/openai/v1"} {
		if strings.Contains(s, secret) {
			t.Errorf("Summary() contains %q: %s", secret, s)
		}
	}
	want := "config gateway.yaml: upstreams openai (openai gateway.example.com); policy ok (allow), profile sequential/first_deny, mode enforce, identity jcs-sha256; sessions memory; records stdout"
	if s != want {
		t.Errorf("Summary() =\n%s\nwant\n%s", s, want)
	}
}

func TestDefault(t *testing.T) {
	t.Run("mock without OPENAI_API_KEY", func(t *testing.T) {
		clearEnv(t)
		c := mustDefault(t)
		if c.Source != DefaultSource || len(c.Upstreams) != 1 || c.Upstreams[0].Name != "mock" || c.Upstreams[0].Type != TypeMock ||
			!reflect.DeepEqual(c.Upstreams[0].Models, []string{"*"}) {
			t.Errorf("upstreams = %+v", c.Upstreams)
		}
		checkDefaultPolicy(t, c)
		want := "config embedded default: upstreams mock (mock); policy redact-email (regex), deny-credentials (regex), profile sequential/first_deny, mode enforce, identity jcs-sha256; sessions memory; records stdout"
		if got := c.Summary(); got != want {
			t.Errorf("Summary() =\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("openai with OPENAI_API_KEY", func(t *testing.T) {
		clearEnv(t)
		t.Setenv(EnvOpenAIKey, "sk-from-env")
		c := mustDefault(t)
		u := c.Upstreams
		if len(u) != 1 || u[0].Type != TypeOpenAI || u[0].BaseURL != "https://api.openai.com/v1" || u[0].APIKey != "sk-from-env" ||
			!reflect.DeepEqual(u[0].Models, []string{"*"}) {
			t.Errorf("upstreams = %+v", u)
		}
		checkDefaultPolicy(t, c)
	})
	t.Run("OPENAI_BASE_URL", func(t *testing.T) {
		clearEnv(t)
		t.Setenv(EnvOpenAIKey, "sk-from-env")
		t.Setenv(EnvOpenAIBaseURL, "http://localhost:11434/v1")
		c := mustDefault(t)
		if got := c.Upstreams[0].BaseURL; got != "http://localhost:11434/v1" {
			t.Errorf("base_url = %q", got)
		}
		t.Setenv(EnvOpenAIBaseURL, "localhost:11434")
		err := Default().Validate()
		var cerr *Error
		want := `embedded default: upstreams[0].base_url: must be an absolute http:// or https:// URL (got "localhost:11434") (set by $OPENAI_BASE_URL)`
		if !errors.As(err, &cerr) || err.Error() != want {
			t.Errorf("Default().Validate() = %v, want %s", err, want)
		}
	})
	t.Run("HOOKS_GATEWAY_LISTEN", func(t *testing.T) {
		clearEnv(t)
		t.Setenv(EnvListen, ":9090")
		if c := mustDefault(t); c.Listeners.HTTP != ":9090" {
			t.Errorf("listeners = %+v", c.Listeners)
		}
	})
	t.Run("as a plain file", func(t *testing.T) {
		clearEnv(t)
		got := problemsOf(t, string(defaultYAML))
		if len(got) != 1 || !strings.HasSuffix(got[0], "upstreams[0].api_key_env: environment variable OPENAI_API_KEY is not set") {
			t.Errorf("problems = %q", got)
		}
		t.Setenv(EnvOpenAIKey, "sk-from-env")
		if c := mustParse(t, string(defaultYAML)); len(c.Upstreams) != 2 {
			t.Errorf("upstreams = %+v", c.Upstreams)
		}
	})
}

func mustDefault(t *testing.T) *Config {
	t.Helper()
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("Default().Validate: %v", err)
	}
	return c
}

func checkDefaultPolicy(t *testing.T, c *Config) {
	t.Helper()
	if len(c.Interceptors) != 2 {
		t.Fatalf("interceptors = %+v", c.Interceptors)
	}
	if ic := c.Interceptors[0]; ic.Name != "redact-email" || ic.Type != "regex" || !reflect.DeepEqual(ic.Points, []string{"pre_model_call"}) {
		t.Errorf("interceptors[0] = %+v", ic)
	}
	if ic := c.Interceptors[1]; ic.Name != "deny-credentials" || ic.Type != "regex" || !reflect.DeepEqual(ic.Points, []string{"post_model_call", "output"}) {
		t.Errorf("interceptors[1] = %+v", ic)
	}
	if c.Sessions.Store != StoreMemory || !reflect.DeepEqual(c.Records.Sinks, []Sink{{Type: SinkStdout}}) || c.Listeners.HTTP != "127.0.0.1:8080" {
		t.Errorf("sessions = %+v, records = %+v, listeners = %+v", c.Sessions, c.Records, c.Listeners)
	}
}

func TestWarnings(t *testing.T) {
	clearEnv(t)
	t.Setenv("ADM", "token")
	const guarded = "auth:\n  admin_token_env: ADM\n"
	noInterceptors := "gateway.yaml: interceptors: none configured in enforce mode: every request will be denied with host_error:no_interceptor"
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"no interceptors", mockUpstream + guarded, []string{noInterceptors}},
		{"evaluate_only", mockUpstream + guarded + "enforcement:\n  mode: evaluate_only\n", nil},
		{"one point enforced", mockUpstream + guarded + "enforcement:\n  mode: evaluate_only\n  point_modes: {output: enforce}\n", []string{noInterceptors}},
		{"unused knobs", mockUpstream + guarded + "interceptors: [{name: a, type: allow}]\nenforcement:\n  composition:\n    profile: sequential/run_all\n    on_approval: resume\n    on_disagreement: approval\n", []string{
			"gateway.yaml:10: enforcement.composition.on_approval: has no effect under profile sequential/run_all",
			"gateway.yaml:11: enforcement.composition.on_disagreement: has no effect under profile sequential/run_all",
		}},
		{"no sinks", mockUpstream + guarded + "interceptors: [{name: a, type: allow}]\nrecords:\n  sinks: []\n", []string{
			"gateway.yaml:8: records.sinks: is empty: interception records are discarded",
		}},
		{"no warnings", mockUpstream + "interceptors: [{name: a, type: allow}]\n", nil},
		{"admin listener", mockUpstream + "interceptors: [{name: a, type: allow}]\nlisteners: {admin: '127.0.0.1:9091'}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustParse(t, tt.src).Warnings(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Warnings() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDurationsAndSizes(t *testing.T) {
	clearEnv(t)
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{"1", 1}, {"1024", 1024}, {"512B", 512}, {"1KiB", 1024}, {"8MiB", 8 << 20}, {"8 MiB", 8 << 20}, {"2GiB", 2 << 30},
	} {
		c := mustParse(t, mockUpstream+"streaming:\n  buffer_limit: "+tt.in+"\n")
		if c.Streaming.BufferLimit != tt.want {
			t.Errorf("buffer_limit %s = %d, want %d", tt.in, c.Streaming.BufferLimit, tt.want)
		}
	}
	for _, bad := range []string{"8MB", "8mib", "1.5MiB", "-1", "true", "9223372036854775807GiB", "[1]"} {
		got := problemsOf(t, mockUpstream+"streaming:\n  buffer_limit: "+bad+"\n")
		if len(got) != 1 || !strings.HasPrefix(got[0], "gateway.yaml:5: streaming.buffer_limit: ") {
			t.Errorf("buffer_limit %s: problems %q", bad, got)
		}
	}
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{
		{"30s", 30 * time.Second}, {"5m", 5 * time.Minute}, {"1h30m", 90 * time.Minute}, {"250ms", 250 * time.Millisecond}, {"0", 0}, {"0s", 0},
	} {
		c := mustParse(t, mockUpstream+"streaming:\n  keep_alive: "+tt.in+"\n")
		if c.Streaming.KeepAlive != tt.want {
			t.Errorf("keep_alive %s = %s, want %s", tt.in, c.Streaming.KeepAlive, tt.want)
		}
	}
	for _, bad := range []string{"30", "5 minutes", "1d", "''", "{}"} {
		got := problemsOf(t, mockUpstream+"streaming:\n  keep_alive: "+bad+"\n")
		if len(got) != 1 || !strings.HasPrefix(got[0], "gateway.yaml:5: streaming.keep_alive: must be a duration such as 30s or 5m") {
			t.Errorf("keep_alive %s: problems %q", bad, got)
		}
	}
}

// sessions.deny_replay_window: 0 is off, not the default.
func TestDenyReplayWindowZero(t *testing.T) {
	clearEnv(t)
	if c := mustParse(t, mockUpstream+"sessions:\n  deny_replay_window: 0s\n"); c.Sessions.DenyReplayWindow != 0 {
		t.Fatalf("deny_replay_window: 0s = %s, want 0 (off)", c.Sessions.DenyReplayWindow)
	}
	if c := mustParse(t, mockUpstream); c.Sessions.DenyReplayWindow != DefaultDenyReplayWindow {
		t.Fatalf("default deny_replay_window = %s, want %s", c.Sessions.DenyReplayWindow, DefaultDenyReplayWindow)
	}
}

func TestYAMLFeatures(t *testing.T) {
	clearEnv(t)
	// Top-level x- keys hold anchors; aliases resolve; flow style, comments
	// and a bare null identity provider are plain YAML.
	c := mustParse(t, `x-timeouts: &slow 45s
upstreams:
  - {name: a, type: mock, timeout: *slow} # flow style
  - name: b
    type: mock
    timeout: *slow
enforcement:
  identity_provider: null
`)
	if c.Upstreams[0].Timeout != 45*time.Second || c.Upstreams[1].Timeout != 45*time.Second {
		t.Errorf("timeouts = %s, %s", c.Upstreams[0].Timeout, c.Upstreams[1].Timeout)
	}
	if c.Enforcement.IdentityProvider != IdentityNull {
		t.Errorf("identity_provider = %q", c.Enforcement.IdentityProvider)
	}
}

func TestLoad(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(path, []byte(mockUpstream+"listeners:\n  http: :1\n  admin: nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || err.Error() != path+`:6: listeners.admin: must be host:port, such as 127.0.0.1:9090 (got "nope")` {
		t.Errorf("Load = %v", err)
	}
	if err := os.WriteFile(path, []byte(mockUpstream), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil || c.Source != path {
		t.Errorf("Load = %+v, %v", c, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want ErrNotExist", err)
	}
}

func TestEngineOptions(t *testing.T) {
	clearEnv(t)
	t.Setenv("ID_KEY", "0123456789abcdef0123456789abcdef")
	c := mustParse(t, mockUpstream+`enforcement:
  mode: evaluate_only
  point_modes: {output: enforce}
  composition: {profile: parallel/unanimous, on_disagreement: approval}
  identity_provider: hmac-sha256-prod-1
  identity_key_env: ID_KEY
  interceptor_timeout: 2s
`)
	opts, err := c.Enforcement.EngineOptions()
	if err != nil {
		t.Fatal(err)
	}
	if opts.Identity == nil || opts.Identity.Name() != "hmac-sha256-prod-1" || opts.Mode != enforcement.EvaluateOnly ||
		opts.PointModes[enforcement.Output] != enforcement.Enforce || opts.Timeout != 2*time.Second ||
		opts.Composition != (enforcement.Composition{Profile: enforcement.ParallelUnanimous, OnDisagreement: "approval"}) {
		t.Errorf("EngineOptions = %+v", opts)
	}
	em, err := enforcement.NewEmitter(opts)
	if err != nil {
		t.Fatalf("NewEmitter: %v", err)
	}
	if em.ModeFor(enforcement.Output) != enforcement.Enforce || em.ModeFor(enforcement.Input) != enforcement.EvaluateOnly {
		t.Errorf("emitter modes wrong")
	}
	for provider, want := range map[string]string{"jcs-sha256": "jcs-sha256", "null": ""} {
		c := mustParse(t, mockUpstream+"enforcement:\n  identity_provider: "+provider+"\n")
		id, err := c.Enforcement.Identity()
		if err != nil || id.Name() != want {
			t.Errorf("Identity(%s) = %q, %v", provider, id.Name(), err)
		}
	}
}

func TestRedisClusterAndSentinel(t *testing.T) {
	c := mustParse(t, mockUpstream+"sessions:\n  store: redis\n  redis_cluster:\n    - 10.0.0.1:6379\n    - redis-2:6380\n")
	if got := c.Sessions.RedisCluster; !reflect.DeepEqual(got, []string{"10.0.0.1:6379", "redis-2:6380"}) {
		t.Errorf("sessions.redis_cluster = %q", got)
	}
	c = mustParse(t, mockUpstream+"sessions:\n  store: redis\n  redis_sentinel:\n    master: mymaster\n    addrs: [s1:26379, s2:26379]\n")
	if got := c.Sessions.RedisSentinel; got == nil || got.Master != "mymaster" || !reflect.DeepEqual(got.Addrs, []string{"s1:26379", "s2:26379"}) {
		t.Errorf("sessions.redis_sentinel = %+v", got)
	}
}

// defaultSegment is streaming.segment when the file leaves it out.
var defaultSegment = Segment{Bytes: 512, Interval: 250 * time.Millisecond, SentenceEnd: true, MaxSegments: 128, First: SegmentFirstArrival}

func TestParseStreamingModes(t *testing.T) {
	c, err := Parse("gateway.yaml", []byte(mockUpstream+`
streaming:
  mode: incremental
  surfaces: {responses: buffered}
  segment: {bytes: 1KiB, interval: 1s, sentence_end: false, max_segments: 9, first: boundary}
`))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Streaming
	if s.Segment != (Segment{Bytes: 1024, Interval: time.Second, MaxSegments: 9, First: SegmentFirstBoundary}) {
		t.Fatalf("segment = %+v", s.Segment)
	}
	for api, want := range map[string]string{"chat_completions": "incremental", "responses": "buffered", "messages": "incremental"} {
		if got := s.ModeFor(api); got != want {
			t.Errorf("ModeFor(%s) = %q, want %q", api, got, want)
		}
	}
	for _, tc := range []struct{ yaml, want string }{
		{"streaming: {mode: eager}", `streaming.mode: must be buffered or incremental (got "eager")`},
		{"streaming: {surfaces: {messages: fast}}", `streaming.surfaces.messages: must be buffered or incremental (got "fast")`},
		{"streaming: {segment: {bytes: 0}}", "streaming.segment.bytes: must be positive"},
		{"streaming: {segment: {max_segments: 0}}", "streaming.segment.max_segments: must be positive"},
		{"streaming: {segment: {interval: 0s}}", "streaming.segment.interval: must be positive"},
		{"streaming: {segment: {first: soon}}", `streaming.segment.first: must be arrival or boundary (got "soon")`},
	} {
		_, err := Parse("gateway.yaml", []byte(mockUpstream+tc.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
