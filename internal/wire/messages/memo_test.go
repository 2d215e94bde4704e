package messages

import (
	"github.com/hooks-gateway/hooks-gateway/internal/wire/wiretest"
	"net/http"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/agenttraffic"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/sessioncache"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// memoHeader is the header every memo test request is sent with: betas
// and a version the projection holds beside the body's.
var memoHeader = http.Header{BetaHeaderName: {"b1, b2"}, VersionHeaderName: {"2023-06-01"}}

// memoSealedCases are requests with a seal in each place a request
// carries one (system and message citations, thinking, redacted
// thinking, the container), provider tools declared before and after
// mcp_servers, and the same messages under several system prompts.
func memoSealedCases(s *Surface) []string {
	sig := string(s.sealString(kindSignature, "sig-blob"))
	data := string(s.sealString(kindRedactedData, "redacted-blob"))
	idx := string(s.sealString(kindEncryptedIndex, "index-blob"))
	cont := string(s.sealString(kindContainerID, "container_1"))
	cite := `{"type":"text","text":"cited","citations":[{"type":"web_search_result_location","url":"u","title":"t","cited_text":"c","encrypted_index":` + idx + `}]}`
	asst := `{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":` + sig + `},{"type":"redacted_thinking","data":` + data + `},` + cite + `,{"type":"tool_use","id":"t1","name":"Bash","input":{"c":"ls"}}]}`
	user := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a.txt"}]},{"type":"text","text":"next"}]}`
	msgs := `"messages":[{"role":"user","content":"q"},` + asst + `,` + user + `]`
	tools := `"tools":[{"name":"Bash","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"},{"type":"frob_1","x":1}]`
	mcp := `"mcp_servers":[{"type":"url","url":"https://m","name":"srv"}]`
	return []string{
		`{"model":"m","max_tokens":9,` + msgs + `}`,
		`{"model":"m","max_tokens":9,"system":"short",` + msgs + `}`,
		`{"model":"m","max_tokens":9,"system":[` + cite + `,{"type":"text","text":"more system"}],` + msgs + `}`,
		`{"model":"m","max_tokens":9,"container":` + cont + `,"system":[` + cite + `],` + tools + `,` + msgs + `}`,
		`{"model":"m","max_tokens":9,` + mcp + `,` + tools + `,` + msgs + `}`,
		`{"model":"m","max_tokens":9,` + tools + `,` + mcp + `,` + msgs + `}`,
		`{"model":"m","max_tokens":9,"tools":[{"name":"Bash","input_schema":{"type":"object"}}],` + msgs + `,` + mcp + `}`,
		`{"model":"m","max_tokens":9,"tools":[{"name":"Bash","input_schema":{"type":"object"}}],` + msgs + `}`,
		`{"model":"m","max_tokens":9,"tools":[],` + msgs + `,"system":[` + cite + `]}`,
		`{"model":"m","max_tokens":9,"messages":[` + asst + `,{"role":"user","content":"q"}]}`,
	}
}

// memoTurns are bodies a session's memo sees one after the other, so
// later ones reuse the units of earlier ones: a growing Claude Code
// conversation (its signatures sealed), the sealed cases, the raw path's
// cases; and each of them again with a member before the others, so that
// every unit comes back at another offset of the body.
func memoTurns(t testing.TB, s *Surface) [][]byte {
	t.Helper()
	capture, err := agenttraffic.LoadCapture(filepath.Join("..", "..", "..", agenttraffic.CaptureDir), agenttraffic.ClaudeCodeFixture, "/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	var bodies [][]byte
	for rounds := 1; rounds <= 6; rounds++ {
		b, err := agenttraffic.ClaudeCode(capture, rounds, 0)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, sealed(t, s, b))
	}
	bodies = append(bodies, sealedFixture(t, s))
	for _, b := range memoSealedCases(s) {
		bodies = append(bodies, []byte(b))
	}
	for _, b := range rawMessagesSeeds(t) {
		bodies = append(bodies, []byte(b))
	}
	for _, b := range bodies[:len(bodies):len(bodies)] {
		bodies = append(bodies, shifted(b))
	}
	return bodies
}

// shifted is body with a member inserted first when it is an object.
func shifted(body []byte) []byte {
	if len(body) == 0 || body[0] != '{' {
		return body
	}
	return append([]byte(`{"stop_sequences":["shifted by this member"],`), body[1:]...)
}

// memoSurfaces are the surfaces the memo tests parse with, all on keys.
func memoSurfaces(keys *seal.Keyring) []*Surface {
	return []*Surface{
		New(Options{Seal: keys, AllowServerTools: true}),
		New(Options{Seal: keys, StrictMembers: true}),
	}
}

// TestMemoParseMatchesFresh parses a session's bodies through one memo,
// each twice (the second all hits), and fails on any difference from a
// fresh parse that a caller could see.
func TestMemoParseMatchesFresh(t *testing.T) {
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	for _, s := range memoSurfaces(seal.Ephemeral()) {
		for _, body := range memoTurns(t, s) {
			for range 2 {
				compareMemoAndFresh(t, s, memo, body)
			}
		}
	}
}

// FuzzMemoParseMatchesFresh is TestMemoParseMatchesFresh over any
// bodies, all through one memo.
func FuzzMemoParseMatchesFresh(f *testing.F) {
	keys := seal.Ephemeral()
	ss := memoSurfaces(keys)
	for _, b := range memoSealedCases(ss[0]) {
		f.Add([]byte(b))
	}
	for _, b := range rawMessagesSeeds(&testing.T{}) {
		f.Add([]byte(b))
	}
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, s := range ss {
			compareMemoAndFresh(t, s, memo, body)
			compareMemoAndFresh(t, s, memo, shifted(body))
		}
	})
}

