package proxy_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// Text that readers join, end to end: a key split over two output message
// items or two text blocks reaches the application whole (openai-go's
// OutputText, an Anthropic answer's text blocks), and a key split over two
// text blocks or input_text parts reaches the model whole; the gateway
// judges the join.

// joinKey is a project key; joinHead and joinTail are its pieces, neither
// of which the credential patterns match alone.
const joinKey = "sk-proj-Q2xR7vT9mK4pL8nZ3wY6bH1cF5dJ0sA2eG7uN4iO9qX"

const (
	joinHead = "sk-proj-Q2xR"
	joinTail = "7vT9mK4pL8nZ3wY6bH1cF5dJ0sA2eG7uN4iO9qX"
)

// joinLeak reports which piece of the key s holds.
func joinLeak(s string) string {
	for _, p := range []string{joinHead, joinTail} {
		if strings.Contains(s, p) {
			return p
		}
	}
	return ""
}

// serveJoin serves cfg on a loopback listener and returns its root URL and
// the records and logs it writes.
func serveJoin(t *testing.T, cfg *config.Config) (string, *syncBuffer, *syncBuffer) {
	t.Helper()
	out, logs := &syncBuffer{}, &syncBuffer{}
	return serveConfig(t, cfg, out, logs), out, logs
}

// twoItemAnswer is a Responses answer whose key is split over two output
// message items, JSON or a stream of events.
func twoItemAnswer(stream bool) string {
	first, second := "Your key: "+joinHead, joinTail+" (keep it safe)"
	item := func(id, text, status string) string {
		return `{"type":"message","id":"` + id + `","status":"` + status + `","role":"assistant","content":[` + outputText(text, `,"annotations":[]`) + `]}`
	}
	if !stream {
		return responseObject(item("msg_a", first, "completed")+","+item("msg_b", second, "completed"), "")
	}
	evs := []string{`{"type":"response.created","response":{"id":"resp_h","object":"response","created_at":1,"status":"in_progress","model":"m","output":[]}}`}
	for i, it := range []struct{ id, text string }{{"msg_a", first}, {"msg_b", second}} {
		oi := `"output_index":` + string(rune('0'+i))
		loc := `"item_id":"` + it.id + `",` + oi + `,"content_index":0`
		evs = append(evs,
			`{"type":"response.output_item.added",`+oi+`,"item":{"type":"message","id":"`+it.id+`","status":"in_progress","role":"assistant","content":[]}}`,
			`{"type":"response.content_part.added",`+loc+`,"part":{"type":"output_text","text":"","annotations":[]}}`,
			`{"type":"response.output_text.delta",`+loc+`,"delta":"`+it.text+`"}`,
			`{"type":"response.output_text.done",`+loc+`,"text":"`+it.text+`"}`,
			`{"type":"response.content_part.done",`+loc+`,"part":`+outputText(it.text, `,"annotations":[]`)+`}`,
			`{"type":"response.output_item.done",`+oi+`,"item":`+item(it.id, it.text, "completed")+`}`)
	}
	evs = append(evs, `{"type":"response.completed","response":`+twoItemAnswer(false)+`}`)
	return rsEvents(evs...)
}

// twoBlockAnswer is a Messages answer whose key is split over two text
// blocks, JSON or a stream of events.
func twoBlockAnswer(stream bool) string {
	first, second := "Your key: "+joinHead, joinTail+" (keep it safe)"
	if !stream {
		return anthropicMessage(`{"type":"text","text":"`+first+`"},{"type":"text","text":"`+second+`"}`, "")
	}
	var blocks []string
	for i, text := range []string{first, second} {
		blocks = append(blocks, msBlock(string(rune('0'+i)), `{"type":"text","text":""}`, `{"type":"text_delta","text":"`+text+`"}`)...)
	}
	return msEvents(msStream("end_turn", blocks...)...)
}

// responsesOutput is what openai-go hands the application of an answer:
// OutputText of the response, streamed (from response.completed) or not.
func responsesOutput(ctx context.Context, c openai.Client, stream bool) (string, error) {
	p := responses.ResponseNewParams{Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("my key?")}}
	if !stream {
		r, err := c.Responses.New(ctx, p)
		if err != nil {
			return "", err
		}
		return r.OutputText(), nil
	}
	s := c.Responses.NewStreaming(ctx, p)
	defer s.Close()
	var text string
	for s.Next() {
		if ev := s.Current(); ev.Type == "response.completed" {
			text = ev.AsResponseCompleted().Response.OutputText()
		}
	}
	return text, s.Err()
}

