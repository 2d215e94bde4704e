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

func webSearch(query string) map[string]any {
	return map[string]any{"id": "ws_1", "type": "web_search_call", "status": "completed",
		"action": map[string]any{"type": "search", "query": query, "sources": []any{map[string]any{"type": "url", "url": "https://a.test/"}}}}
}

var hello = map[string]any{"type": "text", "text": "hello"}

// Reasoning parts are written back to their entries, provider-tool parts
// to their items; encrypted content and ids keep their bytes; adding or
// reshaping is refused.
func TestWriteBackFixedParts(t *testing.T) {
	s := New(Options{})
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
			want: []string{`{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"s1"},{"type":"summary_text","text":"[redacted]"}],"content":[{"type":"reasoning_text","text":"r1"}],"encrypted_content":"E1"}`,
				`{"id":"rs_2","type":"reasoning","summary":[{"type":"summary_text","text":"s3"}],"encrypted_content":"E2"}`}},
		{name: "rewrite a reasoning_text entry", content: []any{reasoning("s1"), reasoning("s2"), reasoning(""), webSearch("q"), reasoning("s3"), hello},
			want: []string{`"content":[{"type":"reasoning_text","text":""}],"encrypted_content":"E1"`}},
		{name: "remove a middle entry", content: []any{reasoning("s1"), reasoning("r1"), webSearch("q"), reasoning("s3"), hello},
			want: []string{`"summary":[{"type":"summary_text","text":"s1"}],"content":[{"type":"reasoning_text","text":"r1"}],"encrypted_content":"E1"`}},
		{name: "remove every reasoning entry", content: []any{webSearch("q"), hello},
			want: []string{`{"id":"rs_1","type":"reasoning","summary":[],"content":[],"encrypted_content":"E1"}`, `{"id":"rs_2","type":"reasoning","summary":[],"encrypted_content":"E2"}`}},
		{name: "rewrite a web search query", content: []any{reasoning("s1"), reasoning("s2"), reasoning("r1"), webSearch("[redacted]"), reasoning("s3"), hello},
			want: []string{`"query":"[redacted]"`, `"id":"ws_1"`, `"encrypted_content":"E1"`, `"text":"hello"`}},
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
			target := map[string]any{"content": tc.content, "tool_calls": []any{}, "finish_reason": "stop"}
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
			again, err := s.ParseResponse(req, body)
			if err != nil {
				t.Fatalf("released body does not parse: %v", err)
			}
			if got := again.Project(); !jsonvalue.Equal(got["content"], tc.content) {
				g, _ := jsonvalue.Marshal(got["content"])
				t.Fatalf("released body projects to %s", g)
			}
			// Streams synthesized from the verdict carry the same parts.
			st := streamOf(t, s, req, fixedAnswer)
			sse, err := st.Release(target)
			if err != nil {
				t.Fatal(err)
			}
			back, err := s.ReadStream(req, strings.NewReader(string(sse)), int64(len(sse)))
			if err != nil {
				t.Fatalf("synthesized stream does not read back: %v\n%s", err, sse)
			}
			if got := back.Response().Project(); !jsonvalue.Equal(got["content"], tc.content) {
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

// A stream whose events only repeat their done items replays byte for
// byte: the echo checks do not turn clean streams into synthesized ones.
func TestCleanStreamsReplay(t *testing.T) {
	s := New(Options{})
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
		if err != nil || string(out) != in {
			t.Errorf("%s: not replayed (%v):\n%s\nwant\n%s", name, err, out, in)
		}
	}
}
