package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// A managed session spans requests: one agent_startup, the turn points of
// every request on one gapless sequence, and agent_shutdown only when the
// session is ended.
func TestManagedSessionLifecycle(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	var log ctxLog
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: log.wrap(nil)})
	hdr := map[string]string{HeaderSession: "s-1", HeaderAgent: "my-agent"}

	for i := range 5 {
		status, h, body := gw.post(t, chatBody(fmt.Sprintf("question %d", i), false), hdr)
		if status != http.StatusOK {
			t.Fatalf("request %d: status %d: %s", i, status, body)
		}
		if h.Get(HeaderSession) != "s-1" {
			t.Errorf("request %d: %s = %q", i, HeaderSession, h.Get(HeaderSession))
		}
	}
	recs := gw.records.all()
	if len(of(recs, "s-1")) != len(recs) {
		t.Fatalf("records of other sessions: %v", recs)
	}
	want := []enforcement.Point{enforcement.AgentStartup}
	for range 5 {
		want = append(want, enforcement.Input, enforcement.PreModelCall, enforcement.PostModelCall, enforcement.Output)
	}
	equalPoints(t, pointsOf(recs), want...)
	for i, r := range recs {
		if r.Sequence != int64(i) {
			t.Fatalf("record %d (%s) has sequence %d; want strictly increasing from 0", i, r.InterceptionPoint, r.Sequence)
		}
	}
	// The contexts and records carry the session's trail id: the client's
	// id and the incarnation the memory store minted at the claim.
	trail := oneTrail{name: "s-1"}
	for _, c := range log.at("") {
		if agentID(c) != "my-agent" || !trail.is(t, c.SessionID()) {
			t.Fatalf("%s context has agent %q session %q", c.Point(), agentID(c), c.SessionID())
		}
	}
	for _, r := range recs {
		if r.SessionID != trail.id {
			t.Fatalf("record %d in session %q, want the contexts' %q", r.Sequence, r.SessionID, trail.id)
		}
	}

	// End: 200 with the shutdown record, which carries the next sequence.
	status, body := gw.endSession(t, "s-1", `{"reason":"completed"}`, map[string]string{HeaderAgent: "my-agent"})
	if status != http.StatusOK {
		t.Fatalf("end: status %d: %s", status, body)
	}
	var er endResponse
	if err := json.Unmarshal(body, &er); err != nil {
		t.Fatalf("end body %s: %v", body, err)
	}
	if !er.Ended || er.SessionID != "s-1" || er.Reason != "completed" ||
		er.Record.InterceptionPoint != "agent_shutdown" || er.Record.Sequence != 21 || er.Record.SessionID != trail.id {
		t.Fatalf("end body = %s", body)
	}
	recs = gw.records.all()
	if len(recs) != 22 || recs[21].InterceptionPoint != enforcement.AgentShutdown || recs[21].Sequence != 21 {
		t.Fatalf("after end: %d records, last %+v", len(recs), recs[len(recs)-1])
	}
	if got := log.shutdownReasons("s-1"); len(got) != 1 || got[0] != "completed" {
		t.Fatalf("shutdown reasons = %v", got)
	}
	if c := log.at(enforcement.AgentShutdown)[0]; agentID(c) != "my-agent" {
		t.Errorf("shutdown agent = %q", agentID(c))
	}

	// The session is over: a second end and a late request are conflicts,
	// and neither emits anything or reaches the upstream.
	if status, body := gw.endSession(t, "s-1", `{"reason":"completed"}`, nil); status != http.StatusConflict || errorBody(t, body).Code != "session_ended" {
		t.Fatalf("second end: %d %s", status, body)
	}
	status, _, body = gw.post(t, chatBody("one more", false), hdr)
	if status != http.StatusConflict || errorBody(t, body).Code != "session_ended" || errorBody(t, body).SessionID != "s-1" {
		t.Fatalf("request after end: %d %s", status, body)
	}
	if n := len(gw.records.all()); n != 22 {
		t.Fatalf("records grew after the end: %d", n)
	}
	if n := len(up.received()); n != 5 {
		t.Fatalf("upstream called %d times, want 5", n)
	}
}

