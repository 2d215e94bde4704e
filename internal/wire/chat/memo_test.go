package chat

import (
	"github.com/hooks-gateway/hooks-gateway/internal/wire/wiretest"
	"reflect"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/agenttraffic"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/sessioncache"
)

// memoCases are requests around what the memo keeps: tools that project
// unknown members, messages that project a defaulted content, the same
// message at other places and in other roles' company, refusals.
var memoCases = []string{
	`{"model":"m","tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"},"x":1},"y":2}],"messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"a"}],"tools":null}`,
	`{"model":"m","messages":[{"role":"user","content":"a"}],"tools":[{"type":"function","function":{"name":"f"}}]}`,
	`{"model":"m","messages":[{"role":"user","content":"a","extra":{"k":1}}],"tools":[]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u"}}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"a"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","Content":"a"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"a"},{"role":5,"content":"a"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"a","content":"b"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"a"}],"tools":[{"type":"function","function":{"name":""}}]}`,
	`{"model":"m","messages":[{"role":"user","content":"a"}],"tools":[{"type":"function","function":{"name":"f"},"x":1,"x":2}]}`,
}

// memoTurns are bodies a session's memo sees one after the other, so
// later ones reuse the units of earlier ones: a chat conversation growing
// turn by turn, the cases above and the one-pass seeds; and each again
// with a member before the others, so that every unit comes back at
// another offset of the body.
func memoTurns() [][]byte {
	bodies := agenttraffic.ChatTurns(8, 512)
	for _, b := range append(memoCases, onePassSeeds...) {
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
	return append([]byte(`{"user":"shifted by this member",`), body[1:]...)
}

// memoParsers are the parsers the memo tests parse with.
func memoParsers() []*RequestParser {
	return []*RequestParser{NewRequestParser(nil), NewRequestParser(nil).WithStrictMembers(true)}
}

// TestMemoParseMatchesFresh parses a session's bodies through one memo,
// each twice (the second all hits), and fails on any difference from a
// fresh parse that a caller could see.
func TestMemoParseMatchesFresh(t *testing.T) {
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	for _, p := range memoParsers() {
		for _, body := range memoTurns() {
			for range 2 {
				compareMemoAndFresh(t, p, memo, body)
			}
		}
	}
}

// FuzzMemoParseMatchesFresh is TestMemoParseMatchesFresh over any
// bodies, all through one memo.
func FuzzMemoParseMatchesFresh(f *testing.F) {
	for _, b := range append(memoCases, onePassSeeds...) {
		f.Add([]byte(b))
	}
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	ps := memoParsers()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, p := range ps {
			compareMemoAndFresh(t, p, memo, body)
			compareMemoAndFresh(t, p, memo, shifted(body))
		}
	})
}

// compareMemoAndFresh parses body with memo and without.
func compareMemoAndFresh(t *testing.T, p *RequestParser, memo *sessioncache.Cache, body []byte) {
	t.Helper()
	a, errA := p.parse(body, memo)
	b, errB := p.Parse(body)
	if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
		t.Fatalf("%.300q\nwith memo: %v\nfresh: %v", body, errA, errB)
	}
	if errA != nil {
		return
	}
	if !jsonvalue.Equal(any(a.Messages()), any(b.Messages())) || !reflect.DeepEqual(a.msgs, b.msgs) ||
		!jsonvalue.Equal(any(a.Params()), any(b.Params())) || !reflect.DeepEqual(a.tools, b.tools) ||
		!reflect.DeepEqual(a.toolNames, b.toolNames) {
		x, _ := jsonvalue.Marshal(a.Messages())
		y, _ := jsonvalue.Marshal(b.Messages())
		t.Fatalf("%.300q\nwith memo %.600s\nfresh %.600s", body, x, y)
	}
	if a.Model() != b.Model() || a.Stream() != b.Stream() || a.IncludeUsage() != b.IncludeUsage() {
		t.Fatalf("%.300q: model or transport differ", body)
	}
	if a.root != b.root || a.msgSpan != b.msgSpan || !reflect.DeepEqual(a.msgRaw, b.msgRaw) || !reflect.DeepEqual(a.members, b.members) {
		t.Fatalf("%.300q: spans differ", body)
	}
	for _, stream := range []bool{false, true} {
		for _, target := range []any{a.Messages(), a.Messages()[1:]} {
			x, errX := a.UpstreamBody(target, stream)
			y, errY := b.UpstreamBody(target, stream)
			if string(x) != string(y) || (errX == nil) != (errY == nil) {
				t.Fatalf("%.300q: upstream bodies differ", body)
			}
		}
	}
	if a.memo != nil {
		t.Fatal("the request keeps the memo after parsing")
	}
}

// TestMemoScopedToParser: what one parser kept is not reused by another
// whose strictness differs.
func TestMemoScopedToParser(t *testing.T) {
	body := []byte(`{"model":"m","tools":[{"type":"function","function":{"name":"f"},"x":1}],"messages":[{"role":"user","content":"a","x":1}]}`)
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	lax, strict := memoParsers()[0], memoParsers()[1]
	if _, err := lax.parse(body, memo); err != nil {
		t.Fatal(err)
	}
	if _, err := strict.parse(body, memo); err == nil {
		t.Fatal("the strict parser reused what the lax one kept")
	}
}

// TestMemoReusesMessages: the second parse of a body (its units at other
// offsets) takes its tools and every message from the memo, sharing the
// projected objects rather than making new ones, which the memo keeps as
// nodes.
func TestMemoReusesMessages(t *testing.T) {
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	p := NewRequestParser(nil)
	body := memoTurns()[5]
	a, err := p.parse(body, memo)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.parse(shifted(body), memo)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.msgs) < 10 || len(a.msgs) != len(b.msgs) || len(a.tools) == 0 || len(a.tools) != len(b.tools) {
		t.Fatalf("%d and %d messages, %d and %d tools", len(a.msgs), len(b.msgs), len(a.tools), len(b.tools))
	}
	for i := range a.msgs {
		if !sameObject(a.msgs[i], b.msgs[i]) || !memo.Keeps(a.msgs[i].(map[string]any)) {
			t.Fatalf("message %d was projected again, or is not a node of the memo", i)
		}
	}
	for i := range a.tools {
		if !sameObject(a.tools[i], b.tools[i]) || !memo.Keeps(a.tools[i].(map[string]any)) {
			t.Fatalf("tool %d was projected again, or is not a node of the memo", i)
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
	for _, body := range memoTurns()[:8] {
		r, err := NewRequestParser(nil).parse(body, memo)
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
