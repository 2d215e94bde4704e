package messages

import (
	"bytes"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonvalue.Decode([]byte(s))
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

func parseOK(t *testing.T, s *Surface, body string) *Request {
	t.Helper()
	r, err := s.ParseRequest([]byte(body), nil)
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	return r.(*Request)
}

func readFixture() ([]byte, error) { return os.ReadFile("testdata/claude_code_request.json") }

func claudeCodeBody(t *testing.T) []byte {
	t.Helper()
	b, err := readFixture()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Claude Code's request shape parses, projects as the contract says, and
// round-trips byte for byte when the verdict leaves it untouched.
func TestClaudeCodeRequest(t *testing.T) {
	body := claudeCodeBody(t)
	wr, err := New(Options{}).ParseRequest(body, url.Values{"beta": {"true"}})
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	r := wr.(*Request)
	if r.Model() != "claude-sonnet-4-5-20250929" || !r.Stream() || r.Operation() != wire.OpMessages {
		t.Errorf("model/stream/op = %q %v %q", r.Model(), r.Stream(), r.Operation())
	}
	if n := len(r.ToolNames()); n != 24 {
		t.Errorf("ToolNames has %d entries, want 24", n)
	}
	msgs := r.Messages()
	want := mustJSON(t, `[
	 {"role":"system","content":[{"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude."},{"type":"text","text":"You are an interactive CLI tool that helps users with software engineering tasks."}]},
	 {"role":"user","content":[{"type":"text","text":"<system-reminder>\nAs you answer the user's questions, you can use the following context.\n</system-reminder>"},{"type":"text","text":"list the go files in internal/wire"}]},
	 {"role":"assistant","content":[{"type":"reasoning","text":"The user wants a file listing. I'll use Bash."},{"type":"text","text":"I'll list them."}],
	  "tool_calls":[{"id":"toolu_01A","type":"function","function":{"name":"Bash","arguments":"{\"command\": \"ls internal/wire/*.go\", \"description\": \"List Go files\"}"}}]},
	 {"role":"tool","tool_call_id":"toolu_01A","content":"internal/wire/errors.go\ninternal/wire/wire.go"},
	 {"role":"user","content":[{"type":"text","text":"thanks, now read wire.go"}]},
	 {"role":"system","content":"The user switched to plan mode."},
	 {"role":"assistant","content":[{"type":"redacted_thinking"}],
	  "tool_calls":[{"id":"toolu_01B","type":"function","function":{"name":"Read","arguments":"{\"file_path\": \"/work/internal/wire/wire.go\", \"limit\": 2000}"}}]},
	 {"role":"tool","tool_call_id":"toolu_01B","content":[{"type":"text","text":"package wire\n"}]}
	]`)
	if !jsonvalue.Equal(any(msgs), want) {
		got, _ := jsonvalue.Marshal(msgs)
		t.Errorf("Messages() =\n%s", got)
	}
	tools := r.Tools()
	if tools[7].(map[string]any)["name"] != "NotebookEdit" || tools[0].(map[string]any)["schema"] == nil {
		t.Errorf("tools projection: %v", tools[:1])
	}
	p := r.Params()
	for _, k := range []string{"metadata", "max_tokens", "thinking", "context_management", "output_config"} {
		if _, ok := p[k]; !ok {
			t.Errorf("params lacks %s", k)
		}
	}
	for _, k := range []string{"model", "messages", "system", "tools", "stream", "partial_context"} {
		if _, ok := p[k]; ok {
			t.Errorf("params holds %s", k)
		}
	}
	for _, target := range []any{nil, msgs, r.Messages()} {
		out, err := r.UpstreamBody(target)
		if err != nil || !bytes.Equal(out, body) {
			t.Errorf("untouched round trip changed the body (err %v)", err)
		}
	}
}

func TestRequestRefusals(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	base := `{"model":"m","max_tokens":5,` + msgs
	cases := []struct {
		name, body, field, contains string
		query                       url.Values
		opts                        Options
	}{
		{name: "unknown member", body: base + `,"frobnicate":1}`, field: "frobnicate", contains: AllowRequestMembersKey},
		{name: "non-identifier member not named", body: base + `,"a b":1}`, contains: "not a plain identifier"},
		{name: "case collision", body: base + `,"Model":"x"}`, contains: "letter case"},
		{name: "duplicate top-level", body: base + `,"model":"x"}`, contains: "duplicate"},
		{name: "duplicate nested", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a","content":"b"}]}`, field: "messages", contains: "duplicate"},
		{name: "max_tokens required", body: `{"model":"m",` + msgs + `}`, field: "max_tokens"},
		{name: "query parameter", body: base + `}`, query: url.Values{"debug": {"1"}}, field: "debug"},
		{name: "odd query not named", body: base + `}`, query: url.Values{"a b": {"1"}}, contains: "does not know"},
		{name: "unknown block", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"audio","data":"x"}]}]}`, field: "messages[0].content[0].type"},
		{name: "unknown block member", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"x","extra":1}]}]}`, field: "messages[0].content[0]"},
		{name: "block member case collision", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"x","Text":"y"}]}]}`, contains: "letter case"},
		{name: "thinking from user", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"thinking","thinking":"x","signature":"s"}]}]}`, field: "messages[0].content[0]"},
		{name: "tool_use input not object", body: `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":"{}"}]}]}`, field: "messages[0].content[0].input"},
		{name: "server tool refused", body: base + `,"tools":[{"type":"web_search_20250305","name":"web_search"}]}`, field: "tools[0]", contains: AllowServerToolsKey},
		{name: "mcp_servers refused", body: base + `,"mcp_servers":[{"type":"url","url":"https://x","name":"s"}]}`, field: "mcp_servers", contains: AllowServerToolsKey},
		{name: "server block refused", body: `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"server_tool_use","id":"a","name":"web_search","input":{}}]}]}`, contains: AllowServerToolsKey},
		{name: "unknown tool type", body: base + `,"tools":[{"type":"teleport_20990101","name":"t"}]}`, field: "tools[0].type"},
		{name: "custom tool unknown member", body: base + `,"tools":[{"name":"t","input_schema":{},"secret":1}]}`, field: "tools[0]"},
		{name: "thinking type", body: base + `,"thinking":{"type":"sometimes"}}`, field: "thinking.type"},
		{name: "metadata member", body: base + `,"metadata":{"user_id":"u","email":"e"}}`, field: "metadata"},
		{name: "role", body: `{"model":"m","max_tokens":5,"messages":[{"role":"tool","content":"x"}]}`, field: "messages[0].role"},
		{name: "message member", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x","name":"n"}]}`, field: "messages[0]"},
		{name: "null max_tokens", body: `{"model":"m","max_tokens":null,` + msgs + `}`, field: "max_tokens"},
		{name: "stream type", body: base + `,"stream":"yes"}`, field: "stream"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.opts).ParseRequest([]byte(c.body), c.query)
			var re *wire.RequestError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want *wire.RequestError", err)
			}
			if c.field != "" && re.Field != c.field {
				t.Errorf("field = %q, want %q (%v)", re.Field, c.field, err)
			}
			if c.contains != "" && !strings.Contains(err.Error(), c.contains) {
				t.Errorf("error %q lacks %q", err, c.contains)
			}
		})
	}
}

