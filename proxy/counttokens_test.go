package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// TestCountTokensIsMediated: the token-counting route carries a whole
// conversation to the provider, so pre_model_call judges it like a model
// call: a deny answers 403 in Anthropic's envelope, a redaction reaches
// the upstream redacted, and the count comes back shape-checked.
func TestCountTokensIsMediated(t *testing.T) {
	records := &syncBuffer{}
	doc := `listeners:
  http: "127.0.0.1:0"
upstreams:
  - {name: mock, type: mock, models: ["*"]}
sessions:
  store: memory
records:
  sinks:
    - type: stdout
interceptors:
  - {name: deny-secret, type: regex, points: [pre_model_call], action: deny, reason: "policy:secret", patterns: ['sk-[A-Za-z0-9]{20,}']}
  - {name: redact-email, type: regex, points: [pre_model_call], action: redact, replacement: "[redacted email]", reason: "policy:pii", patterns: ['[a-z]+@example\.com']}
`
	cfg, err := config.Parse("count.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	asm, err := proxy.Build(context.Background(), cfg, records, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { asm.Close() })
	hs := httptest.NewServer(asm.Server)
	t.Cleanup(hs.Close)
	count := func(text string) (int, []byte) {
		body := `{"model":"claude-x","messages":[{"role":"user","content":"` + text + `"}]}`
		resp, err := http.Post(hs.URL+"/v1/messages/count_tokens?beta=true", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	status, b := count("one two three")
	var n struct {
		InputTokens *int `json:"input_tokens"`
	}
	if status != 200 || json.Unmarshal(b, &n) != nil || n.InputTokens == nil || *n.InputTokens != 3 {
		t.Fatalf("plain count: %d %s", status, b)
	}

	status, b = count("write to bob@example.com today")
	if status != 200 || json.Unmarshal(b, &n) != nil || n.InputTokens == nil || *n.InputTokens != 5 {
		t.Fatalf("redacted count: %d %s (the mock counts the words it received: 5 after the redaction, 4 before)", status, b)
	}
	if !strings.Contains(records.String(), `"reason":"policy:pii"`) {
		t.Errorf("no pre_model_call redaction was recorded:\n%s", records.String())
	}

	status, b = count("key sk-ABCDEFGHIJKLMNOPQRSTUVWX")
	var env struct {
		Type  string `json:"type"`
		Error struct {
			Type              string `json:"type"`
			Code              string `json:"code"`
			InterceptionPoint string `json:"interception_point"`
		} `json:"error"`
	}
	if status != http.StatusUnavailableForLegalReasons || json.Unmarshal(b, &env) != nil || env.Type != "error" ||
		env.Error.Type != "permission_error" || env.Error.Code != "policy:secret" || env.Error.InterceptionPoint != "pre_model_call" {
		t.Fatalf("denied count: %d %s", status, b)
	}
	if strings.Contains(string(b), "sk-ABCDEFGHIJKLMNOPQRSTUVWX") || strings.Contains(records.String(), "bob@example.com") {
		t.Error("payload in an error body or a record")
	}
}
