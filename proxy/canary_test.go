package proxy

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// canaryCase is one request through an error path (or a release) of the
// gateway, with the canary planted in what the client, the model or a
// remote service controls.
type canaryCase struct {
	name   string
	method string // default POST
	path   string // default /v1/chat/completions
	body   string
	header map[string]string
	// reply is the upstream's answer; nil is a plain completion quoting
	// the canary.
	reply func(http.ResponseWriter, *http.Request)
	// status and code are what the client must get: the case must reach
	// the path it is about. code is the error envelope's code ("" for a
	// 200).
	status int
	code   string
	// released marks an answer that legitimately carries payload: a
	// chat answer the verdict released, the emit API's enforced target.
	released bool
	// namesMember marks the one accepted echo: the client's own 400 about
	// a top-level request member it sent, which names the member so the
	// operator can allow it.
	namesMember bool
}

// canarySession is a valid session id holding the canary. A session id is
// the session's identity, not payload: records, the error envelope's
// session_id and the Agent-Hooks-Session header carry it by design (spec
// §10.3), and nothing else may.
const canarySession = "sess-" + canary

// withoutSessionID drops the members that carry canarySession by design.
func withoutSessionID(s string) string {
	return sessionIDMember.ReplaceAllString(s, `"session_id":"…"`)
}

// sessionIDMember is a session_id member naming canarySession's trail, with
// the incarnation the memory store appends or without.
var sessionIDMember = regexp.MustCompile(`"session_id":"` + canarySession + `(~[0-9a-f]{12})?"`)

// canaryHeaders are sent with every chat request: header values are
// payload too.
var canaryHeaders = map[string]string{
	HeaderAgent:       "agent-" + canary,
	HeaderTurnPoints:  canary,
	"traceparent":     "00-" + canary + "-" + canary + "-01",
	"X-Request-Notes": canary,
}

