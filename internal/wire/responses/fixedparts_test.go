package responses

import (
	"errors"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// fixedAnswer has two reasoning items (summary and reasoning_text
// entries), a web search the provider ran and a message.
const fixedAnswer = `{"id":"resp_2","object":"response","created_at":1,"status":"completed","model":"gpt-5","output":[` +
	`{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"s1"},{"type":"summary_text","text":"s2"}],"content":[{"type":"reasoning_text","text":"r1"}],"encrypted_content":"E1"},` +
	`{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"q","sources":[{"type":"url","url":"https://a.test/"}]}},` +
	`{"id":"rs_2","type":"reasoning","summary":[{"type":"summary_text","text":"s3"}],"encrypted_content":"E2"},` +
	`{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"hello","annotations":[]}]}]}`

func reasoning(text string) map[string]any { return map[string]any{"type": "reasoning", "text": text} }

// webSearch is the projected web search part of fixedAnswer; its id is
// wsID, which the tests replace with the seal an answer carries.
func webSearch(query string) map[string]any {
	return map[string]any{"id": wsID, "type": "web_search_call", "status": "completed",
		"action": map[string]any{"type": "search", "query": query, "sources": []any{map[string]any{"type": "url", "url": "https://a.test/"}}}}
}

const wsID = "ws_1"

// withIDs returns content with every part whose id is wsID given the id
// the same part has in proj (the seal of that answer).
func withIDs(content []any, proj map[string]any) []any {
	sealed := ""
	parts, _ := proj["content"].([]any)
	for _, p := range parts {
		if m := p.(map[string]any); m["type"] == "web_search_call" {
			sealed, _ = m["id"].(string)
		}
	}
	out := jsonvalue.DeepCopy(content).([]any)
	for _, p := range out {
		if m := p.(map[string]any); m["id"] == wsID {
			m["id"] = sealed
		}
	}
	return out
}

// withoutIDs returns content without the ids of its native parts, which
// differ between answers (each seals anew).
func withoutIDs(content any) any {
	out := jsonvalue.DeepCopy(content)
	list, _ := out.([]any)
	for _, p := range list {
		if m := p.(map[string]any); m["type"] == "web_search_call" {
			delete(m, "id")
		}
	}
	return out
}

// reasoningBlobs opens the encrypted_content of each reasoning item of a
// released body.
func reasoningBlobs(t *testing.T, body []byte) []string {
	t.Helper()
	v, err := jsonvalue.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range v.(map[string]any)["output"].([]any) {
		it := e.(map[string]any)
		if it["type"] != "reasoning" {
			continue
		}
		blob, err := openBlob(testKeys, it["encrypted_content"].(string))
		if err != nil {
			t.Fatalf("encrypted_content does not open: %v", err)
		}
		out = append(out, blob)
	}
	return out
}

var hello = map[string]any{"type": "text", "text": "hello"}

// Reasoning parts are written back to their entries, provider-tool parts
// to their items; encrypted content and ids keep their bytes; adding or
// reshaping is refused.
func TestWriteBackFixedParts(t *testing.T) {
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, codexRequest)
	resp, err := s.ParseResponse(req, []byte(fixedAnswer))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		content []any
		want    []string // substrings of the released body
		refused bool
	}{
		{name: "rewrite a summary entry", content: []any{reasoning("s1"), reasoning("[redacted]"), reasoning("r1"), webSearch("q"), reasoning("s3"), hello},
			want: []string{`"type":"reasoning","summary":[{"type":"summary_text","text":"s1"},{"type":"summary_text","text":"[redacted]"}],"content":[{"type":"reasoning_text","text":"r1"}],"encrypted_content":"hgs1_`,
				`"type":"reasoning","summary":[{"type":"summary_text","text":"s3"}],"encrypted_content":"hgs1_`}},
		{name: "rewrite a reasoning_text entry", content: []any{reasoning("s1"), reasoning("s2"), reasoning(""), webSearch("q"), reasoning("s3"), hello},
			want: []string{`"content":[{"type":"reasoning_text","text":""}],"encrypted_content":"hgs1_`}},
		{name: "remove a middle entry", content: []any{reasoning("s1"), reasoning("r1"), webSearch("q"), reasoning("s3"), hello},
			want: []string{`"summary":[{"type":"summary_text","text":"s1"}],"content":[{"type":"reasoning_text","text":"r1"}],"encrypted_content":"hgs1_`}},
		{name: "remove every reasoning entry", content: []any{webSearch("q"), hello},
			want: []string{`"type":"reasoning","summary":[],"content":[],"encrypted_content":"hgs1_`, `"type":"reasoning","summary":[],"encrypted_content":"hgs1_`}},
		{name: "rewrite a web search query", content: []any{reasoning("s1"), reasoning("s2"), reasoning("r1"), webSearch("[redacted]"), reasoning("s3"), hello},
			want: []string{`"query":"[redacted]"`, `"id":"hgs1_`, `"text":"hello"`}},
		{name: "add a reasoning part", content: []any{reasoning("s1"), reasoning("s2"), reasoning("r1"), reasoning("new"), webSearch("q"), reasoning("s3"), hello}, refused: true},
		{name: "move reasoning across a provider-tool part", content: []any{reasoning("s1"), reasoning("s2"), reasoning("r1"), reasoning("s3"), webSearch("q"), hello}, refused: true},
		{name: "reasoning part with another member", content: []any{map[string]any{"type": "reasoning", "text": "s1", "x": "y"}, webSearch("q"), hello}, refused: true},
		{name: "remove a provider-tool part", content: []any{reasoning("s1"), reasoning("s2"), reasoning("r1"), reasoning("s3"), hello}, refused: true},
		{name: "add a provider-tool part", content: []any{webSearch("q"), webSearch("q"), hello}, refused: true},
		{name: "change a provider-tool id", content: []any{func() any { w := webSearch("q"); w["id"] = "ws_9"; return w }(), hello}, refused: true},
		{name: "change a provider-tool type", content: []any{func() any { w := webSearch("q"); w["type"] = "file_search_call"; return w }(), hello}, refused: true},
		{name: "add a provider-tool member", content: []any{func() any { w := webSearch("q"); w["note"] = "x"; return w }(), hello}, refused: true},
		{name: "change a provider-tool string into a number", content: []any{func() any {
			w := webSearch("q")
			w["action"].(map[string]any)["query"] = 1
			return w
		}(), hello}, refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := map[string]any{"content": withIDs(tc.content, resp.Project()), "tool_calls": []any{}, "finish_reason": "stop"}
			body, err := resp.Release(target)
			if tc.refused {
				var wb *wire.WriteBackError
				if !errors.As(err, &wb) {
					t.Fatalf("want a WriteBackError, got %v (%s)", err, body)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(body), w) {
					t.Errorf("released body lacks %s:\n%s", w, body)
				}
			}
			if got := reasoningBlobs(t, body); strings.Join(got, ",") != "E1,E2" {
				t.Errorf("the sealed reasoning opens to %v, want the upstream's E1, E2", got)
			}
			again, err := s.ParseResponse(req, body)
			if err != nil {
				t.Fatalf("released body does not parse: %v", err)
			}
			if got := again.Project(); !jsonvalue.Equal(withoutIDs(got["content"]), withoutIDs(tc.content)) {
				g, _ := jsonvalue.Marshal(got["content"])
				t.Fatalf("released body projects to %s", g)
			}
			// Streams synthesized from the verdict carry the same parts.
			st := streamOf(t, s, req, fixedAnswer)
			target["content"] = withIDs(tc.content, st.Response().Project())
			sse, err := st.Release(target)
			if err != nil {
				t.Fatal(err)
			}
			back, err := s.ReadStream(req, strings.NewReader(string(sse)), int64(len(sse)))
			if err != nil {
				t.Fatalf("synthesized stream does not read back: %v\n%s", err, sse)
			}
			if got := back.Response().Project(); !jsonvalue.Equal(withoutIDs(got["content"]), withoutIDs(tc.content)) {
				g, _ := jsonvalue.Marshal(got["content"])
				t.Fatalf("synthesized stream projects to %s", g)
			}
		})
	}
}

