package messages

import (
	"net/http"
	"net/url"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// A managed session's requests repeat themselves: Claude Code sends its
// system prompt, its tool set and the whole conversation again each turn.
// The projection of a wire message, of the system member and of the tools
// member is a function of its bytes, the surface (its allowances) and the
// sealing keys that opened its seals, so the parse keeps each one in the
// session's memo under that scope and reuses it when the same bytes come
// again: the request is exactly the one a fresh parse makes
// (TestMemoParseMatchesFresh), while only what is new is read.
//
// A unit to keep is read from a request over a copy of its own bytes
// (unitRequest), then replayed like a hit: the strings of a projection
// read from the turn's body slice that whole body (see jsonvalue.Text),
// which the memo would then keep alive for as long as the unit, though it
// accounts only for the unit's bytes. Reading it there also makes the
// side effects it has, the pool entries and seal edits whose spans are
// body offsets, relative to the unit's start: replaying moves them to
// where the unit sits in the body that reuses them. Only errors name a
// message's index, and errors are never kept: a unit that fails there is
// read again from the turn's body, which decides.

// unitKind says which member a unit's bytes were: the same bytes can be a
// system member and a tools member, and each keeps its own projection.
type unitKind uint8

const (
	unitMessage unitKind = iota
	unitSystem
	unitTools
)

// memoScope is what a unit's projection depends on besides its bytes.
type memoScope struct {
	surf *Surface
	keys any // the keyring's generation: a rotation makes seals open again
	kind unitKind
}

// memoUnit is what a wire message or the system member projected to, with
// its side effects on the request.
type memoUnit struct {
	// msgs are the projected messages (a message's group, or the system
	// message): shared by every request that reuses them, never modified.
	msgs  []any
	pool  [poolKinds][]poolEntry // spans relative to the unit's start, raw unset
	edits []sealEdit             // spans relative to the unit's start
}

// memoTools is what the tools member projected to.
type memoTools struct {
	tools   []any
	names   []string
	partial bool // it declares tools the provider executes, or unknown ones
}

// unitRequest is a request of r's surface over a copy of raw, a unit of
// r's body, and the unit's span there: what it reads slices the copy.
func (r *Request) unitRequest(raw []byte) (*Request, rawjson.Span) {
	s := rawjson.Span{Start: 0, End: len(raw)}
	// NewText's string conversion is the copy; its bytes, raw, are only
	// ever sliced by pool entries, which a memoUnit does not keep.
	return &Request{s: r.s, text: jsonvalue.NewText(raw), sysMember: -1, msgRaw: []rawjson.Span{s}}, s
}

// ParseRequestMemo implements wire.MemoParser: ParseRequestHeader reusing
// the projections memo kept.
func (s *Surface) ParseRequestMemo(body []byte, query url.Values, h http.Header, memo wire.Memo) (wire.Request, error) {
	return s.parseHeader(body, query, h, wire.OpMessages, memo)
}

// memoScope is r's scope for units of kind, nil without a memo.
func (r *Request) memoScope(kind unitKind) any {
	if r.memo == nil {
		return nil
	}
	return memoScope{r.s, r.s.seal.Generation(), kind}
}

// memoUnit is the unit kept for raw within scope.
func (r *Request) memoUnit(scope any, raw []byte) (*memoUnit, bool) {
	if r.memo == nil {
		return nil, false
	}
	v, ok := r.memo.Unit(scope, raw)
	if !ok {
		return nil, false
	}
	u, ok := v.(*memoUnit)
	return u, ok
}

// replayUnit adds u's side effects for the unit at s of the body and
// returns its messages.
func (r *Request) replayUnit(u *memoUnit, s rawjson.Span) []any {
	body := r.text.Bytes()
	for k := range u.pool {
		for _, e := range u.pool[k] {
			r.pool.addSpan(poolKind(k), e.proj, body, shift(e.span, s.Start))
		}
	}
	for _, e := range u.edits {
		r.edits = append(r.edits, sealEdit{span: shift(e.span, s.Start), repl: e.repl})
	}
	return u.msgs
}

// unit is what a unit request (unitRequest) read: msgs, with the side
// effects it had.
func (r *Request) unit(msgs []any) *memoUnit {
	u := &memoUnit{msgs: msgs, edits: r.edits}
	for k := range r.pool.entries {
		for _, e := range r.pool.entries[k] {
			u.pool[k] = append(u.pool[k], poolEntry{proj: e.proj, span: e.span})
		}
	}
	return u
}

// keepUnit keeps u as the projection of raw within scope, and the
// objects it hands out as nodes.
func (r *Request) keepUnit(scope any, raw []byte, u *memoUnit) {
	size := len(raw) // the copy its strings slice
	for _, e := range u.edits {
		size += len(e.repl)
	}
	r.memo.KeepUnit(scope, raw, u, size)
	r.keepNodes(u.msgs)
}

// keepNodes has the memo keep each object of objs as a node.
func (r *Request) keepNodes(objs []any) {
	for _, o := range objs {
		if obj, ok := o.(map[string]any); ok {
			r.memo.KeepNode(obj)
		}
	}
}

// readMessage reads the wire message whose bytes are raw to keep it
// (false: the turn's body decides).
func (r *Request) readMessage(raw []byte) (*memoUnit, bool) {
	sub, s := r.unitRequest(raw)
	g, ok := sub.rawMessage(0, s)
	if !ok {
		return nil, false
	}
	return sub.unit(g), true
}

// shift moves s by d bytes.
func shift(s rawjson.Span, d int) rawjson.Span {
	return rawjson.Span{Start: s.Start + d, End: s.End + d}
}

// parseSystemMemo is parseKnown for the system member, reusing its kept
// projection.
func (r *Request) parseSystemMemo(spec *requestMember, m rawjson.Member) error {
	scope := r.memoScope(unitSystem)
	raw := r.text.Bytes()[m.Val.Start:m.Val.End]
	if u, ok := r.memoUnit(scope, raw); ok {
		r.sysProj = r.replayUnit(u, m.Val)
		return nil
	}
	sub, s := r.unitRequest(raw)
	if sub.parseKnown(spec, rawjson.Member{Key: m.Key, Val: s}) != nil {
		return r.parseKnown(spec, m)
	}
	u := sub.unit(sub.sysProj)
	r.keepUnit(scope, raw, u)
	r.sysProj = r.replayUnit(u, m.Val)
	return nil
}

// parseToolsMemo is parseKnown for the tools member, reusing its kept
// projection.
func (r *Request) parseToolsMemo(spec *requestMember, m rawjson.Member) error {
	scope := r.memoScope(unitTools)
	raw := r.text.Bytes()[m.Val.Start:m.Val.End]
	if v, ok := r.memo.Unit(scope, raw); ok {
		if u, ok := v.(*memoTools); ok {
			r.replayTools(u)
			return nil
		}
	}
	sub, s := r.unitRequest(raw)
	if sub.parseKnown(spec, rawjson.Member{Key: m.Key, Val: s}) != nil {
		return r.parseKnown(spec, m)
	}
	_, partial := sub.params[paramPartial]
	u := &memoTools{tools: sub.tools, names: sub.toolNames, partial: partial}
	r.memo.KeepUnit(scope, raw, u, len(raw)) // len(raw): the copy its strings slice
	r.keepNodes(u.tools)
	r.replayTools(u)
	return nil
}

// replayTools adds the tools u kept, as parseTools would.
func (r *Request) replayTools(u *memoTools) {
	r.tools = append(r.tools, u.tools...)
	r.toolNames = append(r.toolNames, u.names...)
	if u.partial {
		r.setParam(paramPartial, true)
	}
}

var _ wire.MemoParser = (*Surface)(nil)
