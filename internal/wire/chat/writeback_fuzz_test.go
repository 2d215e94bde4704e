package chat

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// fuzzValue turns fuzz bytes into a transform value: the JSON they hold, or
// else the bytes as a string (when they are valid UTF-8).
func fuzzValue(b []byte) (any, bool) {
	if v, err := jsonvalue.Decode(b); err == nil {
		return v, true
	}
	if utf8.Valid(b) {
		return string(b), true
	}
	return nil, false
}

// FuzzRequestWriteBack: a pre_model_call transform of one message's content
// (any value) is either refused by ValidateMessages or written back as valid
// JSON whose projection is exactly the transformed messages, with every
// other top-level member and every other message byte-identical.
func FuzzRequestWriteBack(f *testing.F) {
	for _, s := range []struct {
		body, value string
		at          uint8
	}{
		{requestBody, `"redacted"`, 0},
		{requestBody, `[{"type":"text","text":"\u00e9"}]`, 1},
		{requestBody, `null`, 2},
		{requestBody, `7`, 0},
		{requestBody, `{"a":1}`, 0},
		{requestBody, `[1]`, 0},
		{requestBody, `not json`, 1},
		{`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"a"}],"seed":123456789012345678901234567890}`, `"b"`, 1},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"chat_template_kwargs":{"y":[1,2.50]}}`, `"\ud83d\ude00"`, 0},
	} {
		f.Add([]byte(s.body), []byte(s.value), s.at)
	}
	f.Fuzz(func(t *testing.T, body, value []byte, at uint8) {
		r, err := ParseRequest(body)
		if err != nil {
			return
		}
		v, ok := fuzzValue(value)
		if !ok {
			return
		}
		msgs := jsonvalue.DeepCopy(r.Messages()).([]any) // shared trees are read-only
		i := int(at) % len(msgs)
		msgs[i].(map[string]any)["content"] = v
		out, err := r.UpstreamBody(msgs, false)
		if err != nil {
			if ValidateMessages(msgs) == nil {
				t.Fatalf("UpstreamBody failed on messages ValidateMessages accepts: %v", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("write-back produced invalid JSON:\n%s", out)
		}
		r2, err := ParseRequest(out)
		if err != nil {
			t.Fatalf("written body does not parse: %v\n%s", err, out)
		}
		got := r2.Messages()
		if !jsonvalue.Equal(any(got), any(msgs)) {
			t.Fatalf("released %s, verdicted %s", mustJSON(t, got), mustJSON(t, msgs))
		}
		// Untouched: every other top-level member and every other message.
		if len(r2.members) != len(r.members) {
			t.Fatalf("top-level members %d -> %d", len(r.members), len(r2.members))
		}
		for k, m := range r.members {
			m2 := r2.members[k]
			if m2.Key != m.Key {
				t.Fatalf("member %d renamed %q -> %q", k, m.Key, m2.Key)
			}
			if m.Key != "messages" && !bytes.Equal(body[m.Val.Start:m.Val.End], out[m2.Val.Start:m2.Val.End]) {
				t.Fatalf("member %q changed", m.Key)
			}
		}
		for j := range r.msgRaw {
			a, b := r.msgRaw[j], r2.msgRaw[j]
			if j != i && !bytes.Equal(body[a.Start:a.End], out[b.Start:b.End]) {
				t.Fatalf("message %d changed though only %d was transformed", j, i)
			}
		}
	})
}

// FuzzResponseWriteBack: a post_model_call transform (content, one call's
// args, or finish_reason set to a value from the input) is either refused
// by CheckWriteBack or written back as valid JSON whose projection is the
// transformed target, with everything outside choices[0] byte-identical
// and every other tool call's raw object kept.
func FuzzResponseWriteBack(f *testing.F) {
	for _, s := range []struct {
		body, value string
		what        uint8
	}{
		{toolCallResponse, `{"path":"/tmp/x"}`, 1},
		{toolCallResponse, `{"n":123456789012345678901234567890}`, 4},
		{toolCallResponse, `"redacted"`, 0},
		{toolCallResponse, `"length"`, 2},
		{textResponse, `"redacted"`, 0},
		{textResponse, `[{"type":"text","text":"x"}]`, 0},
		{textResponse, `null`, 0},
		{refusalResponse, `"no"`, 0},
		{refusalResponse, `null`, 0},
		{rawArgsResponse, `{"raw_arguments":"ls /"}`, 1},
		{rawArgsResponse, `{"cmd":"ls"}`, 4},
		{rawArgsResponse, `7`, 1},
	} {
		f.Add([]byte(s.body), []byte(s.value), s.what)
	}
	f.Fuzz(func(t *testing.T, body, value []byte, what uint8) {
		r, err := ParseResponse(body, ResponseOptions{})
		if err != nil {
			return
		}
		v, ok := fuzzValue(value)
		if !ok {
			return
		}
		target := r.Project()
		calls := target["tool_calls"].([]any)
		changed := -1 // the index of the call whose args change
		switch what % 3 {
		case 0:
			target["content"] = v
		case 1:
			if len(calls) == 0 {
				return
			}
			changed = int(what/3) % len(calls)
			calls[changed].(map[string]any)["args"] = v
		case 2:
			target["finish_reason"] = v
		}
		out, err := r.Release(target)
		if err != nil {
			if r.CheckWriteBack(target) == nil {
				t.Fatalf("WriteBack failed on a target CheckWriteBack accepts: %v", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("write-back produced invalid JSON:\n%s", out)
		}
		r2, err := ParseResponse(out, ResponseOptions{})
		if err != nil {
			t.Fatalf("written body does not parse: %v\n%s", err, out)
		}
		got := r2.Project()
		if !jsonvalue.Equal(got, canonical(t, r, target)) && !rawArgumentsReparsed(r, changed, got, target) {
			t.Fatalf("released %s, verdicted %s", mustJSON(t, got), mustJSON(t, target))
		}
		checkReleasedMeta(t, out, r.ID(), r.Model())
		if r2.Created() != r.Created() {
			t.Fatal("release changed the metadata")
		}
	})
}

// rawArgumentsReparsed reports the one documented case where the released
// projection differs from the target: args that were not JSON upstream,
// rewritten as {"raw_arguments": s}, are released as s verbatim (GW-TX-4),
// and s may itself be a JSON object, which the next projection parses.
func rawArgumentsReparsed(r *Response, changed int, got, target map[string]any) bool {
	if changed < 0 || !r.ans.calls[changed].rawArgs {
		return false
	}
	want := target["tool_calls"].([]any)[changed].(map[string]any)["args"].(map[string]any)
	s, ok := want["raw_arguments"].(string)
	if !ok || len(want) != 1 {
		return false
	}
	reparsed, raw := parseArguments(s)
	if raw {
		return false
	}
	target = jsonvalue.DeepCopy(target).(map[string]any)
	target["tool_calls"].([]any)[changed].(map[string]any)["args"] = reparsed
	return jsonvalue.Equal(got, target)
}
