package messages

import (
	"bytes"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
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
	s := New(Options{})
	wr, err := s.ParseRequest(sealedFixture(t, s), url.Values{"beta": {"true"}})
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
	 {"role":"system","content":[{"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"You are an interactive CLI tool that helps users with software engineering tasks.","cache_control":{"type":"ephemeral"}}]},
	 {"role":"user","content":[{"type":"text","text":"<system-reminder>\nAs you answer the user's questions, you can use the following context.\n</system-reminder>"},{"type":"text","text":"list the go files in internal/wire","cache_control":{"type":"ephemeral"}}]},
	 {"role":"assistant","content":[{"type":"reasoning","text":"The user wants a file listing. I'll use Bash."},{"type":"text","text":"I'll list them."}],
	  "tool_calls":[{"id":"toolu_01A","type":"function","function":{"name":"Bash","arguments":"{\"command\": \"ls internal/wire/*.go\", \"description\": \"List Go files\"}"}}]},
	 {"role":"tool","tool_call_id":"toolu_01A","content":"internal/wire/errors.go\ninternal/wire/wire.go"},
	 {"role":"user","content":[{"type":"text","text":"thanks, now read wire.go","cache_control":{"type":"ephemeral"}}]},
	 {"role":"system","content":"The user switched to plan mode."},
	 {"role":"assistant","content":[{"type":"redacted_thinking"}],
	  "tool_calls":[{"id":"toolu_01B","type":"function","function":{"name":"Read","arguments":"{\"file_path\": \"/work/internal/wire/wire.go\", \"limit\": 2000}"}}]},
	 {"role":"tool","tool_call_id":"toolu_01B","content":[{"type":"text","text":"package wire\n"}],"cache_control":{"type":"ephemeral"}}
	]`)
	if !jsonvalue.Equal(any(msgs), want) {
		got, _ := jsonvalue.Marshal(msgs)
		t.Errorf("Messages() =\n%s", got)
	}
	tools := r.Tools()
	if tools[7].(map[string]any)["name"] != "NotebookEdit" || tools[0].(map[string]any)["schema"] == nil {
		t.Errorf("tools projection: %v", tools[:1])
	}
	// Every member a tool is declared with is judged beside its name.
	for i, k := range map[int]string{7: "defer_loading", 15: "strict", 22: "input_examples", 23: "cache_control"} {
		if _, ok := tools[i].(map[string]any)[k]; !ok {
			t.Errorf("tools[%d] lacks %s: %v", i, k, tools[i])
		}
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
	// The client's seals are opened: the upstream receives the body with
	// the provider's own blobs, byte for byte.
	for _, target := range []any{nil, msgs, r.Messages()} {
		out, err := r.UpstreamBody(target)
		if err != nil || !bytes.Equal(out, body) {
			t.Errorf("untouched round trip changed the body (err %v)", err)
		}
	}
}

func TestRequestRefusals(t *testing.T) {
	keys := seal.Ephemeral()
	strict := Options{StrictMembers: true}
	// A seal this gateway made, for another member.
	foreign := keys.SealString(kindEncryptedIndex, "sig")
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	base := `{"model":"m","max_tokens":5,` + msgs
	cases := []struct {
		name, body, field, contains string
		query                       url.Values
		opts                        Options
	}{
		{name: "unknown member", body: base + `,"frobnicate":1}`, field: "frobnicate", contains: UnknownMembersKey, opts: strict},
		{name: "non-identifier member not named", body: base + `,"a b":1}`, contains: "not a plain identifier", opts: strict},
		{name: "reserved param name", body: base + `,"anthropic_beta":["x"]}`, field: "anthropic_beta"},
		{name: "reserved param case collision", body: base + `,"Partial_Context":true}`, field: "Partial_Context"},
		{name: "case collision", body: base + `,"Model":"x"}`, contains: "letter case"},
		{name: "duplicate top-level", body: base + `,"model":"x"}`, contains: "duplicate"},
		{name: "duplicate nested", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a","content":"b"}]}`, field: "messages", contains: "duplicate"},
		{name: "max_tokens required", body: `{"model":"m",` + msgs + `}`, field: "max_tokens"},
		{name: "query parameter", body: base + `}`, query: url.Values{"debug": {"1"}}, field: "debug"},
		{name: "odd query not named", body: base + `}`, query: url.Values{"a b": {"1"}}, contains: "does not know"},
		{name: "unknown block", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"audio","data":"x"}]}]}`, field: "messages[0].content[0].type"},
		{name: "unknown block member", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"x","extra":1}]}]}`, field: "messages[0].content[0].extra", contains: UnknownMembersKey, opts: strict},
		{name: "unknown block member named like the projection's", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"x","annotations":[]}]}]}`, field: "messages[0].content[0].annotations"},
		{name: "unknown system block member", body: base + `,"system":[{"type":"text","text":"x","extra":1}]}`, field: "system[0].extra", opts: strict},
		{name: "unknown message member named like the projection's", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x","tool_calls":[]}]}`, field: "messages[0].tool_calls"},
		{name: "unsealed signature", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"thinking","thinking":"x","signature":"EqQBsk-proj-forged"}]}]}`, field: "messages[1].content[0].signature", contains: "not issued through this gateway"},
		{name: "unsealed redacted data", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"redacted_thinking","data":"EmwK"}]}]}`, field: "messages[1].content[0].data", contains: "not issued through this gateway"},
		{name: "unsealed encrypted_index", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"t","citations":[{"type":"web_search_result_location","url":"u","title":"t","cited_text":"c","encrypted_index":"Eo8="}]}]}]}`, field: "messages[1].content[0].citations[0].encrypted_index", contains: "not issued through this gateway"},
		{name: "unsealed system encrypted_index", body: base + `,"system":[{"type":"text","text":"t","citations":[{"type":"web_search_result_location","url":"u","title":"t","cited_text":"c","encrypted_index":"Eo8="}]}]}`, field: "system[0].citations[0].encrypted_index"},
		{name: "unsealed container id", body: base + `,"container":"container_011"}`, field: "container", contains: "not issued through this gateway"},
		{name: "unsealed container object id", body: base + `,"container":{"id":"container_011","skills":[]}}`, field: "container.id"},
		{name: "seal of another kind", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"thinking","thinking":"x","signature":"` + foreign + `"}]}]}`, field: "messages[1].content[0].signature"},
		{name: "block member case collision", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"x","Text":"y"}]}]}`, contains: "letter case"},
		{name: "thinking from user", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"thinking","thinking":"x","signature":"s"}]}]}`, field: "messages[0].content[0]"},
		{name: "tool_use input not object", body: `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":"{}"}]}]}`, field: "messages[0].content[0].input"},
		{name: "server tool refused", body: base + `,"tools":[{"type":"web_search_20250305","name":"web_search"}]}`, field: "tools[0]", contains: AllowServerToolsKey},
		{name: "mcp_servers refused", body: base + `,"mcp_servers":[{"type":"url","url":"https://x","name":"s"}]}`, field: "mcp_servers", contains: AllowServerToolsKey},
		{name: "server block refused", body: `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"server_tool_use","id":"a","name":"web_search","input":{}}]}]}`, contains: AllowServerToolsKey},
		{name: "unknown tool type", body: base + `,"tools":[{"type":"teleport_20990101","name":"t"}]}`, field: "tools[0].type", contains: UnknownMembersKey, opts: strict},
		{name: "custom tool unknown member", body: base + `,"tools":[{"name":"t","input_schema":{},"secret":1}]}`, field: "tools[0].secret", opts: strict},
		{name: "thinking type", body: base + `,"thinking":{"type":"sometimes"}}`, field: "thinking.type"},
		{name: "metadata member", body: base + `,"metadata":{"user_id":"u","email":"e"}}`, field: "metadata.email", opts: strict},
		{name: "role", body: `{"model":"m","max_tokens":5,"messages":[{"role":"tool","content":"x"}]}`, field: "messages[0].role"},
		{name: "message member", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x","name":"n"}]}`, field: "messages[0].name", contains: UnknownMembersKey, opts: strict},
		{name: "system message member", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"system","content":[{"type":"text","text":"s"}],"output_config":{"effort":"low"}}]}`, field: "messages[1].output_config", contains: UnknownMembersKey, opts: strict},
		{name: "null max_tokens", body: `{"model":"m","max_tokens":null,` + msgs + `}`, field: "max_tokens"},
		{name: "stream type", body: base + `,"stream":"yes"}`, field: "stream"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Seal = keys
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
	r := parseOK(t, New(Options{AllowRequestMembers: []string{"frobnicate"}, AllowServerTools: true, StrictMembers: true}), body)
	want := mustJSON(t, `[{"name":"web_search","description":"provider-executed tool","type":"web_search_20250305","max_uses":3},{"name":"bash","type":"bash_20250124"},{"name":"files","description":"provider-executed tool"}]`)
	if !jsonvalue.Equal(any(r.Tools()), want) {
		t.Errorf("tools = %v", r.Tools())
	}
	p := r.Params()
	servers := mustJSON(t, `[{"type":"url","url":"https://x","name":"files","authorization_token":"secret"}]`)
	if p["partial_context"] != true || !jsonvalue.Equal(p["mcp_servers"], servers) {
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
