package messages

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonmutate"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// onePassSeeds are requests around which the one-pass parse is checked
// against the Valid-first one.
func onePassSeeds(t *testing.T) []string {
	return []string{
		string(claudeCodeBody(t)),
		`{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"a"}]}`,
		`{"model":"m","max_tokens":9,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"text","text":"\u00e9"}]},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{"x":[1,2]}}]}],"stream":true,"frobnicate":{"a":null}}`,
		` {"messages" : [ {"role":"user","content":"a"} ] , "model":"m" , "max_tokens" : 1 } `,
		`{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"a"}],"stream":tru}`,
		`{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"a"} {"role":"user","content":"b"}]}`,
		`{"model":"m","max_tokens":9,"messages":[1 "x],"b":"]}`,
		`{"model":"m","max_tokens":,"messages":[]}`,
	}
}

// checkOnePass checks parse against parseValidated on body: the same
// error, or the same request; an accepted body is valid JSON.
func checkOnePass(t *testing.T, s *Surface, op wire.Operation, body []byte) {
	t.Helper()
	got, gerr := s.parseBody(body, op, nil)
	want, werr := s.parseValidated(jsonvalue.NewText(body), op, nil)
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("parse(%q) error %v, Valid-first %v", body, gerr, werr)
	}
	if gerr != nil {
		return
	}
	if !json.Valid(body) {
		t.Fatalf("parse accepted invalid JSON %q", body)
	}
	if got.Model() != want.Model() || got.Stream() != want.Stream() || got.root != want.root || got.sysMember != want.sysMember ||
		!jsonvalue.Equal(any(got.Messages()), any(want.Messages())) || !jsonvalue.Equal(any(got.Params()), any(want.Params())) ||
		!jsonvalue.Equal(any(got.Tools()), any(want.Tools())) || len(got.members) != len(want.members) {
		t.Fatalf("parse(%q) differs from the Valid-first parse", body)
	}
	for i := range got.members {
		if got.members[i] != want.members[i] {
			t.Fatalf("parse(%q) member %d differs", body, i)
		}
	}
}

// TestParseOnePassMatchesValidFirst runs checkOnePass on the seeds and
// thousands of mutations of them.
func TestParseOnePassMatchesValidFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	surfaces := []*Surface{New(Options{}), New(Options{AllowRequestMembers: []string{"frobnicate"}, MaxMessages: 2})}
	n := 1500
	if testing.Short() {
		n = 150
	}
	for _, seed := range onePassSeeds(t) {
		for _, s := range surfaces {
			for _, op := range []wire.Operation{wire.OpMessages, wire.OpCountTokens} {
				checkOnePass(t, s, op, []byte(seed))
				for range n {
					checkOnePass(t, s, op, jsonmutate.Bytes(rng, []byte(seed)))
				}
			}
		}
	}
}

// TestParseOnePassNesting: a value nested right at encoding/json's limit
// is accepted, one level deeper is "not valid JSON", as before.
func TestParseOnePassNesting(t *testing.T) {
	s := New(Options{AllowRequestMembers: []string{"frobnicate"}})
	for _, extra := range []int{0, 1} {
		depth := 10000 - 1 + extra // the body's object
		body := []byte(`{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"a"}],"frobnicate":` +
			strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
		checkOnePass(t, s, wire.OpMessages, body)
		if _, err := s.parse(body, wire.OpMessages); (err == nil) != json.Valid(body) {
			t.Errorf("depth +%d: parse error %v, json.Valid %v", extra, err, json.Valid(body))
		}
	}
}

// TestParseOnePassTaken pins that valid requests take the one-pass path.
func TestParseOnePassTaken(t *testing.T) {
	s := New(Options{AllowRequestMembers: []string{"frobnicate"}})
	for _, seed := range onePassSeeds(t)[:4] {
		body := sealed(t, s, []byte(seed)) // as the gateway's client sends it
		root, ms, ok := rawjson.ScanRootDeferred(body)
		if !ok {
			t.Fatalf("ScanRootDeferred refused %q", seed)
		}
		r := &Request{s: s, text: jsonvalue.NewText(body), root: root, members: ms, op: wire.OpMessages, sysMember: -1}
		if err := s.parseMembers(r); err != nil {
			t.Fatalf("one pass refused %q: %v", seed, err)
		}
	}
}
