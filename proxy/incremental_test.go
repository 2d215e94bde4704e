package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/metrics/metricstest"
)

// incremental is the streaming configuration of these tests: every
// surface incremental, the default segment rules.
func incremental() config.Streaming {
	return config.Streaming{Mode: config.StreamingIncremental, Segment: config.Segment{
		Bytes: config.DefaultSegmentBytes, Interval: config.DefaultSegmentInterval, SentenceEnd: true, MaxSegments: config.DefaultSegmentMaxSegments}}
}

// gatedSSE is an upstream that streams the chat chunks of words, each
// waiting for the test to let it go, so a test sees what the client has
// before the upstream sent the rest. cut, when set, ends the stream after
// the words without finish or [DONE], closing the connection.
type gatedSSE struct {
	words []string
	cut   bool
	next  chan struct{} // one receive per word after the first
	done  chan struct{} // closed when the handler returns
	once  sync.Once
	// canceled reports whether the client (the gateway) went away before
	// the stream ended.
	mu       sync.Mutex
	canceled bool
}

func newGatedSSE(cut bool, words ...string) *gatedSSE {
	return &gatedSSE{words: words, cut: cut, next: make(chan struct{}, len(words)), done: make(chan struct{})}
}

func (g *gatedSSE) serve(w http.ResponseWriter, r *http.Request, _ []byte) {
	defer g.once.Do(func() { close(g.done) })
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	write := func(s string) { io.WriteString(w, "data: "+s+"\n\n"); f.Flush() }
	write(chunk(`{"role":"assistant","content":""}`, ""))
	for i, word := range g.words {
		if i > 0 {
			select {
			case <-g.next:
			case <-r.Context().Done():
				g.mu.Lock()
				g.canceled = true
				g.mu.Unlock()
				return
			}
		}
		write(chunk(fmt.Sprintf(`{"content":%q}`, word), ""))
	}
	if g.cut {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	write(chunk(`{}`, "stop"))
	write("[DONE]")
}

// release lets the upstream send its next n words.
func (g *gatedSSE) release(n int) {
	for range n {
		g.next <- struct{}{}
	}
}

func (g *gatedSSE) wasCanceled() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.canceled
}

// streamReader reads an openai-go stream on its own goroutine, so a test
// can wait for text to arrive while the upstream is held.
type streamReader struct {
	mu     sync.Mutex
	text   strings.Builder
	finish string
	done   chan struct{}
	err    error
	header http.Header
}

func readStream(t *testing.T, gw *gateway, prompt string) *streamReader {
	t.Helper()
	sr := &streamReader{done: make(chan struct{})}
	var resp *http.Response
	c := gw.client()
	stream := c.Chat.Completions.NewStreaming(context.Background(), userParams("gpt-test", prompt), option.WithResponseInto(&resp))
	go func() {
		defer close(sr.done)
		defer stream.Close()
		for stream.Next() {
			c := stream.Current()
			sr.mu.Lock()
			if len(c.Choices) > 0 {
				sr.text.WriteString(c.Choices[0].Delta.Content)
				if c.Choices[0].FinishReason != "" {
					sr.finish = c.Choices[0].FinishReason
				}
			}
			sr.mu.Unlock()
		}
		sr.err = stream.Err()
		if resp != nil {
			sr.header = resp.Header
		}
	}()
	return sr
}

func (sr *streamReader) got() string {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	return sr.text.String()
}

// waitText waits until the client holds want.
func (sr *streamReader) waitText(t *testing.T, want string) {
	t.Helper()
	waitFor(t, 5*time.Second, fmt.Sprintf("the client to receive %q (has %q)", want, sr.got()), func() bool { return sr.got() == want })
}

func (sr *streamReader) wait(t *testing.T) {
	t.Helper()
	select {
	case <-sr.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end")
	}
}

