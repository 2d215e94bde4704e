package proxy_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
)

// Complete mediation on the Messages surface, over real HTTP: what an
// upstream puts in an answer's metadata and opaque blobs reaches the client
// only where a verdict covered it (projected members) or sealed; what a
// client sends back reaches the upstream as judged, its seals opened.

// msCanary is a credential: every check that a value is token-shaped lets
// it through.
const msCanary = "sk-proj-abcdefghijklmnopqrstuvwx"

// msGateway is a gateway in front of an Anthropic upstream that answers
// every request with the current answer and records what it received.
type msGateway struct {
	url  string
	up   *fixedUpstream
	out  *syncBuffer // records
	logs *syncBuffer
}

// startMessagesGateway starts a gateway under the interceptors given, with
// the top-level configuration top (streaming, say).
func startMessagesGateway(t *testing.T, top, interceptors string) *msGateway {
	t.Helper()
	g := &msGateway{up: newFixedUpstream(t), out: &syncBuffer{}, logs: &syncBuffer{}}
	t.Setenv("MS_TEST_KEY", "upstream-key")
	doc := `listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: anthropic
    type: anthropic
    base_url: ` + g.up.url + `
    api_key_env: MS_TEST_KEY
    models: ["*"]
sessions:
  store: memory
records:
  sinks:
    - type: stdout
` + top + `
interceptors:
` + interceptors
	g.url = serveDoc(t, "messages.yaml", doc, g.out, g.logs)
	return g
}

// answerWith sets the upstream's answer.
func (g *msGateway) answerWith(body string, sse bool) { g.up.answer(body, sse) }

// lastBody is the body of the last request the upstream received.
func (g *msGateway) lastBody(t *testing.T) string {
	t.Helper()
	got := g.up.received()
	if len(got) == 0 {
		t.Fatal("the upstream received nothing")
	}
	return got[len(got)-1]
}

// post sends body to /v1/messages with headers h and returns the status
// and the raw body.
func (g *msGateway) post(t *testing.T, body string, h http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.url+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// client is the official Go client of the gateway.
func (g *msGateway) client() anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(g.url), aoption.WithAPIKey("client-key"), aoption.WithMaxRetries(0))
}

const msAllow = `  - {name: pass, type: allow}
`

const msDenyCanary = `  - name: deny-credentials
    type: regex
    points: [pre_model_call, post_model_call]
    action: deny
    reason: policy:credential_leak
    patterns: ['sk-proj-[A-Za-z]{24}']
`

// msStreaming are the streaming modes every stream case runs under.
var msStreaming = map[string]string{
	"buffered":    "",
	"incremental": "streaming:\n  mode: incremental\n",
}

// msHostile is one place an upstream can put the canary. member, when set,
// is the projected member the canary is released in (judged: a deny
// policy denies it); otherwise the canary never reaches the client.
type msHostile struct {
	name   string
	json   string   // the answer as JSON
	events []string // the answer's stream events (data objects)
	member string
}