// parseMemo is s's parse of body through memo (nil: a fresh parse).
func parseMemo(s *Surface, body []byte, memo wire.Memo) (*Request, error) {
	r, err := s.parseHeader(body, nil, memoHeader, wire.OpMessages, memo)
	if err != nil {
		return nil, err
	}
	return r.(*Request), nil
}

// compareMemoAndFresh parses body with memo and without.
func compareMemoAndFresh(t *testing.T, s *Surface, memo *sessioncache.Cache, body []byte) {
	t.Helper()
	a, errA := parseMemo(s, body, memo)
	b, errB := parseMemo(s, body, nil)
	if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
		t.Fatalf("%.300q\nwith memo: %v\nfresh: %v", body, errA, errB)
	}
	if errA != nil {
		return
	}
	if !jsonvalue.Equal(any(a.Messages()), any(b.Messages())) || !jsonvalue.Equal(any(a.Params()), any(b.Params())) ||
		!jsonvalue.Equal(any(a.Tools()), any(b.Tools())) || !reflect.DeepEqual(a.ToolNames(), b.ToolNames()) {
		x, _ := jsonvalue.Marshal(a.Messages())
		y, _ := jsonvalue.Marshal(b.Messages())
		t.Fatalf("%.300q\nwith memo %.600s\nfresh %.600s", body, x, y)
	}
	if !reflect.DeepEqual(a.groups, b.groups) || !reflect.DeepEqual(a.sysProj, b.sysProj) {
		t.Fatalf("%.300q: groups or system differ", body)
	}
	if a.root != b.root || a.msgSpan != b.msgSpan || !reflect.DeepEqual(a.msgRaw, b.msgRaw) || !reflect.DeepEqual(a.members, b.members) {
		t.Fatalf("%.300q: spans differ", body)
	}
	if !reflect.DeepEqual(a.edits, b.edits) || string(a.body) != string(b.body) {
		t.Fatalf("%.300q: seal edits or the upstream body differ", body)
	}
	if !reflect.DeepEqual(a.pool, b.pool) {
		t.Fatalf("%.300q: pools differ", body)
	}
	for _, target := range []any{nil, a.Messages()} {
		x, errX := a.UpstreamBody(target)
		y, errY := b.UpstreamBody(target)
		if string(x) != string(y) || (errX == nil) != (errY == nil) {
			t.Fatalf("%.300q: upstream bodies differ", body)
		}
	}
	if a.memo != nil {
		t.Fatal("the request keeps the memo after parsing")
	}
}

