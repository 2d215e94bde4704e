package responses

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/openai/openai-go/v3/packages/ssestream"
	oai "github.com/openai/openai-go/v3/responses"
)

// codexRequest has Codex's shape: streamed, store false, reasoning
// summaries, encrypted reasoning, developer messages, flat function tools,
// a namespace, a hosted web search, and function call history.
const codexRequest = `{
  "model": "gpt-5-codex",
  "input": [
    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex."}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "I should run ls."}], "encrypted_content": "gAAAA=="},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}"},
    {"type": "function_call_output", "call_id": "call_1", "output": "a.txt\nb.txt"}
  ],
  "tools": [
    {"type": "function", "name": "exec_command", "description": "Run a command", "strict": false, "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}},
    {"type": "namespace", "name": "crm", "description": "CRM", "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]},
    {"type": "web_search"}
  ],
  "tool_choice": "auto",
  "parallel_tool_calls": false,
  "reasoning": {"effort": "medium", "summary": "auto"},
  "store": false,
  "stream": true,
  "include": ["reasoning.encrypted_content"],
  "prompt_cache_key": "019a-session",
  "client_metadata": {"x": 1.0}
}`

func mustParse(t *testing.T, s *Surface, body string) *Request {
	t.Helper()
	r, err := s.ParseRequest([]byte(body), nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return r.(*Request)
}

func TestCodexRequestProjectsAndRoundTrips(t *testing.T) {
	s := New(Options{})
	r := mustParse(t, s, codexRequest)
	if !r.Stream() || r.Model() != "gpt-5-codex" || r.Operation() != wire.OpResponses {
		t.Fatalf("stream/model/op wrong")
	}
	want := `[{"content":[{"text":"You are Codex.","type":"text"}],"role":"developer"},{"content":[{"text":"list files","type":"text"}],"role":"user"},{"content":[{"text":"I should run ls.","type":"reasoning"}],"role":"assistant"},{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"cmd\":\"ls\"}","name":"exec_command"},"id":"call_1","type":"function"}]},{"content":"a.txt\nb.txt","role":"tool","tool_call_id":"call_1"}]`
	got, _ := jsonvalue.Marshal(r.Messages())
	if string(got) != want {
		t.Fatalf("messages:\n%s\nwant\n%s", got, want)
	}
	tools, _ := jsonvalue.Marshal(r.Tools())
	if !strings.Contains(string(tools), `"name":"crm.lookup"`) || !strings.Contains(string(tools), `{"description":"provider-executed tool","name":"web_search"}`) {
		t.Fatalf("tools: %s", tools)
	}
	if strings.Join(r.ToolNames(), ",") != "exec_command,crm.lookup" {
		t.Fatalf("tool names %v", r.ToolNames())
	}
	p := r.Params()
	if p["store"] != false || p["prompt_cache_key"] != "019a-session" || p["partial_context"] != nil || p["instructions"] != nil {
		t.Fatalf("params %v", p)
	}
	for _, target := range []any{nil, r.Messages()} {
		body, err := r.UpstreamBody(target)
		if err != nil || string(body) != codexRequest {
			t.Fatalf("round trip changed the body: %v\n%s", err, body)
		}
	}
}

func TestRequestRefusals(t *testing.T) {
	s := New(Options{})
	cases := map[string]string{
		"unknown member":   `{"model":"m","input":"hi","frobnicate":1}`,
		"case collision":   `{"model":"m","input":"hi","Input":"x"}`,
		"duplicate":        `{"model":"m","input":"hi","input":"ho"}`,
		"nested duplicate": `{"model":"m","input":[{"role":"user","content":"a","content":"b"}]}`,
		"server state":     `{"model":"m","input":"hi","previous_response_id":"resp_1"}`,
		"background":       `{"model":"m","input":"hi","background":true}`,
		"mcp":              `{"model":"m","input":"hi","tools":[{"type":"mcp","server_url":"https://x"}]}`,
		"unknown item":     `{"model":"m","input":[{"type":"computer_call_output","call_id":"c"}]}`,
		"unknown part":     `{"model":"m","input":[{"role":"user","content":[{"type":"input_audio"}]}]}`,
		"part collision":   `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a","Text":"b"}]}]}`,
		"custom tool":      `{"model":"m","input":"hi","tools":[{"type":"custom","name":"apply_patch"}]}`,
	}
	for name, body := range cases {
		_, err := s.ParseRequest([]byte(body), nil)
		var re *wire.RequestError
		if !errors.As(err, &re) {
			t.Errorf("%s: got %v, want a RequestError", name, err)
		}
	}
	_, err := s.ParseRequest([]byte(`{"model":"m","input":"hi","previous_response_id":"resp_1"}`), nil)
	if !strings.Contains(err.Error(), "wire.responses.allow_server_state") {
		t.Errorf("server state error does not name the switch: %v", err)
	}
	allowed := New(Options{AllowServerState: true, AllowRequestMembers: []string{"frobnicate"}})
	r := mustParse(t, allowed, `{"model":"m","input":"hi","previous_response_id":"resp_1","frobnicate":1}`)
	if p := r.Params(); p["partial_context"] != true || p["previous_response_id"] != "resp_1" || p["frobnicate"] == nil {
		t.Errorf("allowed state params %v", p)
	}
}

func TestWriteBack(t *testing.T) {
	s := New(Options{})
	r := mustParse(t, s, `{"model":"m","instructions":"be nice","input":[{"role":"user","content":"secret 123"},{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":"{}"},{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"t"}],"encrypted_content":"E"}]}`)
	msgs := jsonvalue.DeepCopy(r.Messages()).([]any) // shared trees are read-only
	msgs[1].(map[string]any)["content"] = "secret [redacted]"
	body, err := r.UpstreamBody(msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","instructions":"be nice","input":[{"type":"message","role":"user","content":"secret [redacted]"},{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":"{}"},{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"t"}],"encrypted_content":"E"}]}`
	if string(body) != want {
		t.Fatalf("got\n%s\nwant\n%s", body, want)
	}
	// Instructions rewritten, tool call arguments changed.
	msgs = jsonvalue.DeepCopy(r.Messages()).([]any)
	msgs[0].(map[string]any)["content"] = "be brief"
	msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"] = `{"a":1}`
	body, err = r.UpstreamBody(msgs)
	if err != nil || !bytes.Contains(body, []byte(`"instructions":"be brief"`)) || !bytes.Contains(body, []byte(`"arguments":"{\"a\":1}"`)) || !bytes.Contains(body, []byte(`"id":"fc_1"`)) {
		t.Fatalf("rewrite: %v %s", err, body)
	}
	bad := map[string]func([]any){
		"changed reasoning": func(m []any) { m[3].(map[string]any)["content"].([]any)[0].(map[string]any)["text"] = "x" },
		"added call":        func(m []any) { m[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["id"] = "new" },
		"bad role":          func(m []any) { m[1].(map[string]any)["role"] = "wizard" },
		"extra member":      func(m []any) { m[1].(map[string]any)["name"] = "x" },
	}
	for name, mutate := range bad {
		m := jsonvalue.DeepCopy(r.Messages()).([]any)
		mutate(m)
		var we *wire.WriteBackError
		if err := r.CheckMessages(m); !errors.As(err, &we) {
			t.Errorf("%s: got %v, want a WriteBackError", name, err)
		}
	}
}

const jsonAnswer = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","error":null,"incomplete_details":null,"model":"gpt-5","instructions":null,"output":[{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"think"}],"encrypted_content":"E"},{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"hello","annotations":[]}]},{"id":"fc_1","type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","status":"completed"}],"usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":0},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":12}}`

