package messages

import (
	"net/http"
	"net/url"

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
// A unit's side effects are kept with it: the pool entries and seal edits
// it added, whose spans are body offsets, are kept relative to the unit's
// start and moved to where the unit sits in the body that reuses them.
// Only errors name a message's index, and errors are never kept.

// unitKind says which member a unit's bytes were: the same bytes could be
// read as a system member and as a tools member.
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

// unitMark is where a request's side effects stood before a unit was
// read: what the unit adds comes after it.
type unitMark struct {
	pool  poolMark
	edits int
}

func (r *Request) unitMark() unitMark { return unitMark{r.pool.mark(), len(r.edits)} }

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

// keepUnit keeps msgs as the projection of the unit at s of the body
// (within scope), with the side effects it added since m.
func (r *Request) keepUnit(scope any, s rawjson.Span, msgs []any, m unitMark) {
	if r.memo == nil {
		return
	}
	u := &memoUnit{msgs: msgs}
	size := 0
	for k := range r.pool.entries {
		added := r.pool.entries[k][m.pool[k]:]
		if len(added) == 0 {
			continue
		}
		u.pool[k] = make([]poolEntry, len(added))
		for i, e := range added {
			u.pool[k][i] = poolEntry{proj: e.proj, span: shift(e.span, -s.Start)}
		}
	}
	for _, e := range r.edits[m.edits:] {
		u.edits = append(u.edits, sealEdit{span: shift(e.span, -s.Start), repl: e.repl})
		size += len(e.repl)
	}
	raw := r.text.Bytes()[s.Start:s.End]
	r.memo.KeepUnit(scope, raw, u, len(raw)+size)
	for _, msg := range msgs {
		if obj, ok := msg.(map[string]any); ok {
			r.memo.KeepNode(obj)
		}
	}
}

// shift moves s by d bytes.
func shift(s rawjson.Span, d int) rawjson.Span {
	return rawjson.Span{Start: s.Start + d, End: s.End + d}
}

// parseSystemMemo is parseKnown for the system member, reusing its kept
// projection.
func (r *Request) parseSystemMemo(spec *requestMember, m rawjson.Member) error {
	scope := r.memoScope(unitSystem)
	if u, ok := r.memoUnit(scope, r.text.Bytes()[m.Val.Start:m.Val.End]); ok {
		r.sysProj = r.replayUnit(u, m.Val)
		return nil
	}
	mark := r.unitMark()
	if err := r.parseKnown(spec, m); err != nil {
		return err
	}
	r.keepUnit(scope, m.Val, r.sysProj, mark)
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
	tools, names := len(r.tools), len(r.toolNames)
	if err := r.parseKnown(spec, m); err != nil {
		return err
	}
	// parseTools names every tool the client runs (custom and client
	// tools) and marks the context partial for every other one: so it
	// marked it exactly when it added more tools than names.
	u := &memoTools{tools: r.tools[tools:len(r.tools):len(r.tools)], names: r.toolNames[names:len(r.toolNames):len(r.toolNames)]}
	u.partial = len(u.tools) > len(u.names)
	r.memo.KeepUnit(scope, raw, u, len(raw))
	for _, t := range u.tools {
		if obj, ok := t.(map[string]any); ok {
			r.memo.KeepNode(obj)
		}
	}
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