func msHostileCases() []msHostile {
	c := msCanary
	text := `{"type":"text","text":"fine"}`
	answer := func(blocks, stop, extra string) string {
		return `{"id":"msg_h","type":"message","role":"assistant","model":"m","content":[` + blocks + `],"stop_reason":"` + stop + `","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}` + extra + `}`
	}
	start := func(meta string) string {
		return `{"type":"message_start","message":{"id":"msg_h","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}` + meta + `}}`
	}
	stream := func(startMeta, delta, usage string, blocks ...string) []string {
		evs := append([]string{start(startMeta)}, blocks...)
		return append(evs, `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null`+delta+`},"usage":{"output_tokens":2`+usage+`}}`, `{"type":"message_stop"}`)
	}
	textBlock := func(i string) []string {
		return []string{`{"type":"content_block_start","index":` + i + `,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":` + i + `,"delta":{"type":"text_delta","text":"fine"}}`,
			`{"type":"content_block_stop","index":` + i + `}`}
	}
	withIDModel := func(s, id, model string) string {
		return strings.Replace(strings.Replace(s, `"id":"msg_h"`, `"id":"`+id+`"`, 1), `"model":"m"`, `"model":"`+model+`"`, 1)
	}
	return []msHostile{
		{name: "id", json: withIDModel(answer(text, "end_turn", ""), "msg_"+c, "m"),
			events: append([]string{withIDModel(start(""), "msg_"+c, "m")}, stream("", "", "", textBlock("0")...)[1:]...)},
		{name: "model", json: withIDModel(answer(text, "end_turn", ""), "msg_h", c),
			events: append([]string{withIDModel(start(""), "msg_h", c)}, stream("", "", "", textBlock("0")...)[1:]...)},
		{name: "container.id", json: answer(text, "end_turn", `,"container":{"id":"`+c+`","expires_at":"2026-12-03T00:00:00Z"}`),
			events: stream("", `,"container":{"id":"`+c+`","expires_at":"2026-12-03T00:00:00Z"}`, "", textBlock("0")...)},
		{name: "stop_details.category", json: answer(text, "refusal", `,"stop_details":{"type":"refusal","category":"`+c+`","explanation":null}`),
			events: stream("", `,"stop_details":{"type":"refusal","category":"`+c+`","explanation":null}`, "", textBlock("0")...)},
		{name: "context_management edit type", json: answer(text, "end_turn", `,"context_management":{"applied_edits":[{"type":"`+c+`","cleared_input_tokens":3}]}`),
			events: stream(`,"context_management":{"applied_edits":[{"type":"`+c+`","cleared_input_tokens":3}]}`, "", "", textBlock("0")...)},
		{name: "usage.service_tier", json: strings.Replace(answer(text, "end_turn", ""), `"output_tokens":1}`, `"output_tokens":1,"service_tier":"`+c+`"}`, 1),
			events: stream("", "", `,"service_tier":"`+c+`"`, textBlock("0")...)},
		{name: "unknown usage.server_tool_use member", json: strings.Replace(answer(text, "end_turn", ""), `"output_tokens":1}`, `"output_tokens":1,"server_tool_use":{"web_search_requests":1,"x_requests":"`+c+`"}}`, 1),
			events: stream("", "", `,"server_tool_use":{"web_search_requests":1,"x_requests":"`+c+`"}`, textBlock("0")...), member: `"x_requests":"` + c + `"`},
		{name: "tool_use.caller", json: answer(`{"type":"tool_use","id":"toolu_1","name":"f","input":{},"caller":{"type":"code_execution_20250825","tool_id":"`+c+`"}}`, "tool_use", ""),
			events: stream("", "", "", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{},"caller":{"type":"code_execution_20250825","tool_id":"`+c+`"}}}`,
				`{"type":"content_block_stop","index":0}`), member: `"tool_id":"` + c + `"`},
		{name: "thinking.signature", json: answer(`{"type":"thinking","thinking":"hm","signature":"`+c+`"},`+text, "end_turn", ""),
			events: stream("", "", "", append([]string{`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"` + c + `"}}`,
				`{"type":"content_block_stop","index":0}`}, textBlock("1")...)...)},
		{name: "redacted_thinking.data", json: answer(`{"type":"redacted_thinking","data":"`+c+`"},`+text, "end_turn", ""),
			events: stream("", "", "", append([]string{`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"` + c + `"}}`,
				`{"type":"content_block_stop","index":0}`}, textBlock("1")...)...)},
		{name: "citations encrypted_index", json: answer(`{"type":"text","text":"fine","citations":[{"type":"web_search_result_location","url":"https://x.test","title":"t","encrypted_index":"`+c+`","cited_text":"c"}]}`, "end_turn", ""),
			events: stream("", "", "", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://x.test","title":"t","encrypted_index":"`+c+`","cited_text":"c"}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"fine"}}`,
				`{"type":"content_block_stop","index":0}`)},
	}
}

// msEventsOf frames stream events, each named by its data's type.
func msEventsOf(datas []string) string {
	var b strings.Builder
	for _, d := range datas {
		name := eventType.FindStringSubmatch(d)[1]
		b.WriteString("event: " + name + "\ndata: " + d + "\n\n")
	}
	return b.String()
}

