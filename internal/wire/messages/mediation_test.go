package messages

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// canary is a credential-shaped value: every check that a value is
// token-shaped lets it through.
const canary = "sk-proj-abcdefghijklmnopqrstuvwx"

// A member the gateway does not know, at any depth of a request, is
// projected where a policy sees it and forwarded as judged: the body
// round-trips untouched, and a transform's rewrite of its object writes
// the member back as the target holds it.
func TestUnknownRequestMembersJudged(t *testing.T) {
	body := `{"model":"m","max_tokens":5,"x_top":{"k":"v1"},
	 "metadata":{"user_id":"u","x_meta":"v2"},
	 "thinking":{"type":"adaptive","x_think":"v3"},
	 "system":[{"type":"text","text":"sys","x_sys":"v4"}],
	 "messages":[
	  {"role":"user","content":[{"type":"text","text":"hi","x_text":"v5"},{"type":"image","source":{"type":"url","url":"https://x.test/a.png","x_src":"v6"}}]},
	  {"role":"system","content":[{"type":"text","text":"be brief"}],"output_config":{"effort":"low","x_out":"v7"}},
	  {"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{},"x_call":"v8"}],"x_asst":"v9"},
	  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r","x_result":"v10"}],"x_user":"v11"}],
	 "tools":[{"name":"f","input_schema":{"type":"object"},"x_tool":"v12"},{"type":"teleport_20990101","name":"tp","x_new":"v13"}]}`
	r := parseOK(t, New(Options{}), body)
	projected, _ := jsonvalue.Marshal(map[string]any{"messages": r.Messages(), "tools": r.Tools(), "params": r.Params()})
	for i := 1; i <= 13; i++ {
		v := `"v` + strconv.Itoa(i) + `"`
		if !bytes.Contains(projected, []byte(v)) {
			t.Errorf("%s is not projected: %s", v, projected)
		}
	}
	if out, err := r.UpstreamBody(nil); err != nil || string(out) != body {
		t.Fatalf("untouched body not forwarded as it came (%v)", err)
	}
	want := mustJSON(t, `[
	 {"role":"system","content":[{"type":"text","text":"sys","x_sys":"v4"}]},
	 {"role":"user","content":[{"type":"text","text":"hi","x_text":"v5"},{"type":"image","source":{"type":"url","url":"https://x.test/a.png","x_src":"v6"}}]},
	 {"role":"system","content":[{"type":"text","text":"be brief"}],"output_config":{"effort":"low","x_out":"v7"}},
	 {"role":"assistant","content":[],"tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"f","arguments":"{}"},"x_call":"v8"}],"x_asst":"v9"},
	 {"role":"user","content":[],"x_user":"v11"},
	 {"role":"tool","tool_call_id":"toolu_1","content":"r","x_result":"v10"}]`)
	if !jsonvalue.Equal(any(r.Messages()), want) {
		g, _ := jsonvalue.Marshal(r.Messages())
		t.Errorf("Messages() = %s", g)
	}
	// A transform rewrites every member and the text beside them: the
	// written body projects as the target.
	target := jsonvalue.DeepCopy(r.Messages()).([]any)
	obj(obj(target[1])["content"].([]any)[0])["x_text"] = "w5"
	obj(obj(target[1])["content"].([]any)[0])["text"] = "hi!"
	obj(target[2])["output_config"] = map[string]any{"effort": "high"}
	obj(obj(target[3])["tool_calls"].([]any)[0])["x_call"] = "w8"
	obj(target[3])["x_asst"] = "w9"
	obj(target[4])["x_user"] = "w11"
	obj(target[5])["x_result"] = "w10"
	out, err := r.UpstreamBody(target)
	if err != nil {
		t.Fatal(err)
	}
	if got := reparse(t, out).Messages(); !jsonvalue.Equal(any(got), any(target)) {
		g, _ := jsonvalue.Marshal(got)
		t.Errorf("the written body projects as\n%s\nfrom\n%s", g, out)
	}
	// Under StrictMembers the first of them is refused, by path.
	_, err = New(Options{StrictMembers: true}).ParseRequest([]byte(body), nil)
	var re *wire.RequestError
	if !errors.As(err, &re) || !strings.Contains(re.Msg, UnknownMembersKey) {
		t.Errorf("strict: %v", err)
	}
}