// A permitted answer reaches the client while the upstream is still
// generating: each segment as its verdict permits it, held back to a word
// boundary, the rest at the end; the finish and [DONE] come last.
func TestIncrementalReleasesBeforeTheUpstreamEnds(t *testing.T) {
	up := newGatedSSE(false, "Hello ", "wor", "ld. ", "How ", "are you?")
	u := newUpstream(t, up.serve)
	gw := newGateway(t, gatewayConfig{upstream: u.URL, streaming: incremental()})
	sr := readStream(t, gw, "hi")
	// The first text is judged on arrival.
	sr.waitText(t, "Hello ")
	// "wor" arrives: the boundary after "Hello " was judged already; "wor"
	// waits for its own boundary.
	up.release(1)
	// "ld. " shows the boundary after "wor": not due (no sentence end, few
	// bytes). "How " shows the one after "world. ": a sentence end.
	up.release(2)
	sr.waitText(t, "Hello world. ")
	up.release(1)
	sr.wait(t)
	if sr.err != nil || sr.got() != "Hello world. How are you?" || sr.finish != "stop" {
		t.Fatalf("text %q, finish %q, err %v", sr.got(), sr.finish, sr.err)
	}
	if sr.header.Get(HeaderDecision) != "" || sr.header.Get(HeaderSession) == "" || sr.header.Get(HeaderMode) != "enforce" {
		t.Fatalf("headers committed at the first release: %v", sr.header)
	}
	// The observation happens as the handler returns; the stream ended
	// for the client a moment earlier.
	waitFor(t, 5*time.Second, "the request to be observed", func() bool {
		return metricstest.Series(scrape(t, gw.URL), "hooks_gateway_stream_first_byte_seconds")["api=chat_completions,mode=incremental"] == 1
	})
	metricstest.WantSeries(t, scrape(t, gw.URL), "hooks_gateway_stream_segments_total", map[string]float64{"api=chat_completions": 2})
	recs := gw.records.all()
	// Two segments and the final verdict, then output.
	equalPoints(t, pointsOf(recs), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall,
		enforcement.PostModelCall, enforcement.PostModelCall, enforcement.PostModelCall, enforcement.Output, enforcement.AgentShutdown)
	checkGapless(t, recs)
}

// A deny mid-stream: what was released stays released, nothing after it
// reaches the client, the upstream call is cancelled, and the stream
// ends with the error event openai-go raises (no finish, no [DONE]).
func TestIncrementalDenyEndsTheStream(t *testing.T) {
	const secret = "sk-abcdefghijklmnopqrstuvwxyz"
	up := newGatedSSE(false, "Your key: ", "sk-abcdefgh", "ijklmnopqrstuvwxyz", " and more", " text.")
	u := newUpstream(t, up.serve)
	deny := func(c enforcement.Context) enforcement.Verdict {
		if r, ok := c["response"].(map[string]any); ok {
			if s, _ := r["content"].(string); strings.Contains(s, secret) {
				return enforcement.Deny("policy:credential_leak", "a credential")
			}
		}
		return enforcement.Allow()
	}
	// Every boundary is a segment: the deny comes as soon as the arrival
	// of " and more" shows where the credential ends.
	every := incremental()
	every.Segment.Bytes = 1
	gw := newGateway(t, gatewayConfig{upstream: u.URL, streaming: every, policy: deny})
	sr := readStream(t, gw, "hi")
	sr.waitText(t, "Your key: ")
	up.release(3)
	sr.wait(t)
	var se *ssestream.StreamError
	if !errors.As(sr.err, &se) || !strings.Contains(string(se.Event.Data), "policy:credential_leak") {
		t.Fatalf("err = %v, want the deny as a stream error event", sr.err)
	}
	if got := sr.got(); got != "Your key: " || sr.finish != "" {
		t.Fatalf("the client holds %q, finish %q; want only the text released before the deny", got, sr.finish)
	}
	waitFor(t, 5*time.Second, "the upstream call to be cancelled", func() bool {
		select {
		case <-up.done:
			return true
		default:
			return false
		}
	})
	if !up.wasCanceled() {
		t.Error("the upstream sent its whole stream: the deny did not cancel it")
	}
	recs := gw.records.all()
	last := recs[len(recs)-2]
	if last.InterceptionPoint != enforcement.PostModelCall || last.Verdict.Decision != enforcement.DecisionDeny {
		t.Fatalf("the record before shutdown is %s %s", last.InterceptionPoint, last.Verdict.Decision)
	}
	if countPoint(recs, enforcement.Output) != 0 {
		t.Error("output was emitted after a deny")
	}
	checkGapless(t, recs)
}

