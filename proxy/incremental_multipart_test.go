package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// Incremental mediation of answers whose text continues in a second part:
// a second Responses message item, a second Messages text block (also
// after a tool_use), a chat answer whose content is followed by a refusal
// or a citation. The official clients read them through a real gateway.

// scriptedSSE is an upstream answering every request with one stream
// written in steps: the first at once, each later one when the test lets
// it go (gated), or all at once.
type scriptedSSE struct {
	mu    sync.Mutex
	steps []string
	gated bool
	next  chan struct{}
}

func newScriptedSSE(t *testing.T) (*scriptedSSE, string) {
	u := &scriptedSSE{next: make(chan struct{}, 16)}
	hs := httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(hs.Close)
	return u, hs.URL
}

// script sets the stream: steps joined when not gated.
func (u *scriptedSSE) script(gated bool, steps ...string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.steps, u.gated = steps, gated
	for len(u.next) > 0 {
		<-u.next
	}
}

// release lets the next step go.
func (u *scriptedSSE) release() { u.next <- struct{}{} }

func (u *scriptedSSE) serve(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	steps, gated := u.steps, u.gated
	u.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	for i, s := range steps {
		if i > 0 && gated {
			select {
			case <-u.next:
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Second):
				return
			}
		}
		io.WriteString(w, s)
		f.Flush()
	}
}

// mpGateway is a gateway built from configuration in front of a scripted
// upstream, its logs kept.
type mpGateway struct {
	url  string
	logs *syncBuffer
}

// startModeGateway starts a gateway streaming in mode (buffered or
// incremental) with the given interceptors (YAML list items, may be
// empty for allow-all) in front of the upstream at up.
func startModeGateway(t *testing.T, up, mode, interceptors string) *mpGateway {
	t.Helper()
	if interceptors == "" {
		interceptors = "  - name: allow\n    type: allow\n"
	}
	g := &mpGateway{logs: &syncBuffer{}}
	t.Setenv("MULTIPART_TEST_KEY", "upstream-key")
	doc := `listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: openai
    type: openai
    base_url: ` + up + `/v1
    api_key_env: MULTIPART_TEST_KEY
    models: ["*"]
  - name: anthropic
    type: anthropic
    base_url: ` + up + `
    api_key_env: MULTIPART_TEST_KEY
    models: ["*"]
sessions:
  store: memory
streaming:
  mode: ` + mode + `
records:
  sinks:
    - type: stdout
interceptors:
` + interceptors
	g.url = serveDoc(t, "multipart.yaml", doc, nil, g.logs)
	return g
}

// denyWord denies any post_model_call or output whose text holds
// FORBIDDEN.
const denyWord = `  - name: deny-word
    type: regex
    points: [post_model_call, output]
    action: deny
    reason: policy:forbidden_word
    patterns: ['FORBIDDEN']
`

// ---- Responses ----

// rsMessage is the events of one assistant message item at output index
// oi, its one output_text part streamed in deltas; the item's JSON is
// returned for the final snapshot.
func rsMessage(oi int, id string, deltas ...string) (events []string, item string) {
	text := strings.Join(deltas, "")
	loc := fmt.Sprintf(`"item_id":%q,"output_index":%d,"content_index":0`, id, oi)
	part := fmt.Sprintf(`{"type":"output_text","text":%q,"annotations":[]}`, text)
	item = fmt.Sprintf(`{"type":"message","id":%q,"status":"completed","role":"assistant","content":[%s]}`, id, part)
	events = append(events,
		fmt.Sprintf(`{"type":"response.output_item.added","output_index":%d,"item":{"type":"message","id":%q,"status":"in_progress","role":"assistant","content":[]}}`, oi, id),
		`{"type":"response.content_part.added",`+loc+`,"part":{"type":"output_text","text":"","annotations":[]}}`)
	for _, d := range deltas {
		events = append(events, fmt.Sprintf(`{"type":"response.output_text.delta",%s,"delta":%q}`, loc, d))
	}
	events = append(events,
		fmt.Sprintf(`{"type":"response.output_text.done",%s,"text":%q}`, loc, text),
		`{"type":"response.content_part.done",`+loc+`,"part":`+part+`}`,
		fmt.Sprintf(`{"type":"response.output_item.done","output_index":%d,"item":%s}`, oi, item))
	return events, item
}