func TestMessagesHostileUpstreamMediated(t *testing.T) {
	type variant struct{ name, top, policy string }
	var variants []variant
	for mode, top := range msStreaming {
		variants = append(variants, variant{"allow " + mode, top, msAllow}, variant{"deny " + mode, top, msDenyCanary})
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			g := startMessagesGateway(t, v.top, v.policy)
			deny := v.policy == msDenyCanary
			for _, c := range msHostileCases() {
				for _, stream := range []bool{false, true} {
					body := c.json
					req := `{"model":"claude-x","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`
					if stream {
						body = msEventsOf(c.events)
						req = strings.Replace(req, `"max_tokens"`, `"stream":true,"max_tokens"`, 1)
					}
					g.answerWith(body, stream)
					status, out := g.post(t, req, nil)
					name := c.name + map[bool]string{false: " json", true: " sse"}[stream]
					switch {
					case c.member != "" && deny:
						if status != http.StatusUnavailableForLegalReasons || strings.Contains(out, msCanary) {
							t.Errorf("%s: status %d, want the projected member denied:\n%s", name, status, out)
						}
					case c.member != "":
						// Judged and allowed: released in the member a policy saw,
						// and nowhere else.
						if status != http.StatusOK || strings.Count(out, msCanary) == 0 || strings.Count(out, msCanary) != strings.Count(out, c.member) {
							t.Errorf("%s: status %d, want the canary in %s only:\n%s", name, status, c.member, out)
						}
					default:
						if status != http.StatusOK || strings.Contains(out, msCanary) {
							t.Errorf("%s: status %d, want the answer without the canary:\n%s", name, status, out)
						}
						if !strings.Contains(out, `"model":"claude-x"`) || strings.Contains(out, `"msg_h"`) {
							t.Errorf("%s: the upstream's id or model reached the client:\n%s", name, out)
						}
					}
				}
			}
			if strings.Contains(g.out.String(), msCanary) || strings.Contains(g.logs.String(), msCanary) {
				t.Error("a record or a log line carries the canary")
			}
		})
	}
}

// An answer's blobs fed back as the assistant turn, as the official client
// does (Message.ToParam), reach the upstream as the provider issued them;
// a signature the gateway did not seal is refused with a 400.
func TestMessagesSDKRoundTripsSealedBlobs(t *testing.T) {
	const (
		sig      = "EqQBCkgIBhABGAIiQL0signature=="
		data     = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2X"
		encIndex = "Eo8BCioIAhgBIiQ0ZDhm"
	)
	answer := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[` +
		`{"type":"thinking","thinking":"Let me check.","signature":"` + sig + `"},` +
		`{"type":"redacted_thinking","data":"` + data + `"},` +
		`{"type":"text","text":"Go 1.26 is out.","citations":[{"type":"web_search_result_location","url":"https://go.dev/doc","title":"Go","encrypted_index":"` + encIndex + `","cited_text":"Go 1.26 released"}]}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":5}}`
	events := msEventsOf([]string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me check."}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"` + sig + `"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"` + data + `"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://go.dev/doc","title":"Go","encrypted_index":"` + encIndex + `","cited_text":"Go 1.26 released"}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Go 1.26 is out."}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`,
		`{"type":"message_stop"}`,
	})
	for mode, top := range msStreaming {
		for _, stream := range []bool{false, true} {
			t.Run(mode+map[bool]string{false: " json", true: " sse"}[stream], func(t *testing.T) {
				g := startMessagesGateway(t, top, msAllow)
				c := g.client()
				ctx := t.Context()
				params := anthropic.MessageNewParams{Model: "claude-x", MaxTokens: 64,
					Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("what's new in Go?"))}}
				var msg anthropic.Message
				if stream {
					g.answerWith(events, true)
					s := c.Messages.NewStreaming(ctx, params)
					for s.Next() {
						if err := msg.Accumulate(s.Current()); err != nil {
							t.Fatal(err)
						}
					}
					if err := s.Err(); err != nil {
						t.Fatal(err)
					}
					s.Close()
				} else {
					g.answerWith(answer, false)
					m, err := c.Messages.New(ctx, params)
					if err != nil {
						t.Fatal(err)
					}
					msg = *m
				}
				if len(msg.Content) != 3 || !strings.HasPrefix(msg.ID, "msg_") || msg.ID == "msg_1" {
					t.Fatalf("the client read %d blocks, id %q", len(msg.Content), msg.ID)
				}
				th, rd, tx := msg.Content[0].AsThinking(), msg.Content[1].AsRedactedThinking(), msg.Content[2].AsText()
				if th.Signature == sig || !strings.HasPrefix(th.Signature, "hgs1_") || rd.Data == data || len(tx.Citations) != 1 ||
					tx.Citations[0].AsWebSearchResultLocation().EncryptedIndex == encIndex || th.Thinking != "Let me check." {
					t.Fatalf("the client holds the provider's blobs: %+v", msg.Content)
				}
				// The usual loop: the answer goes back as the assistant turn.
				g.answerWith(`{"id":"msg_2","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`, false)
				next := params
				next.Messages = append(append([]anthropic.MessageParam{}, params.Messages...), msg.ToParam(), anthropic.NewUserMessage(anthropic.NewTextBlock("and more?")))
				if _, err := c.Messages.New(ctx, next); err != nil {
					t.Fatalf("the client's own history is refused: %v", err)
				}
				up := g.lastBody(t)
				for _, blob := range []string{`"signature":"` + sig + `"`, `"data":"` + data + `"`, `"encrypted_index":"` + encIndex + `"`} {
					if !strings.Contains(up, blob) {
						t.Errorf("the upstream did not receive %s:\n%s", blob, up)
					}
				}
				if strings.Contains(up, "hgs1_") {
					t.Errorf("a seal reached the upstream:\n%s", up)
				}
				// A forged signature is refused, naming the member, never its value.
				forged := msg.ToParam()
				forged.OfAssistant.Content[0].OfThinking.Signature = sig
				next.Messages[1] = forged
				_, err := c.Messages.New(ctx, next)
				var apiErr *anthropic.Error
				if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest ||
					!strings.Contains(apiErr.RawJSON(), "messages[1].content[0].signature") || strings.Contains(apiErr.RawJSON(), sig) {
					t.Errorf("a forged signature: %v", err)
				}
			})
		}
	}
}

