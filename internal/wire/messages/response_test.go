package messages

import (
	"errors"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

const answerJSON = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5",
 "content":[
  {"type":"thinking","thinking":"Let me check.","signature":"sig=="},
  {"type":"text","text":"Go 1.26 is out.","citations":[{"type":"web_search_result_location","url":"https://go.dev/doc","title":"Go docs","encrypted_index":"Eo8=","cited_text":"Go 1.26 released"}]},
  {"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"go version"}},
  {"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"go.mod"}}
 ],
 "stop_reason":"tool_use","stop_sequence":null,
 "usage":{"input_tokens":10,"cache_creation_input_tokens":3,"cache_read_input_tokens":100,"output_tokens":42,"service_tier":"standard","cache_creation":{"ephemeral_5m_input_tokens":3,"ephemeral_1h_input_tokens":0}}}`

// answerRequest is the request the test answers answer.
const answerRequest = `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`

func parseAnswer(t *testing.T, opts Options, body string) *Response {
	t.Helper()
	s := New(opts)
	r, err := s.ParseResponse(parseOK(t, s, answerRequest), []byte(body))
	if err != nil {
		t.Fatalf("ParseResponse: %v", err)
	}
	return r.(*Response)
}

// withID is out (a released answer) with its id replaced by the
// upstream's, the one difference an untouched answer has besides seals.
func withID(t *testing.T, r *Response, out []byte, id string) string {
	t.Helper()
	minted := `"id":"` + r.ac.id + `"`
	if !strings.Contains(string(out), minted) || !strings.HasPrefix(r.ac.id, "msg_") {
		t.Fatalf("the release does not carry the minted id %s: %s", r.ac.id, out)
	}
	return strings.Replace(string(out), minted, `"id":"`+id+`"`, 1)
}

func TestAnswerProjection(t *testing.T) {
	r := parseAnswer(t, Options{}, answerJSON)
	want := mustJSON(t, `{"content":[{"type":"reasoning","text":"Let me check."},
	  {"type":"text","text":"Go 1.26 is out.","annotations":[{"type":"url_citation","url":"https://go.dev/doc","title":"Go docs","cited_text":"Go 1.26 released"}]}],
	 "tool_calls":[{"id":"toolu_1","name":"Bash","args":{"command":"go version"}},{"id":"toolu_2","name":"Read","args":{"file_path":"go.mod"}}],
	 "finish_reason":"tool_calls"}`)
	if !jsonvalue.Equal(any(r.Project()), want) {
		g, _ := jsonvalue.Marshal(r.Project())
		t.Errorf("Project() = %s", g)
	}
	if u := r.Usage(); !jsonvalue.Equal(any(u), mustJSON(t, `{"prompt_tokens":113,"completion_tokens":42}`)) {
		t.Errorf("Usage() = %v", u)
	}
	out, err := r.Release(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Byte for byte but for the gateway's id and the seals of its blobs.
	if got := withID(t, r, unsealed(t, r.s, out), "msg_01"); got != answerJSON {
		t.Errorf("an untouched answer is released as\n%s", got)
	}
	for _, blob := range []string{"sig==", "Eo8="} {
		if strings.Contains(string(out), blob) {
			t.Errorf("the release carries the blob %s unsealed: %s", blob, out)
		}
	}
}

func TestAnswerStopReasons(t *testing.T) {
	for stop, fr := range map[string]string{"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "max_tokens": "length",
		"model_context_window_exceeded": "length", "tool_use": "tool_calls", "refusal": "content_filter"} {
		r := parseAnswer(t, Options{}, `{"type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"`+stop+`"}`)
		if p := r.Project(); p["finish_reason"] != fr || p["content"] != "hi" {
			t.Errorf("%s → %v", stop, p)
		}
	}
	if _, err := New(Options{}).ParseResponse(nil, []byte(`{"type":"message","role":"assistant","content":[],"stop_reason":"bored"}`)); !errors.Is(err, wire.ErrResponseInvalid) {
		t.Errorf("unknown stop_reason: %v", err)
	}
}

func TestAnswerClosedWorld(t *testing.T) {
	body := `{"type":"message","role":"assistant","content":[{"type":"text","text":"hi","debug":"x"}],"stop_reason":"end_turn","trace":{"a":1},"usage":{"input_tokens":1,"output_tokens":2,"secret":"s"}}`
	r := parseAnswer(t, Options{StrictMembers: true}, body)
	out, err := r.Release(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"debug", "trace", "secret"} {
		if strings.Contains(string(out), gone) {
			t.Errorf("released body still holds %s: %s", gone, out)
		}
	}
	kept := parseAnswer(t, Options{AllowResponseMembers: []string{"trace"}, StrictMembers: true}, body)
	p := kept.Project()
	if c, ok := p["content"].([]any); !ok || len(c) != 2 || obj(c[1])["type"] != "member" {
		t.Errorf("allowed member not projected: %v", p)
	}
	// Judged by default: every unknown member is projected where a
	// policy sees it, and released as the verdict leaves it.
	judged := parseAnswer(t, Options{}, body)
	want := mustJSON(t, `{"content":[{"type":"text","text":"hi","debug":"x"},{"type":"member","name":"trace","value":{"a":1}},{"type":"member","name":"usage.secret","value":"s"}],"tool_calls":[],"finish_reason":"stop"}`)
	if !jsonvalue.Equal(any(judged.Project()), want) {
		g, _ := jsonvalue.Marshal(judged.Project())
		t.Errorf("judged projection = %s", g)
	}
	out, err = judged.Release(nil)
	if err != nil || !strings.Contains(string(out), `"debug":"x"`) || !strings.Contains(string(out), `"secret":"s"`) || !strings.Contains(string(out), `"trace":{"a":1}`) {
		t.Errorf("judged members not released as judged (%v): %s", err, out)
	}
	refused := []string{
		`{"type":"message","role":"assistant","content":[{"type":"audio","data":"x"}]}`,
		`{"type":"message","role":"assistant","content":[],"Content":[]}`,
		`{"type":"message","role":"assistant","content":[],"content":[]}`,
		`{"type":"message","role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":"{}"}]}`,
		`{"type":"message","role":"assistant","content":[{"type":"web_search_tool_result","tool_use_id":"a","content":[]}]}`,
		`{"type":"message","role":"assistant","content":[],"usage":{"output_tokens":-1}}`,
		`{"type":"message","role":"user","content":[]}`,
	}
	for _, b := range refused {
		if _, err := New(Options{}).ParseResponse(nil, []byte(b)); !errors.Is(err, wire.ErrResponseInvalid) {
			t.Errorf("%s: err = %v, want ErrResponseInvalid", b, err)
		}
	}
}

func TestAnswerWriteBack(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(p map[string]any)
		errPath string
		check   func(t *testing.T, out string)
	}{
		{name: "redact text keeps thinking and citations", edit: func(p map[string]any) {
			obj(p["content"].([]any)[1])["text"] = "[redacted]"
		}, check: func(t *testing.T, out string) {
			if strings.Contains(out, "sig==") || strings.Contains(out, "Eo8=") {
				t.Errorf("blobs released unsealed: %s", out)
			}
			if !strings.Contains(out, `{"type":"thinking","thinking":"Let me check.","signature":"hgs1_`) || !strings.Contains(out, `"encrypted_index":"hgs1_`) {
				t.Errorf("original blocks lost: %s", out)
			}
		}},
		{name: "change thinking refused", errPath: "$target.content[0]", edit: func(p map[string]any) {
			obj(p["content"].([]any)[0])["text"] = "nothing"
		}},
		{name: "string content removes other channels", edit: func(p map[string]any) {
			p["content"] = "plain"
		}, check: func(t *testing.T, out string) {
			if strings.Contains(out, "thinking") || !strings.Contains(out, `{"type":"text","text":"plain"}`) {
				t.Errorf("content = %s", out)
			}
		}},
		{name: "add call refused", errPath: "$target.tool_calls[2].id", edit: func(p map[string]any) {
			p["tool_calls"] = append(p["tool_calls"].([]any), map[string]any{"id": "toolu_9", "name": "Bash", "args": map[string]any{}})
		}},
		{name: "drop and reorder calls", edit: func(p map[string]any) {
			c := p["tool_calls"].([]any)
			p["tool_calls"] = []any{c[1]}
		}, check: func(t *testing.T, out string) {
			if strings.Contains(out, "toolu_1") || !strings.Contains(out, `{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"go.mod"}}`) {
				t.Errorf("calls = %s", out)
			}
		}},
		{name: "rewrite args as object", edit: func(p map[string]any) {
			obj(p["tool_calls"].([]any)[0])["args"] = map[string]any{"command": "true"}
		}, check: func(t *testing.T, out string) {
			if !strings.Contains(out, `"input":{"command":"true"}`) {
				t.Errorf("input = %s", out)
			}
		}},
		{name: "finish reason", edit: func(p map[string]any) { p["finish_reason"] = "content_filter" }, check: func(t *testing.T, out string) {
			if !strings.Contains(out, `"stop_reason":"refusal"`) {
				t.Errorf("stop_reason = %s", out)
			}
		}},
		{name: "changed citation refused", errPath: "$target.content[1].annotations[0]", edit: func(p map[string]any) {
			a := obj(obj(p["content"].([]any)[1])["annotations"].([]any)[0])
			a["url"] = "https://evil.example"
			obj(p["content"].([]any)[1])["text"] = "x"
		}},
		{name: "unknown finish", errPath: "$target.finish_reason", edit: func(p map[string]any) { p["finish_reason"] = "paused" }},
		{name: "extra member", errPath: "$target", edit: func(p map[string]any) { p["usage"] = 1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := parseAnswer(t, Options{}, answerJSON)
			target := r.Project()
			c.edit(target)
			out, err := r.Release(target)
			if cerr := r.CheckWriteBack(target); (cerr == nil) != (err == nil) {
				t.Errorf("CheckWriteBack = %v, Release = %v", cerr, err)
			}
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
			again := parseAnswer(t, Options{}, string(out))
			if !jsonvalue.Equal(any(again.Project()), any(target)) {
				g, _ := jsonvalue.Marshal(again.Project())
				t.Errorf("released body projects as %s", g)
			}
		})
	}
}