// rsSteps is a Responses stream of message items, one step per item (the
// first step also opens the response, the last also completes it), with
// sequence numbers from 0.
func rsSteps(items ...[]string) []string {
	var all [][]string
	var outs []string
	for i, deltas := range items {
		evs, item := rsMessage(i, fmt.Sprintf("msg_%d", i+1), deltas...)
		all = append(all, evs)
		outs = append(outs, item)
	}
	all[0] = append([]string{`{"type":"response.created","response":{"id":"resp_1","object":"response","created_at":1,"status":"in_progress","model":"m","output":[]}}`}, all[0]...)
	last := len(all) - 1
	all[last] = append(all[last], `{"type":"response.completed","response":`+responseObject(strings.Join(outs, ","), "")+`}`)
	var steps []string
	seq := 0
	for _, evs := range all {
		s := rsEvents(evs...)
		// rsEvents numbers each call from 0: renumber across the steps.
		for i := range evs {
			s = strings.Replace(s, fmt.Sprintf(`"sequence_number":%d}`, i), fmt.Sprintf(`"sequence_number":#%d}`, seq+i), 1)
		}
		seq += len(evs)
		steps = append(steps, strings.ReplaceAll(s, `"sequence_number":#`, `"sequence_number":`))
	}
	return steps
}

// streamSeen is what a client's stream, read on its own goroutine, gave
// the application: its text deltas so far and, once done is closed, the
// error it ended with.
type streamSeen struct {
	mu     sync.Mutex
	deltas strings.Builder
	err    error
	done   chan struct{}
}

func (s *streamSeen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deltas.String()
}

// wait waits until the stream ended.
func (s *streamSeen) wait(t *testing.T) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end")
	}
}

// deniedAfterFirst lets the upstream go on once the client holds first,
// and checks that the stream then ends with an error naming reason, the
// client holding first and none of withheld.
func deniedAfterFirst(t *testing.T, up *scriptedSSE, s *streamSeen, first, reason string, withheld ...string) {
	t.Helper()
	waitText(t, "first part", s.text, first)
	up.release()
	s.wait(t)
	if s.err == nil || !strings.Contains(s.err.Error(), reason) {
		t.Fatalf("stream error %v, want the deny %s", s.err, reason)
	}
	txt := s.text()
	for _, w := range withheld {
		if strings.Contains(txt, w) {
			t.Fatalf("the client holds %q", txt)
		}
	}
	if !strings.HasPrefix(txt, first) {
		t.Fatalf("the client holds %q, want it to begin with %q", txt, first)
	}
}

// rsSeen is what openai-go's Responses stream gave the application.
type rsSeen struct {
	streamSeen
	types []string
	seqs  []int64
	final *responses.Response
}

// readResponses streams a Responses request through the gateway with
// openai-go on its own goroutine.
func readResponses(gw string) *rsSeen {
	seen := &rsSeen{streamSeen: streamSeen{done: make(chan struct{})}}
	c := openai.NewClient(option.WithBaseURL(gw+"/v1"), option.WithAPIKey("client-key"), option.WithMaxRetries(0))
	st := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	})
	go func() {
		defer close(seen.done)
		defer st.Close()
		for st.Next() {
			ev := st.Current()
			seen.mu.Lock()
			seen.types = append(seen.types, ev.Type)
			seen.seqs = append(seen.seqs, ev.SequenceNumber)
			switch ev.Type {
			case "response.output_text.delta":
				seen.deltas.WriteString(ev.Delta)
			case "response.completed":
				r := ev.AsResponseCompleted().Response
				seen.final = &r
			}
			seen.mu.Unlock()
		}
		seen.err = st.Err()
	}()
	return seen
}

// waitText waits until the client holds want.
func waitText(t *testing.T, what string, got func() string, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if got() == want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s: the client holds %q, want %q", what, got(), want)
}

