package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

func mustParse(t *testing.T, body string) *Message {
	t.Helper()
	m, err := Parse([]byte(body))
	if err != nil {
		t.Fatalf("Parse(%s): %v", body, err)
	}
	return m
}

func TestProjectCall(t *testing.T) {
	m := mustParse(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},
		"_meta":{"progressToken":"tok-`+canary+`","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"trace":"t1"}}}`)
	c, err := ProjectCall(m, "mcp__fs__")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "mcp__fs__echo" || c.Tool() != "echo" || c.Args["text"] != "hi" {
		t.Errorf("call = %+v", c)
	}
	meta := c.Rest["_meta"].(map[string]any)
	if _, ok := meta["progressToken"]; ok {
		t.Error("the progress token is forwarded: the server's progress would be addressed to the client")
	}
	if caps := meta[MetaClientCapabilities].(map[string]any); len(caps) != 0 {
		t.Errorf("client capabilities forwarded: %v", caps)
	}
	p := c.Params(MethodToolsCall, map[string]any{"text": "rewritten"})
	if p["name"] != "echo" || p["arguments"].(map[string]any)["text"] != "rewritten" || p["_meta"].(map[string]any)["trace"] != "t1" {
		t.Errorf("params = %v", p)
	}

	// Another method: params less _meta are the args; initialize's
	// capabilities are emptied whatever the verdict left.
	m = mustParse(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{},"sampling":{}},"clientInfo":{"name":"c","version":"1"}}}`)
	c, err = ProjectCall(m, "mcp__fs__")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "mcp__fs__/initialize" || c.Tool() != "" {
		t.Errorf("call = %+v", c)
	}
	p = c.Params(MethodInitialize, c.Args)
	if caps := p["capabilities"].(map[string]any); len(caps) != 0 {
		t.Errorf("initialize forwards capabilities %v", caps)
	}
}

func TestProjectCallRefuses(t *testing.T) {
	for _, tc := range []struct{ name, params string }{
		{"no name", `{"arguments":{}}`},
		{"empty name", `{"name":""}`},
		{"name not a string", `{"name":7}`},
		{"slash in name", `{"name":"tools/list"}`},
		{"slash in name 2", `{"name":"a/b"}`},
		{"arguments array", `{"name":"a","arguments":["x"]}`},
		{"arguments string", `{"name":"a","arguments":"x"}`},
		// A member equal to a known one under case folding is read as the
		// known one by Go servers (encoding/json folds case): the gateway
		// would judge one tool and the server run another.
		{"Name beside name", `{"name":"echo","Name":"delete_repo"}`},
		{"NAME beside name", `{"name":"echo","NAME":"delete_repo","arguments":{}}`},
		{"Arguments beside arguments", `{"name":"echo","arguments":{"a":1},"Arguments":{"a":2}}`},
		{"_META", `{"name":"echo","_META":{}}`},
		{"colliding argument names", `{"name":"echo","arguments":{"path":"/ok","PATH":"/etc/passwd"}}`},
		{"colliding nested argument names", `{"name":"echo","arguments":{"o":[{"url":"a","Url":"b"}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustParse(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+tc.params+`}`)
			if c, err := ProjectCall(m, "p__"); err == nil {
				t.Errorf("projected %+v, want a refusal", c)
			} else if re, ok := err.(*RPCError); !ok || re.Code != CodeInvalidParams {
				t.Errorf("error %v, want -32602", err)
			}
		})
	}
}

func TestToolResult(t *testing.T) {
	for _, tc := range []struct {
		name, result string
		value        any
		isError      bool
	}{
		{"one text block", `{"content":[{"type":"text","text":"hi"}]}`, "hi", false},
		{"error text", `{"content":[{"type":"text","text":"no"}],"isError":true}`, "no", true},
		{"isError null", `{"content":[{"type":"text","text":"hi"}],"isError":null}`, "hi", false},
		{"structured wins", `{"content":[{"type":"text","text":"` + canary + `"}],"structuredContent":{"a":1}}`, map[string]any{"a": json.Number("1")}, false},
		{"annotated block stays a block", `{"content":[{"type":"text","text":"hi","annotations":{"x":1}}]}`,
			[]any{map[string]any{"type": "text", "text": "hi", "annotations": map[string]any{"x": json.Number("1")}}}, false},
		{"two blocks", `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
			[]any{map[string]any{"type": "text", "text": "a"}, map[string]any{"type": "text", "text": "b"}}, false},
		{"empty content", `{"content":[]}`, []any{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustParse(t, `{"jsonrpc":"2.0","id":1,"result":`+tc.result+`}`)
			v, isErr, err := ToolResult(m.Result)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v, tc.value) || isErr != tc.isError {
				t.Errorf("ToolResult = %#v %v, want %#v %v", v, isErr, tc.value, tc.isError)
			}
		})
	}
	for _, tc := range []struct{ name, result string }{
		{"content not an array", `{"content":{"type":"text","text":"` + canary + `"}}`},
		{"content string", `{"content":"` + canary + `"}`},
		{"no content", `{"isError":false}`},
		{"block not an object", `{"content":["` + canary + `"]}`},
		{"block without type", `{"content":[{"text":"` + canary + `"}]}`},
		{"block type not a string", `{"content":[{"type":1,"text":"x"}]}`},
		{"structuredContent array", `{"content":[],"structuredContent":["` + canary + `"]}`},
		{"structuredContent string", `{"content":[],"structuredContent":"` + canary + `"}`},
		{"isError string", `{"content":[],"isError":"true"}`},
		{"isError number", `{"content":[],"isError":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustParse(t, `{"jsonrpc":"2.0","id":1,"result":`+tc.result+`}`)
			v, _, err := ToolResult(m.Result)
			if err == nil {
				t.Fatalf("ToolResult = %#v, want an error", v)
			}
			if strings.Contains(err.Error(), "CANARY") {
				t.Errorf("the error quotes the result: %v", err)
			}
		})
	}
}