// TestJoinedTextDefaultPolicy: under the embedded default configuration
// (its deny-credentials rule at post_model_call), a Responses answer that
// splits a key over two output message items is denied, JSON and
// streamed; the same answer read by openai-go straight from the upstream
// gives the application the whole key.
func TestJoinedTextDefaultPolicy(t *testing.T) {
	up := newFixedUpstream(t)
	t.Setenv("OPENAI_API_KEY", "upstream-key")
	t.Setenv("OPENAI_BASE_URL", up.url+"/v1")
	t.Setenv("HOOKS_GATEWAY_LISTEN", "")
	t.Setenv("HOOKS_GATEWAY_REDIS_URL", "")
	root, records, logs := serveJoin(t, config.Default())
	ctx := context.Background()
	direct := openai.NewClient(option.WithBaseURL(up.url+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	gw := openai.NewClient(option.WithBaseURL(root+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "json", true: "sse"}[stream]
		t.Run(name, func(t *testing.T) {
			up.answer(twoItemAnswer(stream), stream)
			if text, err := responsesOutput(ctx, direct, stream); err != nil || !strings.Contains(text, joinKey) {
				t.Fatalf("straight from the upstream, OutputText is %q (%v): the test answer does not split a key the client joins", text, err)
			}
			text, err := responsesOutput(ctx, gw, stream)
			var oe *openai.Error
			if !errors.As(err, &oe) || oe.StatusCode != http.StatusForbidden || !strings.Contains(oe.RawJSON(), "policy:credential_leak") {
				t.Fatalf("through the gateway: text %q, error %v", text, err)
			}
			if p := joinLeak(text + oe.RawJSON()); p != "" {
				t.Errorf("the client received %q", p)
			}
		})
	}
	if p := joinLeak(records.String() + logs.String()); p != "" {
		t.Errorf("a record or a log line carries %q", p)
	}
}

// joinPolicies are the policies the surface test runs: a regex deny and a
// regex redact, at pre_model_call and post_model_call.
var joinPolicies = map[string]string{
	"deny": `  - name: deny-credentials
    type: regex
    points: [pre_model_call, post_model_call]
    action: deny
    reason: policy:credential_leak
    patterns: ['sk-[A-Za-z0-9_-]{20,}']
`,
	"redact": `  - name: redact-credentials
    type: regex
    points: [pre_model_call, post_model_call]
    action: redact
    patterns: ['sk-[A-Za-z0-9_-]{20,}']
`,
}

// startJoinGateway serves policy in front of up, as an OpenAI and an
// Anthropic upstream.
func startJoinGateway(t *testing.T, up *fixedUpstream, policy string) (string, *syncBuffer, *syncBuffer) {
	t.Helper()
	t.Setenv("JOIN_TEST_KEY", "upstream-key")
	doc := `listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: openai
    type: openai
    base_url: ` + up.url + `/v1
    api_key_env: JOIN_TEST_KEY
    models: ["*"]
  - name: anthropic
    type: anthropic
    base_url: ` + up.url + `
    api_key_env: JOIN_TEST_KEY
    models: ["*"]
sessions:
  store: memory
records:
  sinks:
    - type: stdout
interceptors:
` + policy
	cfg, err := config.Parse("join.yaml", []byte(doc))
	if err != nil {
		t.Fatalf("config:\n%v", err)
	}
	return serveJoin(t, cfg)
}

// joinCall is one exchange of the surface test: it sets the upstream's
// answer, calls the gateway with an official client and returns what the
// application got (text, error).
type joinCall struct {
	name string
	// request: the key is in the client's request (judged at
	// pre_model_call); otherwise in the upstream's answer.
	request bool
	call    func(ctx context.Context, root string, up *fixedUpstream) (string, error)
}

func joinCalls() []joinCall {
	oa := func(root string) openai.Client {
		return openai.NewClient(option.WithBaseURL(root+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	}
	an := func(root string) anthropic.Client {
		return anthropic.NewClient(aoption.WithBaseURL(root), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
	}
	// messagesText is the text of an Anthropic answer as applications
	// assemble it: its text blocks, concatenated.
	messagesText := func(m *anthropic.Message) string {
		var b strings.Builder
		for _, c := range m.Content {
			if c.Type == "text" {
				b.WriteString(c.AsText().Text)
			}
		}
		return b.String()
	}
	calls := []joinCall{}
	for _, stream := range []bool{false, true} {
		suffix := map[bool]string{false: " json", true: " sse"}[stream]
		calls = append(calls,
			joinCall{name: "responses answer, two message items" + suffix, call: func(ctx context.Context, root string, up *fixedUpstream) (string, error) {
				up.answer(twoItemAnswer(stream), stream)
				return responsesOutput(ctx, oa(root), stream)
			}},
			joinCall{name: "messages answer, two text blocks" + suffix, call: func(ctx context.Context, root string, up *fixedUpstream) (string, error) {
				up.answer(twoBlockAnswer(stream), stream)
				p := anthropic.MessageNewParams{Model: "m", MaxTokens: 64, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("my key?"))}}
				if !stream {
					c := an(root)
					m, err := c.Messages.New(ctx, p)
					if err != nil {
						return "", err
					}
					return messagesText(m), nil
				}
				c := an(root)
				s := c.Messages.NewStreaming(ctx, p)
				defer s.Close()
				var m anthropic.Message
				for s.Next() {
					if err := m.Accumulate(s.Current()); err != nil {
						return "", err
					}
				}
				return messagesText(&m), s.Err()
			}},
		)
	}
	calls = append(calls,
		joinCall{name: "messages request, two text blocks", request: true, call: func(ctx context.Context, root string, up *fixedUpstream) (string, error) {
			up.answer(anthropicMessage(`{"type":"text","text":"noted"}`, ""), false)
			c := an(root)
			m, err := c.Messages.New(ctx, anthropic.MessageNewParams{Model: "m", MaxTokens: 64, Messages: []anthropic.MessageParam{
				anthropic.NewUserMessage(anthropic.NewTextBlock("Store my key: "+joinHead), anthropic.NewTextBlock(joinTail+" in the vault.")),
			}})
			if err != nil {
				return "", err
			}
			return messagesText(m), nil
		}},
		joinCall{name: "responses request, two input_text parts", request: true, call: func(ctx context.Context, root string, up *fixedUpstream) (string, error) {
			up.answer(responseObject(messageItem(outputText("noted", ""), ""), ""), false)
			c := oa(root)
			r, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: responses.ResponseNewParamsInputUnion{
				OfInputItemList: responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
					{OfInputText: &responses.ResponseInputTextParam{Text: "Store my key: " + joinHead}},
					{OfInputText: &responses.ResponseInputTextParam{Text: joinTail + " in the vault."}},
				}, responses.EasyInputMessageRoleUser)},
			}})
			if err != nil {
				return "", err
			}
			return r.OutputText(), nil
		}},
		joinCall{name: "chat request, two text parts", request: true, call: func(ctx context.Context, root string, up *fixedUpstream) (string, error) {
			up.answer(completion(`{"role":"assistant","content":"noted"}`, "", ""), false)
			c := oa(root)
			r, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{
				openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
					openai.TextContentPart("Store my key: " + joinHead), openai.TextContentPart(joinTail + " in the vault."),
				}),
			}})
			if err != nil {
				return "", err
			}
			return r.Choices[0].Message.Content, nil
		}},
	)
	return calls
}

