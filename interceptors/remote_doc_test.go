package interceptors_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/mdtable"
	"github.com/hooks-gateway/hooks-gateway/sdk"
)

// TestDocPythonVerdictService runs the verdict service of
// docs/remote-interceptors.md, read from the page, as an http interceptor
// of a real gateway and drives tool calls through the emit API: its
// pre_tool_call rules read tool_call.name and transform $target.q, the
// arguments object.
func TestDocPythonVerdictService(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is required for the documented verdict service")
		}
		t.Skip("python3 not installed")
	}
	page, err := os.ReadFile("../docs/remote-interceptors.md")
	if err != nil {
		t.Fatal(err)
	}
	code, err := mdtable.CodeBlock(string(page), "A verdict service in Python", "python")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	if strings.Count(code, "8700") != 1 {
		t.Fatal("the sample no longer listens on 8700 exactly once; update the test's port substitution")
	}
	script := filepath.Join(t.TempDir(), "verdicts.py")
	if err := os.WriteFile(script, []byte(strings.Replace(code, "8700", port, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, python, script)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	waitListening(t, "127.0.0.1:"+port)

	g := startGatewayConfig(t, remoteBase+`  - name: remote-policy
    type: http
    url: http://127.0.0.1:`+port+`/
    timeout: 900ms
`)
	s, err := sdk.NewRemoteSession(sdk.RemoteConfig{
		BaseURL: strings.TrimSuffix(g.URL, "/v1"),
		Agent:   enforcement.Agent{ID: "support-bot", Framework: "go-test"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx, []string{"shell", "search"}); err != nil {
		t.Fatal(err)
	}
	var got any
	tool := func(_ context.Context, args any) (any, bool, error) { got = args; return "ok", false, nil }

	res, err := s.ToolCall(ctx, enforcement.ToolCall{ID: "call_1", Name: "shell", Args: map[string]any{"cmd": "ls"}}, tool)
	if err != nil || res.Blocked == nil || res.Message() != "blocked: policy:no_shell" || res.Invoked {
		t.Fatalf("shell: %+v, %v; want it denied policy:no_shell", res, err)
	}

	long := strings.Repeat("q", 150)
	res, err = s.ToolCall(ctx, enforcement.ToolCall{ID: "call_2", Name: "search", Args: map[string]any{"q": long, "limit": 5}}, tool)
	if err != nil || res.Blocked != nil {
		t.Fatalf("search: %+v, %v", res, err)
	}
	args, _ := got.(map[string]any)
	if args["q"] != long[:100] || args["limit"] == nil {
		t.Errorf("search ran with %v; want q cut to 100 characters and limit kept", got)
	}
	rec := g.recordAt(t, "pre_tool_call")
	if v := rec["verdict"].(map[string]any); v["decision"] != "transform" || v["reason"] != "policy:query_cut" {
		t.Errorf("pre_tool_call record verdict %v", v)
	}

	res, err = s.ToolCall(ctx, enforcement.ToolCall{ID: "call_3", Name: "search", Args: map[string]any{"q": "short"}}, tool)
	if err != nil || res.Blocked != nil || got.(map[string]any)["q"] != "short" {
		t.Errorf("short search: %+v, %v, ran with %v", res, err, got)
	}
	if _, err := s.End(ctx, enforcement.ShutdownCompleted); err != nil {
		t.Fatal(err)
	}
}

// freePort returns a loopback port nothing listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// waitListening waits up to 10 s for addr to accept connections.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the verdict service did not listen on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