// The raw bytes of a mid-stream deny: events before, one error event
// after, no finish chunk and no [DONE], and nothing of the credential.
func TestIncrementalDenyRawBytes(t *testing.T) {
	events := []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"fine. "}`, ""),
		chunk(`{"content":"then SECRET"}`, ""),
		chunk(`{"content":" tail"}`, ""),
		chunk(`{}`, "stop"),
		"[DONE]",
	}
	u := newUpstream(t, sseReply(events...))
	gw := newGateway(t, gatewayConfig{upstream: u.URL, streaming: incremental(), policy: denyContaining("SECRET")})
	status, h, body := gw.post(t, chatBody("hi", true), nil)
	if status != http.StatusOK || h.Get("Content-Type") != "text/event-stream" || h.Get(HeaderDecision) != "" {
		t.Fatalf("status %d, headers %v", status, h)
	}
	blocks := sseBlocks(string(body))
	last := blocks[len(blocks)-1]
	if !strings.HasPrefix(last, `data: {"error":`) || !strings.Contains(last, `"interception_point":"post_model_call"`) {
		t.Fatalf("last block %q, want the error event", last)
	}
	noContent(t, body, "SECRET", "tail", "[DONE]", `"finish_reason":"stop"`)
	if !strings.Contains(string(body), "fine. ") {
		t.Fatalf("the permitted text was not released: %s", body)
	}
}

// denyContaining denies a response whose content contains s.
func denyContaining(s string) policy {
	return func(c enforcement.Context) enforcement.Verdict {
		if r, ok := c["response"].(map[string]any); ok {
			if text, _ := r["content"].(string); strings.Contains(text, s) {
				return enforcement.Deny("policy:test", "")
			}
		}
		return enforcement.Allow()
	}
}

// A stream cut after text no verdict covered: the residue is refused
// (stream_incomplete, host_error:streaming_unsupported), never released.
func TestIncrementalCutStreamRefusesResidue(t *testing.T) {
	up := newGatedSSE(true, "clean part, ", "partial tail")
	u := newUpstream(t, up.serve)
	gw := newGateway(t, gatewayConfig{upstream: u.URL, streaming: incremental()})
	sr := readStream(t, gw, "hi")
	sr.waitText(t, "clean part, ")
	up.release(1)
	sr.wait(t)
	var se *ssestream.StreamError
	if !errors.As(sr.err, &se) || !strings.Contains(string(se.Event.Data), enforcement.ReasonStreamingUnsupported) {
		t.Fatalf("err = %v, want a streaming_unsupported error event", sr.err)
	}
	if sr.got() != "clean part, " {
		t.Fatalf("the client holds %q", sr.got())
	}
	recs := gw.records.all()
	refused := recs[len(recs)-2]
	if refused.InterceptionPoint != enforcement.PostModelCall || refused.Verdict.Reason != enforcement.ReasonStreamingUnsupported {
		t.Fatalf("record %s %s, want the post_model_call refusal", refused.InterceptionPoint, refused.Verdict.Reason)
	}
	checkGapless(t, recs)
}

// A transform before any release buffers the rest: the client gets the
// verdicted answer, with the decision header.
func TestIncrementalTransformBuffersTheRest(t *testing.T) {
	events := []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"mail a@b.co "}`, ""),
		chunk(`{"content":"now"}`, ""),
		chunk(`{}`, "stop"),
		"[DONE]",
	}
	u := newUpstream(t, sseReply(events...))
	redact := func(c enforcement.Context) enforcement.Verdict {
		r, ok := c["response"].(map[string]any)
		if !ok {
			return enforcement.Allow()
		}
		text, _ := r["content"].(string)
		if !strings.Contains(text, "a@b.co") {
			return enforcement.Allow()
		}
		out := map[string]any{"content": strings.ReplaceAll(text, "a@b.co", "[email]"), "tool_calls": r["tool_calls"], "finish_reason": r["finish_reason"]}
		return enforcement.TransformTo("$target", out)
	}
	gw := newGateway(t, gatewayConfig{upstream: u.URL, streaming: incremental(), policy: redact})
	c := gw.client()
	stream := c.Chat.Completions.NewStreaming(context.Background(), userParams("gpt-test", "hi"))
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil || acc.Choices[0].Message.Content != "mail [email] now" {
		t.Fatalf("content %q, err %v", acc.Choices[0].Message.Content, err)
	}
}

