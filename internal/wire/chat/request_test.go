package chat

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// wideObject is the member list of an object past the linear-scan size.
var wideObject = func() string {
	var b strings.Builder
	for i := range 40 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":0`)
	}
	return b.String()
}()

func TestParseRequestErrors(t *testing.T) {
	const okMsgs = `"messages":[{"role":"user","content":"hi ` + secret + `"}]`
	tests := []struct {
		name, body, field, msg string
	}{
		{"not JSON", `{"model":`, "", "not valid JSON"},
		{"not an object", `[1]`, "", "must be a JSON object"},
		{"duplicate top-level key", `{"model":"a","model":"b",` + okMsgs + `}`, "", "duplicate"},
		{"escaped duplicate key", `{"model":"a","\u006dodel":"b",` + okMsgs + `}`, "", "duplicate"},
		{"duplicate inside a message", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a","text":"` + secret + `"}]}]}`, "messages[0]", "duplicate member"},
		{"duplicate inside tools", `{"model":"m",` + okMsgs + `,"tools":[{"type":"function","function":{"name":"a","name":"b"}}]}`, "tools", "duplicate member"},
		{"duplicate in a wide object", `{"model":"m",` + okMsgs + `,"metadata":{` + wideObject + `,"k3":0}}`, "metadata", "duplicate member"},
		{"model missing", `{` + okMsgs + `}`, "model", "required"},
		{"model empty", `{"model":"",` + okMsgs + `}`, "model", "non-empty string"},
		{"model number", `{"model":4,` + okMsgs + `}`, "model", "non-empty string"},
		{"messages missing", `{"model":"m"}`, "messages", "required"},
		{"messages empty", `{"model":"m","messages":[]}`, "messages", "must not be empty"},
		{"messages object", `{"model":"m","messages":{"role":"user"}}`, "messages", "must be an array, got object"},
		{"message not object", `{"model":"m","messages":[{"role":"user","content":"a"},"` + secret + `"]}`, "messages[1]", "must be an object, got string"},
		{"role missing", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"content":"` + secret + `"}]}`, "messages[2].role", "must be a string, got null"},
		{"role number", `{"model":"m","messages":[{"role":7,"content":"a"}]}`, "messages[0].role", "got number"},
		{"content number", `{"model":"m","messages":[{"role":"user","content":42}]}`, "messages[0].content", "got number"},
		{"content part not object", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},"` + secret + `"]}]}`, "messages[0].content[1]", "content part must be an object"},
		{"lone surrogate in message", `{"model":"m","messages":[{"role":"user","content":"` + secret + `\ud800"}]}`, "messages[0]", "lone surrogate"},
		{"stream string", `{"model":"m",` + okMsgs + `,"stream":"yes"}`, "stream", "must be a boolean, got string"},
		{"stream number", `{"model":"m",` + okMsgs + `,"stream":1}`, "stream", "must be a boolean, got number"},
		{"n two", `{"model":"m",` + okMsgs + `,"n":2}`, "n", nMessage},
		{"n huge", `{"model":"m",` + okMsgs + `,"n":99999999999999999999}`, "n", nMessage},
		{"n zero", `{"model":"m",` + okMsgs + `,"n":0}`, "n", "must be 1"},
		{"n float", `{"model":"m",` + okMsgs + `,"n":1.0}`, "n", "must be an integer"},
		{"n string", `{"model":"m",` + okMsgs + `,"n":"1"}`, "n", "must be an integer, got string"},
		{"stream_options array", `{"model":"m",` + okMsgs + `,"stream_options":[]}`, "stream_options", "must be an object"},
		{"include_usage string", `{"model":"m",` + okMsgs + `,"stream_options":{"include_usage":"true"}}`, "stream_options.include_usage", "must be a boolean"},
		{"tools object", `{"model":"m",` + okMsgs + `,"tools":{}}`, "tools", "must be an array"},
		{"tool custom", `{"model":"m",` + okMsgs + `,"tools":[{"type":"function","function":{"name":"a"}},{"type":"custom","custom":{"name":"b"}}]}`, "tools[1].type", `must be "function"`},
		{"tool no function", `{"model":"m",` + okMsgs + `,"tools":[{"type":"function"}]}`, "tools[0].function", "must be an object"},
		{"tool no name", `{"model":"m",` + okMsgs + `,"tools":[{"type":"function","function":{"description":"d"}}]}`, "tools[0].function.name", "non-empty string"},
		{"tool parameters array", `{"model":"m",` + okMsgs + `,"tools":[{"type":"function","function":{"name":"a","parameters":[]}}]}`, "tools[0].function.parameters", "must be an object"},
		{"legacy functions", `{"model":"m",` + okMsgs + `,"functions":[{"name":"a"}]}`, "functions", "legacy function calling"},
		{"legacy function_call", `{"model":"m",` + okMsgs + `,"function_call":"auto"}`, "function_call", "legacy function calling"},
		{"audio output", `{"model":"m",` + okMsgs + `,"audio":{"voice":"alloy","format":"wav"}}`, "audio", "audio output"},
		{"audio modality", `{"model":"m",` + okMsgs + `,"modalities":["text","audio"]}`, "modalities", "audio output"},
		{"odd key not echoed", `{"model":"m",` + okMsgs + `,"x ` + secret + `":"\udc00"}`, "", "lone surrogate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRequest([]byte(tc.body))
			var re *wire.RequestError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want *RequestError", err)
			}
			if re.Field != tc.field {
				t.Errorf("Field = %q, want %q", re.Field, tc.field)
			}
			if !strings.Contains(re.Msg, tc.msg) {
				t.Errorf("Msg = %q, want it to contain %q", re.Msg, tc.msg)
			}
			noSecret(t, err)
		})
	}
}

