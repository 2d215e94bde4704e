package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// capturedFixture is one captured tool round: the requests an agent or
// client sent (TestCodexCapture, TestClaudeCodeCapture,
// TestAgentSDKCapture, TestOpenAIStreamHelperCapture), the tool its first
// answer calls with an argument carrying call, and what the tool returned
// (result), which an answer after the round carries.
type capturedFixture struct {
	file, tool, call, result string
}

var capturedFixtures = []capturedFixture{
	{"codex-requests.json", "exec_command", cliMarker, cliMarker},
	{"codex-gpt-5.5-requests.json", "exec_command", cliMarker, cliMarker},
	{"claude-code-requests.json", "Bash", cliMarker, cliMarker},
	{"agent-sdk-requests.json", "Bash", cliMarker, cliMarker},
	{"openai-js-stream-helper-requests.json", weatherTool, "Paris", weatherResult},
}

// TestCapturedRequests replays the captured requests, byte for byte with
// their headers, against the gateway: it keeps accepting what the agents
// and clients send without installing them. Every model call must be
// answered with a 200; the first with the tool's call, a later one (the
// call carrying the tool's output) with the mock's "tool results: " text.
func TestCapturedRequests(t *testing.T) {
	root := fixtureGateway(t, "")
	for _, f := range capturedFixtures {
		t.Run(strings.TrimSuffix(f.file, ".json"), func(t *testing.T) {
			calls := modelCalls(t, f.file)
			if len(calls) < 2 {
				t.Fatalf("%d model calls captured, want the tool round's two at least", len(calls))
			}
			answers := make([]string, len(calls))
			var held heldIDs
			for i, c := range calls {
				c.Body = held.into(c.Body)
				raw := replay(t, root, c)
				held.read(raw)
				answers[i] = streamedText(raw)
			}
			if !strings.Contains(answers[0], f.tool) || !strings.Contains(answers[0], f.call) {
				t.Fatalf("first answer does not call %s with %q: %q", f.tool, f.call, answers[0])
			}
			for _, a := range answers[1:] {
				if strings.Contains(a, "tool results:") && strings.Contains(a, f.result) {
					return
				}
			}
			t.Fatalf("no answer carries the tool's output %q: %q", f.result, answers[1:])
		})
	}
}

// TestCapturedNewMembersReachPolicy replays captured requests that carry a
// member the gateway does not know, deep inside the conversation, under a
// policy that denies when it sees the member's name: the deny proves the
// member was projected where policies look (the target, not only
// model.params, so scope: target). The same request without the member,
// the control, is answered: it is the member the policy saw.
func TestCapturedNewMembersReachPolicy(t *testing.T) {
	cases := []struct {
		name, file string
		call       int // which model call of the fixture
		// container is the top-level array whose elements carry member,
		// at any depth.
		container, member string
	}{
		{"agent-sdk system message output_config", "agent-sdk-requests.json", 0, "messages", "output_config"},
		{"claude-code system message output_config", "claude-code-requests.json", 1, "messages", "output_config"},
		{"stream helper function_call parsed_arguments", "openai-js-stream-helper-requests.json", 1, "input", "parsed_arguments"},
		{"stream helper output_text parsed", "openai-js-stream-helper-requests.json", 2, "input", "parsed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const reason = "policy:new_member"
			root := fixtureGateway(t, `
  - name: deny-new-member
    type: regex
    points: [pre_model_call]
    scope: target
    action: deny
    reason: `+reason+`
    patterns: ['^`+c.member+`$']
`)
			calls := modelCalls(t, c.file)
			if c.call >= len(calls) {
				t.Fatalf("%d model calls captured, want call %d", len(calls), c.call)
			}
			// The calls before it are answered first: the ids their answers
			// carry are what the client holds and feeds back.
			var held heldIDs
			for _, prior := range calls[:c.call] {
				if status, body := send(t, root, held.withBody(prior)); status == http.StatusOK {
					held.read(body)
				}
			}
			req := held.withBody(calls[c.call])
			status, body := send(t, root, req)
			deny := http.StatusForbidden
			if strings.HasPrefix(req.Path, "/v1/messages") {
				deny = http.StatusUnavailableForLegalReasons // the Messages surface's policy deny
			}
			if status != deny || !strings.Contains(body, reason) {
				t.Fatalf("with %s[].%s: %d %s; want a %d naming %s", c.container, c.member, status, body, deny, reason)
			}
			req.Body = withoutMember(t, req.Body, c.container, c.member)
			if status, body := send(t, root, req); status != http.StatusOK {
				t.Fatalf("without %s[].%s (the control): %d %s", c.container, c.member, status, body)
			}
		})
	}
}

// modelCalls reads a fixture's model calls: its POSTs with a body.
func modelCalls(t *testing.T, file string) []capturedRequest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var reqs []capturedRequest
	if err := json.Unmarshal(data, &reqs); err != nil {
		t.Fatal(err)
	}
	var calls []capturedRequest
	for _, r := range reqs {
		if r.Method == http.MethodPost && len(r.Body) > 0 {
			calls = append(calls, r)
		}
	}
	return calls
}

