package chat

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// unknownAnswer has a member the gateway does not know at every level of
// a completion: the completion, the choice, the message and a tool call,
// plus a null one (removed) and Azure's filter reports (removed).
const unknownAnswer = `{"id":"chatcmpl-u","object":"chat.completion","created":5,"model":"m","provider":"P ` + secret + `",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"hi","x_note":{"k":"` + secret + `"},"x_null":null,` +
	`"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}","x_fn":"gone"},"extra_content":{"sig":"` + secret + `"}}]},` +
	`"logprobs":null,"finish_reason":"tool_calls","native_finish_reason":"` + secret + `","content_filter_results":{"hate":{"filtered":false}}}],` +
	`"prompt_filter_results":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`

const unknownAnswerProjection = `{"content":[{"type":"text","text":"hi"},` +
	`{"type":"member","name":"x_note","value":{"k":"` + secret + `"}},` +
	`{"type":"member","in":"choice","name":"native_finish_reason","value":"` + secret + `"},` +
	`{"type":"member","in":"completion","name":"provider","value":"P ` + secret + `"}],` +
	`"tool_calls":[{"id":"call_1","name":"f","args":{},"members":{"extra_content":{"sig":"` + secret + `"}}}],"finish_reason":"tool_calls"}`

// Judge mode projects every unknown member of a JSON answer and releases
// it as judged: in place when the verdict left it, rewritten or removed
// when the verdict did.
func TestUnknownAnswerMembersJSON(t *testing.T) {
	r, err := ParseResponse([]byte(unknownAnswer), ResponseOptions{id: testID, Model: "asked"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Project(); !jsonvalue.Equal(got, tree(t, unknownAnswerProjection)) {
		t.Fatalf("Project = %s", mustJSON(t, got))
	}
	out, err := r.Release(nil)
	if err != nil {
		t.Fatal(err)
	}
	checkReleasedMeta(t, out, testID, "asked")
	for _, gone := range []string{"x_null", "x_fn", "content_filter_results", "prompt_filter_results"} {
		if strings.Contains(string(out), gone) {
			t.Errorf("%s was released: %s", gone, out)
		}
	}
	again, err := ParseResponse(out, ResponseOptions{})
	if err != nil || !jsonvalue.Equal(again.Project(), r.Project()) {
		t.Fatalf("the released answer projects otherwise (%v): %s", err, out)
	}

	// A redaction of every member part and of the call's members.
	target := r.Project()
	parts := target["content"].([]any)
	parts[1].(map[string]any)["value"] = map[string]any{"k": "[redacted]"}
	parts[2].(map[string]any)["value"] = "[redacted]"
	parts[3].(map[string]any)["value"] = "P [redacted]"
	callAt(target, 0)["members"] = map[string]any{"extra_content": map[string]any{"sig": "[redacted]"}}
	out, err = r.Release(target)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), secret) || strings.Count(string(out), "[redacted]") != 4 {
		t.Fatalf("redacted release = %s", out)
	}
	if again, err := ParseResponse(out, ResponseOptions{}); err != nil || !jsonvalue.Equal(again.Project(), target) {
		t.Fatalf("the redacted release projects otherwise (%v): %s", err, out)
	}

	// Leaving the parts and the members out removes the members.
	target = r.Project()
	target["content"] = target["content"].([]any)[:1]
	delete(callAt(target, 0), "members")
	out, err = r.Release(target)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), secret) {
		t.Fatalf("a removed member was released: %s", out)
	}

	// A part or a member the answer did not have cannot be added.
	for _, bad := range []func(map[string]any){
		func(p map[string]any) {
			p["content"] = append(p["content"].([]any), map[string]any{"type": "member", "name": "x_new", "value": 1})
		},
		func(p map[string]any) {
			p["content"].([]any)[3].(map[string]any)["in"] = "choice" // provider is the completion's
		},
		func(p map[string]any) { callAt(p, 0)["members"] = map[string]any{"x_new": 1} },
		func(p map[string]any) { callAt(p, 0)["members"] = "x" },
	} {
		target := r.Project()
		bad(target)
		var we *wire.WriteBackError
		if err := r.CheckWriteBack(target); !errors.As(err, &we) {
			t.Errorf("CheckWriteBack(%s) = %v, want a WriteBackError", mustJSON(t, target), err)
		}
	}

	// Strict mode removes them all.
	strict, err := ParseResponse([]byte(unknownAnswer), ResponseOptions{StrictMembers: true})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := strict.Release(nil); bytes.Contains(out, []byte(secret)) || strict.Project()["content"] != "hi" {
		t.Errorf("strict mode released %s, projected %s", out, mustJSON(t, strict.Project()))
	}
}

// unknownStream carries unknown members at every level of its chunks: a
// chunk member whose last value wins, a choice member, a delta member in
// string fragments, a delta member that is an object, a tool call member.
var unknownStream = sseEvents(
	`{"id":"x","model":"m","provider":"first","choices":[{"index":0,"delta":{"role":"assistant","content":"hi","x_text":"sk-"},"native":"a"}]}`,
	`{"id":"x","model":"m","provider":"second","choices":[{"index":0,"delta":{"x_text":"proj","x_obj":{"a":1}}}]}`,
	`{"id":"x","model":"m","choices":[{"index":0,"delta":{"x_obj":{"b":2},"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"sig":"s"}}]}}]}`,
	`{"id":"x","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls","native":null}]}`,
)

func sseEvents(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String() + "data: [DONE]\n\n"
}

