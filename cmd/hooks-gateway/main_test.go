package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is an io.Writer the test can read while the gateway writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const mockConfig = `listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: mock
    type: mock
interceptors:
  - name: pass
    type: allow
records:
  sinks:
    - type: stdout
`

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// gatewayProcess is run() on a goroutine.
type gatewayProcess struct {
	addr   string
	cancel context.CancelFunc
	exit   chan int
	stdout *syncBuffer
	stderr *syncBuffer
}

func start(t *testing.T, args ...string) *gatewayProcess {
	t.Helper()
	t.Setenv("HOOKS_GATEWAY_LISTEN", "")
	t.Setenv("HOOKS_GATEWAY_REDIS_URL", "")
	ctx, cancel := context.WithCancel(context.Background())
	g := &gatewayProcess{cancel: cancel, exit: make(chan int, 1), stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	ready := make(chan string, 1)
	go func() { g.exit <- run(ctx, args, g.stdout, g.stderr, ready) }()
	select {
	case g.addr = <-ready:
	case code := <-g.exit:
		t.Fatalf("run exited with %d before listening; stderr:\n%s", code, g.stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway did not start listening")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-g.exit:
		case <-time.After(10 * time.Second):
			t.Error("run did not return after cancel")
		}
	})
	return g
}

func (g *gatewayProcess) stop(t *testing.T) int {
	t.Helper()
	g.cancel()
	select {
	case code := <-g.exit:
		g.exit <- code // for the cleanup
		return code
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
		return -1
	}
}

func chat(ctx context.Context, addr, text string) (int, []byte, error) {
	body, _ := json.Marshal(map[string]any{"model": "mock", "messages": []any{map[string]any{"role": "user", "content": text}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func content(t *testing.T, body []byte) string {
	t.Helper()
	var resp struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Choices) != 1 {
		t.Fatalf("not a completion: %s", body)
	}
	return resp.Choices[0].Message.Content
}

// recordPoints lists the interception points of the records on stdout.
func recordPoints(t *testing.T, stdout string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line == "" {
			continue
		}
		var r struct {
			Point  string          `json:"interception_point"`
			Marker json.RawMessage `json:"hooks_gateway_policy"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("stdout line is not a record: %q", line)
		}
		if r.Marker != nil {
			continue // a policy marker line, not a record
		}
		out = append(out, r.Point)
	}
	return out
}

func TestRunServesAndStops(t *testing.T) {
	g := start(t, "--config", writeConfig(t, mockConfig))
	status, body, err := chat(context.Background(), g.addr, "hi there")
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusOK || content(t, body) != "echo: hi there" {
		t.Fatalf("status %d: %s", status, body)
	}
	resp, err := http.Get("http://" + g.addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz: %d", resp.StatusCode)
	}
	if code := g.stop(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, g.stderr.String())
	}
	got := strings.Join(recordPoints(t, g.stdout.String()), ",")
	if got != "agent_startup,input,pre_model_call,post_model_call,output,agent_shutdown" {
		t.Fatalf("records on stdout: %s", got)
	}
	if strings.Contains(g.stdout.String(), "hi there") {
		t.Fatal("a record carries the message")
	}
	if !strings.Contains(g.stderr.String(), "hooks-gateway listening") {
		t.Errorf("stderr:\n%s", g.stderr.String())
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want []string // problems, each after "<file>:"
	}{
		{
			name: "file problems, all at once",
			yaml: `listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: mock
    type: opneai
sessions:
  idle_timeout: 30
records:
  sinks:
    - type: syslog
`,
			want: []string{"5: upstreams[0].type:", "7: sessions.idle_timeout:", "10: records.sinks[0].type:"},
		},
		{
			name: "interceptor options",
			yaml: `listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: mock
    type: mock
interceptors:
  - name: pass
    type: allow
    colour: blue
  - name: block
    type: deny
    reason: "host_error:mine"
`,
			want: []string{"9: interceptors[0].colour:", "12: interceptors[1].reason:"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.yaml)
			var stdout, stderr syncBuffer
			ready := make(chan string, 1)
			code := run(context.Background(), []string{"--config", path}, &stdout, &stderr, ready)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr.String())
			}
			if len(ready) != 0 {
				t.Fatal("a rejected configuration was served")
			}
			for _, want := range tc.want {
				if !strings.Contains(stderr.String(), path+":"+want) {
					t.Errorf("stderr lacks %q:\n%s", path+":"+want, stderr.String())
				}
			}
			if stdout.String() != "" {
				t.Errorf("stdout = %q", stdout.String())
			}
		})
	}
	t.Run("usage", func(t *testing.T) {
		var stdout, stderr syncBuffer
		if code := run(context.Background(), []string{"--no-such-flag"}, &stdout, &stderr, nil); code != 2 {
			t.Errorf("unknown flag: exit %d", code)
		}
		if code := run(context.Background(), []string{"--config", filepath.Join(t.TempDir(), "missing.yaml")}, &stdout, &stderr, nil); code != 2 {
			t.Errorf("missing file: exit %d", code)
		}
	})
}

// SIGTERM (ctx cancelled) drains: a request in flight completes, then run
// returns 0.
func TestRunDrainsInFlightRequests(t *testing.T) {
	g := start(t, "--config", writeConfig(t, mockConfig))
	type result struct {
		status int
		body   []byte
		err    error
		at     time.Time
	}
	res := make(chan result, 1)
	sent := time.Now()
	go func() {
		status, body, err := chat(context.Background(), g.addr, "/sleep 300ms hi")
		res <- result{status, body, err, time.Now()}
	}()
	// The request is in flight once its pre_model_call is recorded: the mock
	// model is then sleeping.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(g.stdout.String(), `"pre_model_call"`) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the model")
		}
		time.Sleep(5 * time.Millisecond)
	}
	code := g.stop(t)
	stopped := time.Now()
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, g.stderr.String())
	}
	r := <-res
	if r.err != nil {
		t.Fatalf("the in-flight request failed: %v", r.err)
	}
	if r.status != http.StatusOK || content(t, r.body) != "hi" {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if r.at.Sub(sent) < 300*time.Millisecond || r.at.After(stopped) {
		t.Fatalf("request answered %v after sending, run returned at +%v", r.at.Sub(sent), stopped.Sub(sent))
	}
	if !strings.Contains(g.stderr.String(), "draining") {
		t.Errorf("stderr:\n%s", g.stderr.String())
	}
	// The listener is closed.
	if _, _, err := chat(context.Background(), g.addr, "late"); err == nil {
		t.Fatal("the gateway still answers after it stopped")
	}
}
