package responses

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/seal"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// Seeds beyond testdata/fuzz: the fixtures of the package's tests. Run
// locally only, e.g. go test -run '^$' -fuzz FuzzRequestRoundTrip
// -fuzztime 30s -fuzzminimizetime 1s ./internal/wire/responses/ (streams
// are large inputs: without the short minimization the worker spends the
// whole run minimizing new inputs).

// FuzzRequestRoundTrip: an accepted request goes upstream the same
// whether the conversation is kept (nil) or its unchanged projection is
// written back: byte for byte unless it holds the gateway's seals (opened
// for the upstream) or logprobs (removed).
func FuzzRequestRoundTrip(f *testing.F) {
	for _, s := range []string{
		codexRequest,
		`{"model":"m","input":"hi"}`,
		`{"model":"m","instructions":"be brief","input":[{"role":"user","content":"a"},{"role":"user","content":"a"}]}`,
		`{"model":"m","input":[{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}}],"tools":[{"type":"web_search"}]}`,
	} {
		f.Add([]byte(s))
	}
	s := New(Options{Seal: testKeys})
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := s.ParseRequest(body, nil)
		if err != nil {
			return
		}
		want := body
		if bytes.Contains(body, []byte(seal.Prefix)) || bytes.Contains(body, []byte("logprobs")) {
			want, _ = r.UpstreamBody(nil)
		}
		for _, target := range []any{nil, r.Messages()} {
			out, err := r.UpstreamBody(target)
			if err != nil {
				t.Fatalf("the unchanged conversation is refused: %v", err)
			}
			if string(out) != string(want) {
				t.Fatalf("round trip changed the body:\n%s\nwant\n%s", out, want)
			}
		}
	})
}

// FuzzResponseReleasesOnlyProjected: an accepted answer released with its
// own projection carries no string the policy did not see: every string
// and member name of the released body is in the projection or the
// client's request, a member name the gateway knows, or metadata within
// its shape.
func FuzzResponseReleasesOnlyProjected(f *testing.F) {
	for _, s := range []string{
		jsonAnswer, fixedAnswer,
		strings.Replace(jsonAnswer, `"model":"gpt-5"`, `"model":"gpt 5 sk-x","note":"sk-y"`, 1),
		strings.Replace(fixedAnswer, `"annotations":[]`, `"annotations":[{"type":"url_citation","url":"u","title":"t","start_index":0,"end_index":1,"x":"sk-z"}],"logprobs":[{"token":"sk"}]`, 1),
		strings.Replace(jsonAnswer, `"total_tokens":12`, `"total_tokens":12,"sk-w":1`, 1),
	} {
		f.Add([]byte(s))
	}
	s := New(Options{Seal: testKeys})
	req, err := s.ParseRequest([]byte(codexRequest), nil)
	if err != nil {
		f.Fatal(err)
	}
	reqStrings := map[string]bool{}
	collectStrings(req.(*Request).text.Bytes(), reqStrings)
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := s.ParseResponse(req, body)
		if err != nil {
			return
		}
		proj := resp.Project()
		out, err := resp.Release(proj)
		if err != nil {
			t.Fatalf("the projection is refused: %v", err)
		}
		seen := map[string]bool{}
		projStrings(proj, seen)
		v, err := jsonvalue.Decode(out)
		if err != nil {
			t.Fatalf("released body is not JSON: %v", err)
		}
		if bad, ok := firstUnjudged(v, "", seen, reqStrings); !ok {
			t.Fatalf("released %q, which the projection lacks:\n%s", bad, out)
		}
	})
}

// collectStrings adds every string and member name of a JSON body.
func collectStrings(body []byte, into map[string]bool) {
	if v, err := jsonvalue.Decode(body); err == nil {
		addStrings(v, into)
	}
}

func addStrings(v any, into map[string]bool) {
	switch x := v.(type) {
	case string:
		into[x] = true
	case map[string]any:
		for k, e := range x {
			into[k] = true
			addStrings(e, into)
		}
	case []any:
		for _, e := range x {
			addStrings(e, into)
		}
	}
}

// projStrings adds the projection's strings, the two halves of each
// namespace-qualified call name (the wire carries them apart) and the
// member names member parts name by path.
func projStrings(proj map[string]any, into map[string]bool) {
	addStrings(proj, into)
	parts, _ := proj["content"].([]any)
	for _, p := range parts {
		if m, _ := p.(map[string]any); m["type"] == partMember {
			name := m["name"].(string)
			into[name] = true
			for i := range len(name) {
				if name[i] == '.' {
					into[name[i+1:]] = true
				}
			}
		}
	}
	calls, _ := proj["tool_calls"].([]any)
	for _, c := range calls {
		name, _ := c.(map[string]any)["name"].(string)
		if ns, rest, ok := strings.Cut(name, "."); ok {
			into[ns], into[rest] = true, true
		}
	}
}

// madeByGateway reports whether s is a value the gateway made: a seal or
// a minted id.
func madeByGateway(s string) bool {
	if strings.HasPrefix(s, seal.Prefix) {
		return true
	}
	for _, prefix := range []string{"resp_", "msg_"} {
		if hex, ok := strings.CutPrefix(s, prefix); ok && len(hex) == 24 && strings.Trim(hex, "0123456789abcdef") == "" {
			return true
		}
	}
	return false
}