func TestParseRequestAccepts(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"a"}],"n":1,"stream":false,"stream_options":null,"tools":null}`,
		`{"model":"m","messages":[{"role":"user","content":"a"}],"n":null,"stream":null,"audio":null,"modalities":["text"]}`,
		` {"messages":[{"role":"developer","content":null}],"model":"m"} `,
		`{"model":"m","messages":[{"role":"user","content":"a"}],"chat_template_kwargs":{` + wideObject + `}}`,
	} {
		if _, err := ParseRequest([]byte(body)); err != nil {
			t.Errorf("ParseRequest(%s): %v", body, err)
		}
	}
}

func TestRequestAccessors(t *testing.T) {
	r := mustRequest(t, requestBody)
	if got := r.Model(); got != "gpt-4o-2024-08-06" {
		t.Errorf("Model = %q", got)
	}
	if !r.Stream() || r.IncludeUsage() {
		t.Errorf("Stream, IncludeUsage = %v, %v; want true, false", r.Stream(), r.IncludeUsage())
	}
	if got := r.ToolNames(); !slices.Equal(got, []string{"get_weather", "book_hotel"}) {
		t.Errorf("ToolNames = %v", got)
	}
	wantTools := tree(t, `[{"name":"get_weather","description":"Current weather","schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},{"name":"book_hotel"}]`)
	if got := r.Tools(); !jsonvalue.Equal(got, wantTools) {
		t.Errorf("Tools = %s", mustJSON(t, got))
	}
	wantParams := tree(t, `{"temperature":1.0,"max_tokens":1e2,"seed":9007199254740993,"stop":["\n\n"],"tool_choice":"auto","parallel_tool_calls":true,"user":"u-123","metadata":{"team":"travel"},"chat_template_kwargs":{"keep":[1.0,1e2,-0]}}`)
	params := r.Params()
	if !jsonvalue.Equal(params, wantParams) {
		t.Errorf("Params = %s", mustJSON(t, params))
	}
	if params["temperature"] != json.Number("1.0") || params["seed"] != json.Number("9007199254740993") {
		t.Errorf("number tokens not kept: temperature %#v, seed %#v", params["temperature"], params["seed"])
	}

	msgs := r.Messages()
	want := tree(t, `[
	  {"role":"system","content":"You are a travel agent.","x_weight":1.0},
	  {"role":"user","content":[{"type":"text","text":"Weather in Paris? key `+secret+`"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}}]},
	  {"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"days\":1e2}"}}],"x_meta":{"score":1e2,"exact":9007199254740993}},
	  {"role":"tool","tool_call_id":"call_abc","content":"{\"temp_c\": 21.50}"},
	  {"role":"user","content":"Thanks! And tomorrow?","name":"alice"}]`)
	if !jsonvalue.Equal(any(msgs), want) {
		t.Errorf("Messages = %s", mustJSON(t, msgs))
	}
	// The slice is the caller's; the trees are shared and read-only.
	msgs[0] = "changed"
	again := r.Messages()
	if again[0].(map[string]any)["content"] != "You are a travel agent." {
		t.Error("Messages shares its slice between calls")
	}
	if r.Params()["chat_template_kwargs"] == nil || r.Tools() == nil {
		t.Error("params or tools lost")
	}
}

func TestRequestEmptyOptionalProjections(t *testing.T) {
	r := mustRequest(t, `{"model":"m","messages":[{"role":"user","content":"a"}],"temperature":null,"tools":null,"audio":null,"stream":true,"n":1}`)
	if r.Tools() != nil || r.Params() != nil || r.ToolNames() != nil {
		t.Errorf("Tools, Params, ToolNames = %v, %v, %v; want nil", r.Tools(), r.Params(), r.ToolNames())
	}
}

// user and metadata reach the upstream, so the policy sees them.
func TestRequestParamsHoldUserAndMetadata(t *testing.T) {
	r := mustRequest(t, `{"model":"m","messages":[{"role":"user","content":"a"}],"user":"u","metadata":{"k":"v"},"safety_identifier":"s"}`)
	want := tree(t, `{"user":"u","metadata":{"k":"v"},"safety_identifier":"s"}`)
	if got := r.Params(); !jsonvalue.Equal(any(got), want) {
		t.Errorf("Params = %s, want %s", mustJSON(t, got), mustJSON(t, want))
	}
}

// rewrite returns requestBody with message i's text replaced by repl.
func rewrite(t *testing.T, i int, repl string) string {
	t.Helper()
	orig := messageText(t, i)
	if strings.Count(requestBody, orig) != 1 {
		t.Fatalf("message %d text is not unique", i)
	}
	return strings.Replace(requestBody, orig, repl, 1)
}

func TestUpstreamBodyMessages(t *testing.T) {
	r := mustRequest(t, requestBody)
	proj := r.Messages()
	m := func(i int) any { return jsonvalue.DeepCopy(proj[i]) }
	redacted := jsonvalue.DeepCopy(proj[1]).(map[string]any)
	redacted["content"].([]any)[0].(map[string]any)["text"] = "Weather in Paris? key [REDACTED]"
	redactedJSON := mustJSON(t, redacted)
	inserted := map[string]any{"role": "system", "content": "Policy: no payments."}

	var msgs strings.Builder
	for i := range 5 {
		if i > 0 {
			msgs.WriteString(",")
		}
		msgs.WriteString(messageText(t, i))
	}
	arrayWith := func(idx ...any) string {
		parts := make([]string, len(idx))
		for k, x := range idx {
			switch v := x.(type) {
			case int:
				parts[k] = messageText(t, v)
			case string:
				parts[k] = v
			}
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	messagesSpan := func() string {
		s := rawjson.Find(r.members, "messages")
		return requestBody[r.members[s].Val.Start:r.members[s].Val.End]
	}()
	withArray := func(a string) string { return strings.Replace(requestBody, messagesSpan, a, 1) }

	tests := []struct {
		name     string
		messages any
		want     string
	}{
		{"nil keeps the body", nil, requestBody},
		{"unchanged projection keeps the body", []any{m(0), m(1), m(2), m(3), m(4)}, requestBody},
		{"one message redacted", []any{m(0), redacted, m(2), m(3), m(4)}, rewrite(t, 1, redactedJSON)},
		{"message removed", []any{m(0), m(2), m(3), m(4)}, withArray(arrayWith(0, 2, 3, 4))},
		{"message inserted", []any{m(0), inserted, m(1), m(2), m(3), m(4)}, withArray(arrayWith(0, mustJSON(t, inserted), 1, 2, 3, 4))},
		{"reordered", []any{m(4), m(0)}, withArray(arrayWith(4, 0))},
		{"duplicated original", []any{m(0), m(0), m(1)}, withArray(arrayWith(0, 0, 1))},
		{"Go numbers are compared by value", []any{m(0), m(1), m(2), m(3), map[string]any{"role": "user", "content": "Thanks! And tomorrow?", "name": "alice"}}, requestBody},
		{"type-aware: true is not 1", []any{map[string]any{"role": "system", "content": "You are a travel agent.", "x_weight": true}}, withArray(`[{"content":"You are a travel agent.","role":"system","x_weight":true}]`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.UpstreamBody(tc.messages, false)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("UpstreamBody =\n%s\nwant\n%s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Error("result is not valid JSON")
			}
		})
	}
}

func TestUpstreamBodyConsumesDuplicatesInOrder(t *testing.T) {
	// Two equal messages with different raw text: the first kept entry
	// must take the first original's bytes.
	body := `{"model":"m","messages":[{"role":"user","content":"x","w":1.0},{"content":"x","role":"user","w":1.00}]}`
	r := mustRequest(t, body)
	proj := r.Messages()
	got, err := r.UpstreamBody([]any{proj[1]}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","messages":[{"role":"user","content":"x","w":1.0}]}`
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestUpstreamBodyForceUsage(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name, body, want string
	}{
		{"absent", `{"model":"m",` + msgs + `,"stream":true}`, `{"model":"m",` + msgs + `,"stream":true,"stream_options":{"include_usage":true}}`},
		{"null", `{"model":"m",` + msgs + `,"stream":true,"stream_options":null}`, `{"model":"m",` + msgs + `,"stream":true,"stream_options":{"include_usage":true}}`},
		{"empty object", `{"model":"m","stream_options": { },` + msgs + `}`, `{"model":"m","stream_options": {"include_usage":true },` + msgs + `}`},
		{"other member kept", `{"stream_options":{"include_obfuscation":false},"model":"m",` + msgs + `}`, `{"stream_options":{"include_obfuscation":false,"include_usage":true},"model":"m",` + msgs + `}`},
		{"false replaced", `{"model":"m",` + msgs + `,"stream_options":{"include_usage":false,"continuous_usage_stats":true}}`, `{"model":"m",` + msgs + `,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`},
		{"already true", `{"model":"m",` + msgs + `,"stream_options":{"include_usage":true}}`, `{"model":"m",` + msgs + `,"stream_options":{"include_usage":true}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRequest(t, tc.body)
			got, err := r.UpstreamBody(nil, true)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if again, _ := r.UpstreamBody(nil, false); string(again) != tc.body {
				t.Error("forceUsage=false changed the body")
			}
		})
	}
}

func TestUpstreamBodyMessagesAndUsage(t *testing.T) {
	r := mustRequest(t, requestBody)
	proj := r.Messages()
	got, err := r.UpstreamBody(proj[:1], true)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(requestBody, `"stream": true
}`, `"stream": true,"stream_options":{"include_usage":true}
}`, 1)
	want = strings.Replace(want, want[strings.Index(want, `"messages": [`)+len(`"messages": `):strings.Index(want, `],
  "temperature"`)+1], "["+messageText(t, 0)+"]", 1)
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestValidateMessages(t *testing.T) {
	tests := []struct {
		name   string
		target any
		field  string
	}{
		{"ok", tree(t, `[{"role":"user","content":"a"},{"role":"assistant","content":null,"tool_calls":[]},{"role":"user","content":[{"type":"text","text":"b"}]}]`), ""},
		{"not array", tree(t, `{"role":"user"}`), "$target"},
		{"empty", []any{}, "$target"},
		{"entry not object", []any{tree(t, `{"role":"user","content":"a"}`), secret}, "$target[1]"},
		{"role missing", tree(t, `[{"content":"`+secret+`"}]`), "$target[0].role"},
		{"content missing", tree(t, `[{"role":"user"}]`), "$target[0].content"},
		{"content bool", tree(t, `[{"role":"user","content":true}]`), "$target[0].content"},
		{"part not object", tree(t, `[{"role":"user","content":["`+secret+`"]}]`), "$target[0].content[0]"},
		{"bad number", []any{map[string]any{"role": "user", "content": "a", "n": json.Number("01")}}, "$target[0].n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateMessages(tc.target)
			noSecret(t, err)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var we *wire.WriteBackError
			if !errors.As(err, &we) {
				t.Fatalf("err = %v, want *WriteBackError", err)
			}
			if we.Field != tc.field {
				t.Errorf("Field = %q, want %q", we.Field, tc.field)
			}
			r := mustRequest(t, requestBody)
			if _, err := r.UpstreamBody(tc.target, false); !errors.As(err, &we) {
				t.Errorf("UpstreamBody accepted what ValidateMessages refuses: %v", err)
			}
		})
	}
}