func TestManagedSessionEndErrors(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	var log ctxLog
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: log.wrap(nil)})
	if status, _, body := gw.post(t, chatBody("hi", false), map[string]string{HeaderSession: "live"}); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	before := len(gw.records.all())
	long := strings.Repeat("a", 200)

	t.Run("end", func(t *testing.T) {
		cases := []struct {
			name, id, body string
			status         int
			code           string
		}{
			{"unknown session", "never-seen", `{"reason":"completed"}`, http.StatusNotFound, "session_not_found"},
			{"id with a space", "a%20b", "", http.StatusBadRequest, "invalid_session_id"},
			{"id of 200 bytes", long, "", http.StatusBadRequest, "invalid_session_id"},
			{"unknown reason", "live", `{"reason":"bored"}`, http.StatusBadRequest, "invalid_request"},
			{"not JSON", "live", `reason=completed`, http.StatusBadRequest, "invalid_request"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				status, body := gw.endSession(t, tc.id, tc.body, nil)
				if status != tc.status || errorBody(t, body).Code != tc.code {
					t.Fatalf("status %d code %q, want %d %q: %s", status, errorBody(t, body).Code, tc.status, tc.code, body)
				}
			})
		}
	})
	t.Run("chat", func(t *testing.T) {
		for _, id := range []string{"s 1", long} {
			status, _, body := gw.post(t, chatBody("hi", false), map[string]string{HeaderSession: id})
			e := errorBody(t, body)
			if status != http.StatusBadRequest || e.Code != "invalid_session_id" || e.Param == nil || *e.Param != HeaderSession {
				t.Fatalf("session %.20q: status %d: %s", id, status, body)
			}
			if strings.Contains(string(body), id) {
				t.Errorf("the error echoes the session id: %s", body)
			}
		}
	})
	if n := len(gw.records.all()); n != before {
		t.Fatalf("refused calls emitted %d records", n-before)
	}
	if n := len(up.received()); n != 1 {
		t.Fatalf("upstream called %d times, want 1", n)
	}
	// The live session is still live: the refused end calls did not end it,
	// and an explicit reason reaches the shutdown context.
	if status, body := gw.endSession(t, "live", `{"reason":"error"}`, nil); status != http.StatusOK {
		t.Fatalf("end live: %d %s", status, body)
	}
	if got := log.shutdownReasons("live"); len(got) != 1 || got[0] != "error" {
		t.Fatalf("shutdown reasons = %v", got)
	}
}

// A session whose agent_startup is denied stays blocked: every later
// request is refused without emitting anything, and its end still emits the
// shutdown.
func TestManagedSessionStartupDenyBlocks(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	var log ctxLog
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: log.wrap(denyAt(enforcement.AgentStartup, "policy:agent-not-allowed"))})
	hdr := map[string]string{HeaderSession: "blocked-1"}

	status, _, body := gw.post(t, chatBody("hi", false), hdr)
	e := errorBody(t, body)
	// The deny names the session by its trail id, the startup record's.
	if status != http.StatusForbidden || e.Code != "policy:agent-not-allowed" || e.Type != typeDenied ||
		e.InterceptionPoint != "agent_startup" || !memoryTrail(e.SessionID, "blocked-1") || e.Sequence == nil || *e.Sequence != 0 {
		t.Fatalf("first request: %d %s", status, body)
	}
	equalPoints(t, gw.records.points(""), enforcement.AgentStartup)
	if r := gw.records.all()[0]; r.SessionID != e.SessionID {
		t.Fatalf("startup recorded in session %q, the deny names %q", r.SessionID, e.SessionID)
	}

	for i := range 3 {
		status, _, body := gw.post(t, chatBody("again", false), hdr)
		if e := errorBody(t, body); status != http.StatusForbidden || e.Code != "session_blocked" || e.SessionID != "blocked-1" {
			t.Fatalf("request %d: %d %s", i, status, body)
		}
	}
	if n := len(gw.records.all()); n != 1 {
		t.Fatalf("a blocked session emitted: %v", gw.records.points(""))
	}
	if len(up.received()) != 0 {
		t.Fatal("a blocked session reached the upstream")
	}

	status, body = gw.endSession(t, "blocked-1", "", nil)
	var er endResponse
	json.Unmarshal(body, &er)
	if status != http.StatusOK || er.Record.InterceptionPoint != "agent_shutdown" || er.Record.Sequence != 1 || er.Record.SessionID != e.SessionID {
		t.Fatalf("end: %d %s", status, body)
	}
	equalPoints(t, gw.records.points(""), enforcement.AgentStartup, enforcement.AgentShutdown)
	if got := log.shutdownReasons("blocked-1"); len(got) != 1 || got[0] != "error" {
		t.Fatalf("shutdown reasons = %v, want error: a session denied at startup ends in error (spec §6.1a)", got)
	}
}

// A request without a session header is a whole session: a denied startup
// is answered and the session still closes with agent_shutdown.
func TestPerRequestStartupDeny(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	var log ctxLog
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: log.wrap(denyAt(enforcement.AgentStartup, "policy:no"))})
	status, h, body := gw.post(t, chatBody("hi", false), nil)
	if e := errorBody(t, body); status != http.StatusForbidden || e.Code != "policy:no" || e.InterceptionPoint != "agent_startup" {
		t.Fatalf("%d %s", status, body)
	}
	if h.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type = %q", h.Get("Content-Type"))
	}
	equalPoints(t, gw.records.points(""), enforcement.AgentStartup, enforcement.AgentShutdown)
	checkGapless(t, gw.records.all())
	if got := log.shutdownReasons(""); len(got) != 1 || got[0] != "error" {
		t.Fatalf("shutdown reasons = %v", got)
	}
	if len(up.received()) != 0 {
		t.Fatal("the upstream was called")
	}
}