// Text released, then a tool call whose arguments the policy rewrites:
// the released text stays, the call arrives whole and rewritten.
func TestIncrementalToolCallAfterText(t *testing.T) {
	events := []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"Let me look. "}`, ""),
		chunk(`{"content":"Reading it."}`, ""),
		chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"/etc/"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"passwd\"}"}}]}`, ""),
		chunk(`{}`, "tool_calls"),
		"[DONE]",
	}
	u := newUpstream(t, sseReply(events...))
	rewrite := func(c enforcement.Context) enforcement.Verdict {
		r, ok := c["response"].(map[string]any)
		calls, _ := r["tool_calls"].([]any)
		if !ok || len(calls) == 0 {
			return enforcement.Allow()
		}
		call := calls[0].(map[string]any)
		fixed := map[string]any{"id": call["id"], "name": call["name"], "args": map[string]any{"path": "/tmp/safe"}}
		return enforcement.TransformTo("$target", map[string]any{"content": r["content"], "tool_calls": []any{fixed}, "finish_reason": r["finish_reason"]})
	}
	gw := newGateway(t, gatewayConfig{upstream: u.URL, streaming: incremental(), policy: rewrite})
	status, _, body := gw.post(t, chatBody("hi", true), nil)
	noContent(t, body, "/etc/passwd")
	c := gw.client()
	stream := c.Chat.Completions.NewStreaming(context.Background(), userParams("gpt-test", "hi"))
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil || status != http.StatusOK {
		t.Fatalf("status %d, err %v", status, err)
	}
	msg := acc.Choices[0].Message
	if msg.Content != "Let me look. Reading it." || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `{"path":"/tmp/safe"}` {
		t.Fatalf("message %+v", msg)
	}
}

// A verdict that would rewrite released text fails closed.
func TestIncrementalRewriteOfReleasedTextFailsClosed(t *testing.T) {
	events := []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"first part. "}`, ""),
		chunk(`{"content":"second"}`, ""),
		chunk(`{}`, "stop"),
		"[DONE]",
	}
	u := newUpstream(t, sseReply(events...))
	rewrite := func(c enforcement.Context) enforcement.Verdict {
		r, ok := c["response"].(map[string]any)
		if ok && r["finish_reason"] == "stop" {
			return enforcement.TransformTo("$target", map[string]any{"content": "rewritten", "tool_calls": r["tool_calls"], "finish_reason": "stop"})
		}
		return enforcement.Allow()
	}
	gw := newGateway(t, gatewayConfig{upstream: u.URL, streaming: incremental(), policy: rewrite})
	_, _, body := gw.post(t, chatBody("hi", true), nil)
	blocks := sseBlocks(string(body))
	if last := blocks[len(blocks)-1]; !strings.Contains(last, enforcement.ReasonStreamingUnsupported) {
		t.Fatalf("last block %q, want a streaming_unsupported error event", last)
	}
	noContent(t, body, "rewritten", "second", "[DONE]")
}

// evaluate_only never gates release: a deny is recorded, the answer flows.
func TestIncrementalEvaluateOnly(t *testing.T) {
	events := []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"a SECRET "}`, ""),
		chunk(`{"content":"b"}`, ""),
		chunk(`{}`, "stop"),
		"[DONE]",
	}
	u := newUpstream(t, sseReply(events...))
	gw := newGateway(t, gatewayConfig{upstream: u.URL, streaming: incremental(), policy: denyContaining("SECRET"), mode: enforcement.EvaluateOnly})
	status, h, body := gw.post(t, chatBody("hi", true), nil)
	if status != http.StatusOK || h.Get(HeaderMode) != "evaluate_only" || !strings.Contains(string(body), "[DONE]") {
		t.Fatalf("status %d, headers %v: %s", status, h, body)
	}
	for _, r := range gw.records.all() {
		if r.Mode != enforcement.EvaluateOnly {
			t.Fatalf("record mode %s", r.Mode)
		}
	}
}

