package interceptors_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// celToolPolicy guards the model's tool calls before the client sees them:
// production deletes are denied, search limits are clamped to 100.
const celToolPolicy = `  - name: tool-guard
    type: cel
    points: [post_model_call]
    rules:
      - name: no-prod-delete
        when: 'target.tool_calls.exists(c, c.name == "delete_db" && c.args.?env.orValue("") == "prod")'
        deny: {reason: policy:prod_delete, message: deleting production databases is not allowed}
      - name: clamp-search
        when: 'size(target.tool_calls) > 0 && target.tool_calls[0].name == "search" && target.tool_calls[0].args.?limit.orValue(0) > 100'
        transform: {path: '$target.tool_calls[0].args.limit', value: '100', reason: policy:clamped}
`

// ask sends one user message through the openai-go client.
func ask(g *testGateway, text string) (*openai.ChatCompletion, error) {
	return g.Client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
	})
}

func TestCELGatewayDeniesToolCall(t *testing.T) {
	g := startGateway(t, celToolPolicy)

	_, err := ask(g, `/tool delete_db {"env":"prod","name":"orders"}`)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v, want an API error", err)
	}
	if apiErr.StatusCode != http.StatusForbidden || apiErr.Code != "policy:prod_delete" ||
		apiErr.Message != "deleting production databases is not allowed" {
		t.Errorf("error = %d %q %q", apiErr.StatusCode, apiErr.Code, apiErr.Message)
	}
	rec := g.recordAt(t, "post_model_call")
	verdict := rec["verdict"].(map[string]any)
	if rec["decided_by"] != float64(0) || verdict["decision"] != "deny" || verdict["reason"] != "policy:prod_delete" {
		t.Errorf("record = %v", rec)
	}
	if strings.Contains(g.recordText(), "orders") {
		t.Errorf("records carry the tool arguments: %s", g.recordText())
	}

	// The same tool against staging goes through untouched.
	resp, err := ask(g, `/tool delete_db {"env":"staging"}`)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "delete_db" || calls[0].Function.Arguments != `{"env":"staging"}` {
		t.Errorf("tool calls = %+v", calls)
	}
}

// searchArgs decodes a search call's arguments as the client received them.
func searchArgs(t *testing.T, args string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(args), &out); err != nil {
		t.Fatalf("arguments %q: %v", args, err)
	}
	return out
}

func TestCELGatewayClampsToolArgument(t *testing.T) {
	g := startGateway(t, celToolPolicy)
	prompt := `/tool search {"query":"q3 revenue","limit":5000}`

	resp, err := ask(g, prompt)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].ID != "call_mock_0" || calls[0].Function.Name != "search" {
		t.Fatalf("tool calls = %+v", calls)
	}
	if args := searchArgs(t, calls[0].Function.Arguments); args["limit"] != float64(100) || args["query"] != "q3 revenue" {
		t.Errorf("arguments = %v, want the limit clamped to 100 and the query kept", args)
	}
	rec := g.recordAt(t, "post_model_call")
	if verdict := rec["verdict"].(map[string]any); verdict["decision"] != "transform" || verdict["reason"] != "policy:clamped" {
		t.Errorf("record = %v", rec)
	}

	// Streamed, the rewritten arguments reach the client too.
	stream := g.Client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
	})
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || len(acc.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("streamed message = %+v", acc.Choices)
	}
	if args := searchArgs(t, acc.Choices[0].Message.ToolCalls[0].Function.Arguments); args["limit"] != float64(100) {
		t.Errorf("streamed arguments = %v, want the limit clamped to 100", args)
	}

	// Under the limit, nothing is rewritten.
	resp, err = ask(g, `/tool search {"query":"q","limit":7}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.ToolCalls[0].Function.Arguments; got != `{"query":"q","limit":7}` {
		t.Errorf("arguments = %s", got)
	}
}

func TestCELGatewayRuntimeErrorFailsClosed(t *testing.T) {
	// Without a guard, reading the first tool call of a plain answer fails
	// at run time; the gateway must block, not let the answer through.
	g := startGateway(t, `  - name: unguarded
    type: cel
    points: [post_model_call]
    rules:
      - name: first-call
        when: 'target.tool_calls[0].name == "delete_db"'
        deny: {reason: policy:x}
`)
	status, body := g.post(t, `{"model":"m","messages":[{"role":"user","content":"/say the launch code is 0000"}]}`)
	var e struct {
		Error struct{ Code, Type, Message string }
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if status != http.StatusServiceUnavailable || e.Error.Code != "host_error:interceptor_failed" {
		t.Fatalf("status %d, body %s", status, body)
	}
	if strings.Contains(string(body), "launch code") {
		t.Errorf("the error carries the model's answer: %s", body)
	}
	rec := g.recordAt(t, "post_model_call")
	verdict := rec["verdict"].(map[string]any)
	if verdict["decision"] != "deny" || verdict["reason"] != "host_error:interceptor_failed" {
		t.Errorf("record = %v", rec)
	}
	if !strings.Contains(verdict["message"].(string), "unguarded") {
		t.Errorf("record message %q does not name the interceptor", verdict["message"])
	}
	if strings.Contains(g.recordText(), "launch code") {
		t.Errorf("records carry the model's answer: %s", g.recordText())
	}
}
