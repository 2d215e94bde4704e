package proxy_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// The hostile-upstream tests put a credential in every place a prompt-
// injected model or an impostor upstream can put text, JSON and SSE, and
// check the complete-mediation promise over real HTTP: under a deny
// policy the credential never reaches the client, a record or a log line;
// under a redact policy the client gets the redacted text in every field
// a client surfaces, and nothing of the credential anywhere.

const hostileSecret = "sk-HOSTILE0123456789abcdefghij"

// Halves of the secret, for channels the model fills fragment by fragment.
const (
	hostileHead = "sk-HOSTILE012345"
	hostileTail = "6789abcdefghij"
)

type hostileOutcome int

const (
	// judged: the channel is projected; a deny policy blocks the answer
	// (403), a redact policy releases it redacted (200).
	judged hostileOutcome = iota
	// removed: the member is not model text the gateway mediates; it is
	// cut out before release whatever the policy (200, no credential).
	removed
	// refused: the answer is ambiguous or carries an output channel the
	// gateway cannot mediate (502).
	refused
	// judgedUnrewritable: the channel is projected but cannot be written
	// back (a signed thinking block): a deny policy blocks the answer
	// (403); a redaction cannot be released and fails closed (503
	// host_error:transform_invalid).
	judgedUnrewritable
)

type hostileCase struct {
	name string
	// api is the surface the client calls; empty is chat completions.
	api wire.API
	// body is the upstream answer in the surface's format: JSON, or SSE
	// when stream.
	body   string
	stream bool
	want   hostileOutcome
}

func completion(message, choiceExtra, topExtra string) string {
	return `{"id":"chatcmpl-h","object":"chat.completion","created":1,"model":"m",` +
		`"choices":[{"index":0,"message":` + message + `,"logprobs":null,"finish_reason":"stop"` + choiceExtra + `}],` +
		`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}` + topExtra + `}`
}

func sseEvents(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String() + "data: [DONE]\n\n"
}

func chunkWith(delta, choiceExtra, topExtra string) string {
	return `{"id":"chatcmpl-h","object":"chat.completion.chunk","created":1,"model":"m",` +
		`"choices":[{"index":0,"delta":` + delta + `,"finish_reason":null` + choiceExtra + `}]` + topExtra + `}`
}

const finishChunk = `{"id":"chatcmpl-h","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`