func TestRequestAllowances(t *testing.T) {
	body := `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"frobnicate":null,
	 "tools":[{"type":"web_search_20250305","name":"web_search","max_uses":3},{"type":"bash_20250124","name":"bash"}],
	 "mcp_servers":[{"type":"url","url":"https://x","name":"files","authorization_token":"secret"}]}`
	r := parseOK(t, New(Options{AllowRequestMembers: []string{"frobnicate"}, AllowServerTools: true}), body)
	want := mustJSON(t, `[{"name":"web_search","description":"provider-executed tool"},{"name":"bash"},{"name":"files","description":"provider-executed tool"}]`)
	if !jsonvalue.Equal(any(r.Tools()), want) {
		t.Errorf("tools = %v", r.Tools())
	}
	p := r.Params()
	if p["partial_context"] != true || p["mcp_servers"] != nil {
		t.Errorf("params = %v", p)
	}
	if v, ok := p["frobnicate"]; !ok || v != nil {
		t.Errorf("allowed member not projected verbatim: %v", p)
	}
	if got := r.ToolNames(); len(got) != 1 || got[0] != "bash" {
		t.Errorf("ToolNames = %v, want the client tool only", got)
	}
}

func TestCountTokensRequest(t *testing.T) {
	s := New(Options{})
	r, err := s.ParseCountTokens([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), url.Values{"beta": {"true"}})
	if err != nil || r.Operation() != wire.OpCountTokens {
		t.Fatalf("ParseCountTokens = %v, %v", r, err)
	}
	if _, err := s.ParseCountTokens([]byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`), nil); err == nil {
		t.Error("count_tokens accepted stream: true")
	}
	for body, ok := range map[string]bool{
		`{"input_tokens":12}`: true,
		`{"input_tokens":12,"context_management":{"original_input_tokens":20}}`: true,
		`{"input_tokens":-1}`:                 false,
		`{"input_tokens":1.5}`:                false,
		`{"input_tokens":1,"note":"hi"}`:      false,
		`{"input_tokens":1,"input_tokens":2}`: false,
		`[1]`:                                 false,
	} {
		out, err := CountTokensRelease([]byte(body))
		switch {
		case ok && (err != nil || string(out) != body):
			t.Errorf("%s: %v", body, err)
		case !ok && !errors.Is(err, wire.ErrResponseInvalid):
			t.Errorf("%s: err = %v, want ErrResponseInvalid", body, err)
		}
	}
}

func TestNullParamIsNotSet(t *testing.T) {
	r := parseOK(t, New(Options{}), `{"model":"m","max_tokens":3,"temperature":null,"messages":[{"role":"user","content":"hi"}]}`)
	if _, ok := r.Params()["temperature"]; ok {
		t.Errorf("null temperature projected: %v", r.Params())
	}
}
