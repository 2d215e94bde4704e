package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// slowSSE sends the stream's headers at once, waits delay (the model
// thinking), then sends the events.
func slowSSE(delay time.Duration, events ...string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\n\n")
			w.(http.Flusher).Flush()
		}
	}
}

// A stream larger than the buffer cannot be mediated: §12.1's
// streaming_unsupported, recorded at post_model_call, nothing released.
func TestStreamOverBufferLimit(t *testing.T) {
	var events []string
	for i := 0; len(strings.Join(events, "")) < 10<<10; i++ {
		events = append(events, chunk(fmt.Sprintf(`{"content":"%s-%03d "}`, partial, i), ""))
	}
	events = append(events, chunk(`{}`, "stop"), "[DONE]")
	up := newUpstream(t, sseReply(events...))
	gw := newGateway(t, gatewayConfig{upstream: up.URL, buffer: 1 << 10})

	status, h, body := gw.post(t, chatBody("hi", true), nil)
	e := errorBody(t, body)
	if status != http.StatusServiceUnavailable || e.Type != typeHostError || e.Code != enforcement.ReasonStreamingUnsupported ||
		e.InterceptionPoint != "post_model_call" || e.Sequence == nil || *e.Sequence != 3 {
		t.Fatalf("status %d: %s", status, body)
	}
	if h.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type = %q", h.Get("Content-Type"))
	}
	noContent(t, body, partial, "data:")
	equalPoints(t, gw.records.points(""), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall,
		enforcement.PostModelCall, enforcement.AgentShutdown)
	post := gw.records.all()[3]
	if post.Verdict.Decision != enforcement.DecisionDeny || post.Verdict.Reason != enforcement.ReasonStreamingUnsupported {
		t.Fatalf("post_model_call record verdict = %+v", post.Verdict)
	}
	checkGapless(t, gw.records.all())
}

// sseBody splits a raw SSE body into its blocks (events and comments).
func sseBlocks(body string) []string {
	var out []string
	for _, b := range strings.Split(body, "\n\n") {
		if b != "" {
			out = append(out, b)
		}
	}
	return out
}

