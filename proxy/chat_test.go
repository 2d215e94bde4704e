package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

func TestChatAllowReleasesUpstreamBytesUnchanged(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	gw := newGateway(t, gatewayConfig{upstream: up.URL})
	var raw *http.Response
	c := gw.client()
	resp, err := c.Chat.Completions.New(context.Background(), userParams("gpt-test", "hi"), option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "Hello there, FRIEND" {
		t.Fatalf("content = %q", resp.Choices[0].Message.Content)
	}
	if got := resp.RawJSON(); got != asReleased(completionJSON, got) {
		t.Fatalf("client bytes differ from upstream bytes (but the id and fingerprint):\n got %s\nwant %s", got, asReleased(completionJSON, got))
	}
	if raw.Header.Get(HeaderDecision) != "allow" || raw.Header.Get(HeaderMode) != "enforce" || raw.Header.Get(HeaderSession) == "" {
		t.Errorf("headers = %v", raw.Header)
	}
	equalPoints(t, gw.records.points(""), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall,
		enforcement.PostModelCall, enforcement.Output, enforcement.AgentShutdown)
	for i, r := range gw.records.all() {
		if r.Sequence != int64(i) {
			t.Errorf("record %d has sequence %d", i, r.Sequence)
		}
	}
	// The upstream got the client's body with the client's key replaced.
	var sent map[string]any
	if err := json.Unmarshal(up.received()[0], &sent); err != nil || sent["model"] != "gpt-test" {
		t.Fatalf("upstream body = %s", up.received()[0])
	}
}

func TestChatDenyReleasesNothing(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.PostModelCall {
			if r, _ := c["response"].(map[string]any); strings.Contains(r["content"].(string), "FRIEND") {
				return enforcement.Deny("policy:no-friends", "friendship is not allowed here")
			}
		}
		return enforcement.Allow()
	}})
	c := gw.client()
	_, err := c.Chat.Completions.New(context.Background(), userParams("gpt-test", "hi"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want an API error", err)
	}
	if apiErr.StatusCode != http.StatusForbidden || apiErr.Code != "policy:no-friends" || apiErr.Type != typeDenied {
		t.Fatalf("error = %d %q %q", apiErr.StatusCode, apiErr.Code, apiErr.Type)
	}
	if strings.Contains(apiErr.RawJSON(), "FRIEND") || strings.Contains(apiErr.RawJSON(), "Hello") {
		t.Fatalf("error body carries response content: %s", apiErr.RawJSON())
	}
	var env map[string]any
	json.Unmarshal([]byte(apiErr.RawJSON()), &env)
	if env["interception_point"] != "post_model_call" || env["sequence"] == nil || env["session_id"] == nil {
		t.Errorf("envelope lacks the emission: %s", apiErr.RawJSON())
	}
	equalPoints(t, gw.records.points(""), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall,
		enforcement.PostModelCall, enforcement.AgentShutdown)
}