// TestIncrementalResponsesSeveralMessages streams answers of several
// message items incrementally: the client assembles what buffered mode
// gives it, every sequence number follows the one before, and each item
// opens and closes as the protocol orders.
func TestIncrementalResponsesSeveralMessages(t *testing.T) {
	up, upURL := newScriptedSSE(t)
	inc := startModeGateway(t, upURL, config.StreamingIncremental, "")
	buf := startModeGateway(t, upURL, config.StreamingBuffered, "")
	cases := map[string][][]string{
		"two items":           {{"Hello ", "there. ", "How are ", "you?"}, {" Second ", "item. ", "Bye."}},
		"three items":         {{"One. "}, {"Two "}, {"three."}},
		"word split by items": {{"The key is ab"}, {"cdef, done."}},
		"empty second item":   {{"Only this. "}, {}, {"And this."}},
	}
	for name, items := range cases {
		t.Run(name, func(t *testing.T) {
			up.script(false, rsSteps(items...)...)
			want := readResponses(buf.url)
			want.wait(t)
			if want.err != nil || want.final == nil {
				t.Fatalf("buffered: %v (final %v)", want.err, want.final != nil)
			}
			got := readResponses(inc.url)
			got.wait(t)
			if got.err != nil || got.final == nil {
				t.Fatalf("incremental: err %v, completed %v; events %v", got.err, got.final != nil, got.types)
			}
			if g, w := got.final.OutputText(), want.final.OutputText(); g != w {
				t.Errorf("output_text %q, buffered mode gives %q", g, w)
			}
			if g, w := got.text(), want.final.OutputText(); g != w {
				t.Errorf("the deltas join to %q, want %q", g, w)
			}
			if len(got.final.Output) != len(items) {
				t.Errorf("%d output items, want %d", len(got.final.Output), len(items))
			}
			for i, s := range got.seqs {
				if s != int64(i) {
					t.Fatalf("sequence numbers %v: not consecutive from 0", got.seqs)
				}
			}
			checkResponsesOrder(t, got.types, len(items))
		})
	}
}

// checkResponsesOrder checks that items open and close in turn: every
// item's added comes after the previous item's done.
func checkResponsesOrder(t *testing.T, types []string, items int) {
	t.Helper()
	var added, done int
	for _, typ := range types {
		switch typ {
		case "response.output_item.added":
			if added != done {
				t.Fatalf("an item is added before the previous one is done: %v", types)
			}
			added++
		case "response.output_item.done":
			done++
		case "response.output_text.delta":
			if added != done+1 {
				t.Fatalf("a text delta outside an open item: %v", types)
			}
		}
	}
	if added != items || done != items {
		t.Fatalf("%d items added and %d done, want %d: %v", added, done, items, types)
	}
}

// splitLastStep cuts the last scripted step in two before marker, so the
// test can release what precedes marker and hold the rest back.
func splitLastStep(t *testing.T, steps []string, marker string) []string {
	t.Helper()
	last := steps[len(steps)-1]
	cut := strings.Index(last, marker)
	if cut <= 0 {
		t.Fatalf("%q does not stand inside the last step %q", marker, last)
	}
	return append(steps[:len(steps)-1], last[:cut], last[cut:])
}

// TestIncrementalResponsesReleasesSecondItemEarly: the first item's text
// reaches the client before the upstream sent the second item, and the
// second item's before the upstream completed.
func TestIncrementalResponsesReleasesSecondItemEarly(t *testing.T) {
	up, upURL := newScriptedSSE(t)
	inc := startModeGateway(t, upURL, config.StreamingIncremental, "")
	steps := rsSteps([]string{"Hello there. "}, []string{"Second item. ", "More."})
	// Hold the response.completed back: split the last step before it.
	steps = splitLastStep(t, steps, "event: response.output_item.done")
	up.script(true, steps...)
	got := readResponses(inc.url)
	waitText(t, "first item", got.text, "Hello there. ")
	up.release()
	waitText(t, "second item", got.text, "Hello there. Second item. ")
	up.release()
	got.wait(t)
	if got.err != nil || got.final == nil || got.final.OutputText() != "Hello there. Second item. More." {
		t.Fatalf("err %v, final %v, events %v", got.err, got.final, got.types)
	}
}

