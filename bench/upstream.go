package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// upstreamOptions shape the mock upstream's answers.
type upstreamOptions struct {
	contentBytes int  // size of a non-streamed answer's content
	chunks       int  // content chunks of a streamed answer
	toolCall     bool // answer with a tool call instead of text
}

// The model-call routes the mock upstream serves, one per API surface.
const (
	chatPath      = "/v1/chat/completions"
	responsesPath = "/v1/responses"
	messagesPath  = "/v1/messages"
)

// runUpstream is the mock model upstream role: it answers every chat
// completion, Responses and Messages call at once (no think time) with an
// answer prepared at start, as JSON or, when the request asks for
// "stream": true, as SSE.
func runUpstream(_ context.Context, fl *flag.FlagSet, args []string) (http.Handler, func(), error) {
	var o upstreamOptions
	fl.IntVar(&o.contentBytes, "content-bytes", 1024, "content size of a JSON answer")
	fl.IntVar(&o.chunks, "chunks", 200, "content chunks of a streamed answer")
	fl.BoolVar(&o.toolCall, "tool-call", false, "answer with a tool call")
	if err := fl.Parse(args); err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+chatPath, answer(upstreamJSON(o), upstreamSSE(o)))
	mux.Handle("POST "+responsesPath, answer(responsesJSON(o), responsesSSE(o)))
	mux.Handle("POST "+messagesPath, answer(messagesJSON(o), messagesSSE(o)))
	return mux, nil, nil
}

// answer serves a prepared answer: jsonBody, or the sse events (each
// flushed as it is written) when the request asks for a stream.
func answer(jsonBody []byte, sse [][]byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if !isStream(body) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(jsonBody)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		fl, _ := w.(http.Flusher)
		for _, ev := range sse {
			w.Write(ev)
			if fl != nil {
				fl.Flush()
			}
		}
	}
}

// isStream reports whether a request asks for a stream. The bench's
// own requests are compact JSON, so a byte search suffices.
func isStream(body []byte) bool {
	return bytes.Contains(body, []byte(`"stream":true`))
}

// toolArguments are the arguments of the mock's tool call: the e-mail
// address is what the toolrewrite policy redacts.
const toolArguments = `{"to":"alice@example.com","subject":"quarterly report","body":"Please find the summary attached."}`

// upstreamJSON is the non-streamed answer.
func upstreamJSON(o upstreamOptions) []byte {
	msg := map[string]any{"role": "assistant", "content": filler(o.contentBytes), "refusal": nil}
	finish := "stop"
	if o.toolCall {
		msg["content"] = nil
		msg["tool_calls"] = []any{map[string]any{
			"id": "call_bench_0", "type": "function",
			"function": map[string]any{"name": "send_email", "arguments": toolArguments},
		}}
		finish = "tool_calls"
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-bench", "object": "chat.completion", "created": 1700000000, "model": "gpt-bench",
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 400, "completion_tokens": 200, "total_tokens": 600},
	})
	return b
}

// upstreamSSE is the streamed answer, one element per event.
func upstreamSSE(o upstreamOptions) [][]byte {
	chunk := func(delta, finish string) []byte {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return fmt.Appendf(nil, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}`+"\n\n", delta, f)
	}
	evs := [][]byte{chunk(`{"role":"assistant","content":""}`, "")}
	for i := range o.chunks {
		evs = append(evs, chunk(fmt.Sprintf(`{"content":"tok%d "}`, i), ""))
	}
	evs = append(evs, chunk(`{}`, "stop"),
		[]byte(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","choices":[],"usage":{"prompt_tokens":400,"completion_tokens":200,"total_tokens":600}}`+"\n\n"),
		[]byte("data: [DONE]\n\n"))
	return evs
}

// filler is n bytes of plain prose.
func filler(n int) string {
	const s = "The report shows steady growth. "
	return strings.Repeat(s, n/len(s)+1)[:n]
}
