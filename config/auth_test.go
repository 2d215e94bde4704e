package config

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func hashOf(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

const openAIUpstream = "upstreams: [{name: openai, type: openai, api_key_env: UP_KEY}]\n"

func TestAuthKeysDecoded(t *testing.T) {
	clearEnv(t)
	t.Setenv("UP_KEY", "sk-up")
	t.Setenv("LEGACY_KEY", "legacy-secret")
	dir := t.TempDir()
	file := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(file, []byte("keys:\n  - name: from-file\n    sha256: "+hashOf("file-secret")+"\n    revoked: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, openAIUpstream+`auth:
  keys_file: `+file+`
  api_keys:
    - name: team-a
      sha256: `+hashOf("a-secret")+`
      tenant: acme
      models: ["gpt-4o*"]
      apis: [chat_completions, emit]
      client_turn_points: true
      rate_limit: {requests: 10, window: 1m}
    - key_env: LEGACY_KEY
      agent_id: billing
`)
	if c.Auth.Mode != AuthKeys || !c.Auth.RequiresKeys() {
		t.Errorf("mode = %q, want keys by default", c.Auth.Mode)
	}
	keys := c.Auth.Keys()
	if len(keys) != 3 {
		t.Fatalf("keys = %d, want 3", len(keys))
	}
	a, legacy, f := keys[0], keys[1], keys[2]
	if a.Name != "team-a" || a.AgentID != "team-a" || a.Tenant != "acme" || a.Hash != sha256.Sum256([]byte("a-secret")) ||
		!reflect.DeepEqual(a.Models, []string{"gpt-4o*"}) || !reflect.DeepEqual(a.APIs, []string{"chat_completions", "emit"}) ||
		!a.ClientTurnPoints || a.RateLimit != (RateLimit{Requests: 10, Window: time.Minute}) {
		t.Errorf("team-a = %+v", a)
	}
	if legacy.Name != "LEGACY_KEY" || legacy.AgentID != "billing" || legacy.Hash != sha256.Sum256([]byte("legacy-secret")) {
		t.Errorf("legacy = %+v", legacy)
	}
	if f.Name != "from-file" || !f.Revoked || f.Hash != sha256.Sum256([]byte("file-secret")) {
		t.Errorf("file key = %+v", f)
	}
	if got := c.AuthSummary(":8080"); got != "client auth: keys (3 keys, 1 revoked, key file "+file+")" {
		t.Errorf("summary = %q", got)
	}
}

func TestAuthProblems(t *testing.T) {
	clearEnv(t)
	t.Setenv("UP_KEY", "sk-up")
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"plaintext key refused", openAIUpstream + "auth:\n  api_keys:\n    - name: a\n      sha256: hgk_the-key-itself\n", []string{
			"gateway.yaml:5: auth.api_keys[0].sha256: must be the SHA-256 of the key as 64 lowercase hex digits (`hooks-gateway keys hash` prints it); the key itself never belongs in a file",
		}},
		{"both sha256 and key_env", openAIUpstream + "auth:\n  api_keys:\n    - {name: a, sha256: " + hashOf("x") + ", key_env: UP_KEY}\n", []string{
			"gateway.yaml:4: auth.api_keys[0].sha256: set either sha256 or key_env, not both",
		}},
		{"duplicates", openAIUpstream + "auth:\n  api_keys:\n    - {name: a, sha256: " + hashOf("x") + "}\n    - {name: a, sha256: " + hashOf("y") + "}\n    - {name: b, sha256: " + hashOf("x") + "}\n", []string{
			`gateway.yaml:5: auth.api_keys[1].name: duplicate key name "a" (also auth.api_keys[0])`,
			"gateway.yaml:6: auth.api_keys[2]: holds the same key as auth.api_keys[0]; each key must identify one client",
		}},
		{"bad attributes", openAIUpstream + "auth:\n  api_keys:\n    - name: \"a b\"\n      sha256: " + hashOf("x") + "\n      apis: [chat, emit, emit]\n      models: [\"[\"]\n      rate_limit: {requests: 0, window: 10ms}\n", []string{
			`gateway.yaml:4: auth.api_keys[0].name: must be 1 to 64 letters, digits, '_', '.' and '-', starting with a letter or digit (got "a b")`,
			`gateway.yaml:6: auth.api_keys[0].apis[0]: must be one of chat_completions, responses, messages, emit, sessions, mcp (got "chat")`,
			`gateway.yaml:6: auth.api_keys[0].apis[2]: duplicate API "emit"`,
			`gateway.yaml:7: auth.api_keys[0].models[0]: must be a model glob in path.Match syntax (got "[")`,
			"gateway.yaml:8: auth.api_keys[0].rate_limit.requests: must be a positive number of requests (got 0)",
			"gateway.yaml:8: auth.api_keys[0].rate_limit.window: must be at least 1s, such as 1m (got 10ms)",
		}},
		{"mode none with keys", openAIUpstream + "auth:\n  mode: none\n  api_keys: [{name: a, sha256: " + hashOf("x") + "}]\n", []string{
			"gateway.yaml:3: auth.mode: none serves clients without keys: remove auth.api_keys and auth.keys_file, or set mode: keys",
		}},
		{"mode keys without keys", openAIUpstream + "auth:\n  mode: keys\n", []string{
			"gateway.yaml:3: auth.mode: keys needs client keys: list them in auth.api_keys or auth.keys_file",
		}},
		{"unknown mode", openAIUpstream + "auth:\n  mode: open\n", []string{
			`gateway.yaml:3: auth.mode: must be keys or none (got "open")`,
		}},
		{"admin without token off loopback", openAIUpstream + "listeners: {http: \"127.0.0.1:8080\", admin: \":9090\"}\n", []string{
			`gateway.yaml:2: listeners.admin: must be a loopback address such as 127.0.0.1:9090 while auth.admin_token_env is not set: the admin endpoints would be open to the network (got ":9090")`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, tc.src)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func TestKeysFile(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "keys.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("keys:\n  - {name: old, sha256: " + hashOf("old") + "}\n")
	c := mustParse(t, "upstreams: [{name: m, type: mock}]\nauth:\n  keys_file: "+file+"\n  api_keys: [{name: inline, sha256: "+hashOf("inline")+"}]\n")
	if n := len(c.Auth.Keys()); n != 2 {
		t.Fatalf("keys = %d, want 2", n)
	}

	// Rotation: the file now holds the new key, the old one revoked.
	write("keys:\n  - {name: old, sha256: " + hashOf("old") + ", revoked: true}\n  - {name: new, sha256: " + hashOf("new") + "}\n")
	a, err := c.Auth.ReloadKeys()
	if err != nil {
		t.Fatal(err)
	}
	if keys := a.Keys(); len(keys) != 3 || !keys[1].Revoked || keys[2].Name != "new" || a.Version() == c.Auth.Version() {
		t.Errorf("reloaded keys = %+v", keys)
	}

	// A broken file keeps what was in effect and names file and line.
	write("keys:\n  - {name: inline, sha256: " + hashOf("other") + "}\n  - {name: x, key_env: SOME_VAR}\n  - {name: y, sha256: " + hashOf("inline") + "}\n")
	kept, err := c.Auth.ReloadKeys()
	if err == nil {
		t.Fatal("a broken key file reloaded")
	}
	if !reflect.DeepEqual(kept.Keys(), c.Auth.Keys()) {
		t.Error("a broken key file changed the keys")
	}
	for _, want := range []string{
		file + `:2: keys[0].name: duplicate key name "inline" (also auth.api_keys "inline")`,
		file + ":3: keys[1].key_env: unknown key (expected one of agent_id, apis, client_turn_points, mcp_servers, models, name, rate_limit, revoked, sha256, tenant)",
		file + `:4: keys[2]: holds the same key as auth.api_keys "inline"; each key must identify one client`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}

	// An emptied file is refused rather than revoking everything.
	write("")
	if _, err := c.Auth.ReloadKeys(); err == nil || !strings.Contains(err.Error(), "the key file has no keys: list") {
		t.Errorf("empty key file: %v", err)
	}
	write("keys: []\n")
	if a, err := c.Auth.ReloadKeys(); err != nil || len(a.FileKeys) != 0 {
		t.Errorf("keys: [] = %v, %v", a.FileKeys, err)
	}
}

func TestCheckExposure(t *testing.T) {
	clearEnv(t)
	t.Setenv("UP_KEY", "sk-up")
	real := mustParse(t, openAIUpstream)
	for _, addr := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "127.0.0.2:1"} {
		if err := real.CheckExposure(addr); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	for _, addr := range []string{":8080", "0.0.0.0:8080", "10.0.0.5:8080", "gateway.internal:8080"} {
		err := real.CheckExposure(addr)
		if err == nil || !strings.Contains(err.Error(), "auth: {mode: none}") || !strings.Contains(err.Error(), "auth.api_keys") {
			t.Errorf("%s: %v, want a refusal naming the fixes", addr, err)
		}
	}
	if got := real.AuthSummary("127.0.0.1:8080"); got != "client auth: none (loopback only)" {
		t.Errorf("summary = %q", got)
	}
	none := mustParse(t, openAIUpstream+"auth: {mode: none}\n")
	if err := none.CheckExposure(":8080"); err != nil || none.AuthSummary(":8080") != "client auth: none (explicit)" {
		t.Errorf("explicit none: %v, %q", err, none.AuthSummary(":8080"))
	}
	keyed := mustParse(t, openAIUpstream+"auth: {api_keys: [{name: a, sha256: "+hashOf("a")+"}]}\n")
	if err := keyed.CheckExposure(":8080"); err != nil || keyed.AuthSummary(":8080") != "client auth: keys (1 key)" {
		t.Errorf("keys: %v, %q", err, keyed.AuthSummary(":8080"))
	}
	mock := mustParse(t, "upstreams: [{name: m, type: mock}]\n")
	if err := mock.CheckExposure(":8080"); err != nil {
		t.Errorf("mock only: %v", err)
	}
	// The embedded default: loopback, whichever upstream it picks.
	t.Setenv(EnvOpenAIKey, "sk-real")
	def := Default()
	if err := def.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := def.CheckExposure(def.Listeners.HTTP); err != nil {
		t.Errorf("embedded default with OPENAI_API_KEY: %v", err)
	}
}
