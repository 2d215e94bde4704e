package chat

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// withMember is a minimal valid request with one more top-level member.
func withMember(name, raw string) string {
	return `{"model":"m","messages":[{"role":"user","content":"hi"}],"` + name + `":` + raw + `}`
}

// bodyFor is a minimal valid request whose member name is raw.
func bodyFor(name, raw string) string {
	switch name {
	case "model":
		return `{"model":` + raw + `,"messages":[{"role":"user","content":"hi"}]}`
	case "messages":
		return `{"model":"m","messages":` + raw + `}`
	}
	return withMember(name, raw)
}

// badValue is a value a member must refuse, and where and how.
type badValue struct {
	raw, field, msg string
}

// memberCase says, for one known member, which values it takes and which
// it refuses. projected tells whether an accepted value lands in
// model.params verbatim.
type memberCase struct {
	name      string
	ok        []string
	bad       []badValue
	projected bool
}

// The refusals every member of one shape gives, for member n.
func badNumber(n string) []badValue {
	return []badValue{{`"0.5"`, n, "must be a number, got string"}, {`true`, n, "must be a number, got boolean"}}
}

func badBoolean(n string) []badValue {
	return []badValue{{`1`, n, "must be a boolean, got number"}, {`"true"`, n, "must be a boolean, got string"}}
}

func badString(n string) []badValue {
	return []badValue{{`1`, n, "must be a string, got number"}, {`{}`, n, "must be a string, got object"}}
}

func badObject(n string) []badValue {
	return []badValue{{`[]`, n, "must be an object, got array"}, {`"x"`, n, "must be an object, got string"}}
}