// agentSDKRequest is what the Claude Agent SDK (0.3.334) sends: a system
// message inside messages, carrying output_config.
const agentSDKRequest = `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[` +
	`{"role":"user","content":[{"type":"text","text":"list the go files"}]},` +
	`{"role":"system","content":[{"type":"text","text":"Answer as JSON."}],"output_config":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"files":{"type":"array"}}}}}}]}`

// msCELOutputConfig denies a request whose messages carry an output_config
// asking for a JSON schema: the member reaches a policy.
const msCELOutputConfig = `  - name: no-json-schema
    type: cel
    points: [pre_model_call]
    rules:
      - name: output-config
        when: 'target.exists(m, has(m.output_config) && m.output_config.format.type == "json_schema")'
        deny: {reason: "policy:no_structured_output"}
`

func TestMessagesAgentSDKSystemMessage(t *testing.T) {
	answer := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"{\"files\":[]}"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
	t.Run("accepted and forwarded as judged", func(t *testing.T) {
		g := startMessagesGateway(t, "", msAllow)
		g.answerWith(answer, false)
		status, out := g.post(t, agentSDKRequest, nil)
		if status != http.StatusOK {
			t.Fatalf("status %d:\n%s", status, out)
		}
		if up := g.lastBody(t); up != agentSDKRequest {
			t.Errorf("the upstream received\n%s", up)
		}
	})
	t.Run("a policy sees it", func(t *testing.T) {
		g := startMessagesGateway(t, "", msCELOutputConfig)
		g.answerWith(answer, false)
		status, out := g.post(t, agentSDKRequest, nil)
		if status != http.StatusUnavailableForLegalReasons || !strings.Contains(out, "policy:no_structured_output") {
			t.Fatalf("status %d, want the CEL deny:\n%s", status, out)
		}
		if n := len(g.up.received()); n != 0 {
			t.Error("the denied request reached the upstream")
		}
		// Without the member the same policy allows.
		plain := strings.Replace(agentSDKRequest, `,"output_config":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"files":{"type":"array"}}}}}`, "", 1)
		if status, out := g.post(t, plain, nil); status != http.StatusOK {
			t.Errorf("status %d without output_config:\n%s", status, out)
		}
	})
}