func TestResponseProjectAndRelease(t *testing.T) {
	s := New(Options{})
	req := mustParse(t, s, codexRequest)
	resp, err := s.ParseResponse(req, []byte(jsonAnswer))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := jsonvalue.Marshal(resp.Project())
	want := `{"content":[{"text":"think","type":"reasoning"},{"text":"hello","type":"text"}],"finish_reason":"tool_calls","tool_calls":[{"args":{"cmd":"ls"},"id":"call_1","name":"exec_command"}]}`
	if string(got) != want {
		t.Fatalf("projection\n%s\nwant\n%s", got, want)
	}
	if u, _ := jsonvalue.Marshal(resp.Usage()); string(u) != `{"completion_tokens":7,"prompt_tokens":5}` {
		t.Fatalf("usage %s", u)
	}
	body, err := resp.Release(nil)
	if err != nil || string(body) != jsonAnswer {
		t.Fatalf("unchanged release: %v", err)
	}
	target := resp.Project()
	target["content"].([]any)[1].(map[string]any)["text"] = "bye"
	target["tool_calls"] = []any{}
	body, err = resp.Release(target)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.ParseResponse(req, body)
	if err != nil {
		t.Fatal(err)
	}
	want2 := map[string]any{"content": target["content"], "tool_calls": []any{}, "finish_reason": "stop"}
	if !jsonvalue.Equal(again.Project(), want2) {
		got, _ := jsonvalue.Marshal(again.Project())
		t.Fatalf("released body projects to %s", got)
	}
	target = resp.Project()
	target["content"] = "only text"
	body, err = resp.Release(target)
	if err != nil {
		t.Fatalf("dropping the reasoning part: %v", err)
	}
	if !bytes.Contains(body, []byte(`{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"E"}`)) {
		t.Fatalf("a dropped reasoning part must empty its summary entry and keep the item: %s", body)
	}
	for name, b := range map[string]string{
		"failed":       strings.Replace(jsonAnswer, `"status":"completed"`, `"status":"failed"`, 1),
		"unknown item": strings.Replace(jsonAnswer, `"type":"reasoning"`, `"type":"computer_call"`, 1),
		"duplicate":    strings.Replace(jsonAnswer, `"model":"gpt-5"`, `"model":"gpt-5","model":"x"`, 1),
	} {
		if _, err := s.ParseResponse(req, []byte(b)); !errors.Is(err, wire.ErrResponseInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Unknown members and logprobs are removed.
	dirty := strings.Replace(jsonAnswer, `"annotations":[]}`, `"annotations":[],"logprobs":[{"token":"x"}]}`, 1)
	dirty = strings.Replace(dirty, `"model":"gpt-5"`, `"model":"gpt-5","smuggle":"text"`, 1)
	resp, _ = s.ParseResponse(req, []byte(dirty))
	body, err = resp.Release(nil)
	if err != nil || bytes.Contains(body, []byte("smuggle")) || bytes.Contains(body, []byte("logprobs")) {
		t.Fatalf("removed members leaked: %v %s", err, body)
	}
}

// sse frames events.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		typ := e[strings.Index(e, `"type":"`)+8:]
		typ = typ[:strings.IndexByte(typ, '"')]
		b.WriteString("event: " + typ + "\ndata: " + e + "\n\n")
	}
	return b.String()
}