// memberCases covers every known top-level member (a test below checks
// that none is missing).
var memberCases = []memberCase{
	{name: "model", ok: []string{`"gpt-4o"`}, bad: []badValue{{`""`, "model", "non-empty string"}, {`7`, "model", "non-empty string"}, {`null`, "model", "non-empty string"}}},
	{name: "messages", ok: []string{`[{"role":"user","content":"x"}]`}, bad: []badValue{{`{}`, "messages", "must be an array"}, {`[]`, "messages", "must not be empty"}}},
	{name: "tools", ok: []string{`null`, `[{"type":"function","function":{"name":"f","strict":true}}]`}, bad: []badValue{
		{`{}`, "tools", "must be an array"},
		{`[{"type":"function","function":{"name":"f","strict":"yes"}}]`, "tools[0].function.strict", "must be a boolean, got string"},
	}},
	{name: "stream", ok: []string{`true`, `false`, `null`}, bad: []badValue{{`"true"`, "stream", "must be a boolean, got string"}}},
	{name: "stream_options", ok: []string{`null`, `{}`, `{"include_usage":true,"include_obfuscation":false,"continuous_usage_stats":null}`}, bad: []badValue{
		{`[]`, "stream_options", "must be an object"},
		{`{"include_obfuscation":"no"}`, "stream_options.include_obfuscation", "must be a boolean, got string"},
		{`{"continuous_usage_stats":1}`, "stream_options.continuous_usage_stats", "must be a boolean, got number"},
	}},
	{name: "n", ok: []string{`1`, `null`}, bad: []badValue{{`2`, "n", nMessage}, {`"1"`, "n", "must be an integer"}}},
	{name: "functions", bad: []badValue{{`[{"name":"f"}]`, "functions", "legacy function calling"}, {`null`, "functions", "legacy function calling"}}},
	{name: "function_call", bad: []badValue{{`"auto"`, "function_call", "legacy function calling"}}},
	{name: "audio", ok: []string{`null`}, bad: []badValue{{`{"voice":"alloy","format":"wav"}`, "audio", "audio output"}, {`"x"`, "audio", "audio output"}}},
	{name: "modalities", projected: true, ok: []string{`["text"]`}, bad: []badValue{{`["text","audio"]`, "modalities", "audio output"}, {`"text"`, "modalities", "must be an array of strings, got string"}, {`["text",1]`, "modalities[1]", "must be a string, got number"}}},
	{name: "frequency_penalty", projected: true, ok: []string{`0.5`, `-2`}, bad: badNumber("frequency_penalty")},
	{name: "logit_bias", projected: true, ok: []string{`{"50256":-100}`, `{}`}, bad: []badValue{{`[]`, "logit_bias", "must be an object of numbers, got array"}, {`{"1":"x"}`, "logit_bias", "must be an object of numbers, got a value of type string"}}},
	{name: "logprobs", projected: true, ok: []string{`true`}, bad: badBoolean("logprobs")},
	{name: "max_completion_tokens", projected: true, ok: []string{`256`}, bad: badNumber("max_completion_tokens")},
	{name: "max_tokens", projected: true, ok: []string{`1e2`}, bad: badNumber("max_tokens")},
	{name: "metadata", projected: true, ok: []string{`{"team":"travel"}`}, bad: []badValue{{`"x"`, "metadata", "must be an object of strings, got string"}, {`{"k":1}`, "metadata", "must be an object of strings, got a value of type number"}}},
	{name: "moderation", projected: true, ok: []string{`{"model":"omni-moderation-latest"}`}, bad: badObject("moderation")},
	{name: "parallel_tool_calls", projected: true, ok: []string{`false`}, bad: badBoolean("parallel_tool_calls")},
	{name: "prediction", projected: true, ok: []string{`{"type":"content","content":"x"}`}, bad: badObject("prediction")},
	{name: "presence_penalty", projected: true, ok: []string{`0`}, bad: badNumber("presence_penalty")},
	{name: "prompt_cache_key", projected: true, ok: []string{`"k"`}, bad: badString("prompt_cache_key")},
	{name: "prompt_cache_options", projected: true, ok: []string{`{"mode":"explicit"}`}, bad: badObject("prompt_cache_options")},
	{name: "prompt_cache_retention", projected: true, ok: []string{`"24h"`}, bad: badString("prompt_cache_retention")},
	{name: "reasoning_effort", projected: true, ok: []string{`"low"`}, bad: badString("reasoning_effort")},
	{name: "response_format", projected: true, ok: []string{`{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object"},"strict":true}}`}, bad: badObject("response_format")},
	{name: "safety_identifier", projected: true, ok: []string{`"s"`}, bad: badString("safety_identifier")},
	{name: "seed", projected: true, ok: []string{`9007199254740993`}, bad: badNumber("seed")},
	{name: "service_tier", projected: true, ok: []string{`"flex"`}, bad: badString("service_tier")},
	{name: "stop", projected: true, ok: []string{`"\n"`, `["a","b"]`}, bad: []badValue{{`7`, "stop", "must be a string or an array of strings, got number"}, {`["a",{}]`, "stop[1]", "must be a string, got object"}}},
	{name: "store", projected: true, ok: []string{`true`}, bad: badBoolean("store")},
	{name: "temperature", projected: true, ok: []string{`1.0`}, bad: badNumber("temperature")},
	{name: "tool_choice", projected: true, ok: []string{`"auto"`, `{"type":"function","function":{"name":"f"}}`}, bad: []badValue{{`1`, "tool_choice", "must be a string or an object, got number"}, {`["auto"]`, "tool_choice", "got array"}}},
	{name: "top_logprobs", projected: true, ok: []string{`5`}, bad: badNumber("top_logprobs")},
	{name: "top_p", projected: true, ok: []string{`0.9`}, bad: badNumber("top_p")},
	{name: "user", projected: true, ok: []string{`"u-1"`}, bad: badString("user")},
	{name: "verbosity", projected: true, ok: []string{`"low"`}, bad: badString("verbosity")},
	{name: "web_search_options", projected: true, ok: []string{`{"search_context_size":"low"}`}, bad: badObject("web_search_options")},
	{name: "top_k", projected: true, ok: []string{`40`}, bad: badNumber("top_k")},
	{name: "min_p", projected: true, ok: []string{`0.05`}, bad: badNumber("min_p")},
	{name: "repetition_penalty", projected: true, ok: []string{`1.1`}, bad: badNumber("repetition_penalty")},
	{name: "chat_template_kwargs", projected: true, ok: []string{`{"enable_thinking":false}`}, bad: badObject("chat_template_kwargs")},
	{name: "reasoning", projected: true, ok: []string{`{"effort":"high","exclude":false}`}, bad: badObject("reasoning")},
	{name: "include_reasoning", projected: true, ok: []string{`true`}, bad: badBoolean("include_reasoning")},
	{name: "thinking", projected: true, ok: []string{`{"type":"enabled"}`}, bad: badObject("thinking")},
}

func TestRequestMemberTypeChecks(t *testing.T) {
	for _, mc := range memberCases {
		t.Run(mc.name, func(t *testing.T) {
			for _, raw := range mc.ok {
				r, err := ParseRequest([]byte(bodyFor(mc.name, raw)))
				if err != nil {
					t.Errorf("%s refused: %v", raw, err)
					continue
				}
				got, in := r.Params()[mc.name]
				if mc.projected && (!in || !jsonvalue.Equal(got, tree(t, raw))) {
					t.Errorf("%s: model.params holds %s, want it verbatim", raw, mustJSON(t, got))
				}
				if !mc.projected && in {
					t.Errorf("%s: projected into model.params, but it has its own place", raw)
				}
			}
			for _, b := range mc.bad {
				_, err := ParseRequest([]byte(bodyFor(mc.name, b.raw)))
				var re *wire.RequestError
				if !errors.As(err, &re) {
					t.Errorf("%s: err = %v, want *RequestError", b.raw, err)
					continue
				}
				if re.Field != b.field || !strings.Contains(re.Msg, b.msg) {
					t.Errorf("%s: refused with %q, want field %q and a message containing %q", b.raw, re.Error(), b.field, b.msg)
				}
			}
		})
	}
}

