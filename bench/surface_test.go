package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	messageswire "github.com/hooks-gateway/hooks-gateway/internal/wire/messages"
	responseswire "github.com/hooks-gateway/hooks-gateway/internal/wire/responses"
)

// surfaceCase is one API surface with the bench's requests and the mock
// upstream's answers for it.
type surfaceCase struct {
	name    string
	surface wire.Surface
	request func(size int, stream, tools bool) []byte
	json    func(upstreamOptions) []byte
	sse     func(upstreamOptions) [][]byte
}

// surfaceCases are the non-chat surfaces the bench drives (chat's answers
// are checked in TestUpstreamAnswersParse).
func surfaceCases() []surfaceCase {
	return []surfaceCase{
		{"responses", responseswire.New(responseswire.Options{}), responsesRequest, responsesJSON, responsesSSE},
		{"messages", messageswire.New(messageswire.Options{}), messagesRequest, messagesJSON, messagesSSE},
	}
}

// joinEvents is a stream's events as one body.
func joinEvents(evs [][]byte) []byte { return bytes.Join(evs, nil) }

// The bench's requests and the mock's answers must be what the surfaces
// accept from real clients and upstreams, and what the gateway releases
// must read back to the same answer, or the bench would measure error
// paths.
func TestSurfacesAcceptBenchTraffic(t *testing.T) {
	o := upstreamOptions{contentBytes: 1024, chunks: 200}
	for _, c := range surfaceCases() {
		t.Run(c.name, func(t *testing.T) {
			req, err := c.surface.ParseRequest(c.request(2048, false, true), nil)
			if err != nil {
				t.Fatalf("request: %v", err)
			}
			if n := len(req.Messages()); n < 10 {
				t.Errorf("request projects to %d messages, want a 2 KiB conversation", n)
			}
			if names := req.ToolNames(); len(names) != 1 || names[0] != "send_email" {
				t.Errorf("request tools = %v", names)
			}

			body := c.json(o)
			resp, err := c.surface.ParseResponse(req, body)
			if err != nil {
				t.Fatalf("JSON answer: %v", err)
			}
			if s, _ := resp.Project()["content"].(string); len(s) != 1024 {
				t.Errorf("JSON answer projects to %#v, want 1024 bytes of text", resp.Project()["content"])
			}
			out, err := resp.Release(nil)
			if err != nil {
				t.Fatalf("JSON release: %v", err)
			}
			again, err := c.surface.ParseResponse(req, out)
			if err != nil {
				t.Fatalf("released JSON answer does not parse: %v", err)
			}
			if a, b := again.Project()["content"], resp.Project()["content"]; a != b {
				t.Errorf("released JSON answer projects to %#v", a)
			}

			tool, err := c.surface.ParseResponse(req, c.json(upstreamOptions{toolCall: true}))
			if err != nil {
				t.Fatalf("tool-call answer: %v", err)
			}
			b, _ := json.Marshal(tool.Project()["tool_calls"])
			if !strings.Contains(string(b), "send_email") || !strings.Contains(string(b), "alice@example.com") {
				t.Errorf("tool-call answer projects to %s", b)
			}

			sreq, err := c.surface.ParseRequest(c.request(2048, true, false), nil)
			if err != nil || !sreq.Stream() {
				t.Fatalf("stream request: %v (stream %v)", err, err == nil && sreq.Stream())
			}
			sse := joinEvents(c.sse(o))
			st, err := c.surface.ReadStream(sreq, bytes.NewReader(sse), 8<<20)
			if err != nil {
				t.Fatalf("SSE answer: %v", err)
			}
			s, _ := st.Response().Project()["content"].(string)
			if !strings.HasPrefix(s, "tok0 tok1 ") || !strings.HasSuffix(s, "tok199 ") {
				t.Errorf("SSE answer assembles to %.40q…", s)
			}
			rel, err := st.Release(nil)
			if err != nil {
				t.Fatalf("SSE release: %v", err)
			}
			back, err := c.surface.ReadStream(sreq, bytes.NewReader(rel), 8<<20)
			if err != nil {
				t.Fatalf("released SSE answer does not read: %v", err)
			}
			if a := back.Response().Project()["content"]; a != s {
				t.Errorf("released SSE answer assembles to %.40q…", a)
			}
		})
	}
}
