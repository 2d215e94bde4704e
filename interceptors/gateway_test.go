package interceptors_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// gatewayBase is the configuration every end-to-end test of an interceptor
// type starts from: the built-in mock model, memory sessions, records on
// the test's stdout buffer. The test appends its interceptors.
const gatewayBase = `listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: mock
    type: mock
    models: ["*"]
enforcement:
  mode: enforce
  composition:
    profile: sequential/first_deny
sessions:
  store: memory
records:
  sinks:
    - type: stdout
interceptors:
`

// testGateway is a real gateway on a loopback listener.
type testGateway struct {
	// URL is the OpenAI base URL, ending in /v1.
	URL    string
	Client openai.Client
	out    *lockedBuffer
}

// startGateway serves gatewayBase plus interceptors (a YAML list, each
// item starting with "  - ") on a real listener until the test ends.
func startGateway(t *testing.T, interceptors string) *testGateway {
	t.Helper()
	return startGatewayConfig(t, gatewayBase+interceptors)
}

// startGatewayConfig serves a whole configuration document.
func startGatewayConfig(t *testing.T, doc string) *testGateway {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte(doc))
	if err != nil {
		t.Fatalf("config:\n%v", err)
	}
	out := &lockedBuffer{}
	asm, err := proxy.Build(context.Background(), cfg, out, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	t.Cleanup(func() { asm.Close() })
	hs := httptest.NewServer(asm.Server)
	t.Cleanup(hs.Close)
	g := &testGateway{URL: hs.URL + "/v1", out: out}
	g.Client = openai.NewClient(option.WithBaseURL(g.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	return g
}

// post sends a raw chat completion body and returns the status and body.
func (g *testGateway) post(t *testing.T, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(g.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// records returns the interception records written so far, decoded.
func (g *testGateway) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(g.out.String()), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("record line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// recordAt returns the last record of point, failing the test when none.
func (g *testGateway) recordAt(t *testing.T, point string) map[string]any {
	t.Helper()
	rs := g.records(t)
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i]["interception_point"] == point {
			return rs[i]
		}
	}
	t.Fatalf("no %s record in %d records", point, len(rs))
	return nil
}

// recordText is everything the record sinks received, for checks that no
// payload leaked into records.
func (g *testGateway) recordText() string { return g.out.String() }

// lockedBuffer is the stdout the records go to; tests read it while
// handlers may still be writing.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestGatewayHelper checks the helper itself: a regex deny through a real
// gateway is a 403 with a record naming the interceptor.
func TestGatewayHelper(t *testing.T) {
	g := startGateway(t, `  - name: no-secrets
    type: regex
    points: [pre_model_call]
    action: deny
    patterns: ['secret']
`)
	status, body := g.post(t, `{"model":"m","messages":[{"role":"user","content":"a secret"}]}`)
	if status != http.StatusForbidden {
		t.Fatalf("status %d, body %s", status, body)
	}
	rec := g.recordAt(t, "pre_model_call")
	// decided_by is the deciding interceptor's index (§10.3).
	if rec["decided_by"] != float64(0) || rec["verdict"].(map[string]any)["reason"] != "policy:pattern_match" {
		t.Errorf("record = %v", rec)
	}
	resp, err := g.Client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("/say hello")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "hello" {
		t.Errorf("content %q", got)
	}
}
