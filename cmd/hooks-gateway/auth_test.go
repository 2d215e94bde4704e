package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
)

func TestKeysNew(t *testing.T) {
	var stdout, stderr syncBuffer
	if code := runKeys([]string{"new", "--name", "team-a"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	m := regexp.MustCompile(`(?m)^(hgk_[A-Za-z0-9_-]{43})\n.*\n- name: team-a\n  sha256: ([0-9a-f]{64})\n$`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("output:\n%s", stdout.String())
	}
	h := sha256.Sum256([]byte(m[1]))
	if hex.EncodeToString(h[:]) != m[2] {
		t.Errorf("the printed hash is not the key's")
	}
	var again syncBuffer
	runKeys([]string{"new"}, strings.NewReader(""), &again, &stderr)
	if strings.Contains(again.String(), m[1]) || !strings.Contains(again.String(), "\nsha256: ") {
		t.Errorf("a second key:\n%s", again.String())
	}
	if code := runKeys([]string{"new", "--name", "bad name"}, strings.NewReader(""), &stdout, &stderr); code != 2 {
		t.Errorf("bad name: exit %d", code)
	}
}

func TestKeysHash(t *testing.T) {
	for _, in := range []string{"hgk_abc\n", "hgk_abc\r\n", "hgk_abc"} {
		var stdout, stderr syncBuffer
		if code := runKeys([]string{"hash"}, strings.NewReader(in), &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		h := sha256.Sum256([]byte("hgk_abc"))
		if want := "sha256: " + hex.EncodeToString(h[:]) + "\n"; stdout.String() != want {
			t.Errorf("%q: %q, want %q", in, stdout.String(), want)
		}
	}
	var stdout, stderr syncBuffer
	if code := runKeys([]string{"hash"}, strings.NewReader(""), &stdout, &stderr); code != 2 {
		t.Errorf("empty stdin: exit %d", code)
	}
}

const realUpstreamConfig = `upstreams:
  - name: openai
    type: openai
    base_url: http://127.0.0.1:1/v1
    api_key_env: AUTH_TEST_UPSTREAM_KEY
interceptors:
  - {name: pass, type: allow}
records:
  sinks: []
`

// A real upstream and no client keys: only loopback, unless said so.
func TestListenRefusedWithoutAuth(t *testing.T) {
	t.Setenv("AUTH_TEST_UPSTREAM_KEY", "sk-test")
	t.Setenv("HOOKS_GATEWAY_LISTEN", "")
	t.Setenv("HOOKS_GATEWAY_REDIS_URL", "")
	path := writeConfig(t, realUpstreamConfig+"listeners: {http: \"0.0.0.0:0\"}\n")
	var stdout, stderr syncBuffer
	ready := make(chan string, 1)
	if code := run(context.Background(), []string{"--config", path}, &stdout, &stderr, ready); code != 2 || len(ready) != 0 {
		t.Fatalf("exit %d, want 2 and nothing served; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "refusing to listen on 0.0.0.0:0") || !strings.Contains(stderr.String(), "auth: {mode: none}") {
		t.Errorf("stderr does not name the fix:\n%s", stderr.String())
	}

	g := start(t, "--config", writeConfig(t, realUpstreamConfig+"listeners: {http: \"0.0.0.0:0\"}\nauth: {mode: none}\n"))
	if n := strings.Count(g.stderr.String(), "client auth: none (explicit)"); n != 1 {
		t.Errorf("%d auth lines, want 1:\n%s", n, g.stderr.String())
	}
	l := start(t, "--config", writeConfig(t, realUpstreamConfig+"listeners: {http: \"127.0.0.1:0\"}\n"))
	if !strings.Contains(l.stderr.String(), "client auth: none (loopback only)") {
		t.Errorf("loopback start:\n%s", l.stderr.String())
	}
}
