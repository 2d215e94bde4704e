package proxy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// badInputGateway is a gateway whose logs are captured, in front of an
// upstream that counts the requests reaching it.
type badInputGateway struct {
	*gateway
	logs *lockedBuffer
	up   *upstream
	hits *atomic.Int64
}

func newBadInputGateway(t *testing.T) *badInputGateway {
	t.Helper()
	var hits atomic.Int64
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		hits.Add(1)
		jsonReply(completionJSON)(w, r, body)
	})
	logs := &lockedBuffer{}
	gw := newGateway(t, gatewayConfig{upstream: up.URL, log: logs})
	g := &badInputGateway{gateway: gw, logs: logs, up: up, hits: &hits}
	t.Cleanup(func() {
		// net/http recovers a handler panic and logs it; the connection
		// is then cut, which the cases would also see as a transport error.
		if l := logs.String(); strings.Contains(l, "panic") {
			t.Errorf("the gateway panicked:\n%s", l)
		}
	})
	return g
}

// badCase is one malformed request and the 4xx it must get.
type badCase struct {
	name        string
	method      string // default POST
	contentType string // default application/json; "-" sends none
	body        []byte
	status      int
	typ         string
	// fragment must appear in error.message.
	fragment string
	// code, when set, is error.code.
	code string
}

// check sends tc to path and asserts the documented answer: the status, an
// OpenAI error envelope of the given type naming the problem, and no
// upstream call.
func (g *badInputGateway) check(t *testing.T, path string, tc badCase) {
	t.Helper()
	method := tc.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, g.URL+path, bytes.NewReader(tc.body))
	if err != nil {
		t.Fatal(err)
	}
	switch tc.contentType {
	case "":
		req.Header.Set("Content-Type", "application/json")
	case "-":
	default:
		req.Header.Set("Content-Type", tc.contentType)
	}
	before := g.hits.Load()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("transport error (did the handler panic?): %v", err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	body := buf.Bytes()
	if resp.StatusCode >= 500 {
		t.Fatalf("status %d, a server error for bad input: %s", resp.StatusCode, body)
	}
	if resp.StatusCode != tc.status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	e := errorBody(t, body)
	if e.Type != tc.typ {
		t.Errorf("error.type = %q, want %q: %s", e.Type, tc.typ, body)
	}
	if tc.code != "" && e.Code != tc.code {
		t.Errorf("error.code = %q, want %q", e.Code, tc.code)
	}
	if !strings.Contains(e.Message, tc.fragment) {
		t.Errorf("error.message = %q, want it to mention %q", e.Message, tc.fragment)
	}
	if g.hits.Load() != before {
		t.Errorf("a rejected request reached the upstream")
	}
}

// chatJSON builds a one-user-message body with extra top-level members
// (raw JSON, appended after messages).
func chatJSON(content string, extra string) []byte {
	b := `{"model":"gpt-test","messages":[{"role":"user","content":` + content + `}]`
	if extra != "" {
		b += "," + extra
	}
	return []byte(b + "}")
}

// nested is depth levels of arrays around 1.
func nested(depth int) string {
	return strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)
}

