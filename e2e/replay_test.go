package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// capturedFixtures are the requests Codex and Claude Code sent in one tool
// round (TestCodexCapture, TestClaudeCodeCapture), with the shell tool each
// called.
var capturedFixtures = []struct{ file, tool string }{
	{"codex-requests.json", "exec_command"},
	{"claude-code-requests.json", "Bash"},
}

// TestCapturedRequests replays the CLI agents' captured requests, byte for
// byte with their headers, against the gateway: it keeps accepting what
// Codex and Claude Code send without installing them. The first model call
// is answered with the shell tool's call, the last one (carrying the tool's
// output) with the mock's "tool results: " text.
func TestCapturedRequests(t *testing.T) {
	root := startGateway(t, "", cliPolicy)
	for _, f := range capturedFixtures {
		t.Run(strings.TrimSuffix(f.file, ".json"), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", f.file))
			if err != nil {
				t.Fatal(err)
			}
			var reqs []capturedRequest
			if err := json.Unmarshal(data, &reqs); err != nil {
				t.Fatal(err)
			}
			var calls []capturedRequest
			for _, r := range reqs {
				if r.Method == http.MethodPost && len(r.Body) > 0 {
					calls = append(calls, r)
				}
			}
			if len(calls) < 2 {
				t.Fatalf("%d model calls captured, want the tool round's two at least", len(calls))
			}
			first := streamedText(replay(t, root, calls[0]))
			if !strings.Contains(first, f.tool) || !strings.Contains(first, cliMarker) {
				t.Fatalf("first answer does not call %s with the marker: %q", f.tool, first)
			}
			last := streamedText(replay(t, root, calls[len(calls)-1]))
			if !strings.Contains(last, "tool results:") || !strings.Contains(last, cliMarker) {
				t.Fatalf("last answer does not carry the tool's output: %q", last)
			}
		})
	}
}

// replay sends one captured request to the gateway at root and returns the
// answer's body, failing unless it is a 200.
func replay(t *testing.T, root string, c capturedRequest) string {
	t.Helper()
	url := root + c.Path
	if c.Query != "" {
		url += "?" + c.Query
	}
	req, err := http.NewRequestWithContext(t.Context(), c.Method, url, strings.NewReader(c.Body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range c.Headers {
		switch k {
		case "Content-Length", "Accept-Encoding", "Connection":
			continue // the transport's own
		}
		if v == "<redacted>" {
			v = "unused-with-the-mock"
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", c.Method, c.Path, resp.StatusCode, body)
	}
	return string(body)
}

// streamedText concatenates, in event order, the strings an SSE answer
// carries under the members that hold text, tool names and argument
// fragments (both APIs' deltas split words and JSON across events).
func streamedText(sse string) string {
	var b strings.Builder
	for _, line := range strings.Split(sse, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var v any
		if json.Unmarshal([]byte(data), &v) == nil {
			collectText(&b, v, "")
		}
	}
	return b.String()
}

// textMembers are the members whose string values streamedText keeps.
var textMembers = map[string]bool{"text": true, "delta": true, "partial_json": true, "arguments": true, "name": true}

func collectText(b *strings.Builder, v any, key string) {
	switch v := v.(type) {
	case string:
		if textMembers[key] {
			b.WriteString(v)
		}
	case []any:
		for _, e := range v {
			collectText(b, e, key)
		}
	case map[string]any:
		for k, e := range v {
			collectText(b, e, k)
		}
	}
}