// TestCanaryNeverLeaks drives every error path of the gateway, the engine
// and every interceptor type with the canary in every payload position, and
// checks that no error body, response header, record, log line or metric
// label carries it. The only exceptions are answers that release payload by
// design (a verdicted chat answer, the emit API's target) and the client's
// own 400 naming a top-level member it sent, which must name it.
func TestCanaryNeverLeaks(t *testing.T) {
	rig := newCanaryRig(t)
	plain := jsonReplyOf(http.StatusOK, completion(`{"role":"assistant","content":"reply `+canary+`"}`, "stop"))
	deep := deepUnderKeys(140, "1")
	big := `{"` + canary + `k":{"` + canary + `k2":9007199254740993}}`
	msgs := `[{"role":"user","content":"hello ` + canary + `"}]`
	withTools := func(model, tools string) string {
		return `{"model":"` + model + `","messages":` + msgs + `,"tools":` + tools + `}`
	}
	cases := []canaryCase{
		// Releases: the payload reaches the client, and only the client.
		{name: "released answer", body: userChat("pass-"+canary, canary), status: 200, released: true},
		{name: "redacted answer", body: userChat("redact-"+canary, canary+"@example.com"), status: 200, released: true},
		{name: "released stream", body: `{"model":"pass-` + canary + `","stream":true,"messages":` + msgs + `}`, status: 200, released: true,
			reply: sseReplyOf(chunkOf(`{"role":"assistant","content":"`+canary+`"}`, "null"), chunkOf(`{}`, `"stop"`), "[DONE]")},

		// The request.
		{name: "invalid JSON", body: `{"model":"pass-` + canary + `","messages":[{"role":"user","content":"` + canary, status: 400, code: "invalid_request"},
		{name: "content of the wrong type", body: `{"model":"pass-x","messages":[{"role":"user","content":{"` + canary + `":"` + canary + `"}}]}`, status: 400, code: "invalid_request"},
		{name: "role of the wrong type", body: `{"model":"pass-x","messages":[{"role":{"` + canary + `":"` + canary + `"},"content":"x"}]}`, status: 400, code: "invalid_request"},
		{name: "model of the wrong type", body: `{"model":{"` + canary + `":1},"messages":` + msgs + `}`, status: 400, code: "invalid_request"},
		{name: "message not an object", body: `{"model":"pass-x","messages":["` + canary + `"]}`, status: 400, code: "invalid_request"},
		{name: "tool of the wrong type", body: withTools("pass-x", `[{"type":"function","function":{"name":5,"`+canary+`":1}}]`), status: 400, code: "invalid_request"},
		{name: "duplicate member", body: withTools("pass-x", `[{"type":"function","function":{"name":"t","parameters":{"`+canary+`":1,"`+canary+`":2}}}]`), status: 400, code: "invalid_request"},
		{name: "duplicate top-level member", body: `{"model":"pass-x","messages":` + msgs + `,"` + canary + `":1,"` + canary + `":2}`, status: 400, code: "invalid_request"},
		// Refused (naming the member) where the wire is closed, else
		// carried into model.params; either way nowhere else.
		{name: "unknown top-level member", body: `{"model":"pass-x","messages":` + msgs + `,"` + canary + `":{"` + canary + `":"` + canary + `"}}`, namesMember: true,
			reply: jsonReplyOf(http.StatusOK, completion(`{"role":"assistant","content":"ok"}`, "stop"))},
		{name: "integer beyond 2^53 in a message member", body: `{"model":"pass-x","messages":[{"role":"user","content":"x","` + canary + `":9007199254740993}]}`, status: 400, code: "host_error:context_invalid"},
		{name: "nesting in a parameter", body: `{"model":"pass-x","messages":` + msgs + `,"response_format":` + deep + `}`, status: 400, code: "host_error:context_invalid"},
		{name: "nesting in a tool schema", body: withTools("pass-x", `[{"type":"function","function":{"name":"t","parameters":`+deep+`}}]`), status: 400, code: "host_error:context_invalid"},
		{name: "body over max_request_bytes", body: userChat("pass-x", strings.Repeat(canary, 40000)), status: 413, code: "request_too_large"},
		{name: "integer beyond 2^53 in a content part", body: `{"model":"pass-x","messages":[{"role":"user","content":[{"type":"text","text":"` + canary + `","` + canary + `":` + big + `}]}]}`, status: 400, code: "host_error:context_invalid"},
		{name: "integer beyond 2^53 in a history tool call", body: `{"model":"pass-x","messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"` + canary + `","arguments":"{}"},"` + canary + `":` + big + `}]},{"role":"tool","tool_call_id":"call_1","content":"` + canary + `"},{"role":"user","content":"y"}]}`, status: 400, code: "host_error:context_invalid"},
		{name: "no upstream for the model", body: userChat(canary, "x"), status: 404, code: "model_not_found"},
		{name: "upstream unreachable", body: userChat("az-"+canary, "x"), status: 502, code: "upstream_unavailable"},
		{name: "session id in its places only", body: userChat("deny-"+canary, canary), header: map[string]string{HeaderSession: canarySession}, status: 403, code: "policy:denied"},
		{name: "blocked session", body: userChat("pass-x", canary), header: map[string]string{HeaderSession: canarySession}, status: 403, code: "session_blocked"},
		{name: "invalid session header", body: userChat("pass-x", "x"), header: map[string]string{HeaderSession: "s " + canary}, status: 400, code: "invalid_session_id"},

		// A deny of every interceptor type, and their failures.
		{name: "deny type", body: userChat("deny-"+canary, canary), status: 403, code: "policy:denied"},
		{name: "regex deny", body: userChat("regex-x", canary), status: 403, code: "policy:pattern_match"},
		{name: "cel deny", body: userChat("cel-"+canary, canary), status: 403, code: "policy:cel_denied"},
		{name: "cel failure", body: userChat("celfail-"+canary, canary), status: 503, code: "host_error:interceptor_failed"},
		{name: "transform that cannot be written back", body: userChat("celshape-"+canary, canary), status: 503, code: "host_error:transform_invalid"},
		{name: "transform beyond 2^53", body: userChat("celbig-"+canary, canary), status: 503, code: "host_error:context_invalid"},
		{name: "tools: name not allowed", body: userChat("tools-x", canary), status: 403, code: "policy:tool_not_allowed",
			reply: jsonReplyOf(200, completion(toolCallMessage("x_"+canary, `{"city":"`+canary+`"}`), "tool_calls"))},
		{name: "tools: argument not listed", body: userChat("tools-x", canary), status: 403, code: "policy:tool_argument_invalid",
			reply: jsonReplyOf(200, completion(toolCallMessage("get_weather", `{"city":"Oslo","`+canary+`":"`+canary+`"}`), "tool_calls"))},
		{name: "tools: argument violates its constraint", body: userChat("tools-x", canary), status: 403, code: "policy:tool_argument_invalid",
			reply: jsonReplyOf(200, completion(toolCallMessage("get_weather", `{"city":{"`+canary+`":1}}`), "tool_calls"))},
		{name: "egress deny", body: userChat("egress-x", "see https://"+canary+".evil.test/"+canary+"?"+canary+"=1"), status: 403, code: "policy:egress_denied"},
		{name: "egress deny of a scheme", body: userChat("egress-x", "see "+canary+"://example.com/"), status: 403, code: "policy:egress_denied"},
		{name: "budget allows", body: userChat("budget-"+canary, canary), status: 200, released: true},
		{name: "budget exhausted", body: userChat("budget-"+canary, canary), status: 403, code: "policy:budget_exhausted"},
		{name: "http: timeout", body: userChat("hang-"+canary, canary), status: 504, code: "host_error:interceptor_timeout"},
		{name: "http: garbage", body: userChat("garbage-"+canary, canary), status: 503},
		{name: "http: echoes the context", body: userChat("echo-"+canary, canary), status: 503, code: "host_error:verdict_invalid"},
		{name: "http: reflects content into the verdict", body: userChat("reflect-"+canary, canary), status: 503, code: "host_error:verdict_invalid"},
		{name: "http: 500 quoting content", body: userChat("status-"+canary, canary), status: 503, code: "host_error:interceptor_failed"},
		{name: "opa: reflects content into the result", body: userChat("opa-"+canary, canary), status: 503, code: "host_error:verdict_invalid"},

		// The upstream's answer.
		{name: "upstream 4xx quoting content", body: userChat("pass-x", "x"), status: 429, code: "upstream_status_429",
			reply: jsonReplyOf(429, `{"error":{"message":"`+canary+`","type":"`+canary+`","code":"`+canary+`"}}`)},
		{name: "upstream 5xx quoting content", body: userChat("pass-x", "x"), status: 502, code: "upstream_status_500",
			reply: jsonReplyOf(500, `{"error":{"message":"`+canary+`"}}`)},
		{name: "upstream invalid JSON", body: userChat("pass-x", "x"), status: 502, code: "upstream_response_invalid",
			reply: jsonReplyOf(200, `{"id":"`+canary+`","choices":[{"message":{"content":"`+canary)},
		{name: "upstream wrong type", body: userChat("pass-x", "x"), status: 502, code: "upstream_response_invalid",
			reply: jsonReplyOf(200, completion(`{"role":"assistant","content":{"`+canary+`":"`+canary+`"}}`, "stop"))},
		{name: "upstream duplicate member", body: userChat("pass-x", "x"), status: 502, code: "upstream_response_invalid",
			reply: jsonReplyOf(200, completion(`{"role":"assistant","content":"x","`+canary+`":1,"`+canary+`":2}`, "stop"))},
		// Released, or refused where the wire is closed.
		{name: "upstream unknown member", body: userChat("pass-x", "x"), released: true,
			reply: jsonReplyOf(200, `{"id":"c","object":"chat.completion","`+canary+`":{"`+canary+`":1},"choices":[{"index":0,"message":{"role":"assistant","content":"x"},"finish_reason":"stop"}]}`)},
		{name: "upstream tool arguments beyond 2^53", body: userChat("pass-x", "x"), status: 502, code: "host_error:context_invalid",
			reply: jsonReplyOf(200, completion(toolCallMessage(canary, big), "tool_calls"))},
		{name: "upstream tool arguments too deep", body: userChat("pass-x", "x"), status: 502, code: "host_error:context_invalid",
			reply: jsonReplyOf(200, completion(toolCallMessage(canary, deep), "tool_calls"))},
		{name: "upstream streams to a non-streaming request", body: userChat("pass-x", "x"), status: 502, code: "upstream_unexpected_stream",
			reply: sseReplyOf(chunkOf(`{"content":"`+canary+`"}`, "null"), "[DONE]")},
		{name: "upstream stream: invalid chunk", body: `{"model":"pass-x","stream":true,"messages":` + msgs + `}`, status: 502, code: "upstream_response_invalid",
			reply: sseReplyOf(chunkOf(`{"role":"assistant","content":"x"}`, "null"), `{"id":"`+canary+`","choices":[{"delta":{"content":"`+canary)},
		{name: "upstream stream: error event", body: `{"model":"pass-x","stream":true,"messages":` + msgs + `}`, status: 502, code: "upstream_stream_error",
			reply: sseReplyOf(`{"error":{"message":"` + canary + `","type":"` + canary + `"}}`)},
		{name: "upstream stream: duplicate member", body: `{"model":"pass-x","stream":true,"messages":` + msgs + `}`, status: 502, code: "upstream_response_invalid",
			reply: sseReplyOf(chunkOf(`{"role":"assistant","content":"x","`+canary+`":1,"`+canary+`":2}`, "null"), chunkOf(`{}`, `"stop"`), "[DONE]")},
		{name: "upstream stream: unknown member", body: `{"model":"pass-x","stream":true,"messages":` + msgs + `}`, released: true,
			reply: sseReplyOf(chunkOf(`{"role":"assistant","content":"x","`+canary+`":{"`+canary+`":1}}`, "null"), chunkOf(`{}`, `"stop"`), "[DONE]")},
		{name: "upstream stream: tool arguments beyond 2^53", body: `{"model":"pass-x","stream":true,"messages":` + msgs + `}`, status: 502, code: "host_error:context_invalid",
			reply: sseReplyOf(chunkOf(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"`+canary+`","arguments":`+jsonString(big)+`}}]}`, "null"), chunkOf(`{}`, `"tool_calls"`), "[DONE]")},
		{name: "upstream stream: cut", body: `{"model":"pass-x","stream":true,"messages":` + msgs + `}`, status: 502, code: "upstream_stream_incomplete",
			reply: sseReplyOf(chunkOf(`{"role":"assistant","content":"`+canary+`"}`, "null"))},
		{name: "upstream stream: tool not allowed", body: `{"model":"tools-x","stream":true,"messages":` + msgs + `}`, status: 403, code: "policy:tool_not_allowed",
			reply: sseReplyOf(chunkOf(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"x_`+canary+`","arguments":"{}"}}]}`, "null"), chunkOf(`{}`, `"tool_calls"`), "[DONE]")},
	}
	cases = append(cases, emitCases()...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { rig.check(t, tc, plain) })
	}

	// Records are flushed when the assembly closes; the metrics page is
	// read before.
	metricsPage := rig.metricsText(t)
	if lines := canaryLines(metricsPage); len(lines) > 0 {
		t.Errorf("metrics carry the canary:\n%s", strings.Join(lines, "\n"))
	}
	rig.gw.Close()
	rig.closeAssembly(t)
	trail := withoutSessionID(rig.records.String())
	if lines := canaryLines(trail); len(lines) > 0 {
		t.Errorf("records carry the canary:\n%s", strings.Join(lines, "\n"))
	}
	// The trail must hold the denies above, or the check proved nothing.
	for _, reason := range []string{
		"host_error:context_invalid", "host_error:transform_invalid", "host_error:interceptor_failed",
		"host_error:interceptor_timeout", "host_error:verdict_invalid", "policy:tool_not_allowed",
		"policy:tool_argument_invalid", "policy:egress_denied", "policy:budget_exhausted", "policy:redacted",
	} {
		if !strings.Contains(trail, `"`+reason+`"`) {
			t.Errorf("no record with reason %s: the case meant to produce one did not", reason)
		}
	}
	if lines := canaryLines(rig.logs.String()); len(lines) > 0 {
		t.Errorf("logs carry the canary:\n%s", strings.Join(lines, "\n"))
	}
}