func TestChatTransformsRequestAndToolArguments(t *testing.T) {
	up := newUpstream(t, jsonReply(toolCallJSON))
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: func(c enforcement.Context) enforcement.Verdict {
		switch c.Point() {
		case enforcement.PreModelCall:
			msgs := c["messages"].([]any)
			last := msgs[len(msgs)-1].(map[string]any)
			if s, ok := last["content"].(string); ok && strings.Contains(s, "bob@example.com") {
				return enforcement.TransformTo("$target["+itoa(len(msgs)-1)+"].content", strings.ReplaceAll(s, "bob@example.com", "[email]"))
			}
		case enforcement.PostModelCall:
			calls := c["response"].(map[string]any)["tool_calls"].([]any)
			for i, tc := range calls {
				args := tc.(map[string]any)["args"].(map[string]any)
				if args["path"] == "/etc/passwd" {
					return enforcement.TransformTo("$target.tool_calls["+itoa(i)+"].args.path", "/tmp/safe")
				}
			}
		}
		return enforcement.Allow()
	}})
	body := `{"model":"gpt-test","messages":[{"role":"system","content":"be brief","x-extra":1.0},{"role":"user","content":"read the file for bob@example.com"}],"temperature":0.20}`
	status, hdr, out := gw.post(t, body, nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	if hdr.Get(HeaderDecision) != "transform" {
		t.Errorf("decision header = %q", hdr.Get(HeaderDecision))
	}
	// The upstream saw the redacted message; the untouched system message and
	// the other members kept their exact bytes.
	sent := string(up.received()[0])
	want := `{"model":"gpt-test","messages":[{"role":"system","content":"be brief","x-extra":1.0},{"content":"read the file for [email]","role":"user"}],"temperature":0.20}`
	if sent != want {
		t.Fatalf("upstream body:\n got %s\nwant %s", sent, want)
	}
	// The client got the rewritten arguments; the other call kept its bytes.
	if !strings.Contains(string(out), `"arguments":"{\"limit\":10,\"path\":\"/tmp/safe\"}"`) {
		t.Fatalf("rewritten arguments missing: %s", out)
	}
	if !strings.Contains(string(out), `{"id":"call_b","type":"function","function":{"name":"list","arguments":"{ \"dir\" : \"/tmp\" }"}}`) {
		t.Fatalf("untouched tool call changed: %s", out)
	}
	if strings.Contains(string(out), "/etc/passwd") {
		t.Fatalf("original argument leaked: %s", out)
	}
	// A tool-call turn does not end the turn: no output emission.
	equalPoints(t, gw.records.points(""), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall,
		enforcement.PostModelCall, enforcement.AgentShutdown)
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestChatStreamAllowReplaysBytes(t *testing.T) {
	events := []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"Hel"}`, ""),
		chunk(`{"content":"lo"}`, ""),
		chunk(`{}`, "stop"),
		usageChunk,
		"[DONE]",
	}
	up := newUpstream(t, sseReply(events...))
	gw := newGateway(t, gatewayConfig{upstream: up.URL})
	c := gw.client()
	stream := c.Chat.Completions.NewStreaming(context.Background(), userParams("gpt-test", "hi"))
	acc := openai.ChatCompletionAccumulator{}
	n := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		n++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.Choices[0].Message.Content != "Hello" || n != 4 {
		t.Fatalf("content %q in %d chunks; want Hello in 4 (usage chunk stripped)", acc.Choices[0].Message.Content, n)
	}
	if !strings.Contains(string(up.received()[0]), `"stream_options":{"include_usage":true}`) {
		t.Errorf("usage was not requested upstream: %s", up.received()[0])
	}
	recs := gw.records.all()
	post := recs[3]
	if post.InterceptionPoint != enforcement.PostModelCall || post.Verdict.Decision != enforcement.DecisionAllow {
		t.Fatalf("record 3 = %+v", post)
	}
}

func TestChatStreamTransformSynthesizesValidStream(t *testing.T) {
	events := []string{
		chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"fetch","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"url\":\"http://ev"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"il.example/x\"}"}}]}`, ""),
		chunk(`{}`, "tool_calls"),
		"[DONE]",
	}
	up := newUpstream(t, sseReply(events...))
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.PostModelCall {
			return enforcement.TransformTo("$target.tool_calls[0].args.url", "https://safe.example/")
		}
		return enforcement.Allow()
	}})
	c := gw.client()
	stream := c.Chat.Completions.NewStreaming(context.Background(), userParams("gpt-test", "fetch it"))
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	calls := acc.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].ID != "call_x" || calls[0].Function.Arguments != `{"url":"https://safe.example/"}` {
		t.Fatalf("tool calls = %+v", calls)
	}
	if acc.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("finish_reason = %q", acc.Choices[0].FinishReason)
	}
}

func TestChatStreamDenyReleasesNothing(t *testing.T) {
	up := newUpstream(t, sseReply(chunk(`{"role":"assistant","content":"sk-live-secret"}`, ""), chunk(`{}`, "stop"), "[DONE]"))
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.PostModelCall {
			return enforcement.Deny("policy:credential", "")
		}
		return enforcement.Allow()
	}})
	status, hdr, body := gw.post(t, `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`, nil)
	if status != http.StatusForbidden || strings.Contains(string(body), "sk-live") || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, body %s", status, body)
	}
	if e := errorBody(t, body); e.Code != "policy:credential" {
		t.Fatalf("code = %q", e.Code)
	}
}

func TestChatBadRequests(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	gw := newGateway(t, gatewayConfig{upstream: up.URL, maxBody: 1 << 10})
	cases := []struct {
		name   string
		body   string
		status int
		param  string
	}{
		{"malformed", `{"model":`, http.StatusBadRequest, ""},
		{"no messages", `{"model":"m"}`, http.StatusBadRequest, "messages"},
		{"bad role", `{"model":"m","messages":[{"role":7}]}`, http.StatusBadRequest, "messages[0].role"},
		{"n>1", `{"model":"m","n":2,"messages":[{"role":"user","content":"x"}]}`, http.StatusBadRequest, "n"},
		{"too large", `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 2<<10) + `"}]}`, http.StatusRequestEntityTooLarge, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := gw.post(t, tc.body, nil)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			e := errorBody(t, body)
			if tc.param != "" && (e.Param == nil || *e.Param != tc.param) {
				t.Errorf("param = %v, want %q (%s)", e.Param, tc.param, e.Message)
			}
		})
	}
	if len(up.received()) != 0 {
		t.Fatalf("a bad request reached the upstream")
	}
}