func TestBadInputChat(t *testing.T) {
	g := newBadInputGateway(t)
	const (
		bad        = http.StatusBadRequest
		inv        = typeInvalid
		ctxInvalid = enforcement.ReasonContextInvalid
		utf8       = "invalid UTF-8 or a lone surrogate"
	)
	msg := func(m string) []byte { return []byte(`{"model":"gpt-test","messages":[` + m + `]}`) }
	cases := []badCase{
		{name: "empty body", body: nil, status: bad, typ: inv, fragment: "empty"},
		{name: "invalid JSON", body: []byte(`{"model":`), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "not an object", body: []byte(`[{"model":"gpt-test"}]`), status: bad, typ: inv, fragment: "must be a JSON object"},
		{name: "trailing garbage", body: append(chatJSON(`"hi"`, ""), " x"...), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "two objects", body: append(chatJSON(`"hi"`, ""), chatJSON(`"hi"`, "")...), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "NaN", body: chatJSON(`"hi"`, `"temperature":NaN`), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "Infinity", body: chatJSON(`"hi"`, `"temperature":Infinity`), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "-Infinity", body: chatJSON(`"hi"`, `"temperature":-Infinity`), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "single quotes", body: []byte(`{'model':'gpt-test'}`), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "model missing", body: []byte(`{"messages":[{"role":"user","content":"hi"}]}`), status: bad, typ: inv, fragment: "model: is required"},
		{name: "model number", body: []byte(`{"model":7,"messages":[{"role":"user","content":"hi"}]}`), status: bad, typ: inv, fragment: "model: must be a non-empty string"},
		{name: "model empty", body: []byte(`{"model":"","messages":[{"role":"user","content":"hi"}]}`), status: bad, typ: inv, fragment: "model: must be a non-empty string"},
		{name: "model null", body: []byte(`{"model":null,"messages":[{"role":"user","content":"hi"}]}`), status: bad, typ: inv, fragment: "model: must be a non-empty string"},
		{name: "messages missing", body: []byte(`{"model":"gpt-test"}`), status: bad, typ: inv, fragment: "messages: is required"},
		{name: "messages string", body: []byte(`{"model":"gpt-test","messages":"hi"}`), status: bad, typ: inv, fragment: "messages: must be an array, got string"},
		{name: "messages object", body: []byte(`{"model":"gpt-test","messages":{"role":"user"}}`), status: bad, typ: inv, fragment: "messages: must be an array, got object"},
		{name: "messages null", body: []byte(`{"model":"gpt-test","messages":null}`), status: bad, typ: inv, fragment: "messages: must be an array, got null"},
		{name: "messages empty", body: msg(``), status: bad, typ: inv, fragment: "messages: must not be empty"},
		{name: "message number", body: msg(`7`), status: bad, typ: inv, fragment: "messages[0]: must be an object, got number"},
		{name: "role missing", body: msg(`{"content":"hi"}`), status: bad, typ: inv, fragment: "messages[0].role: must be a string"},
		{name: "role number", body: msg(`{"role":7,"content":"hi"}`), status: bad, typ: inv, fragment: "messages[0].role: must be a string, got number"},
		{name: "content number", body: msg(`{"role":"user","content":7}`), status: bad, typ: inv, fragment: "messages[0].content: must be a string, an array of parts or null, got number"},
		{name: "content object", body: msg(`{"role":"user","content":{"text":"hi"}}`), status: bad, typ: inv, fragment: "messages[0].content: must be a string, an array of parts or null, got object"},
		{name: "content part string", body: msg(`{"role":"user","content":["hi"]}`), status: bad, typ: inv, fragment: "messages[0].content[0]: content part must be an object, got string"},
		{name: "tool_calls string", body: msg(`{"role":"assistant","content":null,"tool_calls":"x"}`), status: bad, typ: inv, fragment: "messages[0].tool_calls: must be an array"},
		{name: "tool_calls element number", body: msg(`{"role":"assistant","content":null,"tool_calls":[7]}`), status: bad, typ: inv, fragment: "messages[0].tool_calls[0]: must be an object"},
		{name: "second message bad", body: msg(`{"role":"user","content":"hi"},{"role":false}`), status: bad, typ: inv, fragment: "messages[1].role"},
		{name: "stream string", body: chatJSON(`"hi"`, `"stream":"yes"`), status: bad, typ: inv, fragment: "stream: must be a boolean, got string"},
		{name: "stream number", body: chatJSON(`"hi"`, `"stream":1`), status: bad, typ: inv, fragment: "stream: must be a boolean, got number"},
		{name: "stream_options string", body: chatJSON(`"hi"`, `"stream_options":"x"`), status: bad, typ: inv, fragment: "stream_options: must be an object, got string"},
		{name: "include_usage string", body: chatJSON(`"hi"`, `"stream_options":{"include_usage":"yes"}`), status: bad, typ: inv, fragment: "stream_options.include_usage: must be a boolean"},
		{name: "n string", body: chatJSON(`"hi"`, `"n":"1"`), status: bad, typ: inv, fragment: "n: must be an integer, got string"},
		{name: "n fraction", body: chatJSON(`"hi"`, `"n":1.5`), status: bad, typ: inv, fragment: "n: must be an integer"},
		{name: "n two", body: chatJSON(`"hi"`, `"n":2`), status: bad, typ: inv, fragment: "n > 1 is not supported"},
		{name: "n huge", body: chatJSON(`"hi"`, `"n":123456789012345678901234567890`), status: bad, typ: inv, fragment: "n > 1 is not supported"},
		{name: "n zero", body: chatJSON(`"hi"`, `"n":0`), status: bad, typ: inv, fragment: "n: must be 1"},
		{name: "tools object", body: chatJSON(`"hi"`, `"tools":{}`), status: bad, typ: inv, fragment: "tools: must be an array, got object"},
		{name: "tool not function", body: chatJSON(`"hi"`, `"tools":[{"type":"code_interpreter"}]`), status: bad, typ: inv, fragment: `tools[0].type: must be "function"`},
		{name: "tool without name", body: chatJSON(`"hi"`, `"tools":[{"type":"function","function":{}}]`), status: bad, typ: inv, fragment: "tools[0].function.name: must be a non-empty string"},
		{name: "tool parameters array", body: chatJSON(`"hi"`, `"tools":[{"type":"function","function":{"name":"f","parameters":[]}}]`), status: bad, typ: inv, fragment: "tools[0].function.parameters: must be an object, got array"},
		{name: "legacy functions", body: chatJSON(`"hi"`, `"functions":[]`), status: bad, typ: inv, fragment: "legacy function calling"},
		{name: "duplicate top-level key", body: chatJSON(`"hi"`, `"model":"other"`), status: bad, typ: inv, fragment: "duplicate member"},
		{name: "duplicate key in message", body: msg(`{"role":"user","role":"system","content":"hi"}`), status: bad, typ: inv, fragment: "messages[0]: has an object with a duplicate member"},
		{name: "duplicate escaped key", body: msg(`{"role":"user","\u0072ole":"system","content":"hi"}`), status: bad, typ: inv, fragment: "duplicate member"},
		{name: "duplicate key in a param", body: chatJSON(`"hi"`, `"response_format":{"type":"text","type":"json_object"}`), status: bad, typ: inv, fragment: "response_format: has an object with a duplicate member"},
		{name: "invalid UTF-8 in content", body: chatJSON("\"a\xff\xfeb\"", ""), status: bad, typ: inv, fragment: "messages[0]: contains " + utf8},
		{name: "invalid UTF-8 in model", body: []byte("{\"model\":\"\xc3\",\"messages\":[]}"), status: bad, typ: inv, fragment: "model: contains " + utf8},
		{name: "lone high surrogate", body: chatJSON(`"a\ud800b"`, ""), status: bad, typ: inv, fragment: utf8},
		{name: "lone low surrogate", body: chatJSON(`"\udc00"`, ""), status: bad, typ: inv, fragment: utf8},
		{name: "lone surrogate in a param", body: chatJSON(`"hi"`, `"stop":["\ud800"]`), status: bad, typ: inv, fragment: utf8},
		// Bodies within the request limit whose context exceeds the
		// engine's bounds (§12.3): the client's input, so a 400.
		{name: "5 MiB content", body: chatJSON(`"`+strings.Repeat("y", 5<<20)+`"`, ""), status: bad, typ: typeHostError, code: ctxInvalid, fragment: "value too large: compact JSON exceeds 5242880 bytes"},
		{name: "200-deep content part", body: chatJSON(`[{"type":"text","text":"hi","x":`+nested(200)+`}]`, ""), status: bad, typ: typeHostError, code: ctxInvalid, fragment: "exceeds 128 levels"},
		{name: "too deep", body: chatJSON(`"hi"`, `"metadata":`+nested(20000)), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "10 MiB + 1", body: chatJSON(`"`+strings.Repeat("x", 10<<20+1-len(chatJSON(`""`, "")))+`"`, ""), status: http.StatusRequestEntityTooLarge, typ: inv, fragment: "exceeds 10485760 bytes"},
		{name: "text/plain", contentType: "text/plain", body: chatJSON(`"hi"`, ""), status: http.StatusUnsupportedMediaType, typ: inv, fragment: "Content-Type must be application/json"},
		{name: "form", contentType: "application/x-www-form-urlencoded", body: []byte("model=gpt-test"), status: http.StatusUnsupportedMediaType, typ: inv, fragment: "Content-Type must be application/json"},
		{name: "malformed Content-Type", contentType: "application/json; =", body: chatJSON(`"hi"`, ""), status: http.StatusUnsupportedMediaType, typ: inv, fragment: "Content-Type must be application/json"},
		{name: "GET", method: http.MethodGet, status: http.StatusMethodNotAllowed, typ: inv, fragment: "GET is not allowed on /v1/chat/completions"},
		{name: "PUT", method: http.MethodPut, body: chatJSON(`"hi"`, ""), status: http.StatusMethodNotAllowed, typ: inv, fragment: "PUT is not allowed"},
	}
	for _, tc := range cases {
		if tc.status == http.StatusRequestEntityTooLarge && len(tc.body) != 10<<20+1 {
			t.Fatalf("the over-limit body is %d bytes", len(tc.body))
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { g.check(t, "/v1/chat/completions", tc) })
	}
	// Only the two contexts over the engine's bounds were emitted, and
	// recorded as the fail-closed denies they are.
	var denies int
	for _, r := range g.records.all() {
		switch {
		case r.InterceptionPoint == enforcement.PreModelCall:
			t.Fatalf("a rejected request reached pre_model_call")
		case r.Verdict.Decision == enforcement.DecisionDeny:
			if r.Verdict.Reason != enforcement.ReasonContextInvalid {
				t.Fatalf("deny %q recorded for a rejected request", r.Verdict.Reason)
			}
			denies++
		}
	}
	if denies != 2 {
		t.Fatalf("%d context_invalid denies recorded, want 2", denies)
	}
}

