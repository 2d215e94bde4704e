package responses

import (
	"github.com/hooks-gateway/hooks-gateway/internal/wire/wiretest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/agenttraffic"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/sessioncache"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// memoTurns is a growing Codex history, turn by turn, then the raw-path
// cases: bodies a session's memo sees one after the other, so later ones
// reuse the items of earlier ones.
func memoTurns(t *testing.T) [][]byte {
	t.Helper()
	capture, err := agenttraffic.LoadCapture(filepath.Join("..", "..", "..", agenttraffic.CaptureDir), agenttraffic.CodexFixture, "/v1/responses")
	if err != nil {
		t.Fatal(err)
	}
	var bodies [][]byte
	for rounds := 1; rounds <= 6; rounds++ {
		b, err := agenttraffic.Codex(capture, rounds, 0, sealedID)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	for _, b := range rawInputCases() {
		bodies = append(bodies, []byte(b))
	}
	return bodies
}

// TestMemoParseMatchesFresh parses a session's bodies through one memo,
// each twice (the second all hits), and fails on any difference from a
// fresh parse that a caller could see.
func TestMemoParseMatchesFresh(t *testing.T) {
	for _, s := range []*Surface{New(Options{Seal: testKeys}), New(Options{Seal: testKeys, MaxMessages: 5})} {
		compareMemoTurns(t, s)
	}
}

// compareMemoTurns runs memoTurns and their broken copies through one
// memo on s.
func compareMemoTurns(t *testing.T, s *Surface) {
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	for _, body := range memoTurns(t) {
		for range 2 {
			compareMemoAndFresh(t, s, memo, body)
		}
		// Broken copies of a body whose items the memo keeps: the one-pass
		// path must refuse them exactly as the full path does.
		for _, broken := range brokenCopies(body) {
			compareMemoAndFresh(t, s, memo, broken)
		}
	}
}

// brokenCopies are copies of body broken in and around its input array,
// where the one-pass path checks syntax itself.
func brokenCopies(body []byte) [][]byte {
	b := string(body)
	at := strings.Index(b, `"input":[`)
	if at < 0 {
		return nil
	}
	in := at + len(`"input":[`)
	sep := strings.Index(b[in:], "},{")
	var out []string
	if sep >= 0 {
		sep += in
		out = append(out,
			b[:sep]+"},,{"+b[sep+3:],          // an empty element
			b[:sep]+"} {"+b[sep+3:],           // a missing comma
			b[:sep]+`},{"x":tru},{`+b[sep+3:], // an invalid new item
			b[:sep]+`},{"type":"function_call","call_id":"c9","name":"n","arguments":"{}","status":nul},{`+b[sep+3:], // one the raw reader would take
			b[:sep]+"},nul,{"+b[sep+3:], // a broken literal
			b[:sep+1]+`,{"type":"message","role":"user","content":"hi","content":"again"}`+b[sep+1:], // a duplicate member
		)
	}
	out = append(out,
		b[:in]+"1,"+b[in:],    // an item that is no object
		b[:len(b)-1],          // the object left open
		b+"x",                 // trailing garbage
		b[:in-1]+"["+b[in-1:], // an array in an array
	)
	bodies := make([][]byte, len(out))
	for i, o := range out {
		bodies[i] = []byte(o)
	}
	return bodies
}

// FuzzMemoParseMatchesFresh is TestMemoParseMatchesFresh over any
// bodies, all through one memo.
func FuzzMemoParseMatchesFresh(f *testing.F) {
	for _, b := range rawInputCases() {
		f.Add([]byte(b))
	}
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	s := New(Options{Seal: testKeys})
	f.Fuzz(func(t *testing.T, body []byte) { compareMemoAndFresh(t, s, memo, body) })
}

// compareMemoAndFresh parses body with memo and without.
func compareMemoAndFresh(t *testing.T, s *Surface, memo *sessioncache.Cache, body []byte) {
	t.Helper()
	a, errA := s.parseRequestMemo(body, memo)
	b, errB := s.parseRequest(body)
	if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
		t.Fatalf("%.200s\nwith memo: %v\nfresh: %v", body, errA, errB)
	}
	if errA != nil {
		return
	}
	if !jsonvalue.Equal(a.Messages(), b.Messages()) || !reflect.DeepEqual(a.segs, b.segs) {
		x, _ := jsonvalue.Marshal(a.Messages())
		y, _ := jsonvalue.Marshal(b.Messages())
		t.Fatalf("%.200s\nwith memo %.400s\nfresh %.400s", body, x, y)
	}
	if !reflect.DeepEqual(a.callIDs, b.callIDs) || !reflect.DeepEqual(a.up, b.up) || !reflect.DeepEqual(a.items, b.items) {
		t.Fatalf("%.200s: call ids, upstream items or spans differ", body)
	}
	ua, errA := a.UpstreamBody(a.Messages())
	ub, errB := b.UpstreamBody(b.Messages())
	if (errA == nil) != (errB == nil) || string(ua) != string(ub) {
		t.Fatalf("%.200s: upstream bodies differ (%v, %v)", body, errA, errB)
	}
	if a.memo != nil {
		t.Fatal("the request keeps the memo after parsing")
	}
}

// TestMemoScopedToKeys: an item whose sealed id one keyring opened is not
// reused once the keys are replaced: the new keys refuse it, as a fresh
// parse does.
func TestMemoScopedToKeys(t *testing.T) {
	keys := seal.Ephemeral()
	s := New(Options{Seal: keys})
	body := []byte(`{"model":"m","input":[{"type":"function_call","id":"` + keys.SealString(kindItemID, "fc_1") + `","call_id":"c","name":"n","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}]}`)
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	if _, err := s.parseRequestMemo(body, memo); err != nil {
		t.Fatal(err)
	}
	if _, err := s.parseRequestMemo(body, memo); err != nil {
		t.Fatal(err)
	}
	if err := keys.Replace(seal.Key{ID: "other", Secret: []byte("another-sealing-key-of-32-bytes-or-more-0123456789")}); err != nil {
		t.Fatal(err)
	}
	_, fresh := s.parseRequest(body)
	_, memoed := s.parseRequestMemo(body, memo)
	if fresh == nil || memoed == nil || fresh.Error() != memoed.Error() {
		t.Fatalf("after key rotation: fresh %v, with memo %v", fresh, memoed)
	}
}

// TestMemoReusesItems: the second parse of a body takes every item from
// the memo, sharing the projected objects rather than making new ones.
func TestMemoReusesItems(t *testing.T) {
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	s := New(Options{Seal: testKeys})
	body := memoTurns(t)[5]
	a, err := s.parseRequestMemo(body, memo)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.parseRequestMemo(body, memo)
	if err != nil {
		t.Fatal(err)
	}
	shared := 0
	for i := range a.segs {
		if a.segs[i].kind != itemFunctionCall {
			if !sameObject(a.segs[i].msg, b.segs[i].msg) {
				t.Fatalf("segment %d was projected again", i)
			}
			shared++
		}
	}
	if shared == 0 {
		t.Fatal("no segment to compare")
	}
}

func sameObject(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestUpstreamBodyItemsOnly: a body whose only upstream change is its
// items' bytes (seals opened) is the body with the input array rendered
// again, as the general path renders it.
func TestUpstreamBodyItemsOnly(t *testing.T) {
	s := New(Options{Seal: testKeys})
	for _, body := range memoTurns(t) {
		r, err := s.parseRequest(body)
		if err != nil || r.up == nil {
			continue
		}
		got, err := r.UpstreamBody(nil)
		if err != nil {
			t.Fatal(err)
		}
		items := make([][]byte, len(r.items))
		for i := range r.items {
			src, sp := r.upstreamItem(i)
			items[i] = src[sp.Start:sp.End]
		}
		p := rawjson.NewObjPatch(r.text.Bytes(), r.root, r.members)
		p.Set("input", rawjson.RenderArray(r.text.Bytes(), r.inputSpan, r.items, items))
		want := rawjson.SpliceOwned(r.text.Bytes(), r.root, p.Render())
		if string(got) != string(want) {
			t.Fatalf("upstream body differs:\n%.300s\n%.300s", got, want)
		}
		return
	}
	t.Fatal("no body with sealed ids")
}

// TestMemoKeepsNoBody: the input items' projections a parse through a
// memo hands out (what the memo keeps) do not slice the turn's body, which the memo
// would then keep alive though it accounts only for the units' bytes.
func TestMemoKeepsNoBody(t *testing.T) {
	memo := sessioncache.NewStore(1 << 30).Cache("s")
	s := New(Options{Seal: testKeys})
	for _, body := range memoTurns(t)[:8] {
		r, err := s.parseRequestMemo(body, memo)
		if err != nil {
			t.Fatal(err)
		}
		for i, sg := range r.segs { // the input items' projections: the memo keeps them
			if path := wiretest.SliceOf(sg.msg, r.text); path != "" {
				t.Fatalf("segment %d: %s slices the body", i, path)
			}
		}
	}
}
