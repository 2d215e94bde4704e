package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
		{"responses", "/v1/responses", []byte(`{"model":"gpt-bench","stream":true,"store":false,"instructions":"You are a careful assistant.","input":[{"type":"message","role":"user","content":"Please summarise the quarterly report for the finance team."}]}`), responsesStream200()},
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

// responsesStream200 is a Responses stream of 200 output_text deltas, as
// OpenAI sends it.
func responsesStream200() []byte {
	var b strings.Builder
	seq := 0
	ev := func(typ, body string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, body)
		seq++
	}
	obj := func(status, output string) string {
		return `{"id":"resp_bench","object":"response","created_at":1700000000,"status":"` + status + `","error":null,"incomplete_details":null,"instructions":"You are a careful assistant.","model":"gpt-bench","output":` + output + `,"parallel_tool_calls":true,"store":false,"temperature":0.2,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":null,"metadata":{}}`
	}
	ev("response.created", `"response":`+obj("in_progress", "[]"))
	ev("response.in_progress", `"response":`+obj("in_progress", "[]"))
	ev("response.output_item.added", `"output_index":0,"item":{"id":"msg_bench","type":"message","status":"in_progress","content":[],"role":"assistant"}`)
	loc := `"item_id":"msg_bench","output_index":0,"content_index":0`
	ev("response.content_part.added", loc+`,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`)
	var full strings.Builder
	for i := range 200 {
		t := fmt.Sprintf("tok%d ", i)
		full.WriteString(t)
		ev("response.output_text.delta", loc+`,"delta":"`+t+`","logprobs":[],"obfuscation":"x1"`)
	}
	text := `"` + full.String() + `"`
	ev("response.output_text.done", loc+`,"text":`+text+`,"logprobs":[]`)
	part := `{"type":"output_text","annotations":[],"logprobs":[],"text":` + text + `}`
	ev("response.content_part.done", loc+`,"part":`+part)
	item := `{"id":"msg_bench","type":"message","status":"completed","content":[` + part + `],"role":"assistant"}`
	ev("response.output_item.done", `"output_index":0,"item":`+item)
	ev("response.completed", `"response":`+strings.Replace(obj("completed", "["+item+"]"), `"usage":null`, `"usage":{"input_tokens":400,"input_tokens_details":{"cached_tokens":0},"output_tokens":200,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":600}`, 1))
	return []byte(b.String())
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