// Valid but unusual requests are accepted and reach the upstream byte for
// byte: the gateway never re-encodes what it did not change.
func TestUnusualInputPassesByteExact(t *testing.T) {
	g := newBadInputGateway(t)
	// The content appears twice in the input context (input and target),
	// so 2 MiB stays within the default 5 MiB context bound.
	huge := strings.Repeat("y", 2<<20)
	big := `{"id":123456789012345678901234567890,"f":1.000000000000000000001,"e":1e400,"neg":-0}`
	cases := []struct {
		name string
		body []byte
	}{
		{"2 MiB content", chatJSON(`"`+huge+`"`, "")},
		// Every member reaches the context, so nesting stays within its
		// 128 levels.
		{"100-deep nesting in a param", chatJSON(`"hi"`, `"response_format":{"type":"json_schema","json_schema":{"name":"deep","schema":{"deep":`+nested(100)+`}}}`)},
		{"100-deep content part", chatJSON(`[{"type":"text","text":"hi","x":`+nested(100)+`}]`, "")},
		{"big integers in tool arguments", msgsJSON(
			`{"role":"user","content":"hi"}`,
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":`+jsonString(big)+`}}]}`,
			`{"role":"tool","tool_call_id":"call_1","content":"ok"}`,
			`{"role":"user","content":"again"}`)},
		{"big numbers in params", chatJSON(`"hi"`, `"seed":123456789012345678901234567890,"temperature":0.10000000000000000000001,"max_tokens":1e2`)},
		{"escaped surrogate pair", chatJSON(`"\ud83d\ude00 \u00e9\u0000"`, "")},
		{"whitespace everywhere", []byte(" \n\t{ \"model\" : \"gpt-test\" ,\r\n \"messages\" : [ { \"role\" : \"user\" , \"content\" : \"hi\" } ] } \n")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(g.up.received())
			req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json; charset=utf-8")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			out.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %.300s", resp.StatusCode, out.Bytes())
			}
			if out.String() != asReleased(completionJSON, out.String()) {
				t.Fatalf("the client got %.300s, not the upstream's bytes", out.Bytes())
			}
			got := g.up.received()
			if len(got) != before+1 || !bytes.Equal(got[before], tc.body) {
				t.Fatalf("the upstream did not receive the client's bytes unchanged")
			}
		})
	}
}

