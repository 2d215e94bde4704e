package interceptors_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// redactPolicy redacts at every point where the gateway lets a transform
// through to the wire.
const redactPolicy = `  - name: redact-secrets
    type: redact
    points: [pre_model_call, post_model_call, output]
`

// redactAnswers redacts model responses only, so that secrets do reach the
// model and come back from it.
const redactAnswers = `  - name: redact-answers
    type: redact
    points: [post_model_call]
`

// Secrets the tests send; none may reach the client, the model's echo or
// the records.
const (
	testCard  = "4111 1111 1111 1111"
	testEmail = "jane.doe@example.com"
	testKey   = "sk-proj-Q2xR7vT9mK4pL8nZ3wY6bH1cF5dJ0sA2eG7uN4iO9qX"
)

// assertNotLeaked fails when any of the secrets appears in the record
// sinks' output or in the texts given.
func assertNotLeaked(t *testing.T, g *testGateway, texts ...string) {
	t.Helper()
	texts = append(texts, g.recordText())
	for _, secret := range []string{testCard, testEmail, testKey} {
		for _, text := range texts {
			if strings.Contains(text, secret) {
				t.Errorf("%q leaked into %.200q", secret, text)
			}
		}
	}
}

// TestRedactGatewayPreModelCall: the mock echoes the last user message, so
// the answer shows what the upstream received.
func TestRedactGatewayPreModelCall(t *testing.T) {
	g := startGateway(t, redactPolicy)
	resp, err := g.Client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("Be brief."),
			openai.UserMessage("charge " + testCard + " and mail " + testEmail),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resp.Choices[0].Message.Content, "echo: charge [credit_card] and mail [email]"; got != want {
		t.Errorf("content %q, want %q", got, want)
	}
	rec := g.recordAt(t, "pre_model_call")
	verdict, _ := rec["verdict"].(map[string]any)
	if verdict["decision"] != "transform" || verdict["reason"] != "policy:redacted" || rec["decided_by"] != float64(0) {
		t.Errorf("record = %v", rec)
	}
	assertNotLeaked(t, g, resp.RawJSON())

	// The same through a raw request: nothing to redact passes untouched.
	status, body := g.post(t, `{"model":"m","messages":[{"role":"user","content":"version 1.26.3 on 2024-01-15"}]}`)
	if status != http.StatusOK || !strings.Contains(string(body), `"echo: version 1.26.3 on 2024-01-15"`) {
		t.Errorf("status %d, body %s", status, body)
	}
}

// TestRedactGatewayStream: a key in a streamed answer, split over several
// chunks, is redacted at post_model_call before any chunk reaches the
// client. The policy runs there only, so the key does reach the model.
func TestRedactGatewayStream(t *testing.T) {
	g := startGateway(t, redactAnswers)
	stream := g.Client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("/chunks 6 your key is " + testKey + " keep it safe")},
	})
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	var raw strings.Builder
	for stream.Next() {
		chunk := stream.Current()
		raw.WriteString(chunk.RawJSON())
		if !acc.AddChunk(chunk) {
			t.Fatalf("accumulator rejected %s", chunk.RawJSON())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 {
		t.Fatalf("choices = %+v", acc.Choices)
	}
	if got, want := acc.Choices[0].Message.Content, "your key is [openai_key] keep it safe"; got != want {
		t.Errorf("content %q, want %q", got, want)
	}
	rec := g.recordAt(t, "post_model_call")
	if v, _ := rec["verdict"].(map[string]any); v["decision"] != "transform" || v["reason"] != "policy:redacted" {
		t.Errorf("record = %v", rec)
	}
	if v, _ := g.recordAt(t, "pre_model_call")["verdict"].(map[string]any); v["decision"] != "allow" {
		t.Errorf("pre_model_call verdict = %v, want allow: the key must come from the model", v)
	}
	assertNotLeaked(t, g, raw.String())
}

// TestRedactGatewayToolArguments: an address inside the arguments of a tool
// call the model made is rewritten in the arguments the client receives.
func TestRedactGatewayToolArguments(t *testing.T) {
	g := startGateway(t, redactAnswers)
	resp, err := g.Client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(`/tool send_mail {"to":"` + testEmail + `","n":3}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Choices[0].Message.ToolCalls
	if len(calls) != 1 {
		t.Fatalf("tool calls = %+v", calls)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(calls[0].Function.Arguments), &args); err != nil {
		t.Fatalf("arguments %q: %v", calls[0].Function.Arguments, err)
	}
	if args["to"] != "[email]" || args["n"] != float64(3) || calls[0].Function.Name != "send_mail" {
		t.Errorf("call = %+v", calls[0])
	}
	if v, _ := g.recordAt(t, "post_model_call")["verdict"].(map[string]any); v["decision"] != "transform" {
		t.Errorf("post_model_call verdict = %v, want the transform", v)
	}
	assertNotLeaked(t, g, resp.RawJSON())
}
