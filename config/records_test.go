package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRecordSinksParse(t *testing.T) {
	clearEnv(t)
	t.Setenv("SIEM_TOKEN", "tok-s3cret")
	t.Setenv("AUDIT_REDIS_URL", "rediss://default:pw-s3cret@audit.internal:6380/1")
	c := mustParse(t, mockUpstream+`records:
  sinks:
    - type: jsonl
      path: /var/log/records.jsonl
      max_bytes: 100MiB
      max_files: 5
    - type: jsonl
      path: /var/log/rotated-default.jsonl
      max_bytes: 1KiB
    - type: redis-stream
      redis_url: redis://redis:6379/2
      stream: audit
      max_len: 5000
      timeout: 250ms
    - type: redis-stream
      redis_url_env: AUDIT_REDIS_URL
    - type: http
      url: https://siem.example.com/ingest?source=gw
      token_env: SIEM_TOKEN
      max_batch: 500
      flush_interval: 2s
      queue: 50000
      max_attempts: 5
      timeout: 3s
      close_timeout: 10s
    - type: http
      url: http://collector:8080/records
`)
	want := []Sink{
		{Type: SinkJSONL, Path: "/var/log/records.jsonl", MaxBytes: 100 << 20, MaxFiles: 5},
		{Type: SinkJSONL, Path: "/var/log/rotated-default.jsonl", MaxBytes: 1 << 10, MaxFiles: DefaultSinkMaxFiles},
		{Type: SinkRedisStream, RedisURL: "redis://redis:6379/2", Stream: "audit", MaxLen: 5000, Timeout: 250 * time.Millisecond},
		{Type: SinkRedisStream, RedisURLEnv: "AUDIT_REDIS_URL", RedisURL: "rediss://default:pw-s3cret@audit.internal:6380/1",
			Stream: DefaultSinkStream, MaxLen: DefaultSinkMaxLen, Timeout: time.Second},
		{Type: SinkHTTP, URL: "https://siem.example.com/ingest?source=gw", TokenEnv: "SIEM_TOKEN", Token: "tok-s3cret",
			MaxBatch: 500, FlushInterval: 2 * time.Second, Queue: 50000, MaxAttempts: 5, Timeout: 3 * time.Second, CloseTimeout: 10 * time.Second},
		{Type: SinkHTTP, URL: "http://collector:8080/records", MaxBatch: 100, FlushInterval: time.Second, Queue: 10000,
			MaxAttempts: 3, Timeout: 5 * time.Second, CloseTimeout: 5 * time.Second},
	}
	if !reflect.DeepEqual(c.Records.Sinks, want) {
		t.Errorf("sinks =\n%+v\nwant\n%+v", c.Records.Sinks, want)
	}
	s := c.Summary()
	for _, secret := range []string{"s3cret", "ingest", "source=gw", "8080/records"} {
		if strings.Contains(s, secret) {
			t.Errorf("Summary() contains %q: %s", secret, s)
		}
	}
	wantRecords := "records jsonl /var/log/records.jsonl (rotated at 104857600 bytes, 5 kept), jsonl /var/log/rotated-default.jsonl (rotated at 1024 bytes, 10 kept), " +
		"redis-stream redis:6379 audit, redis-stream audit.internal:6380 hooks-gateway:records, http siem.example.com, http collector:8080"
	if !strings.HasSuffix(s, wantRecords) {
		t.Errorf("Summary() =\n%s\nwant it to end with\n%s", s, wantRecords)
	}
}

func TestRecordSinkRedisURLFallsBackToTheSessionStore(t *testing.T) {
	clearEnv(t)
	src := mockUpstream + "sessions:\n  store: redis\n  redis_url: redis://sessions:6379/0\nrecords:\n  sinks:\n    - type: redis-stream\n"
	if got := mustParse(t, src).Records.Sinks[0].RedisURL; got != "redis://sessions:6379/0" {
		t.Errorf("from sessions.redis_url: %q", got)
	}
	t.Setenv(EnvRedisURL, "redis://:pw@from-env:6379/3")
	if got := mustParse(t, src).Records.Sinks[0].RedisURL; got != "redis://:pw@from-env:6379/3" {
		t.Errorf("from $%s: %q", EnvRedisURL, got)
	}

	// With the memory store, $HOOKS_GATEWAY_REDIS_URL is ignored by the
	// sessions, with a warning, unless a sink uses it.
	mem := mockUpstream + "interceptors: [{name: a, type: allow}]\n"
	if w := mustParse(t, mem).Warnings(); len(w) != 1 || !strings.Contains(w[0], "is ignored") {
		t.Errorf("memory store with the variable set: warnings %v", w)
	}
	c := mustParse(t, mem+"records:\n  sinks:\n    - type: redis-stream\n")
	if got := c.Records.Sinks[0].RedisURL; got != "redis://:pw@from-env:6379/3" {
		t.Errorf("memory store, from $%s: %q", EnvRedisURL, got)
	}
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("a redis-stream sink uses the variable, yet: %v", w)
	}
}