// The anthropic-beta header and the model name a `*` route forwards are
// judged with the request: a policy that denies a credential denies it
// there, and the upstream receives exactly the betas judged.
func TestMessagesHeaderAndModelJudged(t *testing.T) {
	answer := `{"id":"msg_1","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
	req := `{"model":"claude-x","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
	g := startMessagesGateway(t, "", msDenyCanary)
	g.answerWith(answer, false)
	h := http.Header{"Anthropic-Beta": {"context-1m-2025-08-07 , interleaved-thinking-2025-05-14", "fine-grained-tool-streaming-2025-05-14"}}
	if status, out := g.post(t, req, h); status != http.StatusOK || !strings.Contains(out, `"model":"claude-x"`) {
		t.Fatalf("status %d:\n%s", status, out)
	}
	got := g.up.lastHeader().Values("Anthropic-Beta")
	if len(got) != 1 || got[0] != "context-1m-2025-08-07,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14" {
		t.Errorf("the upstream's anthropic-beta = %q", got)
	}
	if status, out := g.post(t, req, http.Header{"Anthropic-Beta": {"context-1m-2025-08-07," + msCanary}}); status != http.StatusUnavailableForLegalReasons || strings.Contains(out, msCanary) {
		t.Errorf("a credential in anthropic-beta: status %d\n%s", status, out)
	}
	if status, out := g.post(t, req, http.Header{"Anthropic-Version": {msCanary}}); status != http.StatusUnavailableForLegalReasons || strings.Contains(out, msCanary) {
		t.Errorf("a credential in anthropic-version: status %d\n%s", status, out)
	}
	celModel := `  - name: model-guard
    type: cel
    points: [pre_model_call]
    rules:
      - name: credential-as-model
        when: 'context.model.id.startsWith("sk-")'
        deny: {reason: "policy:bad_model"}
`
	g = startMessagesGateway(t, "", celModel)
	g.answerWith(answer, false)
	if status, out := g.post(t, strings.Replace(req, "claude-x", msCanary, 1), nil); status != http.StatusUnavailableForLegalReasons || strings.Contains(out, msCanary) {
		t.Errorf("a credential as the model name a * route forwards: status %d\n%s", status, out)
	}
	if status, out := g.post(t, req, nil); status != http.StatusOK {
		t.Errorf("status %d:\n%s", status, out)
	}
}

// The released metadata is what the official client reads from a stream:
// the gateway's id, the request's model, stop_details (which the SDK takes
// from message_delta), the sealed container.
func TestMessagesSDKReadsReleasedMetadata(t *testing.T) {
	events := msEventsOf([]string{
		`{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"upstream-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1,"service_tier":"standard"}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I can't help with that."}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null,"stop_details":{"type":"refusal","category":"cyber","explanation":null},"container":{"id":"container_1","expires_at":"2026-12-03T00:00:00Z"}},"usage":{"output_tokens":7}}`,
		`{"type":"message_stop"}`,
	})
	for mode, top := range msStreaming {
		t.Run(mode, func(t *testing.T) {
			g := startMessagesGateway(t, top, msAllow)
			g.answerWith(events, true)
			c := g.client()
			s := c.Messages.NewStreaming(t.Context(), anthropic.MessageNewParams{Model: "claude-x", MaxTokens: 64,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
			var msg anthropic.Message
			for s.Next() {
				if err := msg.Accumulate(s.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if msg.ID == "msg_up" || !strings.HasPrefix(msg.ID, "msg_") || msg.Model != "claude-x" || msg.StopReason != "refusal" ||
				msg.StopDetails.Category != "cyber" || msg.Usage.OutputTokens != 7 || msg.Usage.ServiceTier != "standard" ||
				!strings.HasPrefix(msg.Container.ID, "hgs1_") || msg.Content[0].AsText().Text != "I can't help with that." {
				t.Errorf("the client read %+v", msg)
			}
		})
	}
}
