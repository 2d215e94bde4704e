package responses

import (
	"slices"

	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// This file projects an input array item by item from its bytes, without
// first decoding the whole array into a tree the projection then copies
// out of. The function_call and function_call_output items that make up
// most of an agent's history (Codex sends it whole every turn) are
// projected straight from their members' tokens; every other item is
// decoded on its own and projected by addItem, as before.
//
// It only ever accepts: any problem (a duplicate member, a string the
// tree decoder would refuse, a projection error) makes parseInputRaw
// report false, and the caller then parses the member the tree way, which
// decides every refusal exactly as it always has. So a request is
// accepted here only when the tree path accepts it, with the same
// projection (TestRawInputMatchesTree).

// parseInputRaw parses and projects the input array at raw, reporting
// false, with r's input state reset, when the tree path must decide.
func (r *Request) parseInputRaw(raw rawjson.Span) bool {
	body := r.text.Bytes()
	r.inputSpan = raw
	if r.onePass {
		items, ok := rawjson.ScanArrayChecked(body, raw)
		if !ok || r.surf.maxMessages > 0 && len(items) > r.surf.maxMessages {
			return false // the full path refuses it
		}
		r.items = items
	} else {
		r.items = rawjson.ScanArray(body, raw)
	}
	r.segs = make([]segment, 0, len(r.items))
	r.callIDs = make(map[string]int, len(r.items)/2)
	scope := r.memoScope()
	for i, s := range r.items {
		raw := body[s.Start:s.End]
		if u, ok := r.memoItem(scope, raw); ok {
			r.replayItem(i, u)
			continue
		}
		// On the one-pass path an item not kept is checked here; a kept
		// one came from a valid body.
		if r.onePass && !rawjson.ValidElement(body, s, 2) || !r.addRawItem(i, s) {
			r.inputSpan, r.items, r.segs, r.callIDs, r.up = rawjson.Span{}, nil, nil, nil, nil
			return false
		}
		r.keepItem(scope, i, raw)
	}
	return true
}

// addRawItem projects input item i (at s), from its tokens when it is a
// plain function call, function call output or message with text content,
// else from its decoded tree.
func (r *Request) addRawItem(i int, s rawjson.Span) bool {
	body := r.text.Bytes()
	if s.Kind(body) == '{' {
		var buf [len(rawCallMembers)]rawjson.Member // the most members an item projected here has
		ms, err := rawjson.ScanObjectInto(body, s, buf[:])
		if err != nil {
			return false // a duplicate member: the tree path refuses it
		}
		typ := "message" // no type, or null: an easy input message (addItem)
		if at := rawjson.Find(ms, "type"); at >= 0 && ms[at].Val.Kind(body) != 'n' {
			typ, _ = r.rawValue(ms[at].Val).(string)
		}
		switch typ {
		case "function_call":
			if ok, done := r.addRawCall(i, s, ms); done {
				return ok
			}
		case "function_call_output":
			if ok, done := r.addRawOutput(i, s, ms); done {
				return ok
			}
		case "message":
			if ok, done := r.addRawMessage(i, s, ms); done {
				return ok
			}
		}
	}
	// Nested in the body's object and the input array, as the tree path
	// decodes it.
	e, err := r.text.DecodeStrictNested(s.Start, s.End, 1)
	if err != nil {
		return false
	}
	return r.addItem(i, e) == nil
}

// rawValue decodes a scalar token as the tree decoder does; nil for null,
// for a container and for a token it refuses, which its caller tells
// apart by the token's kind when it matters.
func (r *Request) rawValue(s rawjson.Span) any {
	switch s.Kind(r.text.Bytes()) {
	case '{', '[':
		return nil
	}
	v, err := r.text.DecodeString(s.Start, s.End)
	if err != nil {
		return nil
	}
	return v
}

// rawMembers returns the values of the members of ms, every one of which
// known names and is a string or null (nil for null), in known's order;
// ok is false when a member is unknown or of another kind, or a string
// the tree decoder refuses: the item then takes the tree path.
func (r *Request) rawMembers(ms []rawjson.Member, known []string, vals []any) bool {
	body := r.text.Bytes()
	for _, m := range ms {
		at := slices.Index(known, m.Key)
		if at < 0 {
			return false
		}
		switch m.Val.Kind(body) {
		case '"':
			v := r.rawValue(m.Val)
			if v == nil {
				return false
			}
			vals[at] = v
		case 'n':
		default:
			return false
		}
	}
	return true
}

// Member orders of the items projected from their tokens.
var (
	rawCallMembers    = [...]string{"type", "id", "call_id", "name", "namespace", "arguments", "status"}
	rawOutputMembers  = [...]string{"type", "id", "call_id", "output", "status"}
	rawMessageMembers = [...]string{"type", "id", "role", "content", "status", "phase"}
)

// addRawMessage projects message item i (at s, members ms) whose content
// is a string as projectMessageItem and addItem do; done as with
// addRawCall. Anything else (parts, an unknown role, status or phase) is
// left to the tree path, which says what is wrong.
func (r *Request) addRawMessage(i int, s rawjson.Span, ms []rawjson.Member) (ok, done bool) {
	var v [len(rawMessageMembers)]any
	if !r.rawMembers(ms, rawMessageMembers[:], v[:]) {
		return false, false
	}
	role, _ := v[2].(string)
	content := v[3]
	if content == nil || !messageRoles[role] || v[4] != nil && !itemStatuses.has(v[4]) || v[5] != nil && !messagePhases.has(v[5]) {
		return false, false
	}
	var up itemEdit
	msg := map[string]any{"role": role, "content": content}
	if v[1] != nil {
		id := v[1].(string)
		// The client writes its own messages (and may name them); an
		// assistant message comes from an answer.
		if !r.openRawID(id, role != "assistant", &up) {
			return false, true
		}
		if id != "" && role != "assistant" && !isSealShaped(id) {
			msg["id"] = id // the client's own id, judged (clientID)
		}
	}
	r.segs = append(r.segs, segment{msg: msg, first: i, n: 1, kind: itemMessage})
	return r.setRawUpstream(i, s, ms, &up), true
}

// addRawCall projects function_call item i (at s, members ms) as
// projectCallItem and addItem do. done is false when the item has a
// member that is not a known one holding a string or null: it then takes
// the tree path.
func (r *Request) addRawCall(i int, s rawjson.Span, ms []rawjson.Member) (ok, done bool) {
	var v [len(rawCallMembers)]any
	if !r.rawMembers(ms, rawCallMembers[:], v[:]) {
		return false, false
	}
	id, name, args := v[2], v[3], v[5]
	if id == nil || name == nil || args == nil || v[6] != nil && !itemStatuses.has(v[6]) {
		return false, true
	}
	var up itemEdit
	if v[1] != nil && !r.openRawID(v[1].(string), false, &up) {
		return false, true
	}
	if ns, _ := v[4].(string); ns != "" {
		name = ns + "." + name.(string)
	}
	tc := map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
	r.addCall(i, id.(string), tc)
	return r.setRawUpstream(i, s, ms, &up), true
}

// addRawOutput projects function_call_output item i (at s, members ms)
// with string output as projectOutputItem and addItem do; done as with
// addRawCall.
func (r *Request) addRawOutput(i int, s rawjson.Span, ms []rawjson.Member) (ok, done bool) {
	var v [len(rawOutputMembers)]any
	if !r.rawMembers(ms, rawOutputMembers[:], v[:]) {
		return false, false
	}
	id, out := v[2], v[3]
	if id == nil || out == nil || v[4] != nil && !itemStatuses.has(v[4]) {
		return false, true
	}
	var up itemEdit
	msg := map[string]any{"role": "tool", "tool_call_id": id, "content": out}
	if v[1] != nil {
		cid := v[1].(string)
		if !r.openRawID(cid, true, &up) {
			return false, true
		}
		if cid != "" && !isSealShaped(cid) {
			msg["id"] = v[1] // the client's own id, judged (clientID)
		}
	}
	r.segs = append(r.segs, segment{msg: msg, first: i, n: 1, kind: itemFunctionOutput})
	return r.setRawUpstream(i, s, ms, &up), true
}

// openRawID is openItemID for an item's string id.
func (r *Request) openRawID(id string, clientAuthored bool, up *itemEdit) bool {
	if clientAuthored && !isSealShaped(id) {
		return true
	}
	orig, err := r.surf.keys.OpenString(kindItemID, id)
	if err != nil {
		return false
	}
	up.setRaw("id", appendString(nil, orig))
	return true
}

// setRawUpstream is setUpstream for item i whose members ms are scanned
// already.
func (r *Request) setRawUpstream(i int, s rawjson.Span, ms []rawjson.Member, up *itemEdit) bool {
	if len(up.set) == 0 && len(up.drop) == 0 {
		return true
	}
	if r.up == nil {
		r.up = make([][]byte, len(r.items))
	}
	r.up[i] = renderEdit(r.text.Bytes(), s, ms, up)
	return true
}

// renderEdit renders the object at s (members ms) with up applied. The
// usual edit, one member's value replaced (a sealed id opened), is one
// splice; the bytes are ObjPatch's either way.
func renderEdit(body []byte, s rawjson.Span, ms []rawjson.Member, up *itemEdit) []byte {
	if len(up.set) == 1 && len(up.drop) == 0 {
		if at := rawjson.Find(ms, up.set[0].key); at >= 0 {
			v := ms[at].Val
			return rawjson.Splice(body[s.Start:s.End], rawjson.Span{Start: v.Start - s.Start, End: v.End - s.Start}, up.set[0].raw)
		}
	}
	p := rawjson.NewObjPatch(body, s, slices.Clone(ms)) // the patch keeps its list; ms may be the caller's stack array
	for _, m := range up.set {
		p.Set(m.key, m.raw)
	}
	for _, k := range up.drop {
		p.Del(k)
	}
	return p.Render()
}