// check runs one case and searches what it produced for the canary.
func (rig *canaryRig) check(t *testing.T, tc canaryCase, plain func(http.ResponseWriter, *http.Request)) {
	t.Helper()
	reply := tc.reply
	if reply == nil {
		reply = plain
	}
	rig.setReply(reply)
	method, path := tc.method, tc.path
	if method == "" {
		method = http.MethodPost
	}
	if path == "" {
		path = "/v1/chat/completions"
	}
	header := tc.header
	if path == "/v1/chat/completions" {
		header = mergeHeaders(canaryHeaders, tc.header)
	}
	logsBefore := len(rig.logs.String())
	a := rig.do(t, method, path, tc.body, header)
	if tc.status != 0 && a.status != tc.status {
		t.Errorf("status %d, want %d: %.300s", a.status, tc.status, a.body)
	}
	if tc.code != "" && !strings.Contains(a.body, `"code":"`+tc.code+`"`) {
		t.Errorf("code: want %s in %.300s", tc.code, a.body)
	}
	for k, vs := range a.header {
		for _, v := range vs {
			if containsCanary(k+": "+v) && !(k == HeaderSession && v == canarySession) {
				t.Errorf("response header carries the canary: %s: %s", k, v)
			}
		}
	}
	switch body := withoutSessionID(rig.unreleased(t, tc, a)); {
	case tc.namesMember && a.status == http.StatusBadRequest:
		if !containsCanary(body) {
			t.Errorf("the 400 about a top-level member must name it: %s", body)
		}
	case containsCanary(body):
		t.Errorf("answer carries the canary: %s", body)
	}
	if lines := canaryLines(rig.logs.String()[logsBefore:]); len(lines) > 0 {
		t.Errorf("logs carry the canary:\n%s", strings.Join(lines, "\n"))
	}
}

// unreleased is the part of an answer that must be payload-free: all of it,
// except the payload a 200 releases by design.
func (rig *canaryRig) unreleased(t *testing.T, tc canaryCase, a answer) string {
	t.Helper()
	if !tc.released || a.status != http.StatusOK {
		return a.body
	}
	if tc.path != emitPath {
		return "" // a chat answer: the model's (verdicted) reply
	}
	return emitAnswerWithoutTarget(t, a.body)
}

func mergeHeaders(base, extra map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(extra))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}