// Turn points: the gateway emits input for the trailing user messages of a
// request and output for a turn-ending response, unless the client emits
// them itself.
func TestTurnPoints(t *testing.T) {
	toolTurn := `{"model":"gpt-test","messages":[` +
		`{"role":"user","content":"read it"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"file text"}]}`
	cases := []struct {
		name   string
		body   string
		header map[string]string
		inputs []string // contents of the input contexts, in order
		output bool
	}{
		{"gateway emits both", chatBody("hello", false), nil, []string{"hello"}, true},
		{"client turn points", chatBody("hello", false), map[string]string{HeaderTurnPoints: "client", HeaderSession: "tp-1"}, nil, false},
		{"client turn points, any case", chatBody("hello", false), map[string]string{HeaderTurnPoints: " Client ", HeaderSession: "tp-2"}, nil, false},
		{"tool result continues the turn", toolTurn, nil, nil, true},
		{"two trailing user messages", `{"model":"gpt-test","messages":[{"role":"system","content":"sys"},{"role":"user","content":"first"},{"role":"user","content":"second"}]}`, nil, []string{"first", "second"}, true},
		{"only the trailing user messages", `{"model":"gpt-test","messages":[{"role":"user","content":"old"},{"role":"assistant","content":"answer"},{"role":"user","content":"new"}]}`, nil, []string{"new"}, true},
		// Claude Code ends every request with a system message after the
		// user's: the turn's user messages are its inputs all the same.
		{"a system message after the user's", `{"model":"gpt-test","messages":[{"role":"user","content":"ask"},{"role":"system","content":"effort"}]}`, nil, []string{"ask"}, true},
		{"user, developer, user", `{"model":"gpt-test","messages":[{"role":"assistant","content":"a"},{"role":"user","content":"one"},{"role":"developer","content":"d"},{"role":"user","content":"two"}]}`, nil, []string{"one", "two"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, jsonReply(completionJSON))
			var log ctxLog
			gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: log.wrap(nil)})
			status, _, body := gw.post(t, tc.body, tc.header)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			want := []enforcement.Point{enforcement.AgentStartup}
			for range tc.inputs {
				want = append(want, enforcement.Input)
			}
			want = append(want, enforcement.PreModelCall, enforcement.PostModelCall)
			if tc.output {
				want = append(want, enforcement.Output)
			}
			if tc.header[HeaderSession] == "" { // a managed session stays open
				want = append(want, enforcement.AgentShutdown)
			}
			equalPoints(t, gw.records.points(""), want...)
			checkGapless(t, gw.records.all())
			for i, c := range log.at(enforcement.Input) {
				in := c["input"].(map[string]any)
				if in["content"] != tc.inputs[i] || in["role"] != "user" {
					t.Errorf("input %d = %v, want %q", i, in, tc.inputs[i])
				}
			}
		})
	}
}

// Client turn points need a managed session: a per-request session has
// nobody else who could emit its input and output.
func TestClientTurnPointsWithoutASession(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	gw := newGateway(t, gatewayConfig{upstream: up.URL})
	status, _, body := gw.post(t, chatBody("hello", false), map[string]string{HeaderTurnPoints: "client"})
	if e := errorBody(t, body); status != http.StatusBadRequest || e.Code != "turn_points_unmanaged" {
		t.Fatalf("%d %s", status, body)
	}
	if n := len(gw.records.all()); n != 0 || len(up.received()) != 0 {
		t.Fatalf("a refused request emitted %d records or reached the upstream", n)
	}
}

// An input transform is written back into the message sent upstream.
func TestInputTransformReachesUpstream(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	var log ctxLog
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: log.wrap(func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.Input {
			s, _ := c["input"].(map[string]any)["content"].(string)
			if strings.Contains(s, "hunter2") {
				return enforcement.TransformTo("$target.content", strings.ReplaceAll(s, "hunter2", "[password]"))
			}
		}
		return enforcement.Allow()
	})})
	body := `{"model":"gpt-test","messages":[{"role":"system","content":"sys","x-keep":1.50},{"role":"user","content":"my password is hunter2","name":"bob"}]}`
	status, h, out := gw.post(t, body, nil)
	if status != http.StatusOK || h.Get(HeaderDecision) != "transform" {
		t.Fatalf("status %d decision %q: %s", status, h.Get(HeaderDecision), out)
	}
	sent := string(up.received()[0])
	if strings.Contains(sent, "hunter2") || !strings.Contains(sent, `"content":"my password is [password]"`) {
		t.Fatalf("upstream body = %s", sent)
	}
	// The untouched system message keeps its bytes; the rewritten message
	// keeps its other members.
	if !strings.Contains(sent, `{"role":"system","content":"sys","x-keep":1.50}`) || !strings.Contains(sent, `"name":"bob"`) {
		t.Fatalf("upstream body lost members: %s", sent)
	}
	// pre_model_call saw the transformed input.
	pre := log.at(enforcement.PreModelCall)[0]["messages"].([]any)
	if pre[1].(map[string]any)["content"] != "my password is [password]" {
		t.Fatalf("pre_model_call messages = %v", pre)
	}
}

