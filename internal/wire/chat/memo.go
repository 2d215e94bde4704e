package chat

import (
	"net/http"
	"net/url"

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

// memoMessage is the projection kept for the message at s.
func (r *Request) memoMessage(s rawjson.Span) (map[string]any, bool) {
	v, ok := r.unit(unitMessage, s)
	if !ok {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// keepMessage keeps m as the projection of the message at s.
func (r *Request) keepMessage(s rawjson.Span, m map[string]any) {
	r.keep(unitMessage, s, m, []any{m})
}

// parseMember is parseKnown, reusing the memo's projection of the tools
// member.
func (r *Request) parseMember(spec *requestMember, m rawjson.Member, strict bool) error {
	if r.memo == nil || spec.treat != projectTools {
		return r.parseKnown(spec, m, strict)
	}
	if v, ok := r.unit(unitTools, m.Val); ok {
		if u, ok := v.(*memoTools); ok {
			r.tools = append(r.tools, u.tools...)
			r.toolNames = append(r.toolNames, u.names...)
			return nil
		}
	}
	tools, names := len(r.tools), len(r.toolNames)
	if err := r.parseKnown(spec, m, strict); err != nil {
		return err
	}
	u := &memoTools{tools: r.tools[tools:len(r.tools):len(r.tools)], names: r.toolNames[names:len(r.toolNames):len(r.toolNames)]}
	r.keep(unitTools, m.Val, u, u.tools)
	return nil
}

var _ wire.MemoParser = (*Surface)(nil)