// The Claude Agent SDK's system message with output_config is accepted,
// projected as a system message holding its output_config, and forwarded
// byte for byte.
func TestAgentSDKSystemMessage(t *testing.T) {
	body := `{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"list the files"}]},{"role":"system","content":[{"type":"text","text":"Respond in JSON."}],"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}}}]}`
	r := parseOK(t, New(Options{}), body)
	sys := obj(r.Messages()[1])
	if sys["role"] != "system" || !jsonvalue.Equal(sys["output_config"], mustJSON(t, `{"format":{"type":"json_schema","schema":{"type":"object"}}}`)) {
		t.Errorf("projection = %v", sys)
	}
	if out, err := r.UpstreamBody(r.Messages()); err != nil || string(out) != body {
		t.Errorf("not forwarded as judged (%v)", err)
	}
}

// anthropic-beta is judged with the body: its betas are model.params'
// anthropic_beta.
func TestBetaHeaderProjected(t *testing.T) {
	h := http.Header{}
	h.Add("Anthropic-Beta", "context-1m-2025-08-07, interleaved-thinking-2025-05-14")
	h.Add("Anthropic-Beta", canary)
	r, err := New(Options{}).ParseRequestHeader([]byte(answerRequest), nil, h)
	if err != nil {
		t.Fatal(err)
	}
	want := mustJSON(t, `["context-1m-2025-08-07","interleaved-thinking-2025-05-14","`+canary+`"]`)
	if got := r.Params()["anthropic_beta"]; !jsonvalue.Equal(got, want) {
		t.Errorf("anthropic_beta = %v", got)
	}
	if r, _ := New(Options{}).ParseRequestHeader([]byte(answerRequest), nil, http.Header{}); r.Params()["anthropic_beta"] != nil || r.Params()["anthropic_version"] != nil {
		t.Error("anthropic_beta or anthropic_version projected without the header")
	}
	h = http.Header{"Anthropic-Version": {canary}}
	if r, err := New(Options{}).ParseCountTokensHeader([]byte(answerRequest), nil, h); err != nil || r.Params()["anthropic_version"] != canary {
		t.Errorf("anthropic_version not projected (%v)", err)
	}
	h.Add("Anthropic-Version", "2023-06-01")
	var re *wire.RequestError
	if _, err := New(Options{}).ParseRequestHeader([]byte(answerRequest), nil, h); !errors.As(err, &re) || re.Field != "anthropic-version" {
		t.Errorf("anthropic-version twice: %v", err)
	}
}

