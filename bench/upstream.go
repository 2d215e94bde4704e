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
	"time"
)

// upstreamOptions shape the mock upstream's answers.
type upstreamOptions struct {
	contentBytes int  // size of a non-streamed answer's content
	chunks       int  // content chunks of a streamed answer
	toolCall     bool // answer with a tool call instead of text
	// interval, when positive, paces a streamed answer like a model
	// generating: see streamAnswer.
	interval time.Duration
	// denyProbe makes the streamed text the deny probe's (denyTexts)
	// instead of "tok0 tok1 …".
	denyProbe bool
}

// deltaTexts are the texts of a streamed answer's o.chunks content deltas.
func (o upstreamOptions) deltaTexts() []string {
	if o.denyProbe {
		return denyTexts(o.chunks)
	}
	return tokenTexts(o.chunks)
}

// tokenTexts are n deltas "tok0 ", "tok1 ", ….
func tokenTexts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("tok%d ", i)
	}
	return out
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
	fl.DurationVar(&o.interval, "interval", 0, "pace streamed answers: this long before each content delta (0: all at once)")
	if err := fl.Parse(args); err != nil {
		return nil, nil, err
	}
	return upstreamMux(o), nil, nil
}

// upstreamMux serves the three surfaces' answers for o; a streaming
// request naming denyProbeModel gets the deny probe's answer instead.
func upstreamMux(o upstreamOptions) *http.ServeMux {
	deny := o.withDenyProbe()
	mux := http.NewServeMux()
	mux.Handle("POST "+chatPath, answer(upstreamJSON(o), chatStream(o), chatStream(deny), o.interval))
	mux.Handle("POST "+responsesPath, answer(responsesJSON(o), responsesStream(o), responsesStream(deny), o.interval))
	mux.Handle("POST "+messagesPath, answer(messagesJSON(o), messagesStream(o), messagesStream(deny), o.interval))
	mux.Handle(mcpPath, mcpHandler(o.contentBytes))
	return mux
}

// answer serves a prepared answer: jsonBody, or the sse stream (the deny
// probe's when the request names denyProbeModel) when the request asks
// for a stream, paced by interval.
func answer(jsonBody []byte, sse, deny streamAnswer, interval time.Duration) http.HandlerFunc {
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
		stream := sse
		if isDenyProbe(body) {
			stream = deny
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		stream.write(r.Context(), w, interval)
	}
}

// streamAnswer is a prepared SSE answer: events[first:first+n] are the
// content deltas, the rest its framing (the surface's opening events
// before, its closing events after).
type streamAnswer struct {
	events   [][]byte
	first, n int
}

// write sends the answer. Unpaced, every event is flushed as it is
// written. Paced, it behaves like a model generating n tokens interval
// apart: the headers go at once, the opening events with the first delta
// one interval later (the time to the first token), every further delta
// one more interval later, the closing events with the last delta. The
// waits aim at fixed deadlines from the start, so sleep overshoot does
// not accumulate over a stream. A client gone stops the stream.
func (a streamAnswer) write(ctx context.Context, w http.ResponseWriter, interval time.Duration) {
	fl, _ := w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	if interval <= 0 || a.n == 0 {
		for _, ev := range a.events {
			w.Write(ev)
			flush()
		}
		return
	}
	flush() // commit the headers, as a provider does at once
	start := time.Now()
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for k, group := range a.groups() {
		timer.Reset(time.Until(start.Add(time.Duration(k+1) * interval)))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		for _, ev := range group {
			w.Write(ev)
		}
		flush()
	}
}

// groups splits the events into what a paced answer sends at each of its
// n ticks: the opening events with the first delta, one delta at a time,
// the closing events with the last delta.
func (a streamAnswer) groups() [][][]byte {
	out := make([][][]byte, 0, a.n)
	for k := range a.n {
		lo, hi := a.first+k, a.first+k+1
		if k == 0 {
			lo = 0
		}
		if k == a.n-1 {
			hi = len(a.events)
		}
		out = append(out, a.events[lo:hi])
	}
	return out
}

// isStream reports whether a request asks for a stream. The bench's
// own requests are compact JSON, so a byte search suffices.
func isStream(body []byte) bool {
	return bytes.Contains(body, []byte(`"stream":true`))
}

// isDenyProbe reports whether a request is the deny probe's: the gateway
// forwards the client's model name, and no load request uses this one.
func isDenyProbe(body []byte) bool {
	return bytes.Contains(body, []byte(`"model":"`+denyProbeModel+`"`))
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

// upstreamSSE is the streamed chat answer, one element per event.
func upstreamSSE(o upstreamOptions) [][]byte { return chatStream(o).events }

// chatStream is the streamed chat answer: a role chunk, o.chunks content
// chunks, the finish chunk, a usage chunk and [DONE].
func chatStream(o upstreamOptions) streamAnswer {
	chunk := func(delta, finish string) []byte {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return fmt.Appendf(nil, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}`+"\n\n", delta, f)
	}
	evs := [][]byte{chunk(`{"role":"assistant","content":""}`, "")}
	texts := o.deltaTexts()
	for _, t := range texts {
		evs = append(evs, chunk(`{"content":`+jsonString(t)+`}`, ""))
	}
	evs = append(evs, chunk(`{}`, "stop"),
		[]byte(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","choices":[],"usage":{"prompt_tokens":400,"completion_tokens":200,"total_tokens":600}}`+"\n\n"),
		[]byte("data: [DONE]\n\n"))
	return streamAnswer{events: evs, first: 1, n: len(texts)}
}

// filler is n bytes of plain prose.
func filler(n int) string {
	const s = "The report shows steady growth. "
	return strings.Repeat(s, n/len(s)+1)[:n]
}
