package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/records"
)

// denyWordPolicy is a policy file whose one interceptor denies input
// containing word, with reason policy:<word>.
func denyWordPolicy(words ...string) string {
	var b strings.Builder
	b.WriteString("interceptors:\n")
	for _, w := range words {
		fmt.Fprintf(&b, "  - name: deny-%s\n    type: regex\n    points: [input]\n    action: deny\n    reason: policy:%s\n    patterns: ['%s']\n", w, w, w)
	}
	return b.String()
}

// writeAtomically replaces path's content in one rename, as editors and
// deployment tools do.
func writeAtomically(t *testing.T, path, text string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// policyGateway is a gateway built from configuration (Build) whose policy
// lives in files, with its admin handler served apart and its records
// captured from the stdout sink.
type policyGateway struct {
	asm    *Assembly
	main   *httptest.Server
	admin  *httptest.Server
	stdout *lockedBuffer
}

func startPolicyGateway(t *testing.T, policyPath, extra string) *policyGateway {
	t.Helper()
	return startConfiguredGateway(t, fmt.Sprintf("upstreams:\n  - name: mock\n    type: mock\npolicy:\n  path: %s\n  watch: false\nrecords:\n  sinks:\n    - type: stdout\n%s", policyPath, extra))
}

// startConfiguredGateway builds a gateway from the configuration src (read
// by the real loader) and serves its main and admin handlers apart.
func startConfiguredGateway(t *testing.T, src string) *policyGateway {
	t.Helper()
	cfg, err := config.Parse("gateway.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	g := &policyGateway{stdout: &lockedBuffer{}}
	g.asm, err = Build(context.Background(), cfg, g.stdout, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	g.main = httptest.NewServer(g.asm.Server)
	g.admin = httptest.NewServer(g.asm.Server.AdminHandler())
	t.Cleanup(func() {
		g.main.Close()
		g.admin.Close()
		g.asm.Close()
	})
	return g
}

// chatAnswer is what a test needs of a chat answer.
type chatAnswer struct {
	status  int
	code    string // the error code: a deny's reason
	session string
}

func (g *policyGateway) chat(t *testing.T, content string, header map[string]string) chatAnswer {
	t.Helper()
	a, err := g.tryChat(content, "mock", header)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// tryChat is chat for goroutines other than the test's.
func (g *policyGateway) tryChat(content, model string, header map[string]string) (chatAnswer, error) {
	body, _ := json.Marshal(map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": content}}})
	req, _ := http.NewRequest(http.MethodPost, g.main.URL+"/v1/chat/completions", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return chatAnswer{}, err
	}
	defer resp.Body.Close()
	var env struct {
		Error struct {
			Code      string `json:"code"`
			SessionID string `json:"session_id"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&env)
	return chatAnswer{status: resp.StatusCode, code: env.Error.Code, session: env.Error.SessionID}, nil
}

// adminJSON calls an admin endpoint and decodes its JSON answer.
func (g *policyGateway) adminJSON(t *testing.T, method, path string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, g.admin.URL+path, nil)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, out
}

// wireRecord is the part of a record line the tests read, with the
// policy version and route the trail attributes it to.
type wireRecord struct {
	Point      string `json:"interception_point"`
	Mode       string `json:"mode"`
	SessionID  string `json:"session_id"`
	Sequence   int64  `json:"sequence"`
	Verdict    struct{ Decision, Reason string }
	Extensions any `json:"extensions"`

	PolicyVersion string `json:"-"` // from the last policy marker, or the envelope
	Route         string `json:"-"` // from the envelope
}

// records reads the stdout trail: policy marker lines, and records bare
// or in envelopes (records.format: envelope). A record carrying
// extensions fails the test: the spec's record schema is closed.
func (g *policyGateway) records(t *testing.T) []wireRecord {
	t.Helper()
	var out []wireRecord
	marker := ""
	for _, line := range strings.Split(strings.TrimSpace(g.stdout.String()), "\n") {
		if line == "" {
			continue
		}
		var frame struct {
			Marker *records.Marker      `json:"hooks_gateway_policy"`
			Record json.RawMessage      `json:"record"`
			Env    *records.Attribution `json:"hooks_gateway"`
		}
		if err := json.Unmarshal([]byte(line), &frame); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if frame.Marker != nil {
			marker = frame.Marker.Version
			continue
		}
		text, r := []byte(line), wireRecord{PolicyVersion: marker}
		if frame.Env != nil {
			text, r.PolicyVersion, r.Route = frame.Record, frame.Env.PolicyVersion, frame.Env.Route
		}
		if err := json.Unmarshal(text, &r); err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		if r.Extensions != nil {
			t.Fatalf("record carries extensions: %s", line)
		}
		out = append(out, r)
	}
	return out
}

// inputRecord returns the input record of session id.
func (g *policyGateway) inputRecord(t *testing.T, id string) wireRecord {
	t.Helper()
	for _, r := range g.records(t) {
		if r.SessionID == id && r.Point == "input" {
			return r
		}
	}
	t.Fatalf("no input record for session %s", id)
	return wireRecord{}
}

// eventually polls cond for a generous while (CI shares two cores).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 15s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
