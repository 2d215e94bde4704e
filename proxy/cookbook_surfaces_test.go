package proxy_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// TestCookbookOnEverySurface runs the cookbook's policy cases (docs/
// cookbook/*.cases.yaml, written against contexts) through the gateway on
// every API surface: each model-point case becomes a native request (and
// a native upstream answer) of chat completions, the Responses API and
// the Messages API, and the record the gateway writes at the case's point
// must carry the case's decision and reason. One policy, unchanged,
// governs every surface.
//
// Cases that need a principal (route: tenant), accumulated state (usage
// against a budget) or a tool point (the gateway never runs tools) are
// the SDK's and the emit API's; they are counted and skipped here.
func TestCookbookOnEverySurface(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "docs", "cookbook", "*.cases.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cookbook cases: %v", err)
	}
	ran := 0
	for _, casesFile := range files {
		policyFile := strings.TrimSuffix(casesFile, ".cases.yaml") + ".yaml"
		var doc struct {
			Cases []cookbookCase `yaml:"cases"`
		}
		data, err := os.ReadFile(casesFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", casesFile, err)
		}
		var runnable []cookbookCase
		for _, c := range doc.Cases {
			if c.gatewayRunnable() {
				runnable = append(runnable, c)
			}
		}
		if len(runnable) == 0 {
			continue
		}
		g := startCookbookGateway(t, policyFile)
		for _, c := range runnable {
			for _, api := range []wire.API{wire.ChatCompletions, wire.Responses, wire.Messages} {
				t.Run(filepath.Base(casesFile)+"/"+c.Name+"/"+string(api), func(t *testing.T) {
					decision, reason := g.run(t, api, c)
					want := c.Expect.Decision
					if decision != want || (c.Expect.Reason != "" && reason != c.Expect.Reason) {
						t.Errorf("%s: %s %q, want %s %q", c.Point, decision, reason, want, c.Expect.Reason)
					}
				})
				ran++
			}
		}
	}
	if ran < 30 {
		t.Errorf("only %d case runs; the cookbook's model-point cases should give more", ran)
	}
}

type cookbookCase struct {
	Name    string         `yaml:"name"`
	Point   string         `yaml:"point"`
	Route   map[string]any `yaml:"route"`
	Context map[string]any `yaml:"context"`
	Expect  struct {
		Decision string `yaml:"decision"`
		Reason   string `yaml:"reason"`
	} `yaml:"expect"`
}

// gatewayRunnable reports whether the gateway alone produces the case's
// context: a model point, a model route at most, and only the members a
// request or an answer carries.
func (c cookbookCase) gatewayRunnable() bool {
	switch c.Point {
	case "pre_model_call", "post_model_call", "output":
	default:
		return false
	}
	for k := range c.Route {
		if k != "model" {
			return false
		}
	}
	for k := range c.Context {
		switch k {
		case "messages", "tools", "response", "output":
		default:
			return false
		}
	}
	return true
}

// cookbookGateway is a gateway running one cookbook policy in front of an
// upstream that answers each surface natively with the current case's
// response.
type cookbookGateway struct {
	url     string
	records *syncBuffer
	mu      sync.Mutex
	answer  map[string]any // normalized {content, tool_calls, finish_reason}
}

