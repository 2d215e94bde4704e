package responses

import (
	"bytes"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// A managed session's requests repeat their history: Codex sends every
// earlier item again each turn. An input item's projection is a function
// of its bytes, the surface and the sealing keys that opened its ids, so
// parseInputRaw keeps each item's projection in the session's memo under
// that scope and reuses it when the same bytes come again: the request is
// exactly the one a fresh parse makes (TestMemoParseMatchesFresh), while
// only the new items are read.

// memoScope is what an item's projection depends on besides its bytes.
type memoScope struct {
	surf *Surface
	keys any // the keyring's generation
}

// memoItem is what an input item projected to.
type memoItem struct {
	kind itemKind
	// msg is the item's message, or a function call's tool call: shared
	// by every request that reuses it, never modified.
	msg    map[string]any
	callID string // a function call's call_id
	up     []byte // the bytes the upstream receives when they differ
}

// memoScope is r's scope, nil without a memo.
func (r *Request) memoScope() any {
	if r.memo == nil {
		return nil
	}
	return memoScope{r.surf, r.surf.keys.Generation()}
}

// memoItem is the projection kept for the item whose bytes are raw.
func (r *Request) memoItem(scope any, raw []byte) (*memoItem, bool) {
	if r.memo == nil {
		return nil, false
	}
	v, ok := r.memo.Unit(scope, raw)
	if !ok {
		return nil, false
	}
	u, ok := v.(*memoItem)
	return u, ok
}

// replayItem adds item i from its kept projection u, as addRawItem would.
func (r *Request) replayItem(i int, u *memoItem) {
	if u.kind == itemFunctionCall {
		r.addCall(i, u.callID, u.msg)
	} else {
		r.segs = append(r.segs, segment{msg: u.msg, first: i, n: 1, kind: u.kind})
	}
	if u.up != nil {
		if r.up == nil {
			r.up = make([][]byte, len(r.items))
		}
		r.up[i] = u.up
	}
}

// keepItem keeps the projection item i (bytes raw) just added: the
// message of the last segment, or its last tool call for a function call.
func (r *Request) keepItem(scope any, i int, raw []byte) {
	if r.memo == nil {
		return
	}
	// The kept projection is detached from this body (see
	// jsonvalue.Detach) and takes the place of the one just made, so this
	// request already shares the object the next ones will.
	sg := &r.segs[len(r.segs)-1]
	u := &memoItem{kind: sg.kind}
	if sg.kind == itemFunctionCall {
		tcs := sg.msg["tool_calls"].([]any)
		u.msg = jsonvalue.Detach(tcs[len(tcs)-1]).(map[string]any)
		tcs[len(tcs)-1] = u.msg
		u.callID, _ = u.msg["id"].(string)
	} else {
		u.msg = jsonvalue.Detach(sg.msg).(map[string]any)
		sg.msg = u.msg
	}
	if r.up != nil && r.up[i] != nil {
		u.up = bytes.Clone(r.up[i]) // never a slice of the body
	}
	r.memo.KeepUnit(scope, raw, u, len(raw)+len(u.up))
	r.memo.KeepNode(u.msg)
}

// memberMemoMin is the size from which a known member's decoded value is
// kept: the instructions and tools an agent sends every turn, not the
// scalars that cost less to decode than to look up.
const memberMemoMin = 512

// memberScope is the scope of kept member values: a value's tree is a
// function of its bytes alone (as Decode makes it, one level into the
// body), whichever member holds it.
type memberScope struct{ surf *Surface }

// memoMember is the decoded value kept for the member value at s: it is
// the value of bytes a valid body held without a duplicate member, as
// Decode made it then. The tree is shared and read-only, as every value
// of a request's projection is.
func (r *Request) memoMember(s rawjson.Span) (any, bool) {
	if r.memo == nil || s.End-s.Start < memberMemoMin {
		return nil, false
	}
	return r.memo.Unit(memberScope{r.surf}, r.text.Bytes()[s.Start:s.End])
}

// keepMember keeps v, decoded from the member value at s, and returns
// the value to use: v detached from the body when it is kept.
func (r *Request) keepMember(s rawjson.Span, v any) any {
	if r.memo == nil || s.End-s.Start < memberMemoMin {
		return v
	}
	raw := r.text.Bytes()[s.Start:s.End]
	v = jsonvalue.Detach(v)
	r.memo.KeepUnit(memberScope{r.surf}, raw, v, len(raw))
	return v
}

var _ wire.MemoParser = (*Surface)(nil)