// The client's result is rebuilt from the verdicted value alone: nothing
// of the server's result outside what was judged (its _meta, unknown
// members, a text beside structuredContent) rides along.
func TestWriteToolResultRebuildsFromTheVerdict(t *testing.T) {
	m := mustParse(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`+canary+`"}],
		"structuredContent":{"n":1},"_meta":{"k":"`+canary+`"},"extra":"`+canary+`"}}`)
	v, isErr, err := ToolResult(m.Result)
	if err != nil {
		t.Fatal(err)
	}
	out, err := WriteToolResult(v, isErr)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := jsonvalue.Marshal(out)
	if string(b) != `{"content":[{"text":"{\"n\":1}","type":"text"}],"structuredContent":{"n":1}}` {
		t.Errorf("written %s", b)
	}

	for _, tc := range []struct {
		value   any
		isError bool
		want    string
	}{
		{"hi", false, `{"content":[{"text":"hi","type":"text"}]}`},
		{"no", true, `{"content":[{"text":"no","type":"text"}],"isError":true}`},
		{json.Number("3"), false, `{"content":[{"text":"3","type":"text"}]}`},
		{nil, false, `{"content":[{"text":"null","type":"text"}]}`},
		{[]any{map[string]any{"type": "image", "data": "AA==", "mimeType": "image/png"}}, false, `{"content":[{"data":"AA==","mimeType":"image/png","type":"image"}]}`},
	} {
		out, err := WriteToolResult(tc.value, tc.isError)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := jsonvalue.Marshal(out); string(b) != tc.want {
			t.Errorf("WriteToolResult(%#v) = %s, want %s", tc.value, b, tc.want)
		}
	}
	for _, bad := range []any{[]any{"x"}, []any{map[string]any{"text": "x"}}} {
		if err := CheckToolResult(bad); err == nil {
			t.Errorf("CheckToolResult(%#v) accepted a value that is not content blocks", bad)
		}
	}
}

func TestWithoutUncallableAndMethodResult(t *testing.T) {
	m := mustParse(t, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"name":"tools/call"},{"name":"b"},"x",{"name":7}],"_meta":{"k":"`+canary+`"}}}`)
	r := MethodResult(m.Result)
	if _, ok := r["_meta"]; ok {
		t.Error("MethodResult keeps _meta")
	}
	out, removed := WithoutUncallable(r)
	if !removed || len(out["tools"].([]any)) != 2 {
		t.Errorf("WithoutUncallable = %v %v", out, removed)
	}
	if len(r["tools"].([]any)) != 5 {
		t.Error("WithoutUncallable changed its argument")
	}
}

func TestDeniedResult(t *testing.T) {
	r := DeniedResult("not allowed", map[string]any{"code": "policy:x"})
	b, _ := jsonvalue.Marshal(r)
	if string(b) != `{"_meta":{"hooks-gateway/verdict":{"code":"policy:x"}},"content":[{"text":"not allowed","type":"text"}],"isError":true}` {
		t.Errorf("DeniedResult = %s", b)
	}
}

func TestProjectCallRefusesCaseVariantsOfOtherMethods(t *testing.T) {
	for _, params := range []string{
		`{"_META":{"progressToken":"t"}}`,
		`{"protocolVersion":"2025-06-18","Capabilities":{"sampling":{}}}`,
		`{"uri":"a","URI":"b"}`,
	} {
		m := mustParse(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":`+params+`}`)
		if c, err := ProjectCall(m, "p__"); err == nil {
			t.Errorf("%s: projected %+v, want a refusal", params, c)
		}
	}
}