// Streams assemble unknown members as the clients accumulate them and
// release them once, in a re-synthesized stream openai-go reads.
func TestUnknownAnswerMembersStream(t *testing.T) {
	st, err := ReadStream(strings.NewReader(unknownStream), 1<<20, ResponseOptions{id: testID, Model: "asked"})
	if err != nil {
		t.Fatal(err)
	}
	want := tree(t, `{"content":[{"type":"text","text":"hi"},`+
		`{"type":"member","name":"x_text","value":"sk-proj"},`+
		`{"type":"member","in":"choice","name":"native","value":"a"},`+
		`{"type":"member","in":"completion","name":"provider","value":"second"},`+
		`{"type":"member","name":"x_obj","value":{"b":2}}],`+
		`"tool_calls":[{"id":"call_1","name":"f","args":{},"members":{"extra_content":{"sig":"s"}}}],"finish_reason":"tool_calls"}`)
	if got := st.Response().Project(); !jsonvalue.Equal(got, want) {
		t.Fatalf("Project = %s", mustJSON(t, got))
	}
	if st.Replayable() {
		t.Fatal("a stream with chunk, choice and non-string delta members is replayed")
	}
	out, err := st.Release(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	checkReleasedMeta(t, out, testID, "asked")
	for _, once := range []string{`"x_text":"sk-proj"`, `"native":"a"`, `"provider":"second"`, `"x_obj":{"b":2}`, `"extra_content":{"sig":"s"}`} {
		if n := strings.Count(string(out), once); n != 1 {
			t.Errorf("%s released %d times:\n%s", once, n, out)
		}
	}
	for _, gone := range []string{`"first"`, `"a":1`} {
		if strings.Contains(string(out), gone) {
			t.Errorf("a value the projection does not hold was released: %s", gone)
		}
	}
	acc := accumulate(t, out)
	if acc.ID != testID || acc.Model != "asked" || acc.Choices[0].Message.Content != "hi" || len(acc.Choices[0].Message.ToolCalls) != 1 {
		t.Errorf("openai-go assembled %+v", acc.ChatCompletion)
	}
	// A stream whose only unknown members are string delta fragments is
	// replayed: every fragment is part of the judged join.
	text := sseEvents(`{"choices":[{"index":0,"delta":{"content":"hi","x_text":"sk-"}}]}`, `{"choices":[{"index":0,"delta":{"x_text":"proj"},"finish_reason":"stop"}]}`)
	st, err = ReadStream(strings.NewReader(text), 1<<20, ResponseOptions{})
	if err != nil || !st.Replayable() {
		t.Fatalf("string delta members: replayable %v (%v)", st != nil && st.Replayable(), err)
	}
}

// hostileMeta carries a credential in every member a client only reads:
// id, model, system_fingerprint and service_tier.
const hostileMeta = `"id":"sk-proj-` + hostileKey + `","model":"sk-proj-` + hostileKey + `","system_fingerprint":"sk-proj-` + hostileKey + `","service_tier":"sk-proj-` + hostileKey + `"`

const hostileKey = "AbCdEfGhIjKlMnOpQrStUvWx"

// No metadata the upstream chose reaches the client, on any release path.
func TestHostileMetadataNeverReleased(t *testing.T) {
	body := `{` + hostileMeta + `,"object":"chat.completion","created":1,"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`
	r, err := ParseResponse([]byte(body), ResponseOptions{Model: "asked"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Release(nil)
	if err != nil || bytes.Contains(out, []byte(hostileKey)) {
		t.Fatalf("JSON release (%v): %s", err, out)
	}
	checkReleasedMeta(t, out, r.ID(), "asked")

	chunk := func(delta, finish string) string {
		return `{` + hostileMeta + `,"object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
	}
	sse := sseEvents(chunk(`{"role":"assistant","content":"hel"}`, "null"), chunk(`{"content":"lo"}`, "null"), chunk(`{}`, `"stop"`))
	for _, treeOnly := range []bool{false, true} {
		st, err := readStream(strings.NewReader(sse), 1<<20, ResponseOptions{Model: "asked"}, treeOnly)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Replayable() {
			t.Error("metadata alone made the stream re-synthesized")
		}
		for _, tgt := range []any{nil, map[string]any{"content": "[x]", "tool_calls": []any{}, "finish_reason": "stop"}} {
			out, err := st.Release(tgt, true)
			if err != nil || bytes.Contains(out, []byte(hostileKey)) {
				t.Fatalf("stream release (%v): %s", err, out)
			}
			checkReleasedMeta(t, out, st.Response().ID(), "asked")
		}
	}

	sr := openStream(strings.NewReader(sse), 1<<20, ResponseOptions{Model: "asked"}, true)
	out = nil
	for released := 0; ; {
		done, err := sr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		if text := sr.Text(); len(text) > released {
			if released == 0 {
				head, err := sr.Head()
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, head...)
			}
			d, err := sr.Delta(released, text[released:])
			if err != nil {
				t.Fatal(err)
			}
			out, released = append(out, d...), len(text)
		}
	}
	ws, err := sr.Stream()
	if err != nil {
		t.Fatal(err)
	}
	tail, err := sr.Tail(ws, nil, "hello")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, tail...)
	if bytes.Contains(out, []byte(hostileKey)) || !bytes.Contains(out, []byte(`"content":"lo"`)) {
		t.Fatalf("incremental release: %s", out)
	}
	checkReleasedMeta(t, out, sr.p.asm.meta.id, "asked")
}
