package chat

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// fastChunkCases are chunk texts at the edge of the fast path's shape:
// each must be folded in exactly as the tree path folds it, or refused
// exactly as it refuses it.
var fastChunkCases = []string{
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\ud83d"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\ude00"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\ud83d\u0041"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\ud83dx"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\x"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\u12G4"}}]}`,
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\x01\"}}]}",
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\"}}]}",
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xed\xa0\x80\"}}]}",
	`{"choices":[{"index":0,"delta":{"content":"x","content":"y"}}]}`,
	`{"choices":[{"index":0,"index":0,"delta":{"content":"x"}}]}`,
	`{"choices":[],"choices":[]}`,
	`{"id":"a","id":"a","choices":[]}`,
	`{"choices":[{"index":0,"delta":{"Content":"x"}}]}`,
	`{"Choices":[{"index":0,"delta":{"content":"x"}}]}`,
	`{"choices":[{"Index":0,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":0,"delta":{"cont\u0065nt":"x"}}]}`,
	`{"choices":[{"index":1,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":0.0,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":"0","delta":{"content":"x"}}]}`,
	`{"choices":[{"index":null,"delta":{"content":"x"}},{"index":0,"delta":{"content":"y"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":5}}]}`,
	`{"choices":[{"index":0,"delta":{"content":["x"]}}]}`,
	`{"choices":[{"index":0,"delta":{"role":"user"}}]}`,
	`{"choices":[{"index":0,"delta":{"role":5}}]}`,
	`{"choices":[{"index":0,"delta":{"role":null,"content":null,"refusal":null,"tool_calls":null}}]}`,
	`{"choices":[{"index":0,"delta":{"refusal":"no \u0021"}}]}`,
	`{"choices":[{"index":0,"delta":null,"finish_reason":"stop"}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"st\u006fp"}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":1}]}`,
	`{"choices":[{"index":0,"delta":{},"logprobs":{"content":[]}}]}`,
	`{"choices":[{"index":0,"delta":{},"logprobs":null,"x":1}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":"r\u00e9","reasoning_content":"t","content":"c"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":"","reasoning_content":null}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":5}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":"a","reasoning":"b"}}]}`,
	`{"choices":[{"index":0,"delta":{"Reasoning":"a"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"x"}],"reasoning":"y"}}]}`,
	`{"choices":[{"index":0,"delta":{"extra":"x"}}]}`,
	`{"choices":null}`, `{"choices":{}}`, `{"choices":[null]}`, `{"choices":[1]}`,
	`{"choices":[],"usage":null}`, `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
	`{"choices":[],"usage":5}`, `{"choices":[],"error":null}`, `{"choices":[],"error":{"message":"x"}}`,
	`{"choices":[],"obfuscation":"abc"}`, `{"choices":[],"obfuscation":5}`, `{"choices":[],"other":1}`,
	`{"id":"c2","choices":[]}`, `{"id":"bad id with spaces","choices":[]}`, `{"id":5,"choices":[]}`, `{"id":null,"choices":[]}`,
	`{"id":"\u0063","choices":[]}`, `{"object":"chat.completion","choices":[]}`, `{"object":"chat.completion.chunk","choices":[]}`,
	`{"created":1.5,"choices":[]}`, `{"created":-1,"choices":[]}`, `{"created":1e3,"choices":[]}`, `{"created":01,"choices":[]}`,
	`{"created":-,"choices":[]}`, `{"created":1.,"choices":[]}`, `{"created":1e,"choices":[]}`, `{"created":true,"choices":[]}`,
	`{"system_fingerprint":null,"service_tier":"default","choices":[]}`, `{"service_tier":"Bad Tier","choices":[]}`,
	`{"model":"other-model","choices":[]}`, `{"model":{"x":1},"choices":[]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_2","function":{"name":"g"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_3","function":{"name":"h","arguments":""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"x"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"function":{"arguments":"x"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":65536,"function":{"arguments":"x"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":65537,"function":{"arguments":"x"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1.0,"function":{"arguments":"x"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":"1"}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"type":"custom"}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"type":"f\u0075nction"}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"type":null,"id":null,"function":null}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"id":7}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"name":1}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"name":"a","name":"b"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"Name":"a"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"strict":true}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"extra":1}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[null]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":{}}}]}`,
	`{"id":"c","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`,
	`{"choices":null,"usage":{"prompt_tokens":1}}`, `{"usage":{"prompt_tokens":1}}`, `{"usage":{}}`, `{"choices":[],"usage":{},"usage":null}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`,
	`{"choices":[],"usage":{"prompt_tokens":1,"prompt_tokens":2}}`, `{"choices":[],"usage":{"prompt_tokens_details":{"cached_tokens":1,"cached_tokens":1}}}`,
	`{"choices":[],"usage":{"prompt_tokens":1.5,"completion_tokens":-1,"total_tokens":"3","cost":0.01,"x":null}}`,
	`{"choices":[],"usage":{"prompt_tokens":true}}`, `{"choices":[],"usage":{"prompt_tokens":[1]}}`, `{"choices":[],"usage":{"a":{"b":{"c":1}}}}`,
	`{"choices":[],"usage":{"pr\u006fmpt_tokens":1}}`, `{"choices":[],"usage":{"x":"\ud800"}}`, "{\"choices\":[],\"usage\":{\"x\":\"\xff\"}}",
	`{"choices":[],"usage":{"prompt_tokens":01}}`, `{"choices":[],"usage":{"prompt_tokens":1,}}`, `{"choices":[],"usage":{"prompt_tokens_details":null}}`,
	`{"choices":[],"usage":{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"l":1,"m":1,"n":1,"o":1,"p":1}}`,
	`{"choices":[],"usage":{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"l":1,"m":1,"n":1,"o":1,"p":1,"q":1}}`,
	`{"choices":[],"usage":{"Prompt_tokens":1,"prompt_tokens":2}}`,
	` { "choices" : [ { "index" : 0 , "delta" : { "content" : "sp" } } ] } `,
	`{"choices":[{"index":0,"delta":{"content":"x"}}]} x`, `{"choices":[{"index":0,"delta":{"content":"x"}}]`,
	`{"choices":[{"index":0,"delta":{"content":"x"}},]}`, `{"choices":[{"index":0,"delta":{"content":"x",}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}],}`, `{,}`, `{}`, `[]`, `"x"`, `nul`, `{"choices":[{"index":nul}]}`,
}

// TestFastPathAgreesWithTree reads streams made of each edge chunk, alone
// and between ordinary chunks, with and without the fast path: the
// outcome (error, projection, metadata, usage, replayability, released
// bytes) must be the same.
func TestFastPathAgreesWithTree(t *testing.T) {
	ordinary := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}`
	for _, c := range fastChunkCases {
		for _, s := range []string{
			"data: " + c + "\n\ndata: [DONE]\n\n",
			"data: " + ordinary + "\n\ndata: " + c + "\n\ndata: " + c + "\n\ndata: [DONE]\n\n",
		} {
			agree(t, []byte(s))
		}
	}
	files, _ := filepath.Glob("testdata/streams/*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		agree(t, b)
	}
	agree(t, stream200())
	agree(t, []byte(sseToolStream))
}

// TestFastPathTaken: the common chunks do take the fast path (else the
// agreement test would prove nothing).
func TestFastPathTaken(t *testing.T) {
	data := stream200()
	lines := strings.Split(strings.TrimSpace(string(data)), "\n\n")
	fast := 0
	a := newAssembler(ResponseOptions{})
	for _, l := range lines {
		if ok, _ := a.addFast([]byte(strings.TrimPrefix(l, "data: "))); ok {
			fast++
		}
	}
	if want := len(lines) - 1; fast != want { // all but [DONE]
		t.Fatalf("%d of %d chunks took the fast path, want %d", fast, len(lines), want)
	}
}

func agree(t *testing.T, data []byte) {
	t.Helper()
	opts := ResponseOptions{Model: "req-model", id: testID}
	fast, ferr := readStream(bytes.NewReader(data), 1<<20, opts, false)
	tree, terr := readStream(bytes.NewReader(data), 1<<20, opts, true)
	if (ferr == nil) != (terr == nil) || ferr != nil && ferr.Error() != terr.Error() {
		t.Fatalf("stream %q: fast path error %v, tree path error %v", data, ferr, terr)
	}
	if ferr != nil {
		return
	}
	fr, tr := fast.Response(), tree.Response()
	if !jsonvalue.Equal(fr.Project(), tr.Project()) || fr.meta != tr.meta || fast.Replayable() != tree.Replayable() ||
		(fr.usage == nil) != (tr.usage == nil) || fr.usage != nil && !bytes.Equal(fr.usage.raw, tr.usage.raw) {
		t.Fatalf("stream %q: fast path assembled %s (meta %+v, replayable %v), tree path %s (meta %+v, replayable %v)",
			data, mustJSON(t, fr.Project()), fr.meta, fast.Replayable(), mustJSON(t, tr.Project()), tr.meta, tree.Replayable())
	}
	for _, usage := range []bool{true, false} {
		fo, ferr := fast.Release(nil, usage)
		to, terr := tree.Release(nil, usage)
		if ferr != nil || terr != nil || !bytes.Equal(fo, to) {
			t.Fatalf("stream %q: releases differ (errors %v, %v)", data, ferr, terr)
		}
	}
}

// FuzzFastPathAgreesWithTree: on any input the fast path decides as the
// tree path does.
func FuzzFastPathAgreesWithTree(f *testing.F) {
	for _, c := range fastChunkCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, chunk []byte) {
		if bytes.ContainsAny(chunk, "\r\n") {
			return
		}
		agree(t, append(append([]byte("data: "), chunk...), "\n\ndata: [DONE]\n\n"...))
	})
}

// TestTwoReasoningChannels: a stream that extends a reasoning channel
// after a second one was created assembles both (the builders once moved
// when the second was added, which panicked on the next write).
func TestTwoReasoningChannels(t *testing.T) {
	c := `{"choices":[{"index":0,"delta":{"reasoning":"r","reasoning_content":"t"}}]}`
	s := "data: " + c + "\n\ndata: " + c + "\n\ndata: [DONE]\n\n"
	for _, treeOnly := range []bool{false, true} {
		st, err := readStream(strings.NewReader(s), 1<<20, ResponseOptions{}, treeOnly)
		if err != nil {
			t.Fatal(err)
		}
		r := st.Response().ans.reasoning
		if len(r) != 2 || r[0].member != wireReasoningContent || r[0].text != "tt" || r[1].member != wireReasoning || r[1].text != "rr" {
			t.Fatalf("tree only %v: reasoning %+v", treeOnly, r)
		}
	}
}

// TestFastMetaFirstValue: the fast path keeps the first releasable value
// of created and service_tier, whether the tree path or the fast path read
// it; ids, models and fingerprints, which the gateway's head replaces in
// every released chunk, change nothing.
func TestFastMetaFirstValue(t *testing.T) {
	chunks := []string{
		`{"id":"a","model":"m","created":1,"service_tier":"bad tier","choices":[]}`,
		`{"id":"b","model":"m2","system_fingerprint":"fp_x","created":2,"service_tier":"priority","choices":[]}`,
		`{"id":"c","created":3,"service_tier":"flex","choices":[{"index":0,"delta":{"content":"x"}}]}`,
	}
	s := ""
	for _, ch := range chunks {
		s += "data: " + ch + "\n\n"
	}
	s += "data: [DONE]\n\n"
	agree(t, []byte(s))
	st, err := readStream(strings.NewReader(s), 1<<20, ResponseOptions{Model: "asked", id: testID}, false)
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Response().meta; !st.Replayable() || m.created != 1 || m.serviceTier != "priority" {
		t.Fatalf("replayable %v, meta %+v; want replayable, created 1, tier priority", st.Replayable(), m)
	}
	out, err := st.Release(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	checkReleasedMeta(t, out, testID, "asked")
	if n := strings.Count(string(out), `"created":1,`); n != 3 || strings.Contains(string(out), "flex") {
		t.Errorf("the head is not the first values in every chunk:\n%s", out)
	}
	// The tree path's first value is the one the fast path keeps.
	a := newAssembler(ResponseOptions{})
	if _, err := a.add([]byte(`{"created":7,"choices":[]}`), map[string]any{"created": json.Number("7"), "choices": []any{}}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.addFast([]byte(`{"created":8,"choices":[]}`)); !ok || a.meta.created != 7 {
		t.Errorf("fast path took %v, created %d; want the tree path's 7", ok, a.meta.created)
	}
}
