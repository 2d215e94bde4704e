package responses

import "github.com/hooks-gateway/hooks-gateway/internal/wire"

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
	sg := r.segs[len(r.segs)-1]
	u := &memoItem{kind: sg.kind, msg: sg.msg}
	if sg.kind == itemFunctionCall {
		tcs := sg.msg["tool_calls"].([]any)
		u.msg = tcs[len(tcs)-1].(map[string]any)
		u.callID, _ = u.msg["id"].(string)
	}
	if r.up != nil {
		u.up = r.up[i]
	}
	r.memo.KeepUnit(scope, raw, u, len(raw)+len(u.up))
	r.memo.KeepNode(u.msg)
}

var _ wire.MemoParser = (*Surface)(nil)