// enumOf accepts the strings of a list.
func enumOf(values ...string) func(any) bool {
	return func(v any) bool { return slices.Contains(values, v.(string)) }
}

// metaShapes are the members whose released values the gateway made or
// checked against their enumeration, and those values.
var metaShapes = map[string]func(any) bool{
	"id": func(v any) bool { return madeByGateway(v.(string)) }, "item_id": func(v any) bool { return madeByGateway(v.(string)) },
	"encrypted_content": func(v any) bool { return madeByGateway(v.(string)) },
	"object":            enumOf("response"),
	"type": func(v any) bool {
		s := v.(string)
		_, event := eventMembers[s]
		return event || hostedCallTypes[s] || enumOf("message", "function_call", "reasoning", "output_text", "refusal", "summary_text", "reasoning_text", "url_citation")(s)
	},
	"status": func(v any) bool { return responseStatuses.has(v) || itemStatuses.has(v) },
	"role":   enumOf("assistant"), "reason": enumOf("max_output_tokens", "content_filter"),
	"service_tier": enumOf("auto", "default", "flex", "scale", "priority"), "prompt_cache_retention": enumOf("in_memory", "in-memory", "24h"),
	"truncation": enumOf("auto", "disabled"), "phase": enumOf("commentary", "final_answer"),
}

// knownNames are the member names the gateway releases on its own.
var knownNames = func() map[string]bool {
	m := map[string]bool{}
	for _, set := range [][]string{responseKnown.SortedNames(), outMessageMembers.SortedNames(), outTextMembers.SortedNames(),
		outCallMembers.SortedNames(), reasoningMembers.SortedNames(), summaryPartMembers.SortedNames(),
		{"input_tokens", "output_tokens", "total_tokens", "input_tokens_details", "output_tokens_details", "cached_tokens", "reasoning_tokens", "reason", "start_index", "end_index", "url", "title", "refusal"}} {
		for _, n := range set {
			m[n] = true
		}
	}
	return m
}()

// firstUnjudged returns a string of v (found under member key) that is
// neither judged nor metadata within its shape.
func firstUnjudged(v any, key string, judged, request map[string]bool) (string, bool) {
	switch x := v.(type) {
	case string:
		if x == "" || judged[x] || request[x] || metaShapes[key] != nil && metaShapes[key](x) {
			return "", true
		}
		if key == "arguments" { // the projected args, serialized
			if args, err := jsonvalue.Decode([]byte(x)); err == nil {
				return firstUnjudged(args, "", judged, request)
			}
		}
		return x, false
	case map[string]any:
		for k, e := range x {
			if !judged[k] && !request[k] && !knownNames[k] {
				return k, false
			}
			if bad, ok := firstUnjudged(e, k, judged, request); !ok {
				return bad, false
			}
		}
	case []any:
		for _, e := range x {
			if bad, ok := firstUnjudged(e, key, judged, request); !ok {
				return bad, false
			}
		}
	}
	return "", true
}

// FuzzStreamReleasesOnlyProjected: an accepted stream released with its
// own projection (replayed or synthesized) carries no string the policy
// did not see, as FuzzResponseReleasesOnlyProjected; a delta may be any
// piece of a judged string.
func FuzzStreamReleasesOnlyProjected(f *testing.F) {
	synth, _ := synthesize([]byte(fixedAnswer))
	for _, s := range []string{
		sse(streamEvents("hello", "hello")...), string(synth),
		strings.Replace(sse(streamEvents("hello", "hello")...), `"content":[]}`, `"content":[],"x":"sk-x"}`, 1),
		strings.Replace(sse(streamEvents("hello", "hello")...), `"model":"gpt-5","output":[]`, `"model":"gpt 5","output":[]`, 1),
	} {
		f.Add([]byte(s))
	}
	s := New(Options{Seal: testKeys})
	req, err := s.ParseRequest([]byte(codexRequest), nil)
	if err != nil {
		f.Fatal(err)
	}
	reqStrings := map[string]bool{}
	collectStrings(req.(*Request).text.Bytes(), reqStrings)
	for name := range eventMembers {
		reqStrings[name] = true // event types
	}
	for _, set := range eventMembers {
		for _, n := range set.SortedNames() {
			reqStrings[n] = true
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		st, err := s.ReadStream(req, strings.NewReader(string(body)), 1<<20)
		if err != nil {
			return
		}
		proj := st.Response().Project()
		out, err := st.Release(proj)
		if err != nil {
			t.Fatalf("the projection is refused: %v", err)
		}
		judged := map[string]bool{}
		projStrings(proj, judged)
		for line := range strings.Lines(string(out)) {
			data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: ")
			if !ok {
				continue
			}
			v, err := jsonvalue.Decode([]byte(data))
			if err != nil {
				t.Fatalf("released event is not JSON: %v", err)
			}
			ev := v.(map[string]any)
			if d, ok := ev["delta"].(string); ok && pieceOf(d, judged) {
				delete(ev, "delta")
			}
			if bad, ok := firstUnjudged(ev, "", judged, reqStrings); !ok {
				t.Fatalf("released %q, which the projection lacks:\n%s", bad, out)
			}
		}
	})
}

// pieceOf reports whether d is part of a judged string (or of a judged
// call's serialized args).
func pieceOf(d string, judged map[string]bool) bool {
	for s := range judged {
		if strings.Contains(s, d) {
			return true
		}
	}
	return false
}