const snap = `{"id":"resp_1","object":"response","created_at":1,"status":"in_progress","model":"gpt-5","output":[],"usage":null}`

func streamEvents(finalText, deltaText string) []string {
	final := strings.Replace(jsonAnswer, `"text":"hello"`, `"text":"`+finalText+`"`, 1)
	return []string{
		`{"type":"response.created","sequence_number":0,"response":` + snap + `}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
		`{"type":"response.reasoning_summary_text.delta","sequence_number":2,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"think"}`,
		`{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"think"}],"encrypted_content":"E"}}`,
		`{"type":"response.output_item.added","sequence_number":4,"output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","status":"in_progress","content":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"` + deltaText + `"}`,
		`{"type":"response.output_text.done","sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"text":"` + deltaText + `"}`,
		`{"type":"response.output_item.done","sequence_number":7,"output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"` + finalText + `","annotations":[]}]}}`,
		`{"type":"response.output_item.added","sequence_number":8,"output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"exec_command","arguments":"","status":"in_progress"}}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":9,"item_id":"fc_1","output_index":2,"delta":"{\"cmd\":\"ls\"}"}`,
		`{"type":"response.output_item.done","sequence_number":10,"output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","status":"completed"}}`,
		`{"type":"response.completed","sequence_number":11,"response":` + final + `}`,
	}
}

// clientSees runs released bytes through openai-go's stream decoder and
// returns the final response as the client holds it.
func clientSees(t *testing.T, released []byte) (oai.Response, error) {
	t.Helper()
	res := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(released))}
	st := ssestream.NewStream[oai.ResponseStreamEventUnion](ssestream.NewDecoder(res), nil)
	var final oai.Response
	last := int64(-1)
	for st.Next() {
		ev := st.Current()
		if ev.SequenceNumber != last+1 {
			t.Errorf("sequence %d after %d", ev.SequenceNumber, last)
		}
		last = ev.SequenceNumber
		if ev.Type == "response.completed" || ev.Type == "response.incomplete" {
			final = ev.Response
		}
	}
	return final, st.Err()
}

// projectionOf re-parses a client-held response into the policy's view.
func projectionOf(t *testing.T, s *Surface, req *Request, r oai.Response) map[string]any {
	t.Helper()
	resp, err := s.ParseResponse(req, []byte(r.RawJSON()))
	if err != nil {
		t.Fatalf("client response does not parse: %v", err)
	}
	return resp.Project()
}

