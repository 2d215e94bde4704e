package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire/wiretest"
)

// BenchmarkHandlerStream200 serves a small streamed request on each
// surface through the default configuration, its upstream answering
// with 200 text deltas in the surface's own events (the bench's
// stream200 scenarios): the buffered stream path (the upstream SSE
// reader, the answer's assembly for post_model_call, the release of the
// allowed events) plus one loopback HTTP hop's two ends.
func BenchmarkHandlerStream200(b *testing.B) {
	cases := []struct {
		name, path string
		body       []byte
		sse        []byte
	}{
		{"chat", "/v1/chat/completions", request2KiB(true), stream200()},
		{"responses", "/v1/responses", []byte(`{"model":"gpt-bench","stream":true,"store":false,"instructions":"You are a careful assistant.","input":[{"type":"message","role":"user","content":"Please summarise the quarterly report for the finance team."}]}`), wiretest.ResponsesStream200()},
		{"messages", "/v1/messages", []byte(`{"model":"claude-bench","max_tokens":1024,"stream":true,"system":"You are a careful assistant.","messages":[{"role":"user","content":"Please summarise the quarterly report for the finance team."}]}`), messagesStream200()},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write(c.sse)
			}))
			defer up.Close()
			benchUpstream(b, up, c.path, c.body, nil)
		})
	}
}

// messagesStream200 is a Messages stream of 200 text deltas, as Anthropic
// sends it.
func messagesStream200() []byte {
	var b strings.Builder
	ev := func(name, data string) { b.WriteString("event: " + name + "\ndata: " + data + "\n\n") }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-bench","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":400,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	ev("ping", `{"type": "ping"}`)
	for i := range 200 {
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tok%d "}}`, i))
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":200}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return []byte(b.String())
}
