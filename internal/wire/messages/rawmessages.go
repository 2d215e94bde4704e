package messages

import (
	"slices"

	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// This file projects the messages member message by message from its
// bytes, without first decoding the whole conversation into a tree the
// projection then copies out of. The blocks that make up most of an
// agent's history (text, tool_use, tool_result with string content) are
// projected straight from their members' tokens; any other message is
// decoded on its own and projected by projectMessage, as before.
//
// It only ever accepts: any problem (invalid syntax, a duplicate member,
// a string the decoder refuses, a projection error) makes
// parseMessagesRaw report false, and the caller then decodes the member
// and projects it the tree way, which decides every refusal as it always
// has. So a request is accepted here only when the tree path accepts it,
// with the same projection, pool and seal edits
// (TestRawMessagesMatchTree).

// Depths (containers open around a value, the body's object counted) of
// the values the raw path decodes: a message, and a block's member.
const (
	rawMessageOuter     = 2 // the body's object, the messages array
	rawBlockMemberOuter = 5 // ..., the message, its content array, the block
)

// poolMark is how many entries each kind of a pool held.
type poolMark [poolKinds]int

func (p *pool) mark() poolMark {
	var m poolMark
	for k := range p.entries {
		m[k] = len(p.entries[k])
	}
	return m
}

// truncate drops the entries added since m.
func (p *pool) truncate(m poolMark) {
	for k := range p.entries {
		p.entries[k] = p.entries[k][:m[k]]
	}
}

// parseMessagesRaw validates and projects the conversation at s, as
// parseMessages does, reporting false (with what it changed undone) when
// the tree path must decide.
func (r *Request) parseMessagesRaw(s rawjson.Span) bool {
	body := r.text.Bytes()
	if s.Kind(body) != '[' {
		return false
	}
	if _, valid, dup := rawjson.CheckDocument(body[s.Start:s.End]); !valid || dup {
		return false
	}
	spans := rawjson.ScanArray(body, s)
	if len(spans) == 0 {
		return false
	}
	mark, edits := r.pool.mark(), len(r.edits)
	groups := make([][]any, len(spans))
	r.msgSpan, r.msgRaw = s, spans
	scope := r.memoScope(unitMessage)
	for i, ms := range spans {
		if u, ok := r.memoUnit(scope, body[ms.Start:ms.End]); ok {
			groups[i] = r.replayUnit(u, ms)
			continue
		}
		if r.memo != nil {
			if u, ok := r.readMessage(body[ms.Start:ms.End]); ok {
				r.keepUnit(scope, body[ms.Start:ms.End], u)
				groups[i] = r.replayUnit(u, ms)
				continue
			}
		}
		g, ok := r.rawMessage(i, ms)
		if !ok {
			r.pool.truncate(mark)
			r.edits = r.edits[:edits]
			r.msgSpan, r.msgRaw = rawjson.Span{}, nil
			return false
		}
		groups[i] = g
	}
	r.groups = groups
	return true
}

// rawMessage projects wire message i (at s): from its tokens when it holds
// only a role and a string or plain blocks, else from its decoded tree.
func (r *Request) rawMessage(i int, s rawjson.Span) ([]any, bool) {
	mark, edits := r.pool.mark(), len(r.edits)
	if g, ok := r.rawMessageTokens(s); ok {
		return g, true
	}
	r.pool.truncate(mark)
	r.edits = r.edits[:edits]
	e, err := r.text.DecodeStrictNested(s.Start, s.End, rawMessageOuter)
	if err != nil {
		return nil, false
	}
	g, err := r.projectMessage(i, e)
	return g, err == nil
}

// rawString decodes the string token at s (nil when it is not one, or one
// the decoder refuses).
func (r *Request) rawString(s rawjson.Span) any {
	if s.Kind(r.text.Bytes()) != '"' {
		return nil
	}
	v, err := r.text.DecodeString(s.Start, s.End)
	if err != nil {
		return nil
	}
	return v
}

// rawMessageTokens projects the message at s from its tokens; false when
// it is not a plain message (the tree path then projects it).
func (r *Request) rawMessageTokens(s rawjson.Span) ([]any, bool) {
	body := r.text.Bytes()
	if s.Kind(body) != '{' {
		return nil, false
	}
	var buf [2]rawjson.Member
	ms, err := rawjson.ScanObjectInto(body, s, buf[:])
	if err != nil || len(ms) != 2 {
		return nil, false
	}
	ri, ci := rawjson.Find(ms, "role"), rawjson.Find(ms, "content")
	if ri < 0 || ci < 0 {
		return nil, false
	}
	roleV := r.rawString(ms[ri].Val)
	role, _ := roleV.(string)
	switch role {
	case "user", "assistant", "system":
	default:
		return nil, false
	}
	content := ms[ci].Val
	switch content.Kind(body) {
	case '"':
		c := r.rawString(content)
		if c == nil {
			return nil, false
		}
		return []any{map[string]any{"role": roleV, "content": c}}, true
	case '[':
		t := newTurn(role, roleV, nil)
		for _, b := range rawjson.ScanArray(body, content) {
			if !r.rawBlock(&t, role, b) {
				return nil, false
			}
		}
		return t.done(), true
	}
	return nil, false
}

// rawBlock projects the block at s of a message of role into t: a text
// block, a tool_use block or a tool_result block whose content is a
// string or null, each with no members but its type's usual ones. False
// for any other block.
func (r *Request) rawBlock(t *turn, role string, s rawjson.Span) bool {
	body := r.text.Bytes()
	if s.Kind(body) != '{' {
		return false
	}
	var buf [5]rawjson.Member // the most members a block projected here has (rawToolResultMembers)
	ms, err := rawjson.ScanObjectInto(body, s, buf[:])
	if err != nil {
		return false
	}
	ti := rawjson.Find(ms, "type")
	if ti < 0 {
		return false
	}
	typ, _ := r.rawString(ms[ti].Val).(string)
	var v [5]any
	switch typ {
	case "text":
		if !r.rawMembers(ms, rawTextMembers, v[:]) || v[1] == nil {
			return false
		}
		p := map[string]any{"type": "text", "text": v[1]}
		if !r.rawCacheControl(ms, p) {
			return false
		}
		t.part(p)
		r.pool.addSpan(poolPart, p, body, s)
	case "tool_use":
		if role != "assistant" || !r.rawMembers(ms, rawToolUseMembers, v[:]) || v[1] == nil {
			return false
		}
		if name, _ := v[2].(string); name == "" {
			return false
		}
		ii := rawjson.Find(ms, "input")
		if ii < 0 {
			return false
		}
		in := ms[ii].Val
		if input, err := r.text.DecodeStrictNested(in.Start, in.End, rawBlockMemberOuter); err != nil {
			return false
		} else if _, ok := input.(map[string]any); !ok {
			return false
		}
		c := map[string]any{
			"id":   v[1],
			"type": "function",
			"function": map[string]any{
				"name":      v[2],
				"arguments": r.text.Slice(in.Start, in.End),
			},
		}
		if !r.rawCacheControl(ms, c) {
			return false
		}
		t.call(c)
		r.pool.addSpan(poolCall, c, body, s)
	case "tool_result":
		if role != "user" || !r.rawMembers(ms, rawToolResultMembers, v[:]) || v[1] == nil {
			return false
		}
		tm := map[string]any{"role": "tool", "tool_call_id": v[1], "content": v[2]}
		if at := rawjson.Find(ms, "is_error"); at >= 0 {
			switch string(body[ms[at].Val.Start:ms[at].Val.End]) {
			case "true":
				tm["is_error"] = true
			case "false", "null":
			default:
				return false
			}
		}
		if !r.rawCacheControl(ms, tm) {
			return false
		}
		t.result(tm)
		r.pool.addSpan(poolResult, tm, body, s)
	default:
		return false
	}
	return true
}

// The members the raw path projects of each block type, in the order of
// the values rawMembers returns. Members named but not decoded there
// (null) are read by the caller: cache_control (any value), a tool_use's
// input (an object) and a tool_result's is_error (a literal).
var (
	rawTextMembers       = []string{"type", "text", "cache_control"}
	rawToolUseMembers    = []string{"type", "id", "name", "input", "cache_control"}
	rawToolResultMembers = []string{"type", "tool_use_id", "content", "is_error", "cache_control"}
)

// rawMembers returns in vals, in known's order, the values of the string
// members of ms; false when ms has a member known
// does not name, or a string member the decoder refuses. The members
// read by the caller (see rawTextMembers) are not decoded; every other
// member must be a string, but content, which may be null.
func (r *Request) rawMembers(ms []rawjson.Member, known []string, vals []any) bool {
	body := r.text.Bytes()
	for _, m := range ms {
		at := slices.Index(known, m.Key)
		switch {
		case at < 0:
			return false
		case m.Key == "cache_control" || m.Key == "input" || m.Key == "is_error":
			continue
		case m.Key == "content" && string(body[m.Val.Start:m.Val.End]) == "null":
			continue
		}
		v := r.rawString(m.Val)
		if v == nil {
			return false
		}
		vals[at] = v
	}
	return true
}

// rawCacheControl puts the block's cache_control member, decoded, into
// its projection p, as the tree path keeps it; false when the decoder
// refuses it.
func (r *Request) rawCacheControl(ms []rawjson.Member, p map[string]any) bool {
	at := rawjson.Find(ms, "cache_control")
	if at < 0 {
		return true
	}
	s := ms[at].Val
	v, err := r.text.DecodeStrictNested(s.Start, s.End, rawBlockMemberOuter)
	if err != nil {
		return false
	}
	p["cache_control"] = v
	return true
}