// Keep-alive comments while the upstream thinks, then the released text:
// the comments stop at the first release, which writes after them on the
// same committed stream.
func TestIncrementalAfterKeepAlive(t *testing.T) {
	events := []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"Hello. "}`, ""),
		chunk(`{"content":"Bye."}`, ""),
		chunk(`{}`, "stop"),
		"[DONE]",
	}
	u := newUpstream(t, slowSSE(200*time.Millisecond, events...))
	gw := newGateway(t, gatewayConfig{upstream: u.URL, streaming: incremental(), keepAlive: 30 * time.Millisecond})
	status, h, body := gw.post(t, chatBody("hi", true), nil)
	if status != http.StatusOK || h.Get(HeaderDecision) != "" {
		t.Fatalf("status %d, headers %v", status, h)
	}
	blocks := sseBlocks(string(body))
	comments := 0
	for comments < len(blocks) && blocks[comments] == ": keep-alive" {
		comments++
	}
	if comments == 0 {
		t.Fatalf("no keep-alive before the text: %q", body)
	}
	var text strings.Builder
	for _, b := range blocks[comments:] {
		if b == ": keep-alive" {
			t.Fatalf("a keep-alive after the first release: %q", body)
		}
		if b == "data: [DONE]" {
			continue
		}
		var c openai.ChatCompletionChunk
		if err := c.UnmarshalJSON([]byte(strings.TrimPrefix(b, "data: "))); err != nil {
			t.Fatalf("block %q: %v", b, err)
		}
		if len(c.Choices) > 0 {
			text.WriteString(c.Choices[0].Delta.Content)
		}
	}
	if text.String() != "Hello. Bye." || !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
		t.Fatalf("text %q: %q", text.String(), body)
	}
}

// An output deny after text was released cannot retract it: the stream
// ends with the error event, without finish or [DONE].
func TestIncrementalOutputDenyAfterRelease(t *testing.T) {
	events := []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"first. "}`, ""),
		chunk(`{"content":"second."}`, ""),
		chunk(`{}`, "stop"),
		"[DONE]",
	}
	u := newUpstream(t, sseReply(events...))
	gw := newGateway(t, gatewayConfig{upstream: u.URL, streaming: incremental(), policy: denyAt(enforcement.Output, "policy:no-output")})
	status, _, body := gw.post(t, chatBody("hi", true), nil)
	blocks := sseBlocks(string(body))
	if status != http.StatusOK || !strings.Contains(string(body), "first. ") {
		t.Fatalf("status %d, want the first sentence released: %s", status, body)
	}
	if last := blocks[len(blocks)-1]; !strings.Contains(last, `"code":"policy:no-output"`) || !strings.Contains(last, `"interception_point":"output"`) {
		t.Fatalf("last block %q, want the output deny", last)
	}
	noContent(t, body, "[DONE]", `"finish_reason":"stop"`, "second.")
}

// TestSegmentClockIntervalFromArrival: the interval of a segment runs
// from the arrival of its oldest waiting byte, including text that
// arrived with the event that closed the segment before it.
func TestSegmentClockIntervalFromArrival(t *testing.T) {
	c := segmentClock{cfg: config.Segment{Bytes: 1 << 20, Interval: 100 * time.Millisecond, First: config.SegmentFirstBoundary}}
	t0 := time.Now()
	steps := []struct {
		at           time.Duration
		before, text string
		want         string // "" when no segment is due
	}{
		{0, "", "a ", ""},
		{50 * time.Millisecond, "a ", "a b ", ""},
		{120 * time.Millisecond, "a b ", "a b c ", "a b "},
		{200 * time.Millisecond, "a b c ", "a b c d ", ""},
		// "c " arrived at 120 ms and has waited 110.
		{230 * time.Millisecond, "a b c d ", "a b c d e ", "a b c d "},
		{240 * time.Millisecond, "a b c d e ", "a b c d e ", ""}, // no text
	}
	for i, s := range steps {
		got, ok := c.next(s.before, s.text, t0.Add(s.at))
		if ok != (s.want != "") || got != s.want {
			t.Fatalf("step %d at %s: segment %q (%v), want %q", i, s.at, got, ok, s.want)
		}
	}
}

// TestSegmentClockFirstOnArrival: the first text is judged as it
// arrives; later text waits for the next event's boundary.
func TestSegmentClockFirstOnArrival(t *testing.T) {
	c := segmentClock{cfg: config.Segment{Bytes: 4, Interval: time.Hour, First: config.SegmentFirstArrival}}
	now := time.Now()
	if got, ok := c.next("", "Hi", now); !ok || got != "Hi" {
		t.Fatalf("first text: %q (%v), want Hi judged on arrival", got, ok)
	}
	if got, ok := c.next("Hi", "Hi there", now); ok {
		t.Fatalf("nothing waits past the first segment yet, got %q", got)
	}
	if got, ok := c.next("Hi there", "Hi there, you", now); !ok || got != "Hi there" {
		t.Fatalf("4 bytes waiting at a boundary: %q (%v), want %q", got, ok, "Hi there")
	}
}