// streamOf reads the stream synthesized from a response object.
func streamOf(t *testing.T, s *Surface, req *Request, body string) wire.Stream {
	t.Helper()
	sse, err := synthesize([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.ReadStream(req, strings.NewReader(string(sse)), int64(len(sse)))
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	return st
}

// Every released stream is synthesized from the verdicted answer: the
// same minted response id and the same item seals in every event and in
// the terminal object, the request's model, nothing of the upstream's
// events; and it reads back to the answer's projection.
func TestStreamsAreSynthesized(t *testing.T) {
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, codexRequest)
	for name, in := range map[string]string{
		"text stream": sse(streamEvents("hello", "hello")...),
		"synthesized": func() string { b, _ := synthesize([]byte(fixedAnswer)); return string(b) }(),
	} {
		st, err := s.ReadStream(req, strings.NewReader(in), 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := st.Release(nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		respIDs, itemIDs := map[any]bool{}, map[any]bool{}
		for line := range strings.Lines(string(out)) {
			data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: ")
			if !ok {
				continue
			}
			ev, _ := jsonvalue.Decode([]byte(data))
			m := ev.(map[string]any)
			if r, ok := m["response"].(map[string]any); ok {
				respIDs[r["id"]] = true
				if r["model"] != "gpt-5-codex" {
					t.Errorf("%s: model %v, want the request's", name, r["model"])
				}
				for _, it := range r["output"].([]any) {
					itemIDs[it.(map[string]any)["id"]] = true
				}
			}
			if it, ok := m["item"].(map[string]any); ok {
				itemIDs[it["id"]] = true
			}
			if id, ok := m["item_id"]; ok {
				itemIDs[id] = true
			}
		}
		if len(respIDs) != 1 {
			t.Errorf("%s: response ids %v, want one minted id", name, respIDs)
		}
		for id := range respIDs {
			if !madeByGateway(id.(string)) {
				t.Errorf("%s: response id %v is not minted", name, id)
			}
		}
		items := len(st.Response().(*Response).items)
		if len(itemIDs) != items {
			t.Errorf("%s: %d item ids for %d items: %v", name, len(itemIDs), items, itemIDs)
		}
		for id := range itemIDs {
			if _, err := testKeys.OpenString(kindItemID, id.(string)); err != nil {
				t.Errorf("%s: item id %v is not a seal", name, id)
			}
		}
		if strings.Contains(string(out), `"resp_1"`) || strings.Contains(string(out), `"msg_1"`) || strings.Contains(string(out), `"gpt-5"`) {
			t.Errorf("%s: upstream ids or model released:\n%s", name, out)
		}
		back, err := s.ReadStream(req, strings.NewReader(string(out)), 1<<20)
		if err != nil {
			t.Fatalf("%s: the released stream does not read back: %v", name, err)
		}
		if got, want := withoutIDs(back.Response().Project()["content"]), withoutIDs(st.Response().Project()["content"]); !jsonvalue.Equal(got, want) {
			t.Errorf("%s: the released stream projects to %v, want %v", name, got, want)
		}
	}
}
