package chat

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonmutate"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// onePassSeeds are requests around which the one-pass parse is checked
// against the Valid-first one.
var onePassSeeds = []string{
	requestBody,
	request2KiB(),
	`{"model":"m","messages":[{"role":"user","content":"a"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null}],"stream":true,"stream_options":{"include_usage":true},"n":1,"audio":null,"tools":null}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}],"temperature":0.2}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"\u00e9"}]}],"x_extra":{"a":[1,2]}}`,
	` {"messages" : [ {"role":"user","content":"a"} , {"role":"user","content":"b"} ] , "model":"m"} `,
	`{"model":"m","messages":[{"role":"user","content":"a"}],"stream":tru}`,
	`{"model":"m","messages":[{"role":"user","content":"a"} {"role":"user","content":"b"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"a"},]}`,
	`{"model":"m","messages":[{"role":"user","content":"\ud800"}],"audio":nulx}`,
	`{"model":"m","messages":[1 "x],"b":"]}`,
}

// checkOnePass checks Parse against parseValidated (the Valid-first path)
// on body: the same error, or the same request; and when the one-pass
// path accepts on its own, the body is valid JSON.
func checkOnePass(t *testing.T, p *RequestParser, body []byte) {
	t.Helper()
	got, gerr := p.Parse(body)
	want, werr := p.parseValidated(jsonvalue.NewText(body), nil)
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("Parse(%q) error %v, Valid-first %v", body, gerr, werr)
	}
	if gerr != nil {
		return
	}
	if !json.Valid(body) {
		t.Fatalf("Parse accepted invalid JSON %q", body)
	}
	if got.Model() != want.Model() || got.Stream() != want.Stream() || got.IncludeUsage() != want.IncludeUsage() ||
		!jsonvalue.Equal(any(got.Messages()), any(want.Messages())) || !jsonvalue.Equal(any(got.Params()), any(want.Params())) ||
		!jsonvalue.Equal(any(got.Tools()), any(want.Tools())) || len(got.members) != len(want.members) ||
		got.root != want.root || got.msgSpan != want.msgSpan || len(got.msgRaw) != len(want.msgRaw) {
		t.Fatalf("Parse(%q) differs from the Valid-first parse", body)
	}
	for i := range got.members {
		if got.members[i] != want.members[i] {
			t.Fatalf("Parse(%q) member %d differs", body, i)
		}
	}
	for i := range got.msgRaw {
		if got.msgRaw[i] != want.msgRaw[i] {
			t.Fatalf("Parse(%q) message span %d differs", body, i)
		}
	}
}

// TestParseOnePassMatchesValidFirst runs checkOnePass on the seeds and
// thousands of mutations of them, under a parser with an allowed extra
// and a message limit too.
func TestParseOnePassMatchesValidFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	parsers := []*RequestParser{{}, NewRequestParser([]string{"x_extra"}).WithMaxMessages(2)}
	n := 3000
	if testing.Short() {
		n = 300
	}
	for _, s := range onePassSeeds {
		for _, p := range parsers {
			checkOnePass(t, p, []byte(s))
			for range n {
				checkOnePass(t, p, jsonmutate.Bytes(rng, []byte(s)))
			}
		}
	}
}

// TestParseOnePassNesting: a message nested right at encoding/json's limit
// is accepted, one level deeper is "not valid JSON", as before.
func TestParseOnePassNesting(t *testing.T) {
	for _, extra := range []int{0, 1} {
		depth := 10000 - 3 + extra // the body's object, messages, the message
		body := []byte(`{"model":"m","messages":[{"role":"user","content":"a","x":` +
			strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}]}`)
		var p RequestParser
		checkOnePass(t, &p, body)
		if _, err := p.Parse(body); (err == nil) != json.Valid(body) {
			t.Errorf("depth +%d: Parse error %v, json.Valid %v", extra, err, json.Valid(body))
		}
	}
}

func FuzzParseOnePass(f *testing.F) {
	for _, s := range onePassSeeds {
		f.Add([]byte(s))
	}
	allow := NewRequestParser([]string{"x_extra"})
	f.Fuzz(func(t *testing.T, body []byte) {
		var p RequestParser
		checkOnePass(t, &p, body)
		checkOnePass(t, allow, body)
	})
}

// TestParseOnePassTaken pins that valid requests take the one-pass path.
func TestParseOnePassTaken(t *testing.T) {
	for _, seed := range onePassSeeds[:7] {
		root, ms, ok := rawjson.ScanRoot([]byte(seed), "messages")
		if !ok {
			t.Fatalf("ScanRoot refused %q", seed)
		}
		r := &Request{text: jsonvalue.NewText([]byte(seed)), root: root, members: ms}
		if err := NewRequestParser([]string{"x_extra"}).parseMembers(r); err != nil {
			t.Fatalf("one pass refused %q: %v", seed, err)
		}
	}
}