// Every known member has a case above, and only known members do.
func TestMemberCasesCoverRequestMembers(t *testing.T) {
	var known, tested []string
	for _, d := range RequestMembers() {
		known = append(known, d.Name)
	}
	for _, mc := range memberCases {
		tested = append(tested, mc.name)
	}
	slices.Sort(known)
	slices.Sort(tested)
	if !slices.Equal(known, tested) {
		t.Errorf("members with type-check cases differ from RequestMembers:\n cases %v\n known %v", tested, known)
	}
}

// The openai-go module is the source of truth for the OpenAI members:
// every field of ChatCompletionNewParams is known, as an OpenAI member.
func TestRequestMembersCoverOpenAIGo(t *testing.T) {
	origin := map[string]string{}
	for _, d := range RequestMembers() {
		origin[d.Name] = d.Origin
	}
	typ := reflect.TypeFor[openai.ChatCompletionNewParams]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if origin[name] != originOpenAI {
			t.Errorf("openai-go's ChatCompletionNewParams has %q; RequestMembers has origin %q for it", name, origin[name])
		}
	}
}

// In strict mode a top-level member the gateway does not know is refused,
// naming it (when it is a plain identifier) and both switches.
func TestUnknownMemberRefused(t *testing.T) {
	tests := []struct {
		name, body, field string
		want              []string
	}{
		{"plain name", withMember("top_x", `1`), "top_x", []string{"top_x", AllowRequestMembersKey, UnknownMembersKey}},
		{"null value", withMember("vendor_opts", `null`), "vendor_opts", []string{"vendor_opts", AllowRequestMembersKey, UnknownMembersKey}},
		{"not a plain identifier", withMember("x "+secret, `1`), "", []string{"not a plain identifier", AllowRequestMembersKey, UnknownMembersKey}},
		{"escaped name", withMember(`\u0078-tag`, `1`), "x-tag", []string{"x-tag", AllowRequestMembersKey, UnknownMembersKey}},
	}
	strict := (&RequestParser{}).WithStrictMembers(true)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := strict.Parse([]byte(tc.body))
			var re *wire.RequestError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want *RequestError", err)
			}
			if re.Field != tc.field {
				t.Errorf("Field = %q, want %q", re.Field, tc.field)
			}
			for _, w := range tc.want {
				if !strings.Contains(re.Error(), w) {
					t.Errorf("error %q does not mention %q", re.Error(), w)
				}
			}
			noSecret(t, err)
		})
	}
}

func TestCaseCollisionRefused(t *testing.T) {
	msg := func(m string) string { return `{"model":"m","messages":[` + m + `]}` }
	call := func(c string) string {
		return msg(`{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},` + c + `]}`)
	}
	tests := []struct {
		name, body, field, known string
	}{
		{"top level beside", `{"model":"m","messages":[{"role":"user","content":"a"}],"Messages":[{"role":"user","content":"b"}]}`, "", "messages"},
		{"top level instead", `{"MODEL":"m","messages":[{"role":"user","content":"a"}]}`, "", "model"},
		{"top level Kelvin sign", withMember("top_\u212A", `40`), "", "top_k"},
		{"message beside", msg(`{"role":"user","content":"a","Content":"b"}`), "messages[0]", "content"},
		{"message instead", msg(`{"role":"user","content":"a"},{"role":"user","CONTENT":"b"}`), "messages[1]", "content"},
		{"message role", msg(`{"Role":"system","role":"user","content":"a"}`), "messages[0]", "role"},
		{"content part", msg(`{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","Text":"b"}]}`), "messages[0].content[1]", "text"},
		{"tool_calls entry", call(`{"id":"b","type":"function","Function":{"name":"g","arguments":"{}"}}`), "messages[0].tool_calls[1]", "function"},
		{"tool_calls function", call(`{"id":"b","type":"function","function":{"name":"g","arguments":"{}","Arguments":"{\"x\":1}"}}`), "messages[0].tool_calls[1].function", "arguments"},
		{"tools entry", withMember("tools", `[{"type":"function","function":{"name":"f"},"Function":{"name":"g"}}]`), "tools[0]", "function"},
		{"tools function", withMember("tools", `[{"type":"function","function":{"name":"f","Parameters":{}}}]`), "tools[0].function", "parameters"},
		{"stream_options", withMember("stream_options", `{"Include_Usage":true}`), "stream_options", "include_usage"},
		{"response_format", withMember("response_format", `{"type":"text","Type":"json_object"}`), "response_format", "type"},
		{"response_format json_schema", withMember("response_format", `{"type":"json_schema","json_schema":{"name":"n","Schema":{}}}`), "response_format.json_schema", "schema"},
		{"tool_choice", withMember("tool_choice", `{"type":"function","FUNCTION":{"name":"f"}}`), "tool_choice", "function"},
		{"tool_choice function", withMember("tool_choice", `{"type":"function","function":{"name":"f","Name":"g"}}`), "tool_choice.function", "name"},
		{"tool_choice allowed_tools", withMember("tool_choice", `{"type":"allowed_tools","allowed_tools":{"mode":"auto","Tools":[]}}`), "tool_choice.allowed_tools", "tools"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Allowing the colliding name changes nothing.
			for _, p := range []*RequestParser{{}, NewRequestParser([]string{"Messages", "MODEL", "top_\u212A"})} {
				_, err := p.Parse([]byte(tc.body))
				var re *wire.RequestError
				if !errors.As(err, &re) {
					t.Fatalf("err = %v, want *RequestError", err)
				}
				if re.Field != tc.field || !strings.Contains(re.Msg, `differs from "`+tc.known+`" only in letter case`) {
					t.Errorf("refused with %q, want field %q and a collision with %q", re.Error(), tc.field, tc.known)
				}
			}
		})
	}
}