func startCookbookGateway(t *testing.T, policyFile string) *cookbookGateway {
	t.Helper()
	g := &cookbookGateway{records: &syncBuffer{}}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		g.mu.Lock()
		answer := g.answer
		g.mu.Unlock()
		var body []byte
		var err error
		switch {
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			body, err = jsonvalue.Marshal(chatAnswer(answer))
		case strings.HasSuffix(r.URL.Path, "/responses"):
			body, err = jsonvalue.Marshal(responsesAnswer(answer))
		case strings.HasSuffix(r.URL.Path, "/messages"):
			body, err = jsonvalue.Marshal(messagesAnswer(answer))
		default:
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(up.Close)
	abs, err := filepath.Abs(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("COOKBOOK_TEST_KEY", "upstream-key")
	doc := `listeners:
  http: "127.0.0.1:0"
upstreams:
  - {name: openai, type: openai, base_url: "` + up.URL + `/v1", api_key_env: COOKBOOK_TEST_KEY, models: ["*"]}
  - {name: anthropic, type: anthropic, base_url: "` + up.URL + `", api_key_env: COOKBOOK_TEST_KEY, models: ["*"]}
sessions:
  store: memory
records:
  sinks:
    - type: stdout
policy:
  path: ` + abs + `
  watch: false
`
	g.url = serveDoc(t, "cookbook.yaml", doc, g.records, nil)
	return g
}

// run sends the case on one surface and returns the decision and reason
// of the record written at the case's point ("none" when there is none).
func (g *cookbookGateway) run(t *testing.T, api wire.API, c cookbookCase) (string, string) {
	t.Helper()
	messages := []any{map[string]any{"role": "user", "content": "hello"}}
	answer := map[string]any{"content": "ok", "tool_calls": []any{}, "finish_reason": "stop"}
	model := "gpt-4o-mini"
	if m, ok := c.Route["model"].(string); ok {
		model = m
	}
	if m, ok := c.Context["messages"].([]any); ok {
		messages = m
	}
	if r, ok := c.Context["response"].(map[string]any); ok {
		answer = map[string]any{"content": r["content"], "tool_calls": r["tool_calls"], "finish_reason": r["finish_reason"]}
		if answer["tool_calls"] == nil {
			answer["tool_calls"] = []any{}
		}
		if answer["finish_reason"] == nil {
			answer["finish_reason"] = "stop"
			if len(answer["tool_calls"].([]any)) > 0 {
				answer["finish_reason"] = "tool_calls"
			}
		}
	}
	if o, ok := c.Context["output"].(map[string]any); ok {
		answer["content"] = o["content"]
	}
	tools, _ := c.Context["tools"].([]any)
	g.mu.Lock()
	g.answer = answer
	g.mu.Unlock()
	path, body := nativeRequest(t, api, model, messages, tools)
	before := len(g.records.String())
	req, err := http.NewRequest(http.MethodPost, g.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode != http.StatusForbidden {
		t.Logf("status %d: %s", resp.StatusCode, out)
	}
	recs := g.records.String()[before:]
	decision, reason := recordAt(t, recs, c.Point)
	if c.Point == "output" && decision == "allow" && c.Expect.Decision != "allow" {
		// The answer passed post_model_call first; a policy that also acts
		// there has already done to it what the case expects at output.
		return recordAt(t, recs, "post_model_call")
	}
	return decision, reason
}

// recordAt finds the record of point among JSON lines.
func recordAt(t *testing.T, lines, point string) (string, string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(lines))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			Point   string `json:"interception_point"`
			Verdict struct {
				Decision string `json:"decision"`
				Reason   string `json:"reason"`
			} `json:"verdict"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Point == point {
			return rec.Verdict.Decision, rec.Verdict.Reason
		}
	}
	return "none", ""
}

// nativeRequest renders a normalized conversation as a request of api.
func nativeRequest(t *testing.T, api wire.API, model string, messages, tools []any) (string, string) {
	t.Helper()
	var req map[string]any
	switch api {
	case wire.ChatCompletions:
		req = map[string]any{"model": model, "messages": messages}
		if len(tools) > 0 {
			var ts []any
			for _, x := range tools {
				tl := x.(map[string]any)
				ts = append(ts, map[string]any{"type": "function", "function": functionDecl(tl, "parameters")})
			}
			req["tools"] = ts
		}
	case wire.Responses:
		var input []any
		for _, x := range messages {
			m := x.(map[string]any)
			switch {
			case m["role"] == "tool":
				input = append(input, map[string]any{"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
			case m["tool_calls"] != nil:
				for _, y := range m["tool_calls"].([]any) {
					tc := y.(map[string]any)
					fn := tc["function"].(map[string]any)
					input = append(input, map[string]any{"type": "function_call", "call_id": tc["id"], "name": fn["name"], "arguments": fn["arguments"]})
				}
			default:
				input = append(input, map[string]any{"role": m["role"], "content": m["content"]})
			}
		}
		req = map[string]any{"model": model, "input": input}
		if len(tools) > 0 {
			var ts []any
			for _, x := range tools {
				d := functionDecl(x.(map[string]any), "parameters")
				d["type"] = "function"
				ts = append(ts, d)
			}
			req["tools"] = ts
		}
	case wire.Messages:
		var msgs []any
		var system []string
		for _, x := range messages {
			m := x.(map[string]any)
			switch m["role"] {
			case "system", "developer":
				system = append(system, m["content"].(string))
			case "tool":
				msgs = append(msgs, map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}}})
			default:
				content := m["content"]
				if calls, ok := m["tool_calls"].([]any); ok {
					var blocks []any
					if s, ok := content.(string); ok && s != "" {
						blocks = append(blocks, map[string]any{"type": "text", "text": s})
					}
					for _, y := range calls {
						tc := y.(map[string]any)
						fn := tc["function"].(map[string]any)
						input, err := jsonvalue.Decode([]byte(fn["arguments"].(string)))
						if err != nil {
							t.Fatal(err)
						}
						blocks = append(blocks, map[string]any{"type": "tool_use", "id": tc["id"], "name": fn["name"], "input": input})
					}
					content = blocks
				}
				msgs = append(msgs, map[string]any{"role": m["role"], "content": content})
			}
		}
		req = map[string]any{"model": model, "max_tokens": json.Number("256"), "messages": msgs}
		if len(system) > 0 {
			req["system"] = strings.Join(system, "\n")
		}
		if len(tools) > 0 {
			var ts []any
			for _, x := range tools {
				d := functionDecl(x.(map[string]any), "input_schema")
				if d["input_schema"] == nil {
					d["input_schema"] = map[string]any{"type": "object"}
				}
				ts = append(ts, d)
			}
			req["tools"] = ts
		}
	}
	b, err := jsonvalue.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[wire.API]string{wire.ChatCompletions: "/v1/chat/completions", wire.Responses: "/v1/responses", wire.Messages: "/v1/messages"}
	return paths[api], string(b)
}

// functionDecl renders a context tool {name, description?, schema?} with
// the schema under key.
func functionDecl(tl map[string]any, key string) map[string]any {
	d := map[string]any{"name": tl["name"]}
	if v, ok := tl["description"]; ok {
		d["description"] = v
	}
	if v, ok := tl["schema"]; ok {
		d[key] = v
	}
	return d
}

// chatAnswer renders a normalized answer as a chat completion.
func chatAnswer(a map[string]any) map[string]any {
	msg := map[string]any{"role": "assistant", "content": a["content"]}
	if calls := a["tool_calls"].([]any); len(calls) > 0 {
		var tcs []any
		for _, x := range calls {
			tc := x.(map[string]any)
			args, _ := jsonvalue.Marshal(tc["args"])
			tcs = append(tcs, map[string]any{"id": tc["id"], "type": "function", "function": map[string]any{"name": tc["name"], "arguments": string(args)}})
		}
		msg["tool_calls"] = tcs
	}
	return map[string]any{"id": "chatcmpl-cookbook", "object": "chat.completion", "created": json.Number("1"), "model": "m",
		"choices": []any{map[string]any{"index": json.Number("0"), "message": msg, "finish_reason": a["finish_reason"]}}}
}

// responsesAnswer renders a normalized answer as a Responses API object.
func responsesAnswer(a map[string]any) map[string]any {
	var output []any
	if s, ok := a["content"].(string); ok && s != "" {
		output = append(output, map[string]any{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": s, "annotations": []any{}}}})
	}
	for i, x := range a["tool_calls"].([]any) {
		tc := x.(map[string]any)
		args, _ := jsonvalue.Marshal(tc["args"])
		output = append(output, map[string]any{"type": "function_call", "id": "fc_" + string(rune('a'+i)), "call_id": tc["id"],
			"name": tc["name"], "arguments": string(args), "status": "completed"})
	}
	status, details := "completed", any(nil)
	if a["finish_reason"] == "length" {
		status, details = "incomplete", map[string]any{"reason": "max_output_tokens"}
	}
	return map[string]any{"id": "resp_1", "object": "response", "created_at": json.Number("1"), "status": status,
		"error": nil, "incomplete_details": details, "model": "m", "output": output,
		"usage": map[string]any{"input_tokens": json.Number("1"), "output_tokens": json.Number("1"), "total_tokens": json.Number("2")}}
}

// messagesAnswer renders a normalized answer as an Anthropic message.
func messagesAnswer(a map[string]any) map[string]any {
	var content []any
	if s, ok := a["content"].(string); ok && s != "" {
		content = append(content, map[string]any{"type": "text", "text": s})
	}
	calls := a["tool_calls"].([]any)
	for _, x := range calls {
		tc := x.(map[string]any)
		args := tc["args"]
		if args == nil {
			args = map[string]any{}
		}
		content = append(content, map[string]any{"type": "tool_use", "id": tc["id"], "name": tc["name"], "input": args})
	}
	stop := "end_turn"
	switch {
	case len(calls) > 0:
		stop = "tool_use"
	case a["finish_reason"] == "length":
		stop = "max_tokens"
	}
	if content == nil {
		content = []any{}
	}
	return map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": json.Number("1"), "output_tokens": json.Number("1")}}
}
