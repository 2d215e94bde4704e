package chat

import (
	"net/http"
	"net/url"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// A managed session's requests repeat their history: a chat client sends
// every earlier message, and its tools, again each turn. A message's
// projection (its decoded object, content defaulted to null) and the
// tools' projection are functions of their bytes and of the parser (its
// strictness), and have no other effect on the request, so the parse
// keeps each in the session's memo under that scope and reuses it when
// the same bytes come again: the request is exactly the one a fresh
// parse makes (TestMemoParseMatchesFresh), while only what is new is
// read. Only errors name a message's index, and errors are never kept.
//
// A unit to keep is read from a copy of its own bytes: the strings of a
// projection read from the turn's body slice that whole body (see
// jsonvalue.Text), which the memo would then keep alive for as long as
// the unit, though it accounts only for the unit's bytes. A unit that
// fails there is read again from the turn's body, which decides.

// unitKind says which member a unit's bytes were.
type unitKind uint8

const (
	unitMessage unitKind = iota
	unitTools
)

// memoScope is what a unit's projection depends on besides its bytes.
type memoScope struct {
	p    *RequestParser
	kind unitKind
}

// requestMemo is a session's memo and the parser whose projections it
// keeps.
type requestMemo struct {
	m wire.Memo
	p *RequestParser
}

// memoTools is what the tools member projected to.
type memoTools struct {
	tools []any
	names []string
}

// ParseRequestMemo implements wire.MemoParser: ParseRequest reusing the
// projections memo kept.
func (s *Surface) ParseRequestMemo(body []byte, _ url.Values, _ http.Header, memo wire.Memo) (wire.Request, error) {
	r, err := s.requests.parse(body, memo)
	if err != nil {
		return nil, err
	}
	return surfaceRequest{r}, nil
}

// unit returns what r's memo kept for the unit of kind at s of the body.
func (r *Request) unit(kind unitKind, s rawjson.Span) (any, bool) {
	if r.memo == nil {
		return nil, false
	}
	return r.memo.m.Unit(memoScope{r.memo.p, kind}, r.text.Bytes()[s.Start:s.End])
}

// keep keeps v as the projection of the unit of kind at s of the body,
// and each object in objs as a node.
func (r *Request) keep(kind unitKind, s rawjson.Span, v any, objs []any) {
	if r.memo == nil {
		return
	}
	raw := r.text.Bytes()[s.Start:s.End]
	r.memo.m.KeepUnit(memoScope{r.memo.p, kind}, raw, v, len(raw))
	for _, o := range objs {
		if obj, ok := o.(map[string]any); ok {
			r.memo.m.KeepNode(obj)
		}
	}
}

// unitRequest is a request over a copy of raw, a unit of r's body, and
// the unit's span there: what it reads slices the copy.
func unitRequest(raw []byte) (*Request, rawjson.Span) {
	return &Request{text: jsonvalue.NewText(raw)}, rawjson.Span{Start: 0, End: len(raw)} // NewText's string is the copy
}

// memoMessage is the projection of the message at s, from the memo or
// read to be kept there; false without a memo, or when the turn's body
// must decide.
func (r *Request) memoMessage(s rawjson.Span, strict bool) (map[string]any, bool) {
	if r.memo == nil {
		return nil, false
	}
	if v, ok := r.unit(unitMessage, s); ok {
		m, ok := v.(map[string]any)
		return m, ok
	}
	sub, us := unitRequest(r.text.Bytes()[s.Start:s.End])
	m, err := sub.projectMessage(0, us, strict)
	if err != nil {
		return nil, false
	}
	r.keep(unitMessage, s, m, []any{m})
	return m, true
}

// parseMember is parseKnown, reusing the memo's projection of the tools
// member.
func (r *Request) parseMember(spec *requestMember, m rawjson.Member, strict bool) error {
	if r.memo == nil || spec.treat != projectTools {
		return r.parseKnown(spec, m, strict)
	}
	if v, ok := r.unit(unitTools, m.Val); ok {
		if u, ok := v.(*memoTools); ok {
			r.replayTools(u)
			return nil
		}
	}
	sub, s := unitRequest(r.text.Bytes()[m.Val.Start:m.Val.End])
	if sub.parseKnown(spec, rawjson.Member{Key: m.Key, Val: s}, strict) != nil {
		return r.parseKnown(spec, m, strict)
	}
	u := &memoTools{tools: sub.tools, names: sub.toolNames}
	r.keep(unitTools, m.Val, u, u.tools)
	r.replayTools(u)
	return nil
}

// replayTools adds the tools u kept, as parseTools would.
func (r *Request) replayTools(u *memoTools) {
	r.tools = append(r.tools, u.tools...)
	r.toolNames = append(r.toolNames, u.names...)
}

var _ wire.MemoParser = (*Surface)(nil)
