package messages

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
)

func TestRequestProjectionShapes(t *testing.T) {
	cases := []struct{ name, messages, system, want string }{
		{name: "string system and content", system: `"be brief"`, messages: `[{"role":"user","content":"hi"}]`,
			want: `[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]`},
		{name: "images", messages: `[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x/a.png"}},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}}]}]`,
			want: `[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/a.png"}},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}}]}]`},
		{name: "document native", messages: `[{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"secret"},"title":"t","citations":{"enabled":true}}]}]`,
			want: `[{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"secret"},"title":"t","citations":{"enabled":true}}]}]`},
		{name: "empty user content", messages: `[{"role":"user","content":[]}]`, want: `[{"role":"user","content":[]}]`},
		{name: "tool result image", messages: `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"url","url":"https://x/b.png"}}]}]}]`,
			want: `[{"role":"tool","tool_call_id":"t","content":[{"type":"image_url","image_url":{"url":"https://x/b.png"}}]}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := `{"model":"m","max_tokens":1,"messages":` + c.messages
			if c.system != "" {
				body += `,"system":` + c.system
			}
			r := parseOK(t, New(Options{}), body+`}`)
			if got := r.Messages(); !jsonvalue.Equal(any(got), mustJSON(t, c.want)) {
				g, _ := jsonvalue.Marshal(got)
				t.Errorf("Messages() = %s", g)
			}
			out, err := r.UpstreamBody(r.Messages())
			if err != nil || string(out) != body+`}` {
				t.Errorf("round trip: %v", err)
			}
		})
	}
}

// Random structure-preserving edits of Claude Code's projection (text,
// tool results, arguments, removals of parts and calls) are written back
// so that the written body projects exactly as the target.
func TestWriteBackProperty(t *testing.T) {
	s := New(Options{})
	wr, err := s.ParseRequest(sealedFixture(t, s), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := wr.(*Request)
	rng := rand.New(rand.NewPCG(1, 2))
	written := 0
	for iter := range 300 {
		target := jsonvalue.DeepCopy(r.Messages()).([]any) // mutated below
		for range 1 + rng.IntN(3) {
			mutate(rng, target, iter)
		}
		out, err := r.UpstreamBody(target)
		if err != nil {
			continue // refusals are checked elsewhere; here only what is written
		}
		written++
		if strings.Contains(string(out), seal.Prefix) {
			t.Fatalf("iteration %d: a seal is written upstream unopened:\n%s", iter, out)
		}
		again := reparse(t, out).Messages()
		if !jsonvalue.Equal(any(again), any(target)) {
			g, _ := jsonvalue.Marshal(again)
			w, _ := jsonvalue.Marshal(target)
			t.Fatalf("iteration %d: written body projects as\n%s\nwant\n%s", iter, g, w)
		}
	}
	if written < 200 {
		t.Errorf("only %d of 300 edits were written", written)
	}
}

func mutate(rng *rand.Rand, msgs []any, iter int) {
	m := obj(msgs[rng.IntN(len(msgs))])
	tag := "edit " + strconv.Itoa(iter)
	switch c := m["content"].(type) {
	case string:
		m["content"] = c + " " + tag
		return
	case []any:
		if len(c) == 0 {
			break
		}
		k := rng.IntN(len(c))
		p := obj(c[k])
		switch {
		case p["type"] == "text" && rng.IntN(2) == 0:
			p["text"] = tag
			return
		case m["role"] == "assistant" && rng.IntN(2) == 0:
			m["content"] = append(c[:k:k], c[k+1:]...) // remove a part (thinking included)
			return
		}
	}
	if calls, ok := m["tool_calls"].([]any); ok && len(calls) > 0 {
		fn := obj(obj(calls[0])["function"])
		if rng.IntN(2) == 0 {
			fn["arguments"] = `{"edited":` + strconv.Itoa(iter) + `}`
		} else {
			m["tool_calls"] = calls[1:]
			if len(calls) == 1 {
				delete(m, "tool_calls")
			}
		}
	}
}
