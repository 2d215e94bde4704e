package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/openai/openai-go/v3/packages/ssestream"
	oai "github.com/openai/openai-go/v3/responses"
)

// codexRequest has Codex's shape: streamed, store false, reasoning
// summaries, encrypted reasoning, developer messages, flat function tools,
// a namespace, a hosted web search, and function call history.
const codexRequestRaw = `{
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
	s := New(Options{Seal: testKeys})
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
	// The upstream receives the originals of the seals the client holds:
	// the body Codex would have sent the provider directly.
	for _, target := range []any{nil, r.Messages()} {
		body, err := r.UpstreamBody(target)
		if err != nil || string(body) != codexRequestRaw {
			t.Fatalf("round trip changed the body: %v\n%s", err, body)
		}
	}
}

func TestRequestRefusals(t *testing.T) {
	s := New(Options{Seal: testKeys})
	strict := New(Options{Seal: testKeys, StrictMembers: true})
	cases := map[string]struct {
		body   string
		strict bool // refused only by a strict surface
		field  string
	}{
		"unknown member":             {body: `{"model":"m","input":"hi","frobnicate":1}`, strict: true, field: "frobnicate"},
		"unknown item member":        {body: `{"model":"m","input":[{"role":"user","content":"a","x_note":1}]}`, strict: true, field: "input[0].x_note"},
		"unknown part member":        {body: `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a","x":1}]}]}`, strict: true, field: "input[0].content[0].x"},
		"unknown tool member":        {body: `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","x":1}]}`, strict: true, field: "tools[0].x"},
		"unknown reasoning option":   {body: `{"model":"m","input":"hi","reasoning":{"effort":"low","x":1}}`, strict: true, field: "reasoning"},
		"parsed_arguments":           {body: `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}","parsed_arguments":null}]}`, strict: true, field: "input[0].parsed_arguments"},
		"case collision":             {body: `{"model":"m","input":"hi","Input":"x"}`},
		"duplicate":                  {body: `{"model":"m","input":"hi","input":"ho"}`},
		"nested duplicate":           {body: `{"model":"m","input":[{"role":"user","content":"a","content":"b"}]}`},
		"server state":               {body: `{"model":"m","input":"hi","previous_response_id":"resp_1"}`, field: "previous_response_id"},
		"background":                 {body: `{"model":"m","input":"hi","background":true}`},
		"mcp":                        {body: `{"model":"m","input":"hi","tools":[{"type":"mcp","server_url":"https://x"}]}`},
		"unknown item":               {body: `{"model":"m","input":[{"type":"computer_call_output","call_id":"c"}]}`, strict: true},
		"unknown part":               {body: `{"model":"m","input":[{"role":"user","content":[{"type":"input_audio"}]}]}`, strict: true},
		"part collision":             {body: `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a","Text":"b"}]}]}`},
		"custom tool":                {body: `{"model":"m","input":"hi","tools":[{"type":"custom","name":"apply_patch"}]}`, strict: true},
		"item status":                {body: `{"model":"m","input":[{"role":"user","content":"a","status":"sk-x"}]}`, field: "input[0].status"},
		"item status not a string":   {body: `{"model":"m","input":[{"role":"user","content":"a","status":["completed"]}]}`, field: "input[0].status"},
		"phase not a string":         {body: `{"model":"m","input":[{"role":"assistant","content":"a","phase":{}}]}`, field: "input[0].phase"},
		"unsealed reasoning id":      {body: `{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[]}]}`, field: "input[0].id"},
		"unsealed call id":           {body: `{"model":"m","input":[{"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":"{}"}]}`, field: "input[0].id"},
		"unsealed assistant id":      {body: `{"model":"m","input":[{"type":"message","id":"msg_1","role":"assistant","content":"a"}]}`, field: "input[0].id"},
		"unsealed web search id":     {body: `{"model":"m","input":[{"type":"web_search_call","id":"ws_1","status":"completed"}]}`, field: "input[0].id"},
		"forged seal on a user id":   {body: `{"model":"m","input":[{"type":"message","id":"hgs1_eph_AAAA","role":"user","content":"a"}]}`, field: "input[0].id"},
		"forged encrypted content":   {body: `{"model":"m","input":[{"type":"reasoning","summary":[],"encrypted_content":"gAAAA=="}]}`, field: "input[0].encrypted_content"},
		"a seal of another member":   {body: `{"model":"m","input":[{"type":"reasoning","summary":[],"encrypted_content":"` + sealedID("rs_1") + `"}]}`, field: "input[0].encrypted_content"},
		"an id sealed by other keys": {body: `{"model":"m","input":[{"type":"reasoning","id":"` + seal.Ephemeral().SealString(kindItemID, "rs_1") + `","summary":[]}]}`, field: "input[0].id"},
	}
	for name, c := range cases {
		for _, surf := range []*Surface{s, strict} {
			_, err := surf.ParseRequest([]byte(c.body), nil)
			if c.strict && surf == s {
				if err != nil {
					t.Errorf("%s: a judging surface refuses it: %v", name, err)
				}
				continue
			}
			var re *wire.RequestError
			if !errors.As(err, &re) {
				t.Errorf("%s: got %v, want a RequestError", name, err)
				continue
			}
			if c.field != "" && re.Field != c.field {
				t.Errorf("%s: refusal names %q, want %q", name, re.Field, c.field)
			}
			if c.strict && !strings.Contains(re.Msg, "wire.responses.unknown_members") {
				t.Errorf("%s: the refusal does not name the switch: %v", name, re)
			}
		}
	}
	_, err := s.ParseRequest([]byte(`{"model":"m","input":"hi","previous_response_id":"resp_1"}`), nil)
	if !strings.Contains(err.Error(), "wire.responses.allow_server_state") {
		t.Errorf("server state error does not name the switch: %v", err)
	}
	allowed := New(Options{Seal: testKeys, AllowServerState: true})
	prev := testKeys.SealString(kindResponseID, "resp_1")
	r := mustParse(t, allowed, `{"model":"m","input":"hi","previous_response_id":"`+prev+`","frobnicate":1}`)
	if p := r.Params(); p["partial_context"] != true || p["previous_response_id"] != prev || p["frobnicate"] == nil {
		t.Errorf("allowed state params %v", p)
	}
	if body, _ := r.UpstreamBody(nil); string(body) != `{"model":"m","input":"hi","previous_response_id":"resp_1","frobnicate":1}` {
		t.Errorf("the upstream does not receive the id it issued: %s", body)
	}
	if _, err := allowed.ParseRequest([]byte(`{"model":"m","input":"hi","previous_response_id":"resp_1"}`), nil); err == nil || !strings.Contains(err.Error(), "previous_response_id: was not issued through this gateway") {
		t.Errorf("an unsealed previous_response_id: %v", err)
	}
	allowedMember := New(Options{Seal: testKeys, StrictMembers: true, AllowRequestMembers: []string{"frobnicate"}})
	if p := mustParse(t, allowedMember, `{"model":"m","input":"hi","frobnicate":1}`).Params(); p["frobnicate"] == nil {
		t.Errorf("an allowed member is not in model.params: %v", p)
	}
}