func TestStreamReplayAndSynthesisMatchClient(t *testing.T) {
	s := New(Options{})
	req := mustParse(t, s, codexRequest)
	st, err := s.ReadStream(req, strings.NewReader(sse(streamEvents("hello", "hello")...)), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	proj := st.Response().Project()
	out, err := st.Release(nil)
	if err != nil {
		t.Fatal(err)
	}
	final, err := clientSees(t, out)
	if err != nil {
		t.Fatal(err)
	}
	if got := projectionOf(t, s, req, final); !jsonvalue.Equal(got, proj) {
		t.Fatalf("replay: client sees %v, policy judged %v", got, proj)
	}
	target := st.Response().Project()
	target["content"].([]any)[1].(map[string]any)["text"] = "redacted"
	out, err = st.Release(target)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("hello")) {
		t.Fatal("synthesized stream leaks the original text")
	}
	final, err = clientSees(t, out)
	if err != nil {
		t.Fatal(err)
	}
	if got := projectionOf(t, s, req, final); !jsonvalue.Equal(got, target) {
		t.Fatalf("synthesis: client sees %v, policy judged %v", got, target)
	}
	// The synthesized stream reads back to the same projection.
	again, err := s.ReadStream(req, bytes.NewReader(out), 1<<20)
	if err != nil || !jsonvalue.Equal(again.Response().Project(), target) {
		t.Fatalf("synthesized stream does not re-assemble: %v", err)
	}
}

func TestStreamHostile(t *testing.T) {
	s := New(Options{})
	req := mustParse(t, s, codexRequest)
	ev := streamEvents("hello", "hello")
	cases := map[string]struct {
		body string
		kind error
	}{
		"deltas disagree":    {sse(streamEvents("hello", "evil")...), wire.ErrResponseInvalid},
		"final disagrees":    {sse(streamEvents("evil", "hello")[:11]...) + sse(streamEvents("hello", "hello")[11]), wire.ErrResponseInvalid},
		"cut":                {sse(ev[:11]...), wire.ErrStreamCut},
		"error event":        {sse(ev[:3]...) + "event: error\ndata: {\"type\":\"error\",\"code\":\"x\",\"message\":\"m\",\"sequence_number\":3}\n\n", wire.ErrUpstreamEvent},
		"failed":             {sse(ev[0], `{"type":"response.failed","sequence_number":1,"response":{}}`), wire.ErrUpstreamEvent},
		"unknown event":      {sse(ev[0], `{"type":"response.mystery","sequence_number":1}`), wire.ErrResponseInvalid},
		"duplicate key":      {sse(ev[0], `{"type":"response.output_text.delta","type":"response.output_text.delta","sequence_number":1}`), wire.ErrResponseInvalid},
		"sequence backwards": {sse(ev[0], strings.Replace(ev[1], `"sequence_number":1`, `"sequence_number":0`, 1)), wire.ErrResponseInvalid},
	}
	for name, c := range cases {
		_, err := s.ReadStream(req, strings.NewReader(c.body), 1<<20)
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: got %v, want %v", name, err, c.kind)
		}
	}
	if _, err := s.ReadStream(req, strings.NewReader(sse(ev...)), 100); !errors.Is(err, wire.ErrBufferLimit) {
		t.Errorf("limit: %v", err)
	}
	// Obfuscation members and events after completed are not released.
	obf := append([]string{}, ev...)
	obf[5] = strings.Replace(obf[5], `"delta":"hello"`, `"delta":"hello","obfuscation":"zzz"`, 1)
	body := sse(obf...) + sse(`{"type":"response.output_text.delta","sequence_number":12,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"late"}`)
	st, err := s.ReadStream(req, strings.NewReader(body), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := st.Release(nil)
	smuggled := append([]string{}, ev...)
	smuggled[0] = strings.Replace(smuggled[0], `"model":"gpt-5"`, `"model":"gpt-5","instructions":"smuggled"`, 1)
	st2, err := s.ReadStream(req, strings.NewReader(sse(smuggled...)), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if out2, _ := st2.Release(nil); bytes.Contains(out2, []byte("smuggled")) {
		t.Fatal("a snapshot echo the client never sent was replayed")
	}
	if bytes.Contains(out, []byte("obfuscation")) || bytes.Contains(out, []byte("late")) {
		t.Fatalf("released removed content: %s", out)
	}
}

func TestStreamErrorRaisedByClient(t *testing.T) {
	s := New(Options{})
	out := s.StreamError(wire.Error{Status: 403, Type: "agent_hooks_denied", Code: "policy_denied", Message: "denied"})
	_, err := clientSees(t, out)
	var se *ssestream.StreamError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "policy_denied") {
		t.Fatalf("openai-go does not raise the error event: %v", err)
	}
}