// TestIncrementalResponsesDenyInSecondItem: a deny arriving after the
// first release withholds the rest and ends the stream with the error
// event.
func TestIncrementalResponsesDenyInSecondItem(t *testing.T) {
	up, upURL := newScriptedSSE(t)
	inc := startModeGateway(t, upURL, config.StreamingIncremental, denyWord)
	up.script(true, rsSteps([]string{"Hello there. "}, []string{"This is ", "FORBIDDEN text. ", "Bye."})...)
	got := readResponses(inc.url)
	// openai-go raises the error event as the stream's error.
	deniedAfterFirst(t, up, &got.streamSeen, "Hello there. ", "policy:forbidden_word", "FORBIDDEN")
	if got.final != nil {
		t.Fatalf("the stream completed after the deny: %v", got.types)
	}
}

// ---- Messages ----

// msTextBlock is a text block's events at index i.
func msTextBlock(i int, deltas ...string) []string {
	var ds []string
	for _, d := range deltas {
		ds = append(ds, fmt.Sprintf(`{"type":"text_delta","text":%q}`, d))
	}
	return msBlock(fmt.Sprint(i), `{"type":"text","text":""}`, ds...)
}

// msToolBlock is a tool_use block's events at index i.
func msToolBlock(i int, name, input string) []string {
	return msBlock(fmt.Sprint(i), `{"type":"tool_use","id":"toolu_1","name":"`+name+`","input":{}}`,
		fmt.Sprintf(`{"type":"input_json_delta","partial_json":%q}`, input))
}

// msSteps is a Messages stream, one step per block (the first also
// starts the message, the last also ends it).
func msSteps(stop string, blocks ...[]string) []string {
	all := make([][]string, len(blocks))
	copy(all, blocks)
	whole := msStream(stop)
	all[0] = append([]string{whole[0]}, all[0]...)
	all[len(all)-1] = append(append([]string{}, all[len(all)-1]...), whole[1:]...)
	var steps []string
	for _, evs := range all {
		steps = append(steps, msEvents(evs...))
	}
	return steps
}

// msSeen is what anthropic-sdk-go's stream gave the application.
type msSeen struct {
	streamSeen
	msg    anthropic.Message
	accErr error
}

// readMessages streams a Messages request through the gateway with
// anthropic-sdk-go, accumulating the message as the SDK does.
func readMessages(gw string) *msSeen {
	seen := &msSeen{streamSeen: streamSeen{done: make(chan struct{})}}
	c := anthropic.NewClient(aoption.WithBaseURL(gw), aoption.WithAPIKey("client-key"), aoption.WithMaxRetries(0))
	st := c.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model: "m", MaxTokens: 64,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather",
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
	})
	go func() {
		defer close(seen.done)
		defer st.Close()
		for st.Next() {
			ev := st.Current()
			seen.mu.Lock()
			if err := seen.msg.Accumulate(ev); err != nil && seen.accErr == nil {
				seen.accErr = err
			}
			if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
				seen.deltas.WriteString(ev.Delta.Text)
			}
			seen.mu.Unlock()
		}
		seen.err = st.Err()
	}()
	return seen
}

// blocks is the accumulated message's content, one line per block.
func (s *msSeen) blocks() []string {
	var out []string
	for _, b := range s.msg.Content {
		switch b.Type {
		case "text":
			out = append(out, "text:"+b.Text)
		case "tool_use":
			out = append(out, "tool_use:"+b.Name+":"+string(b.Input))
		default:
			out = append(out, b.Type)
		}
	}
	return out
}