// A tool call whose arguments hold big integers reaches the client byte for
// byte, through JSON and through a stream, when the identity provider can
// represent them; under jcs-sha256 (which cannot, spec §4.4) the call fails
// closed as a bad upstream answer and nothing of it is released.
func TestBigIntegerToolArguments(t *testing.T) {
	args := `{"id":123456789012345678901234567890,"n":9007199254740993,"f":1.10000000000000000001}`
	resp := `{"id":"chatcmpl-b","object":"chat.completion","created":1700000000,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"f","arguments":` + jsonString(args) + `}}]},"finish_reason":"tool_calls"}]}`
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if bytes.Contains(body, []byte(`"stream":true`)) {
			sseReply(
				chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+jsonString(args[:20])+`}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+jsonString(args[20:])+`}}]}`, ""),
				chunk(`{}`, "tool_calls"),
				"[DONE]",
			)(w, r, body)
			return
		}
		jsonReply(resp)(w, r, body)
	})

	t.Run("jcs-sha256 fails closed", func(t *testing.T) {
		gw := newGateway(t, gatewayConfig{upstream: up.URL})
		for _, stream := range []bool{false, true} {
			status, _, body := gw.post(t, chatBody("hi", stream), nil)
			e := errorBody(t, body)
			if status != http.StatusBadGateway || e.Type != typeHostError || e.Code != enforcement.ReasonContextInvalid ||
				!strings.Contains(e.Message, "$.response.tool_calls[0].args.id") {
				t.Fatalf("stream %v: status %d: %s", stream, status, body)
			}
			noContent(t, body, "123456789012345678901234567890", "call_a")
		}
	})

	t.Run("null identity keeps the bytes", func(t *testing.T) {
		var log ctxLog
		null := enforcement.NullIdentity()
		gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: log.wrap(nil), identity: &null})
		status, _, body := gw.post(t, chatBody("hi", false), nil)
		if status != http.StatusOK || string(body) != asReleased(resp, string(body)) {
			t.Fatalf("JSON: status %d, body changed: %s", status, body)
		}
		status, _, body = gw.post(t, chatBody("hi", true), nil)
		if status != http.StatusOK {
			t.Fatalf("stream: status %d: %s", status, body)
		}
		var joined strings.Builder
		for _, b := range sseBlocks(string(body)) {
			for _, frag := range []string{args[:20], args[20:]} {
				if strings.Contains(b, jsonString(frag)) {
					joined.WriteString(frag)
				}
			}
		}
		if joined.String() != args {
			t.Fatalf("streamed arguments = %q, want %q", joined.String(), args)
		}
		// The policy saw the exact numbers, not float64 roundings.
		posts := log.at(enforcement.PostModelCall)
		if len(posts) != 2 {
			t.Fatalf("%d post_model_call contexts, want 2", len(posts))
		}
		for _, c := range posts {
			calls, _ := c.Target().(map[string]any)["tool_calls"].([]any)
			if len(calls) != 1 {
				t.Fatalf("target tool_calls = %v", calls)
			}
			a, _ := calls[0].(map[string]any)["args"].(map[string]any)
			if a["id"] != json.Number("123456789012345678901234567890") || a["n"] != json.Number("9007199254740993") {
				t.Fatalf("projected args lost precision: %v", a)
			}
		}
	})
}

// msgsJSON is a request body with the given raw messages.
func msgsJSON(msgs ...string) []byte {
	return []byte(`{"model":"gpt-test","messages":[` + strings.Join(msgs, ",") + `]}`)
}

// jsonString is s as a JSON string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestBadInputEmit(t *testing.T) {
	g := newBadInputGateway(t)
	const (
		bad   = http.StatusBadRequest
		inv   = typeInvalid
		agent = `"agent":{"id":"a","framework":"f"},"session":{"id":"s-1"}`
	)
	input := func(extra string) []byte {
		return []byte(`{"interception_point":"input",` + agent + `,"input":{"content":"hi","role":"user"}` + extra + `}`)
	}
	cases := []badCase{
		{name: "empty body", status: bad, typ: inv, fragment: "empty"},
		{name: "invalid JSON", body: []byte(`{"interception_point":`), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "trailing garbage", body: append(input(""), "}"...), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "NaN", body: input(`,"x":NaN`), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "array", body: []byte(`[` + string(input("")) + `]`), status: bad, typ: inv, fragment: "must be a JSON object"},
		{name: "point number", body: []byte(`{"interception_point":7,` + agent + `}`), status: bad, typ: inv, fragment: "interception_point must be one of"},
		{name: "point missing", body: []byte(`{` + agent + `}`), status: bad, typ: inv, fragment: "interception_point must be one of"},
		{name: "agent string", body: []byte(`{"interception_point":"input","agent":"a","session":{"id":"s-1"}}`), status: bad, typ: inv, fragment: "agent must be an object"},
		{name: "agent id number", body: []byte(`{"interception_point":"input","agent":{"id":7,"framework":"f"},"session":{"id":"s-1"}}`), status: bad, typ: inv, fragment: "agent must be an object with non-empty string id"},
		{name: "session string", body: []byte(`{"interception_point":"input","agent":{"id":"a","framework":"f"},"session":"s-1"}`), status: bad, typ: inv, fragment: "session"},
		{name: "session id number", body: []byte(`{"interception_point":"input","agent":{"id":"a","framework":"f"},"session":{"id":7}}`), status: bad, typ: inv, fragment: "session"},
		{name: "input missing", body: []byte(`{"interception_point":"input",` + agent + `}`), status: bad, typ: inv, fragment: "input"},
		{name: "gateway-owned sequence", body: input(`,"sequence":1`), status: bad, typ: inv, fragment: "sequence is set by the gateway"},
		{name: "duplicate key", body: []byte(`{"interception_point":"input","interception_point":"agent_shutdown",` + agent + `,"input":{"content":"hi","role":"user"}}`), status: bad, typ: inv, fragment: "duplicate member"},
		{name: "invalid UTF-8", body: input(",\"x\":\"\xff\""), status: bad, typ: inv, fragment: "invalid UTF-8 or a lone surrogate"},
		{name: "lone surrogate", body: input(`,"x":"\ud800"`), status: bad, typ: inv, fragment: "invalid UTF-8 or a lone surrogate"},
		{name: "too deep", body: input(`,"x":` + nested(20000)), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "10 MiB + 1", body: input(`,"x":"` + strings.Repeat("x", 10<<20+1-len(input(`,"x":""`))) + `"`), status: http.StatusRequestEntityTooLarge, typ: inv, fragment: "exceeds 10485760 bytes"},
		{name: "text/plain", contentType: "text/plain", body: input(""), status: http.StatusUnsupportedMediaType, typ: inv, fragment: "Content-Type must be application/json"},
		{name: "GET", method: http.MethodGet, status: http.StatusMethodNotAllowed, typ: inv, fragment: "GET is not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { g.check(t, "/v1/agent-hooks/emit", tc) })
	}
	if n := len(g.records.all()); n != 0 {
		t.Fatalf("rejected emits produced %d records", n)
	}
}

func TestBadInputEndSession(t *testing.T) {
	g := newBadInputGateway(t)
	if status, _, body := g.post(t, chatBody("hi", false), map[string]string{HeaderSession: "end-1"}); status != http.StatusOK {
		t.Fatalf("opening the session: %d %s", status, body)
	}
	const (
		bad  = http.StatusBadRequest
		inv  = typeInvalid
		path = "/v1/agent-hooks/sessions/end-1/end"
	)
	cases := []badCase{
		{name: "invalid JSON", body: []byte(`{"reason":`), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "array", body: []byte(`["completed"]`), status: bad, typ: inv, fragment: "must be a JSON object"},
		{name: "reason number", body: []byte(`{"reason":1}`), status: bad, typ: inv, fragment: "reason must be a string"},
		{name: "reason unknown", body: []byte(`{"reason":"done"}`), status: bad, typ: inv, fragment: "reason must be completed, error or cancelled"},
		{name: "reason empty", body: []byte(`{"reason":""}`), status: bad, typ: inv, fragment: "reason must be completed, error or cancelled"},
		{name: "empty object key", body: []byte(`{"":1,"":2}`), status: bad, typ: inv, fragment: "duplicate member"},
		{name: "duplicate key", body: []byte(`{"reason":"completed","reason":"error"}`), status: bad, typ: inv, fragment: "duplicate member"},
		{name: "lone surrogate", body: []byte(`{"reason":"\ud800"}`), status: bad, typ: inv, fragment: "invalid UTF-8 or a lone surrogate"},
		{name: "trailing garbage", body: []byte(`{"reason":"completed"} x`), status: bad, typ: inv, fragment: "not valid JSON"},
		{name: "over 4 KiB", body: []byte(`{"reason":"completed","x":"` + strings.Repeat("x", 4<<10) + `"}`), status: http.StatusRequestEntityTooLarge, typ: inv, fragment: "exceeds 4096 bytes"},
		{name: "text/plain", contentType: "text/plain", body: []byte(`{"reason":"completed"}`), status: http.StatusUnsupportedMediaType, typ: inv, fragment: "Content-Type must be application/json"},
		{name: "GET", method: http.MethodGet, status: http.StatusMethodNotAllowed, typ: inv, fragment: "GET is not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { g.check(t, path, tc) })
	}
	// Bad ids in the path, and a well-formed unknown one.
	for _, id := range []string{"has%20space", strings.Repeat("x", 1000)} {
		g.check(t, "/v1/agent-hooks/sessions/"+id+"/end", badCase{status: bad, typ: inv, fragment: "invalid session"})
	}
	g.check(t, "/v1/agent-hooks/sessions/%ff/end", badCase{status: http.StatusNotFound, typ: typeSession, fragment: "no such session"})
	// None of that ended the session.
	if status, body := g.endSession(t, "end-1", "", nil); status != http.StatusOK {
		t.Fatalf("ending the session after the bad requests: %d %s", status, body)
	}
}