// TestMemoScopedToKeys: a message whose signature one keyring opened is
// not reused once the keys are replaced: the new keys refuse it, as a
// fresh parse does.
func TestMemoScopedToKeys(t *testing.T) {
	keys := seal.Ephemeral()
	s := New(Options{Seal: keys})
	body := []byte(`{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":` + string(s.sealString(kindSignature, "sig")) + `}]}]}`)
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	for range 2 {
		if _, err := parseMemo(s, body, memo); err != nil {
			t.Fatal(err)
		}
	}
	if err := keys.Replace(seal.Key{ID: "other", Secret: []byte("another-sealing-key-of-32-bytes-or-more-0123456789")}); err != nil {
		t.Fatal(err)
	}
	_, fresh := parseMemo(s, body, nil)
	_, memoed := parseMemo(s, body, memo)
	if fresh == nil || memoed == nil || fresh.Error() != memoed.Error() {
		t.Fatalf("after key rotation: fresh %v, with memo %v", fresh, memoed)
	}
}

// TestMemoScopedToSurface: what one surface kept is not reused by
// another whose allowances differ.
func TestMemoScopedToSurface(t *testing.T) {
	keys := seal.Ephemeral()
	lax, strict := New(Options{Seal: keys}), New(Options{Seal: keys, StrictMembers: true})
	body := []byte(`{"model":"m","max_tokens":9,"tools":[{"name":"f","input_schema":{},"x":1}],"messages":[{"role":"user","content":[{"type":"text","text":"a","x":1}]}]}`)
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	if _, err := parseMemo(lax, body, memo); err != nil {
		t.Fatal(err)
	}
	if _, err := parseMemo(strict, body, memo); err == nil {
		t.Fatal("the strict surface reused what the lax one kept")
	}
}

// TestMemoReusesUnits: the second parse of a body (its units at other
// offsets) takes its system, tools and every message from the memo,
// sharing the projected objects rather than making new ones, which the
// memo keeps as nodes.
func TestMemoReusesUnits(t *testing.T) {
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	s := New(Options{Seal: seal.Ephemeral()})
	body := memoTurns(t, s)[5]
	a, err := parseMemo(s, body, memo)
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseMemo(s, shifted(body), memo)
	if err != nil {
		t.Fatal(err)
	}
	ma, mb := a.Messages(), b.Messages()
	if len(ma) < 10 || len(ma) != len(mb) || len(a.tools) == 0 || len(a.tools) != len(b.tools) {
		t.Fatalf("%d and %d messages, %d and %d tools", len(ma), len(mb), len(a.tools), len(b.tools))
	}
	for i := range ma {
		if !sameObject(ma[i], mb[i]) {
			t.Fatalf("message %d was projected again", i)
		}
		if !memo.Keeps(ma[i].(map[string]any)) {
			t.Fatalf("message %d is not a node of the memo", i)
		}
	}
	for i := range a.tools {
		if !sameObject(a.tools[i], b.tools[i]) {
			t.Fatalf("tool %d was projected again", i)
		}
		if !memo.Keeps(a.tools[i].(map[string]any)) {
			t.Fatalf("tool %d is not a node of the memo", i)
		}
	}
}

func sameObject(a, b any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestMemoKeepsNoBody: what a parse through a memo hands out (and so
// what the memo keeps) does not slice the turn's body, which the memo
// would then keep alive though it accounts only for the units' bytes.
func TestMemoKeepsNoBody(t *testing.T) {
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	s := New(Options{Seal: seal.Ephemeral()})
	for _, body := range memoTurns(t, s)[:8] {
		r, err := parseMemo(s, body, memo)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []any{r.Messages(), r.Tools()} {
			if path := wiretest.SliceOf(v, r.text); path != "" {
				t.Fatalf("%s slices the body", path)
			}
		}
	}
}