// With keep-alive, SSE comments flow while the stream is buffered; the
// allowed events follow them unchanged.
func TestStreamKeepAlive(t *testing.T) {
	events := []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"Hel"}`, ""),
		chunk(`{"content":"lo"}`, ""),
		chunk(`{}`, "stop"),
		"[DONE]",
	}
	const think = 300 * time.Millisecond
	up := newUpstream(t, slowSSE(think, events...))
	gw := newGateway(t, gatewayConfig{upstream: up.URL, keepAlive: 50 * time.Millisecond})

	t.Run("raw", func(t *testing.T) {
		status, h, body := gw.post(t, chatBody("hi", true), nil)
		if status != http.StatusOK || h.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d, Content-Type %q: %s", status, h.Get("Content-Type"), body)
		}
		blocks := sseBlocks(string(body))
		comments := 0
		for comments < len(blocks) && blocks[comments] == ": keep-alive" {
			comments++
		}
		if comments < 2 {
			t.Fatalf("%d keep-alive comments before the data, want several over %v: %q", comments, think, body)
		}
		var data []string
		for _, b := range blocks[comments:] {
			if !strings.HasPrefix(b, "data: ") {
				t.Fatalf("block after the data started is not an event: %q", b)
			}
			data = append(data, strings.TrimPrefix(b, "data: "))
		}
		if got, want := strings.Join(data, "\n"), strings.Join(events, "\n"); got != asReleased(want, got) {
			t.Fatalf("events:\n%s\nwant\n%s", got, asReleased(want, got))
		}
	})
	t.Run("openai-go", func(t *testing.T) {
		c := gw.client()
		stream := c.Chat.Completions.NewStreaming(context.Background(), userParams("gpt-test", "hi"))
		acc := openai.ChatCompletionAccumulator{}
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if acc.Choices[0].Message.Content != "Hello" || acc.Choices[0].FinishReason != "stop" {
			t.Fatalf("accumulated %+v", acc.Choices[0])
		}
	})
}

// With keep-alive the 200 is committed before the verdict: a deny arrives
// as one SSE error event, and nothing of the response is released.
func TestStreamKeepAliveDeny(t *testing.T) {
	up := newUpstream(t, slowSSE(300*time.Millisecond,
		chunk(`{"role":"assistant","content":"`+partial+`"}`, ""), chunk(`{}`, "stop"), "[DONE]"))
	gw := newGateway(t, gatewayConfig{upstream: up.URL, keepAlive: 50 * time.Millisecond,
		policy: denyAt(enforcement.PostModelCall, "policy:no-leaks")})

	status, h, body := gw.post(t, chatBody("hi", true), nil)
	if status != http.StatusOK || h.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q (the keep-alive should have committed the stream): %s", status, h.Get("Content-Type"), body)
	}
	if d := h.Get(HeaderDecision); d == string(enforcement.DecisionAllow) {
		t.Errorf("%s: %q was announced before the verdict, which denied", HeaderDecision, d)
	}
	noContent(t, body, partial, "[DONE]")
	var errorEvents []string
	for _, b := range sseBlocks(string(body)) {
		switch {
		case b == ": keep-alive":
		case strings.HasPrefix(b, "data: "):
			errorEvents = append(errorEvents, strings.TrimPrefix(b, "data: "))
		default:
			t.Fatalf("unexpected block %q", b)
		}
	}
	if len(errorEvents) != 1 {
		t.Fatalf("%d data events, want one error event: %q", len(errorEvents), body)
	}
	e := errorBody(t, []byte(errorEvents[0]))
	if e.Code != "policy:no-leaks" || e.Type != typeDenied || e.InterceptionPoint != "post_model_call" {
		t.Fatalf("error event = %s", errorEvents[0])
	}
	// openai-go surfaces the event as a stream error.
	c := gw.client()
	stream := c.Chat.Completions.NewStreaming(context.Background(), userParams("gpt-test", "hi"))
	for stream.Next() {
		if s := stream.Current().Choices; len(s) > 0 && strings.Contains(s[0].Delta.Content, partial) {
			t.Fatal("content released")
		}
	}
	if stream.Err() == nil || !strings.Contains(stream.Err().Error(), "policy:no-leaks") {
		t.Fatalf("stream error = %v", stream.Err())
	}
}

// evaluate_only records every verdict and blocks nothing, and the answer
// says so.
func TestEvaluateOnly(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			var reply func(http.ResponseWriter, *http.Request, []byte)
			if stream {
				reply = sseReply(chunk(`{"role":"assistant","content":"Hello there, FRIEND"}`, ""), chunk(`{}`, "stop"), "[DONE]")
			} else {
				reply = jsonReply(completionJSON)
			}
			up := newUpstream(t, reply)
			gw := newGateway(t, gatewayConfig{upstream: up.URL, mode: enforcement.EvaluateOnly, policy: func(c enforcement.Context) enforcement.Verdict {
				switch c.Point() {
				case enforcement.PreModelCall, enforcement.PostModelCall:
					return enforcement.Deny("policy:would-deny", "")
				}
				return enforcement.Allow()
			}})
			var raw *http.Response
			c := gw.client()
			var content string
			if stream {
				s := c.Chat.Completions.NewStreaming(context.Background(), userParams("gpt-test", "hi"), option.WithResponseInto(&raw))
				acc := openai.ChatCompletionAccumulator{}
				for s.Next() {
					acc.AddChunk(s.Current())
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
				content = acc.Choices[0].Message.Content
			} else {
				resp, err := c.Chat.Completions.New(context.Background(), userParams("gpt-test", "hi"), option.WithResponseInto(&raw))
				if err != nil {
					t.Fatal(err)
				}
				content = resp.Choices[0].Message.Content
			}
			if raw.StatusCode != http.StatusOK || content != "Hello there, FRIEND" {
				t.Fatalf("status %d content %q", raw.StatusCode, content)
			}
			if raw.Header.Get(HeaderMode) != "evaluate_only" || raw.Header.Get(HeaderDecision) != "deny" {
				t.Fatalf("%s = %q, %s = %q", HeaderMode, raw.Header.Get(HeaderMode), HeaderDecision, raw.Header.Get(HeaderDecision))
			}
			equalPoints(t, gw.records.points(""), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall,
				enforcement.PostModelCall, enforcement.Output, enforcement.AgentShutdown)
			for _, r := range gw.records.all() {
				if r.Mode != enforcement.EvaluateOnly {
					t.Errorf("%s record mode %q", r.InterceptionPoint, r.Mode)
				}
				if (r.InterceptionPoint == enforcement.PreModelCall || r.InterceptionPoint == enforcement.PostModelCall) &&
					(r.Verdict.Decision != enforcement.DecisionDeny || r.Verdict.Reason != "policy:would-deny") {
					t.Errorf("%s record verdict %+v", r.InterceptionPoint, r.Verdict)
				}
				b, _ := json.Marshal(r)
				if !strings.Contains(string(b), `"mode":"evaluate_only"`) {
					t.Errorf("record JSON %s", b)
				}
			}
		})
	}
}

// The keep-alive commits the mode header before post_model_call runs: an
// answer that point judges in evaluate_only never claims enforcement.
func TestKeepAliveModeCountsPostModelCall(t *testing.T) {
	up := newUpstream(t, slowSSE(200*time.Millisecond, chunk(`{"role":"assistant","content":"hi"}`, ""), chunk(`{}`, "stop"), "[DONE]"))
	gw := newGateway(t, gatewayConfig{upstream: up.URL, keepAlive: 30 * time.Millisecond,
		pointModes: map[enforcement.Point]enforcement.Mode{enforcement.PostModelCall: enforcement.EvaluateOnly}})
	status, h, body := gw.post(t, chatBody("hi", true), nil)
	if status != http.StatusOK || !strings.HasPrefix(string(body), ": keep-alive") {
		t.Fatalf("status %d, want a keep-alive stream: %s", status, body)
	}
	if got := h.Get(HeaderMode); got != string(enforcement.EvaluateOnly) {
		t.Fatalf("%s: %q, want evaluate_only", HeaderMode, got)
	}
}