// Unknown members anywhere in a request are judged: each reaches the
// projection a policy reads (top level: model.params; items, parts, calls
// and tools: their unknown_members) and goes upstream as the client sent
// it, or as a transform rewrote it.
func TestUnknownRequestMembersAreJudged(t *testing.T) {
	s := New(Options{Seal: testKeys})
	fc := sealedID("fc_1")
	body := `{"model":"m","x_top":"t1","input":[` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"hi","x_part":"t2"}],"x_item":"t3"},` +
		`{"type":"function_call","id":"` + fc + `","call_id":"c1","name":"f","arguments":"{}","parsed_arguments":null},` +
		`{"type":"function_call_output","call_id":"c1","output":"ok","x_out":"t4"},` +
		`{"type":"additional_tools","id":"at_1","role":"developer","tools":[{"type":"custom","name":"t9"}]},` +
		`{"role":"user","content":[{"type":"input_audio","data":"t10"}]}],` +
		`"tools":[{"type":"function","name":"f","x_tool":"t5"},{"type":"namespace","name":"ns","description":"t6","tools":[{"type":"function","name":"g"}]},` +
		`{"type":"web_search","user_location":{"type":"approximate","city":"t7"}},{"type":"file_search","vector_store_ids":["t8"]},` +
		`{"type":"custom","name":"apply_patch","format":{"type":"grammar","definition":"t11"}}]}`
	r := mustParse(t, s, body)
	ctx, _ := jsonvalue.Marshal(map[string]any{"messages": r.Messages(), "tools": r.Tools(), "params": r.Params()})
	for _, want := range []string{`"x_top":"t1"`, `"unknown_members":{"x_part":"t2"}`, `"unknown_members":{"x_item":"t3"}`,
		`"unknown_members":{"parsed_arguments":null}`, `"unknown_members":{"x_out":"t4"}`, `"unknown_members":{"x_tool":"t5"}`,
		`"namespace":{"description":"t6","name":"ns"}`, `"city":"t7"`, `"vector_store_ids":["t8"]`,
		`"role":"developer"`, `"name":"t9"`, `{"data":"t10","type":"input_audio"}`, `"definition":"t11"`, `"name":"apply_patch"`} {
		if !strings.Contains(string(ctx), want) {
			t.Errorf("the projection lacks %s:\n%s", want, ctx)
		}
	}
	up, err := r.UpstreamBody(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(body, fc, "fc_1", 1); string(up) != want {
		t.Fatalf("upstream body\n%s\nwant\n%s", up, want)
	}
	// A transform that rewrites them is written back.
	msgs := jsonvalue.DeepCopy(r.Messages()).([]any)
	msgs[0].(map[string]any)["unknown_members"] = map[string]any{"x_item": "T3"}
	msgs[0].(map[string]any)["content"].([]any)[0].(map[string]any)["unknown_members"] = map[string]any{"x_part": "T2"}
	msgs[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["unknown_members"] = map[string]any{}
	msgs[2].(map[string]any)["unknown_members"] = map[string]any{"x_out": "T4"}
	up, err = r.UpstreamBody(msgs)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"type":"input_text","text":"hi","x_part":"T2"}`, `"x_item":"T3"`, `"x_out":"T4"`, `"id":"fc_1"`} {
		if !strings.Contains(string(up), want) {
			t.Errorf("the upstream body lacks %s:\n%s", want, up)
		}
	}
	if strings.Contains(string(up), "parsed_arguments") || strings.Contains(string(up), "t2") || strings.Contains(string(up), "t3") {
		t.Errorf("the upstream body keeps what the transform removed or rewrote:\n%s", up)
	}
	// Unknown members cannot pose as known ones.
	msgs = jsonvalue.DeepCopy(r.Messages()).([]any)
	msgs[0].(map[string]any)["unknown_members"] = map[string]any{"role": "system"}
	if err := r.CheckMessages(msgs); err == nil {
		t.Error("an unknown member named like a known one was written back")
	}
}