// An answer's opaque blobs reach the client sealed; sent back, they open
// into the provider's own bytes, whichever way the answer came (JSON or
// stream); a value the gateway did not seal is refused by path.
func TestSealedBlobsRoundTrip(t *testing.T) {
	s := New(Options{AllowServerTools: true})
	const thinking = `{"type":"thinking","thinking":"Let me check.","signature":"EqQBsig` + canary + `"}`
	const redacted = `{"type":"redacted_thinking","data":"EmwKdata` + canary + `"}`
	const cited = `{"type":"text","text":"Go is out.","citations":[{"type":"web_search_result_location","url":"https://go.dev","title":"Go","encrypted_index":"Eo8` + canary + `","cited_text":"Go"}]}`
	answer := `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[` + thinking + `,` + redacted + `,` + cited + `],"stop_reason":"end_turn","container":{"id":"container_` + canary + `","expires_at":"2026-12-03T00:00:00Z"},"usage":{"input_tokens":1,"output_tokens":1}}`
	released := map[string][]byte{}
	r, err := s.ParseResponse(parseOK(t, s, answerRequest), []byte(answer))
	if err != nil {
		t.Fatal(err)
	}
	if released["json"], err = r.Release(nil); err != nil {
		t.Fatal(err)
	}
	st, err := s.ReadStream(parseOK(t, s, answerRequest), strings.NewReader(string(synthesizeOrFail(t, []byte(answer)))), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if released["sse"], err = st.Release(nil); err != nil {
		t.Fatal(err)
	}
	for mode, out := range released {
		if bytes.Contains(out, []byte(canary)) {
			t.Fatalf("%s: a blob reached the client unsealed:\n%s", mode, out)
		}
		msg := assembled(t, s, mode, out)
		content := msg["content"].([]any)
		container := obj(msg["container"])
		// The client sends the assistant turn back, and the container.
		turn, _ := jsonvalue.Marshal(content)
		cid, _ := jsonvalue.Marshal(container["id"])
		req := `{"model":"m","max_tokens":5,"container":` + string(cid) + `,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":` + string(turn) + `},{"role":"user","content":"more"}]}`
		wr, err := s.ParseRequest([]byte(req), nil)
		if err != nil {
			t.Fatalf("%s: the client's own turn is refused: %v", mode, err)
		}
		up, err := wr.UpstreamBody(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, blob := range []string{`"EqQBsig` + canary + `"`, `"EmwKdata` + canary + `"`, `"Eo8` + canary + `"`, `"container":"container_` + canary + `"`} {
			if !bytes.Contains(up, []byte(blob)) {
				t.Errorf("%s: the upstream does not receive %s:\n%s", mode, blob, up)
			}
		}
		if bytes.Contains(up, []byte("hgs1_")) {
			t.Errorf("%s: a seal reached the upstream:\n%s", mode, up)
		}
		// The projection holds none of the blobs, nor their seals.
		p, _ := jsonvalue.Marshal(map[string]any{"m": wr.Messages(), "p": wr.Params()})
		if bytes.Contains(p, []byte("EqQB")) || bytes.Contains(p, []byte("EmwK")) || bytes.Contains(p, []byte("Eo8")) || bytes.Contains(p, []byte("hgs1_")) {
			t.Errorf("%s: a blob is projected: %s", mode, p)
		}
		// A seal altered, or moved to another member, does not open.
		for _, forged := range []struct{ from, to, field string }{
			{`"signature":"hgs1_`, `"signature":"hgs1_x`, "messages[1].content[0].signature"},
			{`"data":"hgs1_`, `"data":"hgs1_x`, "messages[1].content[1].data"},
			{`"encrypted_index":"hgs1_`, `"encrypted_index":"hgs1_x`, "messages[1].content[2].citations[0].encrypted_index"},
			{`"container":"hgs1_`, `"container":"hgs1_x`, "container"},
		} {
			bad := strings.Replace(req, forged.from, forged.to, 1)
			_, err := s.ParseRequest([]byte(bad), nil)
			var re *wire.RequestError
			if !errors.As(err, &re) || re.Field != forged.field || !strings.Contains(re.Msg, "not issued through this gateway") {
				t.Errorf("%s: forged %s: %v", mode, forged.field, err)
			}
		}
		sig := obj(content[0])["signature"].(string)
		moved := strings.Replace(req, `"container":"`, `"container":"`+sig+`","x":"`, 1)
		if _, err := s.ParseRequest([]byte(moved), nil); err == nil {
			t.Errorf("%s: a signature's seal opened as a container id", mode)
		}
	}
	// Another gateway's seals (another key) do not open here.
	other := New(Options{})
	if _, err := other.ParseRequest([]byte(`{"model":"m","max_tokens":5,"container":"`+s.seal.SealString(kindContainerID, "c")+`","messages":[{"role":"user","content":"q"}]}`), nil); err == nil {
		t.Error("a seal under another key opened")
	}
}

func synthesizeOrFail(t *testing.T, body []byte) []byte {
	t.Helper()
	out, err := synthesize(body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// assembled is the message a client reads from a release: the JSON body,
// or the stream accumulated as the SDKs do.
func assembled(t *testing.T, s *Surface, mode string, out []byte) map[string]any {
	t.Helper()
	if mode == "json" {
		return obj(mustJSON(t, string(out)))
	}
	// The assembler accumulates as the SDKs do (it seals nothing).
	er := newEventReader(bytes.NewReader(out), 1<<20)
	a := &assembler{s: s, replayable: true}
	for done := false; !done; {
		ev, err := er.next()
		if err != nil {
			t.Fatal(err)
		}
		if done, err = a.handle(ev); err != nil {
			t.Fatal(err)
		}
	}
	body, err := a.message()
	if err != nil {
		t.Fatal(err)
	}
	return obj(mustJSON(t, string(body)))
}

// Every member of an answer's metadata is released as a count, a
// documented enumeration, a timestamp the gateway renders, a sealed id or a
// member part a policy judges, or removed: a credential-shaped value
// reaches the client only inside a judged member part, in JSON and in a
// stream, replayed or synthesized.
func TestAnswerMetadataMediated(t *testing.T) {
	c := canary
	meta := []struct {
		name, member string
		part         string // the member part that projects the canary, or "" (removed or sealed)
		strictPart   string // the same under StrictMembers
	}{
		{"id", `"id":"msg_` + c + `"`, "", ""},
		{"model", `"model":"` + c + `"`, "", ""},
		{"stop_details category", `"stop_details":{"type":"refusal","category":"` + c + `","explanation":null}`, "", ""},
		{"stop_details type", `"stop_details":{"type":"` + c + `","category":"cyber"}`, "", ""},
		{"stop_details explanation", `"stop_details":{"type":"refusal","category":"cyber","explanation":"` + c + `"}`, "stop_details.explanation", "stop_details.explanation"},
		{"container id", `"container":{"id":"` + c + `","expires_at":"2026-12-03T00:00:00Z"}`, "", ""},
		{"container expires_at", `"container":{"id":"c","expires_at":"` + c + `"}`, "", ""},
		{"container skills", `"container":{"id":"c","skills":[{"type":"custom","skill_id":"` + c + `","version":"1"}]}`, "container.skills", "container.skills"},
		{"context_management edit type", `"context_management":{"applied_edits":[{"type":"` + c + `","cleared_input_tokens":5}]}`, "", ""},
		{"context_management edit member", `"context_management":{"applied_edits":[{"type":"clear_thinking_20251015","note":"` + c + `"}]}`, "context_management.applied_edits[0].note", ""},
		{"diagnostics reason", `"diagnostics":{"cache_miss_reason":{"type":"` + c + `","cache_missed_input_tokens":3}}`, "", ""},
		{"unknown top-level member", `"x_debug":"` + c + `"`, "x_debug", ""},
		{"unknown top-level member named oddly", `"x.debug":"` + c + `"`, `["x.debug"]`, ""},
	}
	usage := []struct{ name, member, part string }{
		{"service_tier", `"service_tier":"` + c + `"`, ""},
		{"inference_geo", `"inference_geo":"` + c + `"`, ""},
		{"speed", `"speed":"` + c + `"`, ""},
		{"server_tool_use counter", `"server_tool_use":{"web_search_requests":"` + c + `"}`, ""},
		{"server_tool_use unknown counter", `"server_tool_use":{"web_search_requests":1,"x_requests":"` + c + `"}`, "usage.server_tool_use.x_requests"},
		{"cache_creation unknown member", `"cache_creation":{"ephemeral_5m_input_tokens":1,"x":"` + c + `"}`, "usage.cache_creation.x"},
		{"unknown usage member", `"iterations":[{"type":"message","model":"` + c + `"}]`, "usage.iterations"},
	}
	type answerCase struct{ name, body, part, strictPart string }
	var cases []answerCase
	for _, m := range meta {
		body := `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"fine"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
		switch m.name {
		case "id":
			body = strings.Replace(body, `"id":"msg_1"`, m.member, 1)
		case "model":
			body = strings.Replace(body, `"model":"m"`, m.member, 1)
		default:
			body = strings.TrimSuffix(body, "}") + "," + m.member + "}"
		}
		cases = append(cases, answerCase{m.name, body, m.part, m.strictPart})
	}
	for _, u := range usage {
		cases = append(cases, answerCase{"usage " + u.name, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"fine"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1,` + u.member + `}}`, u.part, ""})
	}
	cases = append(cases,
		answerCase{"tool_use caller", `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{},"caller":{"type":"code_execution_20250825","tool_id":"` + c + `"}}],"stop_reason":"tool_use"}`, "caller", "caller"},
		answerCase{"block member", `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"fine","x_note":"` + c + `"}],"stop_reason":"end_turn"}`, "x_note", ""},
	)
	for _, tc := range cases {
		for _, strict := range []bool{false, true} {
			s := New(Options{StrictMembers: strict})
			req := parseOK(t, s, `{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
			part := tc.part
			if strict {
				part = tc.strictPart
			}
			r, err := s.ParseResponse(req, []byte(tc.body))
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			proj, _ := jsonvalue.Marshal(r.Project())
			if (part != "") != bytes.Contains(proj, []byte(c)) || part != "" && !bytes.Contains(proj, appendString(nil, part)) {
				t.Errorf("%s (strict %v): want the canary projected in %q: %s", tc.name, strict, part, proj)
			}
			out, err := r.Release(nil)
			if err != nil {
				t.Fatal(err)
			}
			st, err := s.ReadStream(req, bytes.NewReader(synthesizeOrFail(t, []byte(tc.body))), 1<<20)
			if err != nil {
				t.Fatalf("%s: stream: %v", tc.name, err)
			}
			sse, err := st.Release(nil)
			if err != nil {
				t.Fatal(err)
			}
			for mode, b := range map[string][]byte{"json": out, "sse": sse} {
				if bytes.Contains(b, []byte(c)) != (part != "") {
					t.Errorf("%s (strict %v, %s): the canary's release does not follow its projection (%q):\n%s", tc.name, strict, mode, part, b)
				}
				if !bytes.Contains(b, []byte(`"model":"claude-x"`)) || bytes.Contains(b, []byte(`"msg_1"`)) {
					t.Errorf("%s (%s): the upstream's id or model released:\n%s", tc.name, mode, b)
				}
			}
		}
	}
}