// A transform cannot write an ambiguous message upstream either.
func TestValidateMessagesRefusesCaseCollisions(t *testing.T) {
	tests := []struct {
		target, field string
	}{
		{`[{"role":"user","content":"a","Content":"b"}]`, "$target[0]"},
		{`[{"role":"user","content":[{"type":"text","text":"a","TEXT":"b"}]}]`, "$target[0].content[0]"},
		{`[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","Name":"g","arguments":"{}"}}]}]`, "$target[0].tool_calls[0].function"},
	}
	for _, tc := range tests {
		err := ValidateMessages(tree(t, tc.target))
		var we *wire.WriteBackError
		if !errors.As(err, &we) || we.Field != tc.field || !strings.Contains(we.Msg, "only in letter case") {
			t.Errorf("ValidateMessages(%s) = %v, want a collision at %s", tc.target, err, tc.field)
		}
	}
}

// In strict mode, allowed members are projected and forwarded as every
// unknown member is in judge mode.
func TestAllowedExtraMembers(t *testing.T) {
	p := NewRequestParser([]string{"top_x", "vendor_opts", "n"}).WithStrictMembers(true)
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"top_x":1.50,"vendor_opts":{"a":[1e2,null]},"x_null":null}`
	if _, err := p.Parse([]byte(body)); err == nil || !strings.Contains(err.Error(), "x_null") {
		t.Fatalf("a member not allowed passed: %v", err)
	}
	body = strings.Replace(body, `,"x_null":null`, `,"vendor_null":null`, 1)
	p = NewRequestParser([]string{"top_x", "vendor_opts", "vendor_null"}).WithStrictMembers(true)
	r, err := p.Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := tree(t, `{"top_x":1.50,"vendor_opts":{"a":[1e2,null]},"vendor_null":null}`)
	if got := r.Params(); !jsonvalue.Equal(any(got), want) {
		t.Errorf("Params = %s, want %s (verbatim, null included)", mustJSON(t, got), mustJSON(t, want))
	}
	if up, err := r.UpstreamBody(nil, false); err != nil || string(up) != body {
		t.Errorf("UpstreamBody = %s, %v; want the body as sent", up, err)
	}
	if _, err := (&RequestParser{}).WithStrictMembers(true).Parse([]byte(body)); err == nil {
		t.Error("a strict parser accepted members only an allowance admits")
	}
	judged, err := ParseRequest([]byte(body))
	if err != nil || !jsonvalue.Equal(any(judged.Params()), want) {
		t.Errorf("the zero parser (judge) did not project the unknown members: %v", err)
	}
	// Allowing a known member does not change its treatment.
	if _, err := NewRequestParser([]string{"n"}).Parse([]byte(withMember("n", "2"))); err == nil || !strings.Contains(err.Error(), nMessage) {
		t.Errorf("n: 2 with n allowed: %v, want the n refusal", err)
	}
}

func TestCheckAllowedRequestMember(t *testing.T) {
	tests := []struct {
		name, want string
	}{
		{"top_x", ""},
		{"x-vendor-1", ""},
		{"", "plain identifier"},
		{"has space", "plain identifier"},
		{strings.Repeat("a", 65), "plain identifier"},
		{"temperature", "known request member"},
		{"top_k", "known request member"},
		{"Temperature", `"temperature" only in letter case`},
	}
	for _, tc := range tests {
		err := CheckAllowedRequestMember(tc.name)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckAllowedRequestMember(%q) = %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckAllowedRequestMember(%q) = %v, want %q", tc.name, err, tc.want)
		}
	}
}