// TestJoinedTextSurfaces: on the Responses and Messages answers (two
// output message items, two text blocks; JSON and streamed) and on the
// Messages, Responses and Chat Completions requests (two text blocks or
// parts), a regex deny blocks the key, a request before it reaches the
// upstream; a regex redact releases the answer, or forwards the request,
// with the key replaced where it starts and the rest of it removed.
func TestJoinedTextSurfaces(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []string{"deny", "redact"} {
		t.Run(policy, func(t *testing.T) {
			up := newFixedUpstream(t)
			root, records, logs := startJoinGateway(t, up, joinPolicies[policy])
			for _, c := range joinCalls() {
				t.Run(c.name, func(t *testing.T) {
					text, err := c.call(ctx, root, up)
					got := up.received()
					var detail string
					var oe *openai.Error
					var ae *anthropic.Error
					switch {
					case errors.As(err, &oe):
						detail = oe.RawJSON()
					case errors.As(err, &ae):
						detail = ae.RawJSON()
					}
					if p := joinLeak(text + detail); p != "" {
						t.Errorf("the client received %q", p)
					}
					if c.request {
						if p := joinLeak(strings.Join(got, "\n")); p != "" {
							t.Errorf("the upstream received %q", p)
						}
					}
					switch policy {
					case "deny":
						deny := http.StatusForbidden
						if ae != nil {
							deny = http.StatusUnavailableForLegalReasons // messages.Surface.PolicyDenyStatus
						}
						if errorStatus(err) != deny || !strings.Contains(detail, "policy:credential_leak") {
							t.Errorf("text %q, error %v, want a %d policy:credential_leak", text, err, deny)
						}
						if c.request && len(got) != 0 {
							t.Errorf("the upstream was called %d times", len(got))
						}
					case "redact":
						if err != nil {
							t.Fatalf("error %v", err)
						}
						if c.request {
							if len(got) != 1 || !strings.Contains(got[0], "Store my key: [redacted]") || !strings.Contains(got[0], " in the vault.") {
								t.Errorf("the upstream received %q", got)
							}
						} else if text != "Your key: [redacted] (keep it safe)" {
							t.Errorf("the application reads %q", text)
						}
					}
				})
			}
			if p := joinLeak(records.String() + logs.String()); p != "" {
				t.Errorf("a record or a log line carries %q", p)
			}
		})
	}
}

// errorStatus is the HTTP status of an official client's error, 0 when
// the error did not come from an HTTP error response.
func errorStatus(err error) int {
	var oe *openai.Error
	if errors.As(err, &oe) {
		return oe.StatusCode
	}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		return ae.StatusCode
	}
	return 0
}