// TestIncrementalMessagesSeveralTextBlocks streams answers of several
// text blocks, and of text, tool_use and text, incrementally: the client
// accumulates the message buffered mode gives it.
func TestIncrementalMessagesSeveralTextBlocks(t *testing.T) {
	up, upURL := newScriptedSSE(t)
	inc := startModeGateway(t, upURL, config.StreamingIncremental, "")
	buf := startModeGateway(t, upURL, config.StreamingBuffered, "")
	cases := map[string][]string{
		"two text blocks": msSteps("end_turn",
			msTextBlock(0, "Hello ", "there. ", "How are ", "you?"), msTextBlock(1, " Second ", "block. ", "Bye.")),
		"three text blocks":    msSteps("end_turn", msTextBlock(0, "One. "), msTextBlock(1, "Two "), msTextBlock(2, "three.")),
		"word split by blocks": msSteps("end_turn", msTextBlock(0, "The key is ab"), msTextBlock(1, "cdef, done.")),
		"text, tool_use, text": msSteps("tool_use",
			msTextBlock(0, "Let me ", "check. "), msToolBlock(1, "get_weather", `{"city":"Paris"}`), msTextBlock(2, "Checking ", "now.")),
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			up.script(false, steps...)
			want := readMessages(buf.url)
			want.wait(t)
			if want.err != nil || want.accErr != nil {
				t.Fatalf("buffered: %v %v", want.err, want.accErr)
			}
			got := readMessages(inc.url)
			got.wait(t)
			if got.err != nil || got.accErr != nil {
				t.Fatalf("incremental: %v %v", got.err, got.accErr)
			}
			if g, w := strings.Join(got.blocks(), "|"), strings.Join(want.blocks(), "|"); g != w {
				t.Errorf("blocks %s, buffered mode gives %s", g, w)
			}
			if got.msg.StopReason != want.msg.StopReason {
				t.Errorf("stop reason %q, want %q", got.msg.StopReason, want.msg.StopReason)
			}
			var text strings.Builder
			for _, b := range want.msg.Content {
				text.WriteString(b.Text)
			}
			if got.text() != text.String() {
				t.Errorf("the text deltas join to %q, want %q", got.text(), text.String())
			}
		})
	}
}

// TestIncrementalMessagesReleasesSecondBlockEarly: the first block's text
// reaches the client before the upstream sent the second block, and the
// second block's before the message ended.
func TestIncrementalMessagesReleasesSecondBlockEarly(t *testing.T) {
	up, upURL := newScriptedSSE(t)
	inc := startModeGateway(t, upURL, config.StreamingIncremental, "")
	steps := msSteps("end_turn", msTextBlock(0, "Hello there. "), msTextBlock(1, "Second block. ", "More."))
	steps = splitLastStep(t, steps, "event: content_block_stop")
	up.script(true, steps...)
	got := readMessages(inc.url)
	waitText(t, "first block", got.text, "Hello there. ")
	up.release()
	waitText(t, "second block", got.text, "Hello there. Second block. ")
	up.release()
	got.wait(t)
	if got.err != nil || strings.Join(got.blocks(), "|") != "text:Hello there. |text:Second block. More." {
		t.Fatalf("err %v, blocks %v", got.err, got.blocks())
	}
}

// TestIncrementalMessagesDenyInSecondBlock: a deny after the first
// release withholds the rest; the SDK raises the error event.
func TestIncrementalMessagesDenyInSecondBlock(t *testing.T) {
	up, upURL := newScriptedSSE(t)
	inc := startModeGateway(t, upURL, config.StreamingIncremental, denyWord)
	up.script(true, msSteps("end_turn", msTextBlock(0, "Hello there. "), msTextBlock(1, "This is ", "FORBIDDEN text. ", "Bye."))...)
	got := readMessages(inc.url)
	deniedAfterFirst(t, up, &got.streamSeen, "Hello there. ", "policy:forbidden_word", "FORBIDDEN")
}

// ---- Chat Completions ----

// chatSeen is what openai-go's chat stream and accumulator gave the
// application.
type chatSeen struct {
	content, refusal string
	calls            []string
	finish           string
	deltas           strings.Builder
	err              error
}