func TestWriteBack(t *testing.T) {
	s := New(Options{Seal: testKeys})
	r := mustParse(t, s, `{"model":"m","instructions":"be nice","input":[{"role":"user","content":"secret 123"},{"type":"function_call","id":"`+sealedID("fc_1")+`","call_id":"c1","name":"f","arguments":"{}"},{"type":"reasoning","id":"`+sealedID("rs")+`","summary":[{"type":"summary_text","text":"t"}],"encrypted_content":"`+sealBlob(testKeys, "E")+`"}]}`)
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
	s := New(Options{Seal: testKeys})
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
	if err != nil {
		t.Fatalf("unchanged release: %v", err)
	}
	checkMade(t, body, "gpt-5-codex", map[string]string{"reasoning": "rs_1", "message": "msg_1", "function_call": "fc_1"})
	if got := reasoningBlobs(t, body); len(got) != 1 || got[0] != "E" {
		t.Errorf("encrypted_content opens to %v, want the upstream's", got)
	}
	if again, err := s.ParseResponse(req, body); err != nil || !jsonvalue.Equal(again.Project(), resp.Project()) {
		t.Fatalf("the released body does not project as the answer did: %v", err)
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
	if !bytes.Contains(body, []byte(`"type":"reasoning","summary":[],"encrypted_content":"hgs1_`)) {
		t.Fatalf("a dropped reasoning part must empty its summary entry and keep the item: %s", body)
	}
	strict := New(Options{Seal: testKeys, StrictMembers: true})
	for name, c := range map[string]struct {
		body   string
		strict bool // refused by a strict surface only
	}{
		"failed":                 {body: strings.Replace(jsonAnswer, `"status":"completed"`, `"status":"failed"`, 1)},
		"unknown item":           {body: strings.Replace(jsonAnswer, `"type":"reasoning"`, `"type":"computer_call"`, 1), strict: true},
		"item typed like a part": {body: strings.Replace(jsonAnswer, `"type":"reasoning"`, `"type":"text"`, 1)},
		"duplicate":              {body: strings.Replace(jsonAnswer, `"model":"gpt-5"`, `"model":"gpt-5","model":"x"`, 1)},
		"id not a string":        {body: strings.Replace(jsonAnswer, `"id":"msg_1"`, `"id":1`, 1)},
	} {
		for _, surf := range []*Surface{s, strict} {
			_, err := surf.ParseResponse(req, []byte(c.body))
			if c.strict && surf == s {
				if err != nil {
					t.Errorf("%s: a judging surface refuses it: %v", name, err)
				}
				continue
			}
			if !errors.Is(err, wire.ErrResponseInvalid) {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	// logprobs are removed; unknown members are judged: projected as
	// member parts and released as the verdict leaves them (a strict
	// surface removes them).
	dirty := strings.Replace(jsonAnswer, `"annotations":[]}`, `"annotations":[],"logprobs":[{"token":"x"}],"x_part":"p"}`, 1)
	dirty = strings.Replace(dirty, `"model":"gpt-5"`, `"model":"gpt-5","smuggle":"text","x_null":null`, 1)
	dirty = strings.Replace(dirty, `"role":"assistant","status":"completed"`, `"role":"assistant","status":"completed","phase":"final_answer","x_item":{"a":1}`, 1)
	resp, err = s.ParseResponse(req, []byte(dirty))
	if err != nil {
		t.Fatal(err)
	}
	proj, _ := jsonvalue.Marshal(resp.Project()["content"])
	for _, want := range []string{`{"name":"smuggle","type":"member","value":"text"}`, `{"name":"output[1].x_item","type":"member","value":{"a":1}}`, `{"name":"output[1].content[0].x_part","type":"member","value":"p"}`} {
		if !bytes.Contains(proj, []byte(want)) {
			t.Errorf("the projection lacks %s: %s", want, proj)
		}
	}
	body, err = resp.Release(nil)
	if err != nil || bytes.Contains(body, []byte("logprobs")) || bytes.Contains(body, []byte("x_null")) ||
		!bytes.Contains(body, []byte(`"smuggle":"text"`)) || !bytes.Contains(body, []byte(`"x_part":"p"}`)) || !bytes.Contains(body, []byte(`"phase":"final_answer"`)) {
		t.Fatalf("judged members: %v %s", err, body)
	}
	target = resp.Project()
	parts := target["content"].([]any)
	target["content"] = append(parts[:2:2], map[string]any{"type": "member", "name": "smuggle", "value": "[redacted]"})
	body, err = resp.Release(target)
	if err != nil || !bytes.Contains(body, []byte(`"smuggle":"[redacted]"`)) || bytes.Contains(body, []byte("x_item")) || bytes.Contains(body, []byte("x_part")) {
		t.Fatalf("verdicted members: %v %s", err, body)
	}
	resp, _ = strict.ParseResponse(req, []byte(dirty))
	body, err = resp.Release(nil)
	if err != nil || bytes.Contains(body, []byte("smuggle")) || bytes.Contains(body, []byte("x_item")) || bytes.Contains(body, []byte("x_part")) {
		t.Fatalf("a strict surface released unknown members: %v %s", err, body)
	}
}

// checkMade checks what the gateway made in a released response object:
// a minted response id, the request's model, a created_at of the
// gateway's clock, and items whose ids are seals of the upstream's (by
// item type).
func checkMade(t *testing.T, body []byte, model string, items map[string]string) {
	t.Helper()
	v, err := jsonvalue.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	resp := v.(map[string]any)
	if id, _ := resp["id"].(string); !madeByGateway(id) {
		t.Errorf("response id %q is not minted", id)
	}
	if resp["model"] != model {
		t.Errorf("model %v, want %s", resp["model"], model)
	}
	if c, _ := count(resp["created_at"]); c < 1700000000 {
		t.Errorf("created_at %v is not the gateway's clock", resp["created_at"])
	}
	for _, e := range resp["output"].([]any) {
		it := e.(map[string]any)
		want, ok := items[it["type"].(string)]
		if !ok {
			continue
		}
		if orig, err := testKeys.OpenString(kindItemID, it["id"].(string)); err != nil || orig != want {
			t.Errorf("%s id opens to %q (%v), want %q", it["type"], orig, err, want)
		}
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
	s := New(Options{Seal: testKeys})
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
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, codexRequest)
	ev := streamEvents("hello", "hello")
	// An event type the gateway does not know, amid a whole stream, with
	// text of its own: read and never released.
	mystery := sse(ev[:5]...) + sse(`{"type":"response.mystery.delta","sequence_number":5,"output_index":1,"delta":"sk-mystery"}`) +
		strings.ReplaceAll(sse(ev[5:]...), `"sequence_number":`, `"sequence_number":1`)
	st, err := s.ReadStream(req, strings.NewReader(mystery), 1<<20)
	if err != nil {
		t.Fatalf("an unknown event refused the stream: %v", err)
	}
	if out, _ := st.Release(nil); bytes.Contains(out, []byte("mystery")) {
		t.Fatalf("an unknown event was released: %s", out)
	}
	strict := New(Options{Seal: testKeys, StrictMembers: true})
	if _, err := strict.ReadStream(req, strings.NewReader(mystery), 1<<20); !errors.Is(err, wire.ErrResponseInvalid) {
		t.Errorf("a strict surface read an unknown event: %v", err)
	}
	cases := map[string]struct {
		body string
		kind error
	}{
		"deltas disagree": {sse(streamEvents("hello", "evil")...), wire.ErrResponseInvalid},
		"final disagrees": {sse(streamEvents("evil", "hello")[:11]...) + sse(streamEvents("hello", "hello")[11]), wire.ErrResponseInvalid},
		"cut":             {sse(ev[:11]...), wire.ErrStreamCut},
		"error event":     {sse(ev[:3]...) + "event: error\ndata: {\"type\":\"error\",\"code\":\"x\",\"message\":\"m\",\"sequence_number\":3}\n\n", wire.ErrUpstreamEvent},
		"failed":          {sse(ev[0], `{"type":"response.failed","sequence_number":1,"response":{}}`), wire.ErrUpstreamEvent},
		"delta at a part the done item lacks": {sse(ev[:5]...) + sse(`{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":1,"content_index":3,"delta":"sk-x"}`) +
			strings.ReplaceAll(sse(ev[5:]...), `"sequence_number":`, `"sequence_number":1`), wire.ErrResponseInvalid},
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
	st, err = s.ReadStream(req, strings.NewReader(body), 1<<20)
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

// TestStreamErrorInvalidUTF8 checks that a message that is not valid
// UTF-8 still ends the stream in events whose data is JSON.
func TestStreamErrorInvalidUTF8(t *testing.T) {
	out := New(Options{Seal: testKeys}).StreamError(wire.Error{Status: 403, Type: "agent_hooks_denied", Code: "policy_denied", Message: "denied \xff"})
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if data, ok := strings.CutPrefix(l, "data: "); ok {
			n++
			if !json.Valid([]byte(data)) {
				t.Fatalf("event data is not JSON: %q", data)
			}
		}
	}
	if n != 2 {
		t.Fatalf("want the error event and response.failed, got %d events: %s", n, out)
	}
}

func TestStreamErrorRaisedByClient(t *testing.T) {
	s := New(Options{Seal: testKeys})
	out := s.StreamError(wire.Error{Status: 403, Type: "agent_hooks_denied", Code: "policy_denied", Message: "denied"})
	_, err := clientSees(t, out)
	var se *ssestream.StreamError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "policy_denied") {
		t.Fatalf("openai-go does not raise the error event: %v", err)
	}
}
