package messages

import (
	"errors"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// edit returns the Claude Code projection changed by f.
func claudeCodeEdit(t *testing.T, f func(msgs []any) []any) (*Request, []byte, error) {
	t.Helper()
	s := New(Options{})
	wr, err := s.ParseRequest(sealedFixture(t, s), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := wr.(*Request)
	// f may modify its argument; Messages' trees are shared and read-only.
	out, err := r.UpstreamBody(f(jsonvalue.DeepCopy(r.Messages()).([]any)))
	if cerr := r.CheckMessages(f(jsonvalue.DeepCopy(r.Messages()).([]any))); (cerr == nil) != (err == nil) {
		t.Errorf("CheckMessages = %v but UpstreamBody = %v", cerr, err)
	}
	return r, out, err
}

func obj(v any) map[string]any { return v.(map[string]any) }

// reparse parses a body written for the upstream (its blobs are the
// provider's own) as the gateway would if a client sent it.
func reparse(t *testing.T, body []byte) *Request {
	t.Helper()
	s := New(Options{})
	r, err := s.ParseRequest(sealed(t, s, body), nil)
	if err != nil {
		t.Fatalf("written-back body does not parse: %v\n%s", err, body)
	}
	return r.(*Request)
}

func TestWriteBackKeepsUntouchedBytes(t *testing.T) {
	var target []any
	_, out, err := claudeCodeEdit(t, func(m []any) []any {
		// Redact the second user turn's text (projected message 4).
		obj(obj(m[4])["content"].([]any)[0])["text"] = "[redacted]"
		target = m
		return m
	})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Contains(s, "thanks, now read wire.go") || !strings.Contains(s, "[redacted]") {
		t.Fatalf("the change was not written: %s", s)
	}
	for _, keep := range []string{
		`"signature": "EqQBCkgIBhABGAIiQL0fakeSignatureBytes=="`, // untouched assistant turn, byte for byte
		`"tools": [`, `"output_config": {"effort": "high"}`,
		`{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "internal/wire/errors.go\ninternal/wire/wire.go", "is_error": false}`, // reused block
	} {
		if !strings.Contains(s, keep) {
			t.Errorf("lost %s", keep)
		}
	}
	if got := reparse(t, out).Messages(); !jsonvalue.Equal(any(got), any(target)) {
		t.Errorf("the written body projects differently:\n%v\nwant\n%v", got, target)
	}
}

func TestWriteBackCases(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(m []any) []any
		errPath string // "" means success
		check   func(t *testing.T, out string)
	}{
		{name: "change thinking refused", errPath: "$target[2].content[0]", edit: func(m []any) []any {
			obj(obj(m[2])["content"].([]any)[0])["text"] = "other thoughts"
			return m
		}},
		{name: "add thinking to user refused", errPath: "$target[1].content[2]", edit: func(m []any) []any {
			c := obj(m[1])
			c["content"] = append(c["content"].([]any), map[string]any{"type": "reasoning", "text": "The user wants a file listing. I'll use Bash."})
			return m
		}},
		{name: "remove thinking allowed", edit: func(m []any) []any {
			c := obj(m[2])
			c["content"] = c["content"].([]any)[1:]
			return m
		}, check: func(t *testing.T, out string) {
			if strings.Contains(out, "EqQBCkgIBhABGAIiQL0fakeSignatureBytes") {
				t.Error("thinking block still present")
			}
		}},
		{name: "remove redacted thinking", edit: func(m []any) []any {
			obj(m[6])["content"] = []any{}
			return m
		}, check: func(t *testing.T, out string) {
			if strings.Contains(out, "redacted_thinking") || !strings.Contains(out, `"toolu_01B"`) {
				t.Error("redacted block kept or call lost")
			}
		}},
		{name: "rewrite tool arguments", edit: func(m []any) []any {
			obj(obj(m[2])["tool_calls"].([]any)[0])["function"].(map[string]any)["arguments"] = `{"command":"true"}`
			return m
		}, check: func(t *testing.T, out string) {
			if !strings.Contains(out, `"input":{"command":"true"}`) {
				t.Errorf("input not written as an object: %s", out)
			}
			if !strings.Contains(out, `"signature": "EqQBCkgIBhABGAIiQL0fakeSignatureBytes=="`) {
				t.Error("the thinking block of the changed turn lost its bytes")
			}
		}},
		{name: "arguments not an object", errPath: "$target[2].tool_calls[0].function.arguments", edit: func(m []any) []any {
			obj(obj(m[2])["tool_calls"].([]any)[0])["function"].(map[string]any)["arguments"] = `[1]`
			return m
		}},
		{name: "replace system", edit: func(m []any) []any {
			m[0] = map[string]any{"role": "system", "content": "be brief"}
			return m
		}, check: func(t *testing.T, out string) {
			if !strings.Contains(out, `"system": "be brief"`) || strings.Contains(out, "official CLI") {
				t.Error("system not replaced")
			}
		}},
		{name: "drop system", edit: func(m []any) []any { return m[1:] }, check: func(t *testing.T, out string) {
			if strings.Contains(out, `"system": [`) || strings.Contains(out, "official CLI") || !strings.Contains(out, `"role": "system"`) {
				t.Error("system member kept, or the mid-conversation system message lost")
			}
		}},
		{name: "drop tool result", edit: func(m []any) []any {
			return append(m[:3:3], m[4:]...)
		}, check: func(t *testing.T, out string) {
			if strings.Contains(out, "toolu_01A\", \"content\"") {
				t.Error("tool result kept")
			}
		}},
		{name: "developer role refused", errPath: "$target[1].role", edit: func(m []any) []any {
			obj(m[1])["role"] = "developer"
			return m
		}},
		{name: "tool_calls on user refused", errPath: "$target[1]", edit: func(m []any) []any {
			obj(m[1])["tool_calls"] = []any{}
			return m
		}},
		{name: "unknown part refused", errPath: "$target[1].content[0].type", edit: func(m []any) []any {
			obj(m[1])["content"] = []any{map[string]any{"type": "input_audio", "data": "x"}}
			return m
		}},
		{name: "only system refused", errPath: "$target", edit: func(m []any) []any { return m[:1] }},
		{name: "image url written", edit: func(m []any) []any {
			obj(m[1])["content"] = []any{map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/a.png"}}}
			return m
		}, check: func(t *testing.T, out string) {
			if !strings.Contains(out, `{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}`) {
				t.Error("image not rendered")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var target []any
			_, out, err := claudeCodeEdit(t, func(m []any) []any { target = c.edit(m); return target })
			if c.errPath != "" {
				var we *wire.WriteBackError
				if !errors.As(err, &we) || we.Field != c.errPath {
					t.Fatalf("err = %v, want a WriteBackError at %s", err, c.errPath)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.check != nil {
				c.check(t, string(out))
			}
			if got := reparse(t, out).Messages(); !jsonvalue.Equal(any(got), any(target)) {
				g, _ := jsonvalue.Marshal(got)
				w, _ := jsonvalue.Marshal(target)
				t.Errorf("the written body projects differently:\n%s\nwant\n%s", g, w)
			}
		})
	}
}

// A user turn mixing text and tool results splits in order and, when
// changed, joins back into one turn.
func TestToolResultSplitAndJoin(t *testing.T) {
	body := `{"model":"m","max_tokens":9,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"f","input":{}}]},
	 {"role":"user","content":[{"type":"text","text":"before"},{"type":"tool_result","tool_use_id":"a","content":"A","is_error":true},{"type":"tool_result","tool_use_id":"b"},{"type":"text","text":"after"}]}]}`
	r := parseOK(t, New(Options{}), body)
	m := jsonvalue.DeepCopy(r.Messages()).([]any) // modified below
	want := mustJSON(t, `[{"role":"assistant","content":[],"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"f","arguments":"{}"}}]},
	 {"role":"user","content":[{"type":"text","text":"before"}]},{"role":"tool","tool_call_id":"a","content":"A","is_error":true},{"role":"tool","tool_call_id":"b","content":null},{"role":"user","content":[{"type":"text","text":"after"}]}]`)
	if !jsonvalue.Equal(any(m), want) {
		g, _ := jsonvalue.Marshal(m)
		t.Fatalf("projection = %s", g)
	}
	obj(m[2])["content"] = "[redacted]"
	out, err := r.UpstreamBody(m)
	if err != nil {
		t.Fatal(err)
	}
	wantBody := `{"model":"m","max_tokens":9,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"f","input":{}}]},
	 {"role":"user","content":[{"type":"text","text":"before"},{"type":"tool_result","tool_use_id":"a","content":"[redacted]","is_error":true},{"type":"tool_result","tool_use_id":"b"},{"type":"text","text":"after"}]}]}`
	if string(out) != wantBody {
		t.Errorf("body =\n%s\nwant\n%s", out, wantBody)
	}
}