func readChat(gw string) chatSeen {
	c := openai.NewClient(option.WithBaseURL(gw+"/v1"), option.WithAPIKey("client-key"), option.WithMaxRetries(0))
	st := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	defer st.Close()
	var seen chatSeen
	acc := openai.ChatCompletionAccumulator{}
	for st.Next() {
		ch := st.Current()
		acc.AddChunk(ch)
		if len(ch.Choices) > 0 {
			seen.deltas.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	seen.err = st.Err()
	if len(acc.Choices) > 0 {
		m := acc.Choices[0].Message
		seen.content, seen.refusal, seen.finish = m.Content, m.Refusal, acc.Choices[0].FinishReason
		for _, tc := range m.ToolCalls {
			seen.calls = append(seen.calls, tc.Function.Name+tc.Function.Arguments)
		}
	}
	return seen
}

// TestIncrementalChatContentAfterOtherChannels: chat content that goes on
// after a refusal, a tool call, reasoning or a citation arrived (the rest
// is judged whole) reaches the client as buffered mode gives it.
func TestIncrementalChatContentAfterOtherChannels(t *testing.T) {
	up, upURL := newScriptedSSE(t)
	inc := startModeGateway(t, upURL, config.StreamingIncremental, "")
	buf := startModeGateway(t, upURL, config.StreamingBuffered, "")
	first := chunkWith(`{"role":"assistant","content":"Hello there. "}`, "", "")
	more := chunkWith(`{"content":"And more. "}`, "", "")
	cases := map[string][]string{
		"refusal": {first, chunkWith(`{"refusal":"I cannot. "}`, "", ""), more},
		"tool call": {first, chunkWith(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}`, "", ""),
			more},
		"reasoning": {first, chunkWith(`{"reasoning_content":"thinking"}`, "", ""), more},
		"citation": {first, chunkWith(`{"annotations":[{"type":"url_citation","url_citation":{"url":"https://x.test/","title":"X","start_index":0,"end_index":5}}]}`, "", ""),
			more},
	}
	for name, chunks := range cases {
		t.Run(name, func(t *testing.T) {
			up.script(false, sseEvents(append(chunks, finishChunk)...))
			want, got := readChat(buf.url), readChat(inc.url)
			if want.err != nil {
				t.Fatalf("buffered: %v", want.err)
			}
			if got.err != nil {
				t.Fatalf("incremental: %v", got.err)
			}
			if got.content != want.content || got.refusal != want.refusal || strings.Join(got.calls, "|") != strings.Join(want.calls, "|") || got.finish != want.finish {
				t.Fatalf("incremental %+v\nbuffered %+v", got, want)
			}
			if got.deltas.String() != want.content {
				t.Fatalf("deltas %q, content %q", got.deltas.String(), want.content)
			}
		})
	}
}

// denyKey denies a credential-shaped token.
const denyKey = `  - name: deny-key
    type: regex
    points: [post_model_call, output]
    action: deny
    reason: policy:credential_leak
    patterns: ['sk-[A-Za-z0-9]{20,}']
`

// TestIncrementalSecretSplitAcrossParts: a credential split over two
// message items or text blocks is judged as the client joins it: no
// segment releases a piece of it, and the deny ends the stream.
func TestIncrementalSecretSplitAcrossParts(t *testing.T) {
	up, upURL := newScriptedSSE(t)
	inc := startModeGateway(t, upURL, config.StreamingIncremental, denyKey)
	const head, tail = "sk-abcdef0123", "456789ghijklmn"
	t.Run("responses", func(t *testing.T) {
		up.script(true, rsSteps([]string{"Fine. ", "The key: " + head}, []string{tail + " is it. ", "Bye."})...)
		deniedAfterFirst(t, up, &readResponses(inc.url).streamSeen, "Fine. ", "policy:credential_leak", "sk-", tail)
	})
	t.Run("messages", func(t *testing.T) {
		up.script(true, msSteps("end_turn", msTextBlock(0, "Fine. ", "The key: "+head), msTextBlock(1, tail+" is it. ", "Bye."))...)
		deniedAfterFirst(t, up, &readMessages(inc.url).streamSeen, "Fine. ", "policy:credential_leak", "sk-", tail)
	})
}
