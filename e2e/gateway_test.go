// Package e2e_test runs official agent clients — Go SDKs in process, the
// JS SDKs and frameworks through node — against a real gateway listener with
// the built-in mock upstream behind it, on every API surface the gateway
// serves: chat completions, responses and messages.
package e2e_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// The policy every client runs under. Each scenario triggers one rule:
//   - redact-email rewrites what the model is sent (the mock echoes it);
//   - deny-credentials refuses an answer carrying an AWS key id;
//   - tool-policy refuses the shell tool and repairs search_* arguments
//     (limit clamped to 50, debug dropped) in the answer the client gets.
const clientPolicy = `
upstreams:
  - name: mock
    type: mock
    models: ["*"]
sessions:
  store: memory
records:
  sinks:
    - type: stdout
enforcement:
  mode: enforce
  composition:
    profile: sequential/first_deny
interceptors:
  - name: redact-email
    type: regex
    points: [pre_model_call]
    action: redact
    patterns: ['[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}']
    replacement: "[email]"
  - name: deny-credentials
    type: regex
    points: [post_model_call, output]
    action: deny
    reason: policy:credential_leak
    message: the response contained what looks like a credential
    patterns: ['AKIA[0-9A-Z]{16}']
  - name: tool-policy
    type: tools
    deny: ["shell"]
    reason: policy:tool_not_allowed
    arguments:
      - tool: "search_*"
        required: [query]
        properties:
          query: {type: string, max_length: 500, on_violation: truncate}
          limit: {type: integer, minimum: 1, maximum: 50, on_violation: clamp}
          debug: {forbidden: true, on_violation: drop}
`

// Scenario inputs and what the clients must see. The mock answers
// "echo: " + the last user text unless the text is a directive
// (providers/doc.go).
const (
	plainPrompt = "hello from the client"
	plainAnswer = "echo: hello from the client"

	streamPrompt = "/chunks 4 one two three four"
	streamAnswer = "one two three four"

	redactPrompt = "mail the report to bob@example.com today"
	redactAnswer = "echo: mail the report to [email] today"

	// credential is an AWS access key id shape; deny-credentials refuses
	// any answer carrying it.
	credential   = "AKIAABCDEFGHIJKLMNOP"
	denyPrompt   = "/say the key is " + credential
	denyReason   = "policy:credential_leak"
	leakFragment = "the key is"

	weatherTool   = "get_weather"
	weatherArgs   = `{"city":"Paris","days":3}`
	weatherPrompt = "/tool " + weatherTool + " " + weatherArgs
	// weatherResult is what the test's tool returns; the mock answers text
	// once the conversation carries a tool result.
	weatherResult = "sunny, 24 degrees"

	searchTool   = "search_docs"
	searchPrompt = "/tool " + searchTool + ` {"query":"vpn setup","limit":500,"debug":true}`
	// searchRepaired is the arguments object the client must receive.
	searchRepaired = `{"query":"vpn setup","limit":50}`
)

// startGateway serves clientPolicy on a real loopback listener until the
// test ends and returns its root URL (no /v1). top is more top-level YAML,
// interceptors more items of the interceptor list (each "  - ...").
func startGateway(t *testing.T, top, interceptors string) string {
	t.Helper()
	cfg, err := config.Parse("clients.yaml", []byte(top+clientPolicy+interceptors))
	if err != nil {
		t.Fatalf("config:\n%v", err)
	}
	return serveGateway(t, cfg, io.Discard)
}

// serveGateway serves a gateway built from cfg until the test ends; its
// stdout record sinks write to records.
func serveGateway(t *testing.T, cfg *config.Config, records io.Writer) string {
	t.Helper()
	asm, err := proxy.Build(context.Background(), cfg, records, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	t.Cleanup(func() { asm.Close() })
	hs := httptest.NewServer(asm.Server)
	t.Cleanup(hs.Close)
	return hs.URL
}

// keepAliveConfig makes the gateway commit a stream's 200 while it buffers,
// so a later deny reaches the client as an in-stream error event.
const keepAliveConfig = `
streaming:
  keep_alive: 20ms
`

// slowDenyPrompt answers a credential after a pause longer than the
// keep-alive interval, so the stream is committed before the verdict.
var slowDenyPrompt = "/sleep 150ms the key is " + credential

// testTimeout bounds every client call: a hung stream fails instead of
// stalling the suite.
const testTimeout = 20 * time.Second

// noLeak fails when any fragment of the denied answer reached the client.
func noLeak(t *testing.T, seen string) {
	t.Helper()
	for _, f := range []string{credential, leakFragment} {
		if strings.Contains(seen, f) {
			t.Fatalf("denied content reached the client: %q", seen)
		}
	}
}
