package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	chatwire "github.com/hooks-gateway/hooks-gateway/internal/wire/chat"
)

// The mock upstream's answers must be what the gateway accepts from a real
// one, or the bench would measure error paths.
func TestUpstreamAnswersParse(t *testing.T) {
	o := upstreamOptions{contentBytes: 1024, chunks: 200}
	resp, err := chatwire.ParseResponse(upstreamJSON(o), chatwire.ResponseOptions{})
	if err != nil {
		t.Fatalf("JSON answer: %v", err)
	}
	if c, _ := resp.Project()["content"].(string); len(c) != 1024 {
		t.Fatalf("JSON answer content is %d bytes, want 1024", len(c))
	}

	var sse bytes.Buffer
	for _, ev := range upstreamSSE(o) {
		sse.Write(ev)
	}
	st, err := chatwire.ReadStream(&sse, 8<<20, chatwire.ResponseOptions{})
	if err != nil {
		t.Fatalf("SSE answer: %v", err)
	}
	c, _ := st.Response().Project()["content"].(string)
	if !strings.HasPrefix(c, "tok0 tok1 ") || !strings.HasSuffix(c, "tok199 ") {
		t.Fatalf("SSE answer assembles to %.40q…", c)
	}

	tool, err := chatwire.ParseResponse(upstreamJSON(upstreamOptions{toolCall: true}), chatwire.ResponseOptions{})
	if err != nil {
		t.Fatalf("tool-call answer: %v", err)
	}
	b, _ := json.Marshal(tool.Project()["tool_calls"])
	if !strings.Contains(string(b), "send_email") || !strings.Contains(string(b), "alice@example.com") {
		t.Fatalf("tool-call answer projects to %s", b)
	}
}