func TestRecordSinkProblems(t *testing.T) {
	clearEnv(t)
	t.Setenv("SET_TOKEN", "tok-s3cret-value")
	t.Setenv("BAD_REDIS_URL", "http://nope")
	tests := []struct {
		name, src string
		want      []string
	}{
		{"foreign keys", `records:
  sinks:
    - type: stdout
      path: x
      timeout: 1s
    - type: jsonl
      path: a.jsonl
      stream: s
      url: http://x
    - type: redis-stream
      redis_url: redis://r:6379
      max_bytes: 1MiB
      queue: 5
    - type: http
      url: http://x
      max_len: 3
      redis_url_env: X
`, []string{
			"gateway.yaml:7: records.sinks[0].path: is only used by jsonl sinks",
			"gateway.yaml:8: records.sinks[0].timeout: is only used by redis-stream and http sinks",
			"gateway.yaml:11: records.sinks[1].stream: is only used by redis-stream sinks",
			"gateway.yaml:12: records.sinks[1].url: is only used by http sinks",
			"gateway.yaml:15: records.sinks[2].max_bytes: is only used by jsonl sinks",
			"gateway.yaml:16: records.sinks[2].queue: is only used by http sinks",
			"gateway.yaml:19: records.sinks[3].max_len: is only used by redis-stream sinks",
			"gateway.yaml:20: records.sinks[3].redis_url_env: is only used by redis-stream sinks",
		}},
		{"jsonl rotation", `records:
  sinks:
    - type: jsonl
      path: a.jsonl
      max_files: 3
    - type: jsonl
      path: b.jsonl
      max_bytes: 100
    - type: jsonl
      path: c.jsonl
      max_bytes: 1MiB
      max_files: 0
    - type: jsonl
      path: d.jsonl
      max_bytes: 1MiB
      max_files: 1001
    - type: jsonl
      path: e.jsonl
      max_bytes: 10 MB
      max_files: many
    - type: jsonl
      path: f.jsonl
      max_bytes: 0
`, []string{
			"gateway.yaml:8: records.sinks[0].max_files: is only used with max_bytes (rotation)",
			"gateway.yaml:11: records.sinks[1].max_bytes: must be 0 (no rotation) or at least 1KiB (got 100)",
			"gateway.yaml:15: records.sinks[2].max_files: must be between 1 and 1000 (got 0)",
			"gateway.yaml:19: records.sinks[3].max_files: must be between 1 and 1000 (got 1001)",
			`gateway.yaml:22: records.sinks[4].max_bytes: must be a size in bytes, or with a KiB, MiB or GiB suffix, such as 8MiB (got "10 MB")`,
			`gateway.yaml:23: records.sinks[4].max_files: must be an integer (got "many")`,
		}},
		{"redis-stream", `records:
  sinks:
    - type: redis-stream
    - type: redis-stream
      redis_url: http://r:6379
    - type: redis-stream
      redis_url: redis://u:hunter2@r:6379
    - type: redis-stream
      redis_url: redis://r:6379
      redis_url_env: SOME_URL
    - type: redis-stream
      redis_url_env: UNSET_URL
    - type: redis-stream
      redis_url_env: BAD_REDIS_URL
    - type: redis-stream
      redis_url: redis://r:6379
      stream: ""
      max_len: 0
      timeout: 0s
    - type: redis-stream
      redis_url: redis://q:6379
    - type: redis-stream
      redis_url: redis://q:6379
`, []string{
			"gateway.yaml:6: records.sinks[0].redis_url: is required by a redis-stream sink (or name a variable in redis_url_env, or share the session store's: sessions.redis_url or $HOOKS_GATEWAY_REDIS_URL)",
			"gateway.yaml:8: records.sinks[1].redis_url: must be a redis:// or rediss:// URL with a host",
			"gateway.yaml:10: records.sinks[2].redis_url: must not carry a password in the file; name a variable holding the whole URL in redis_url_env",
			"gateway.yaml:13: records.sinks[3].redis_url_env: cannot be combined with redis_url (name the variable holding the whole URL, or write a URL without a password)",
			"gateway.yaml:15: records.sinks[4].redis_url_env: environment variable UNSET_URL is not set",
			`gateway.yaml:20: records.sinks[6].stream: must not be empty`,
			"gateway.yaml:21: records.sinks[6].max_len: must be positive (got 0)",
			"gateway.yaml:22: records.sinks[6].timeout: must be positive (got 0s)",
			`gateway.yaml:25: records.sinks[8].stream: duplicate stream "hooks-gateway:records" on the same Redis (also records.sinks[7])`,
			"gateway.yaml: records.sinks[5].redis_url: must be a redis:// or rediss:// URL with a host (set by $BAD_REDIS_URL)",
		}},
		{"http", `records:
  sinks:
    - type: http
    - type: http
      url: ftp://x/y
    - type: http
      url: https://user:pw@siem/x
    - type: http
      url: https://siem/x#frag
    - type: http
      url: https://siem/x
      token_env: UNSET_TOKEN
      max_batch: 0
      flush_interval: 1
      queue: 0
      max_attempts: 0
      timeout: 0s
      close_timeout: -1s
    - type: http
      url: https://siem/x
      token_env: SET_TOKEN
    - type: http
      url: https://siem/y
      max_batch: 10001
      queue: 1000000000000
      max_attempts: 11
`, []string{
			"gateway.yaml:6: records.sinks[0].url: is required by an http sink",
			"gateway.yaml:8: records.sinks[1].url: must be an absolute http:// or https:// URL",
			"gateway.yaml:10: records.sinks[2].url: must not carry credentials; name the bearer token's environment variable in token_env",
			"gateway.yaml:12: records.sinks[3].url: must not have a fragment",
			"gateway.yaml:15: records.sinks[4].token_env: environment variable UNSET_TOKEN is not set",
			"gateway.yaml:16: records.sinks[4].max_batch: must be between 1 and 10000 (got 0)",
			`gateway.yaml:17: records.sinks[4].flush_interval: must be a duration such as 30s or 5m (got "1")`,
			"gateway.yaml:18: records.sinks[4].queue: must be between 1 and 1000000 (got 0)",
			"gateway.yaml:19: records.sinks[4].max_attempts: must be between 1 and 10 (got 0)",
			"gateway.yaml:20: records.sinks[4].timeout: must be positive (got 0s)",
			"gateway.yaml:21: records.sinks[4].close_timeout: must be positive (got -1s)",
			"gateway.yaml:23: records.sinks[5].url: duplicate http sink URL (also records.sinks[4])",
			"gateway.yaml:27: records.sinks[6].max_batch: must be between 1 and 10000 (got 10001)",
			"gateway.yaml:28: records.sinks[6].queue: must be between 1 and 1000000 (got 1000000000000)",
			"gateway.yaml:29: records.sinks[6].max_attempts: must be between 1 and 10 (got 11)",
		}},
		{"unknown key", "records:\n  sinks:\n    - type: http\n      url: http://x\n      batch: 5\n", []string{
			"gateway.yaml:8: records.sinks[0].batch: unknown key (expected one of close_timeout, flush_interval, max_attempts, max_batch, max_bytes, max_files, max_len, path, queue, redis_url, redis_url_env, stream, timeout, token_env, type, url)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemsOf(t, mockUpstream+tt.src)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			for _, p := range got {
				for _, secret := range []string{"hunter2", "user:pw", "s3cret"} {
					if strings.Contains(p, secret) {
						t.Errorf("a problem quotes %q: %s", secret, p)
					}
				}
			}
		})
	}
}

// TestHandBuiltSinks validates sinks built in Go, without a file: the
// non-zero values of foreign keys are reported all the same.
func TestHandBuiltSinks(t *testing.T) {
	clearEnv(t)
	c := mustParse(t, mockUpstream)
	c.Records.Sinks = []Sink{
		{Type: SinkJSONL, Path: "a.jsonl", MaxFiles: 3, Queue: 7},
		{Type: SinkRedisStream, RedisURL: "redis://r:6379", Stream: "s", MaxLen: 1, Timeout: time.Second},
	}
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate accepted foreign keys")
	}
	got := err.Error()
	for _, w := range []string{"records.sinks[0].max_files: is only used with max_bytes (rotation)", "records.sinks[0].queue: is only used by http sinks"} {
		if !strings.Contains(got, w) {
			t.Errorf("Validate() =\n%s\nwant it to contain %q", got, w)
		}
	}
	if strings.Contains(got, "sinks[1]") {
		t.Errorf("the valid redis-stream sink was reported:\n%s", got)
	}
}