func hostileCases() []hostileCase {
	s := hostileSecret
	text := func(extra string) string { return `{"role":"assistant","content":"fine"` + extra + `}` }
	return []hostileCase{
		{name: "json reasoning_content", body: completion(text(`,"reasoning_content":"think `+s+`"`), "", ""), want: judged},
		{name: "json reasoning", body: completion(text(`,"reasoning":"think `+s+`"`), "", ""), want: judged},
		{name: "json reasoning_details", body: completion(text(`,"reasoning_details":[{"type":"reasoning.text","text":"think `+s+`"}]`), "", ""), want: judged},
		{name: "json refusal next to content", body: completion(text(`,"refusal":"no `+s+`"`), "", ""), want: judged},
		{name: "json url citation", body: completion(text(`,"annotations":[{"type":"url_citation","url_citation":{"url":"https://x.test/?k=`+s+`","title":"`+s+`","start_index":0,"end_index":4}}]`), "", ""), want: judged},
		{name: "json tool call arguments", body: completion(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"send","arguments":"{\"key\":\"`+s+`\"}"}}]}`, "", ""), want: judged},
		{name: "json logprobs", body: strings.Replace(completion(text(""), "", ""), `"logprobs":null`, `"logprobs":{"content":[{"token":"`+s+`","logprob":-0.1,"bytes":[1],"top_logprobs":[{"token":"`+s+`","logprob":-1,"bytes":[1]}]}]}`, 1), want: removed},
		{name: "json unknown message member", body: completion(text(`,"x_note":"`+s+`"`), "", ""), want: judged},
		// A member part's name is judged but cannot be rewritten: a
		// redaction of it fails closed.
		{name: "json secret as a member name", body: completion(text(`,"`+s+`":1`), "", ""), want: judgedUnrewritable},
		{name: "json filter report", body: completion(text(""), `,"content_filter_results":{"note":"`+s+`"}`, ""), want: removed},
		{name: "json unknown choice member", body: completion(text(""), `,"native_finish_reason":"`+s+`"`, ""), want: judged},
		{name: "json unknown top-level member", body: completion(text(""), "", `,"debug":"`+s+`"`), want: judged},
		{name: "json unknown tool call member", body: completion(`{"role":"assistant","content":"fine","tool_calls":[{"id":"call_1","type":"function","function":{"name":"send","arguments":"{}"},"extra_content":{"sig":"`+s+`"}}]}`, "", ""), want: judged},
		{name: "json unknown null member", body: completion(text(`,"`+s+`":null`), "", ""), want: removed},
		{name: "json metadata carrying the secret", body: strings.Replace(completion(text(""), "", `,"system_fingerprint":"`+s+`","service_tier":"`+s+`"`), `"id":"chatcmpl-h"`, `"id":"`+s+`"`, 1), want: removed},
		{name: "json unknown usage member", body: strings.Replace(completion(text(""), "", ""), `"total_tokens":2`, `"total_tokens":2,"note":"`+s+`"`, 1), want: removed},
		{name: "json metadata shaped like text", body: strings.Replace(completion(text(""), "", ""), `"model":"m"`, `"model":"m `+s+`"`, 1), want: removed},
		{name: "json case-colliding content", body: completion(text(`,"Content":"`+s+`"`), "", ""), want: refused},
		{name: "json audio transcript", body: completion(text(`,"audio":{"id":"a","data":"AA==","expires_at":1,"transcript":"`+s+`"}`), "", ""), want: refused},

		{name: "sse reasoning_content split across deltas", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","reasoning_content":"think `+hostileHead+`"}`, "", ""),
			chunkWith(`{"reasoning_content":"`+hostileTail+`"}`, "", ""),
			chunkWith(`{"content":"fine"}`, "", ""), finishChunk), want: judged},
		{name: "sse reasoning", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","reasoning":"`+s+`"}`, "", ""), chunkWith(`{"content":"fine"}`, "", ""), finishChunk), want: judged},
		{name: "sse refusal next to content", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","content":"fine"}`, "", ""), chunkWith(`{"refusal":"`+s+`"}`, "", ""), finishChunk), want: judged},
		{name: "sse tool name split across fragments", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"`+hostileHead+`","arguments":""}}]}`, "", ""),
			chunkWith(`{"tool_calls":[{"index":0,"function":{"name":"`+hostileTail+`","arguments":"{}"}}]}`, "", ""),
			finishChunk), want: judged},
		{name: "sse tool arguments split across fragments", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"send","arguments":"{\"k\":\"`+hostileHead+`"}}]}`, "", ""),
			chunkWith(`{"tool_calls":[{"index":0,"function":{"arguments":"`+hostileTail+`\"}"}}]}`, "", ""),
			finishChunk), want: judged},
		{name: "sse unknown delta member", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","content":"fine","x_thoughts":"`+s+`"}`, "", ""), finishChunk), want: judged},
		{name: "sse unknown delta member split across deltas", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","content":"fine","x_thoughts":"`+hostileHead+`"}`, "", ""),
			chunkWith(`{"x_thoughts":"`+hostileTail+`"}`, "", ""), finishChunk), want: judged},
		{name: "sse unknown chunk member", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","content":"fine"}`, "", `,"provider":"`+s+`"`), finishChunk), want: judged},
		{name: "sse unknown choice member", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","content":"fine"}`, `,"native_finish_reason":"`+s+`"`, ""), finishChunk), want: judged},
		{name: "sse metadata carrying the secret", stream: true, body: sseEvents(
			strings.Replace(chunkWith(`{"role":"assistant","content":"fine"}`, "", `,"system_fingerprint":"`+s+`","service_tier":"`+s+`"`), `"model":"m"`, `"model":"`+s+`"`, 1),
			strings.Replace(finishChunk, `"id":"chatcmpl-h"`, `"id":"`+s+`"`, 1)), want: removed},
		{name: "sse obfuscation", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","content":"fine"}`, "", `,"obfuscation":"`+s+`"`), finishChunk), want: removed},
		{name: "sse logprobs", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","content":"fine"}`, `,"logprobs":{"content":[{"token":"`+s+`","logprob":-1,"bytes":[1],"top_logprobs":[]}]}`, ""), finishChunk), want: removed},
		{name: "sse comment, id, event and retry lines", stream: true, body: ": " + s + "\nid: " + s + "\nretry: 10\nevent: x" + s + "\n" +
			sseEvents(chunkWith(`{"role":"assistant","content":"fine"}`, "", ""), finishChunk), want: removed},
		{name: "sse unknown usage member", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","content":"fine"}`, "", ""), finishChunk,
			`{"id":"chatcmpl-h","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"note":"`+s+`"}}`), want: removed},
		{name: "sse case-colliding delta member", stream: true, body: sseEvents(
			chunkWith(`{"role":"assistant","content":"fine","Content":"`+s+`"}`, "", ""), finishChunk), want: refused},
	}
}

// hostileGateway is a real gateway in front of an upstream that answers
// every request with the current case's body.
type hostileGateway struct {
	url  string
	up   *fixedUpstream
	out  *syncBuffer // records
	logs *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startHostileGateway starts a gateway under policy (interceptor entries);
// extra is more top-level configuration (streaming, wire).
func startHostileGateway(t *testing.T, policy string, extra ...string) *hostileGateway {
	t.Helper()
	g := &hostileGateway{up: newFixedUpstream(t), out: &syncBuffer{}, logs: &syncBuffer{}}
	t.Setenv("HOSTILE_TEST_KEY", "upstream-key")
	doc := `listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: hostile
    type: openai
    base_url: ` + g.up.url + `/v1
    api_key_env: HOSTILE_TEST_KEY
    models: ["*"]
  - name: hostile-anthropic
    type: anthropic
    base_url: ` + g.up.url + `
    api_key_env: HOSTILE_TEST_KEY
    models: ["*"]
sessions:
  store: memory
records:
  sinks:
    - type: stdout
` + strings.Join(extra, "") + `interceptors:
` + policy
	g.url = serveDoc(t, "hostile.yaml", doc, g.out, g.logs)
	return g
}

func (g *hostileGateway) call(t *testing.T, c hostileCase) (int, string) {
	t.Helper()
	g.up.answer(c.body, c.stream)
	path, req := hostileRequest(c)
	resp, err := http.Post(g.url+path, "application/json", strings.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var h strings.Builder
	resp.Header.Write(&h)
	return resp.StatusCode, h.String() + "\n" + string(b)
}

// hostileRequest is the client's request of a case: the route and a
// one-message conversation on the case's surface.
func hostileRequest(c hostileCase) (path, body string) {
	stream := ""
	if c.stream {
		stream = `"stream":true,`
	}
	switch c.api {
	case wire.Responses:
		return "/v1/responses", `{"model":"m",` + stream + `"input":"hi"}`
	case wire.Messages:
		return "/v1/messages", `{"model":"m",` + stream + `"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`
	}
	return "/v1/chat/completions", `{"model":"m",` + stream + `"messages":[{"role":"user","content":"hi"}]}`
}

// leaked reports which part of the secret shows in s.
func leaked(s string) string {
	for _, part := range []string{hostileSecret, hostileHead, hostileTail} {
		if strings.Contains(s, part) {
			return part
		}
	}
	return ""
}

const denyPolicy = `  - name: deny-credentials
    type: regex
    points: [post_model_call, output]
    action: deny
    reason: policy:credential_leak
    patterns: ['sk-[A-Za-z0-9_-]{20,}']
`

const redactPolicy = `  - name: redact-credentials
    type: regex
    points: [post_model_call]
    action: redact
    replacement: "[redacted]"
    patterns: ['sk-[A-Za-z0-9_-]{20,}']
`

func TestHostileUpstreamDenyPolicy(t *testing.T) {
	g := startHostileGateway(t, denyPolicy)
	for _, c := range allHostileCases() {
		t.Run(c.name, func(t *testing.T) {
			status, out := g.call(t, c)
			if p := leaked(out); p != "" {
				t.Fatalf("the client received %q: status %d\n%s", p, status, out)
			}
			deny := http.StatusForbidden
			if c.api == wire.Messages {
				deny = http.StatusUnavailableForLegalReasons // messages.Surface.PolicyDenyStatus
			}
			want := map[hostileOutcome]int{judged: deny, judgedUnrewritable: deny, removed: http.StatusOK, refused: http.StatusBadGateway}[c.want]
			if status != want {
				t.Errorf("status %d, want %d\n%s", status, want, out)
			}
		})
	}
	if p := leaked(g.out.String()); p != "" {
		t.Errorf("a record carries %q", p)
	}
	if p := leaked(g.logs.String()); p != "" {
		t.Errorf("a log line carries %q", p)
	}
}

func TestHostileUpstreamRedactPolicy(t *testing.T) {
	g := startHostileGateway(t, redactPolicy)
	for _, c := range allHostileCases() {
		t.Run(c.name, func(t *testing.T) {
			status, out := g.call(t, c)
			if p := leaked(out); p != "" {
				t.Fatalf("the client received %q: status %d\n%s", p, status, out)
			}
			switch c.want {
			case judged:
				if status != http.StatusOK || !strings.Contains(out, "[redacted]") {
					t.Errorf("status %d, want 200 with the redacted text\n%s", status, out)
				}
			case removed:
				if status != http.StatusOK || !strings.Contains(out, "fine") {
					t.Errorf("status %d, want 200 with the answer\n%s", status, out)
				}
			case refused:
				if status != http.StatusBadGateway {
					t.Errorf("status %d, want 502\n%s", status, out)
				}
			case judgedUnrewritable:
				if status != http.StatusServiceUnavailable || !strings.Contains(out, "host_error:transform_invalid") {
					t.Errorf("status %d, want 503 host_error:transform_invalid\n%s", status, out)
				}
			}
		})
	}
	if p := leaked(g.out.String()); p != "" {
		t.Errorf("a record carries %q", p)
	}
	if p := leaked(g.logs.String()); p != "" {
		t.Errorf("a log line carries %q", p)
	}
}