// withoutMember returns body with every member named member removed, at
// any depth, from the elements of its top-level array container. It fails
// the test when there is none: the fixture no longer shows the member.
func withoutMember(t *testing.T, body, container, member string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	arr, _ := v[container].([]any)
	removed := 0
	var drop func(any)
	drop = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if _, ok := x[member]; ok {
				delete(x, member)
				removed++
			}
			for _, e := range x {
				drop(e)
			}
		case []any:
			for _, e := range x {
				drop(e)
			}
		}
	}
	drop(arr)
	if removed == 0 {
		t.Fatalf("the request has no %s[].%s", container, member)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// heldIDs are the ids a Responses client holds from the answers the
// gateway gave it: the gateway's seals of the upstream's item ids. A
// captured request carries the ids the capture's upstream issued to the
// gateway of the capture; replayed, its items carry what this gateway
// released for the same items instead, as the client would have fed
// back. Function calls are matched by call_id, assistant messages by
// their text.
type heldIDs struct {
	calls, messages map[string]string
}

// heldItem is what heldIDs reads of an item.
type heldItem struct {
	Type    string
	ID      string
	Role    string
	CallID  string          `json:"call_id"`
	Content json.RawMessage // a string, or parts
}

// text is an assistant message's output text.
func (it heldItem) text() string {
	var parts []struct{ Type, Text string }
	json.Unmarshal(it.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "output_text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// read records the items of an answer (JSON, or the done items of a
// stream).
func (h *heldIDs) read(answer string) {
	if h.calls == nil {
		h.calls, h.messages = map[string]string{}, map[string]string{}
	}
	add := func(it heldItem) {
		switch {
		case it.Type == "function_call" && it.CallID != "":
			h.calls[it.CallID] = it.ID
		case it.Type == "message":
			h.messages[it.text()] = it.ID
		}
	}
	var whole struct{ Output []heldItem }
	if json.Unmarshal([]byte(answer), &whole) == nil {
		for _, it := range whole.Output {
			add(it)
		}
	}
	for _, line := range strings.Split(answer, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type string
			Item heldItem
		}
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Type == "response.output_item.done" {
			add(ev.Item)
		}
	}
}

// into returns a captured Responses request body with the ids of its
// function calls and assistant messages replaced by those the client
// holds; other bodies are returned as they are.
func (h *heldIDs) into(body string) string {
	var req struct{ Input []heldItem }
	if json.Unmarshal([]byte(body), &req) != nil {
		return body
	}
	for _, it := range req.Input {
		var id string
		switch {
		case it.ID == "":
		case it.Type == "function_call":
			id = h.calls[it.CallID]
		case it.Type == "message" && it.Role == "assistant":
			id = h.messages[it.text()]
		}
		if id != "" {
			body = strings.ReplaceAll(body, strconv.Quote(it.ID), strconv.Quote(id))
		}
	}
	return body
}

// withBody returns c with its body fed the held ids.
func (h *heldIDs) withBody(c capturedRequest) capturedRequest {
	c.Body = h.into(c.Body)
	return c
}

// replay sends one captured request to the gateway at root and returns the
// answer's body, failing unless it is a 200.
func replay(t *testing.T, root string, c capturedRequest) string {
	t.Helper()
	status, body := send(t, root, c)
	if status != http.StatusOK {
		t.Fatalf("%s %s: %d %s", c.Method, c.Path, status, body)
	}
	return body
}

// send sends one captured request, with its headers, to the gateway at
// root and returns the answer's status and body.
func send(t *testing.T, root string, c capturedRequest) (int, string) {
	t.Helper()
	url := root + c.Path
	if c.Query != "" {
		url += "?" + c.Query
	}
	req, err := http.NewRequestWithContext(t.Context(), c.Method, url, strings.NewReader(c.Body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range c.Headers {
		switch k {
		case "Content-Length", "Accept-Encoding", "Connection":
			continue // the transport's own
		}
		if v == "<redacted>" {
			v = "unused-with-the-mock"
			if sessionHeaders[k] {
				// The agent's run id: one run per test, as one CLI run.
				v = runID(t)
			}
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// streamedText concatenates, in event order, the strings an SSE answer
// carries under the members that hold text, tool names and argument
// fragments (both APIs' deltas split words and JSON across events).
func streamedText(sse string) string {
	var b strings.Builder
	for _, line := range strings.Split(sse, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var v any
		if json.Unmarshal([]byte(data), &v) == nil {
			collectText(&b, v, "")
		}
	}
	return b.String()
}

// textMembers are the members whose string values streamedText keeps.
var textMembers = map[string]bool{"text": true, "delta": true, "partial_json": true, "arguments": true, "name": true}

func collectText(b *strings.Builder, v any, key string) {
	switch v := v.(type) {
	case string:
		if textMembers[key] {
			b.WriteString(v)
		}
	case []any:
		for _, e := range v {
			collectText(b, e, key)
		}
	case map[string]any:
		for k, e := range v {
			collectText(b, e, k)
		}
	}
}

// sessionHeaders are the redacted headers that name an agent's run (the
// gateway makes each run one session).
var sessionHeaders = map[string]bool{"Session_id": true, "Session-Id": true, "Thread-Id": true, "X-Claude-Code-Session-Id": true}

// runID is a run id unique to the test, of the shape agents send.
func runID(t *testing.T) string {
	return "run-" + strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '-'
	}, t.Name())
}