// Without keys, ending a session checks the agent as model calls and the
// emit API do: an end asserting another agent is refused and ends
// nothing; the session's own agent, or no assertion, ends it.
func TestEndSessionChecksTheAgent(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	gw := newGateway(t, gatewayConfig{upstream: up.URL})
	for _, id := range []string{"owned", "anon"} {
		hdr := map[string]string{HeaderSession: id}
		if id == "owned" {
			hdr[HeaderAgent] = "agent-a"
		}
		if status, _, body := gw.post(t, chatBody("hi", false), hdr); status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", id, status, body)
		}
	}
	before := len(gw.records.all())
	if status, body := gw.endSession(t, "owned", "", map[string]string{HeaderAgent: "agent-b"}); status != http.StatusConflict || errorBody(t, body).Code != "agent_mismatch" {
		t.Fatalf("end by another agent: %d %s", status, body)
	}
	if n := len(gw.records.all()); n != before {
		t.Fatalf("the refused end emitted %d records", n-before)
	}
	if status, body := gw.endSession(t, "owned", "", map[string]string{HeaderAgent: "agent-a"}); status != http.StatusOK {
		t.Fatalf("end by the session's agent: %d %s", status, body)
	}
	if status, body := gw.endSession(t, "anon", "", nil); status != http.StatusOK {
		t.Fatalf("end without an agent: %d %s", status, body)
	}
}

// In a managed session every user message the session has not judged is
// an input, wherever it sits, and only those: a history sent again each
// turn is not judged again, a message made up in it is; a denied input is
// judged again when it comes again.
func TestManagedInputsJudgeWhatIsNew(t *testing.T) {
	up := newUpstream(t, jsonReply(completionJSON))
	var log ctxLog
	gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: log.wrap(func(c enforcement.Context) enforcement.Verdict {
		if in, _ := c["input"].(map[string]any); c.Point() == enforcement.Input && in["content"] == "forbidden" {
			return enforcement.Deny("policy:no", "denied by the test policy")
		}
		return enforcement.Allow()
	})})
	user := func(s string) string { return `{"role":"user","content":"` + s + `"}` }
	asst := func(s string) string { return `{"role":"assistant","content":"` + s + `"}` }
	body := func(msgs ...string) string {
		return `{"model":"gpt-test","messages":[` + strings.Join(msgs, ",") + `]}`
	}
	inputs := func() []string {
		var out []string
		for _, c := range log.at(enforcement.Input) {
			out = append(out, c["input"].(map[string]any)["content"].(string))
		}
		return out
	}
	hdr := map[string]string{HeaderSession: "inputs-1"}
	for _, step := range []struct {
		body   string
		status int
		want   []string // the inputs judged so far
	}{
		{body(user("a")), http.StatusOK, []string{"a"}},
		{body(user("a"), asst("x"), user("b")), http.StatusOK, []string{"a", "b"}},
		{body(user("a"), user("made up"), asst("x"), user("b"), asst("y"), user("c")), http.StatusOK, []string{"a", "b", "made up", "c"}},
		{body(user("a"), user("forbidden")), http.StatusForbidden, []string{"a", "b", "made up", "c", "forbidden"}},
		{body(user("a"), user("forbidden")), http.StatusForbidden, []string{"a", "b", "made up", "c", "forbidden", "forbidden"}},
	} {
		if status, _, b := gw.post(t, step.body, hdr); status != step.status {
			t.Fatalf("%s: status %d: %s", step.body, status, b)
		}
		if got := inputs(); !slices.Equal(got, step.want) {
			t.Fatalf("after %s: inputs %q, want %q", step.body, got, step.want)
		}
	}
	checkGapless(t, gw.records.all())

	// A per-request session judges its new turn, whatever came before.
	before := len(inputs())
	if status, _, b := gw.post(t, body(user("a"), asst("x"), user("b")), nil); status != http.StatusOK {
		t.Fatalf("per-request: %d %s", status, b)
	}
	if got := inputs()[before:]; !slices.Equal(got, []string{"b"}) {
		t.Fatalf("per-request inputs %q, want the new turn's [b]", got)
	}
}
