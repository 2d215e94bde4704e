package responses

import (
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// itemKind classifies an input or output item.
type itemKind int

const (
	itemMessage itemKind = iota
	itemFunctionCall
	itemFunctionOutput
	itemReasoning
	itemHosted
)

// hostedCallTypes are the provider-executed call items: they are
// projected whole, as a native part of an assistant message (requests) or
// of the answer's content (responses).
var hostedCallTypes = map[string]bool{
	"web_search_call":       true,
	"file_search_call":      true,
	"code_interpreter_call": true,
	"image_generation_call": true,
	"mcp_call":              true,
	"mcp_list_tools":        true,
}

// unknownMembersKey is the member of a projected message, tool call, part
// or tool under which the wire object's unknown members are projected
// (judged, and written back as judged).
const unknownMembersKey = "unknown_members"

// Member sets of the items and parts the gateway interprets.
var (
	messageItemMembers = rawjson.NewMemberSet("type", "id", "role", "content", "status", "phase")
	callItemMembers    = rawjson.NewMemberSet("type", "id", "call_id", "name", "namespace", "arguments", "status")
	outputItemMembers  = rawjson.NewMemberSet("type", "id", "call_id", "output", "status")
	reasoningMembers   = rawjson.NewMemberSet("type", "id", "summary", "encrypted_content", "content", "status")
	summaryPartMembers = rawjson.NewMemberSet("type", "text")
	hostedItemMembers  = rawjson.NewMemberSet("type", "id", "status", "action", "queries", "results", "code", "container_id", "outputs", "result", "name", "arguments", "output", "error", "server_label", "tools", "approval_request_id")
	inputTextMembers   = rawjson.NewMemberSet("type", "text")
	outputTextMembers  = rawjson.NewMemberSet("type", "text", "annotations", "logprobs")
	refusalPartMembers = rawjson.NewMemberSet("type", "refusal")
	inputImageMembers  = rawjson.NewMemberSet("type", "image_url", "file_id", "detail")
	inputFileMembers   = rawjson.NewMemberSet("type", "file_id", "file_data", "file_url", "filename")
	messageRoles       = map[string]bool{"user": true, "system": true, "developer": true, "assistant": true}
	// messagePhases are the documented phases of an assistant message.
	messagePhases = enum{"commentary": true, "final_answer": true}
)

// parseInput validates the input member and groups its items into
// segments, one per projected message.
func (r *Request) parseInput(raw rawjson.Span, v any) error {
	r.inputSpan = raw
	switch x := v.(type) {
	case string:
		r.inputString = true
		r.segs = []segment{{msg: map[string]any{"role": "user", "content": x}, n: 1}}
		return nil
	case []any:
		r.items = rawjson.ScanArray(r.text.Bytes(), raw)
		r.segs = make([]segment, 0, len(x))
		r.callIDs = map[string]int{}
		for i, e := range x {
			if err := r.addItem(i, e); err != nil {
				return err
			}
		}
		return nil
	default:
		return &wire.RequestError{Field: "input", Msg: "must be a string or an array of items"}
	}
}

// addItem projects input item i.
func (r *Request) addItem(i int, e any) error {
	field := fieldIndex("input", i)
	it, ok := e.(map[string]any)
	if !ok {
		return &wire.RequestError{Field: field, Msg: "must be an object, got " + rawjson.TypeName(e)}
	}
	typ, hasType := it["type"].(string)
	if !hasType && it["type"] != nil {
		return &wire.RequestError{Field: field + ".type", Msg: "must be a string"}
	}
	if !hasType {
		typ = "message" // an easy input message: role and content only
	}
	up := &itemEdit{}
	switch {
	case typ == "message":
		msg, err := r.projectMessageItem(it, field, i, up)
		if err != nil {
			return err
		}
		r.segs = append(r.segs, segment{msg: msg, first: i, n: 1, kind: itemMessage})
	case typ == "function_call":
		tc, id, err := r.projectCallItem(it, field, up)
		if err != nil {
			return err
		}
		r.addCall(i, id, tc)
	case typ == "function_call_output":
		msg, err := r.projectOutputItem(it, field, up)
		if err != nil {
			return err
		}
		r.segs = append(r.segs, segment{msg: msg, first: i, n: 1, kind: itemFunctionOutput})
	case typ == "reasoning":
		msg, err := r.projectReasoningItem(it, field, up)
		if err != nil {
			return err
		}
		r.segs = append(r.segs, segment{msg: msg, first: i, n: 1, kind: itemReasoning})
	case hostedCallTypes[typ]:
		if known := hostedItemMembers.CollisionIn(it); known != "" {
			return &wire.RequestError{Field: field, Msg: collisionMessage(known)}
		}
		if err := r.openItemID(it, field, false, up); err != nil {
			return err
		}
		part := jsonvalue.DeepCopy(it)
		r.segs = append(r.segs, segment{msg: map[string]any{"role": "assistant", "content": []any{part}}, first: i, n: 1, kind: itemHosted})
	case !r.surf.strict && !partTypes[typ] && typ != "":
		msg, err := r.projectUnknownItem(it, field, up)
		if err != nil {
			return err
		}
		r.segs = append(r.segs, segment{msg: msg, first: i, n: 1, kind: itemHosted})
	default:
		return &wire.RequestError{Field: field + ".type", Msg: "is not an input item type the gateway can mediate (it knows message, function_call, function_call_output, reasoning, web_search_call, file_search_call, code_interpreter_call, image_generation_call, mcp_call, mcp_list_tools); a deployment can judge others with " + unknownMembersSwitch + ": judge"}
	}
	return r.setUpstream(i, up)
}

// addCall adds function_call item i, call_id id, projected as tc: to the
// assistant message of the run of calls it follows, or as a new one.
func (r *Request) addCall(i int, id string, tc map[string]any) {
	r.callIDs[id] = i
	if n := len(r.segs); n > 0 && r.segs[n-1].kind == itemFunctionCall {
		last := &r.segs[n-1]
		last.msg["tool_calls"] = append(last.msg["tool_calls"].([]any), tc)
		last.n++
		return
	}
	r.segs = append(r.segs, segment{msg: map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{tc}}, first: i, n: 1, kind: itemFunctionCall})
}

// itemEdit collects what an input item's upstream bytes change: member
// values replaced (seals opened) and members removed.
type itemEdit struct {
	set  []memberValue
	drop []string
}

// memberValue is the new value of a member, as JSON text.
type memberValue struct {
	key string
	raw []byte
}

// setRaw replaces the value of member key with raw.
func (e *itemEdit) setRaw(key string, raw []byte) {
	for i := range e.set {
		if e.set[i].key == key {
			e.set[i].raw = raw
			return
		}
	}
	e.set = append(e.set, memberValue{key, raw})
}

// setUpstream renders item i for the upstream when up changes it.
func (r *Request) setUpstream(i int, up *itemEdit) error {
	if len(up.set) == 0 && len(up.drop) == 0 {
		return nil
	}
	body, s := r.text.Bytes(), r.items[i]
	ms, err := rawjson.ScanObject(body, s)
	if err != nil {
		return &wire.RequestError{Field: fieldIndex("input", i), Msg: "has a duplicate member"}
	}
	p := rawjson.NewObjPatch(body, s, ms)
	for _, m := range up.set {
		p.Set(m.key, m.raw)
	}
	for _, k := range up.drop {
		p.Del(k)
	}
	if r.up == nil {
		r.up = make([][]byte, len(r.items))
	}
	r.up[i] = p.Render()
	return nil
}

// openItemID opens the id of an input item. An id the gateway sealed (an
// answer's item id handed back) is forwarded as the upstream's original.
// Any other id is refused on items only a model writes (the client can
// only hold them from an answer, which carries seals), and judged on items
// the client writes itself (its own messages and tool outputs): it is
// returned for projection.
func (r *Request) openItemID(it map[string]any, field string, clientAuthored bool, up *itemEdit) error {
	v, ok := it["id"]
	if !ok || v == nil {
		return nil
	}
	id, ok := v.(string)
	if !ok {
		return &wire.RequestError{Field: field + ".id", Msg: "must be a string"}
	}
	if clientAuthored && !isSealShaped(id) {
		return nil
	}
	orig, err := r.surf.keys.OpenString(kindItemID, id)
	if err != nil {
		return wire.NotIssued(field + ".id")
	}
	up.setRaw("id", appendString(nil, orig))
	return nil
}

// clientID returns the id of a client-written item when it is the
// client's own (judged: projected), or "".
func clientID(it map[string]any) string {
	id, _ := it["id"].(string)
	if isSealShaped(id) {
		return ""
	}
	return id
}

// unknownIn returns obj's members outside known, for projection under
// unknownMembersKey (nil when there are none). Strict surfaces refuse
// them instead, naming the member's path and the switch; a member whose
// name equals a known one but for letter case is refused either way.
func (r *Request) unknownIn(obj map[string]any, known rawjson.MemberSet, field string) (map[string]any, error) {
	if k := known.CollisionIn(obj); k != "" {
		return nil, &wire.RequestError{Field: field, Msg: collisionMessage(k)}
	}
	var out map[string]any
	for k, v := range obj {
		if known.Has(k) {
			continue
		}
		if r.surf.strict {
			return nil, strictMemberError(field, k)
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k] = v
	}
	return out, nil
}

// withUnknown adds the projected unknown members to obj.
func withUnknown(obj, unknown map[string]any) map[string]any {
	if len(unknown) > 0 {
		obj[unknownMembersKey] = unknown
	}
	return obj
}

func optString(obj map[string]any, key, field string) *wire.RequestError {
	if v, ok := obj[key]; ok && v != nil {
		if _, ok := v.(string); !ok {
			return &wire.RequestError{Field: field + "." + key, Msg: "must be a string"}
		}
	}
	return nil
}

// checkStatus refuses an item status outside its enumeration.
func checkStatus(obj map[string]any, field string) *wire.RequestError {
	if v, ok := obj["status"]; ok && v != nil && !itemStatuses.has(v) {
		return &wire.RequestError{Field: field + ".status", Msg: "must be in_progress, completed or incomplete"}
	}
	return nil
}

// projectMessageItem projects a message item to {role, content, id?,
// unknown_members?}.
func (r *Request) projectMessageItem(it map[string]any, field string, i int, up *itemEdit) (map[string]any, error) {
	unknown, err := r.unknownIn(it, messageItemMembers, field)
	if err != nil {
		return nil, err
	}
	if err := checkStatus(it, field); err != nil {
		return nil, err
	}
	if v, ok := it["phase"]; ok && v != nil && !messagePhases.has(v) {
		return nil, &wire.RequestError{Field: field + ".phase", Msg: "must be commentary or final_answer"}
	}
	role, _ := it["role"].(string)
	if !messageRoles[role] {
		return nil, &wire.RequestError{Field: field + ".role", Msg: "must be user, system, developer or assistant"}
	}
	// The client writes its own messages (and may name them); an assistant
	// message comes from an answer.
	if err := r.openItemID(it, field, role != "assistant", up); err != nil {
		return nil, err
	}
	content, err := r.projectInputContent(it["content"], field+".content")
	if err != nil {
		return nil, err
	}
	if raw, ok := r.strippedContent(i, it["content"]); ok {
		up.setRaw("content", raw)
	}
	msg := map[string]any{"role": role, "content": content}
	if id := clientID(it); id != "" && role != "assistant" {
		msg["id"] = id
	}
	return withUnknown(msg, unknown), nil
}

// strippedContent returns item i's content without the logprobs of its
// output_text parts (token log-probabilities of an earlier answer: the
// upstream needs none, so they are removed rather than judged), and
// whether there were any.
func (r *Request) strippedContent(i int, content any) ([]byte, bool) {
	parts, ok := content.([]any)
	if !ok {
		return nil, false
	}
	strip := false
	for _, p := range parts {
		pm, _ := p.(map[string]any)
		if _, has := pm["logprobs"]; has && pm["type"] == "output_text" {
			strip = true
		}
	}
	if !strip {
		return nil, false
	}
	body := r.text.Bytes()
	ms, _ := rawjson.ScanObject(body, r.items[i]) // validated by ParseRequest
	cs := ms[rawjson.Find(ms, "content")].Val
	spans := rawjson.ScanArray(body, cs)
	elems := make([][]byte, len(spans))
	for j, s := range spans {
		elems[j] = body[s.Start:s.End]
		if pm, _ := parts[j].(map[string]any); pm["type"] == "output_text" {
			pms, _ := rawjson.ScanObject(body, s)
			p := rawjson.NewObjPatch(body, s, pms)
			p.Del("logprobs")
			elems[j] = p.Render()
		}
	}
	return rawjson.RenderArray(body, cs, spans, elems), true
}

// projectInputContent maps a request content value (string or input
// parts) to the normalized content.
func (r *Request) projectInputContent(c any, field string) (any, error) {
	switch x := c.(type) {
	case string:
		return x, nil
	case []any:
		out := make([]any, len(x))
		for i, p := range x {
			np, err := r.projectInputPart(p, fieldIndex(field, i))
			if err != nil {
				return nil, err
			}
			out[i] = np
		}
		return out, nil
	}
	return nil, &wire.RequestError{Field: field, Msg: "must be a string or an array of parts, got " + rawjson.TypeName(c)}
}

// projectInputPart maps one request content part.
func (r *Request) projectInputPart(p any, field string) (any, error) {
	part, ok := p.(map[string]any)
	if !ok {
		return nil, &wire.RequestError{Field: field, Msg: "must be an object, got " + rawjson.TypeName(p)}
	}
	typ, _ := part["type"].(string)
	switch typ {
	case "input_text":
		unknown, err := r.unknownIn(part, inputTextMembers, field)
		if err != nil {
			return nil, err
		}
		text, ok := part["text"].(string)
		if !ok {
			return nil, &wire.RequestError{Field: field + ".text", Msg: "must be a string"}
		}
		return withUnknown(map[string]any{"type": "text", "text": text}, unknown), nil
	case "output_text":
		unknown, err := r.unknownIn(part, outputTextMembers, field)
		if err != nil {
			return nil, err
		}
		text, ok := part["text"].(string)
		if !ok {
			return nil, &wire.RequestError{Field: field + ".text", Msg: "must be a string"}
		}
		out := map[string]any{"type": "text", "text": text}
		switch a := part["annotations"].(type) {
		case nil:
		case []any:
			if len(a) > 0 {
				out["annotations"] = a
			}
		default:
			return nil, &wire.RequestError{Field: field + ".annotations", Msg: "must be an array"}
		}
		return withUnknown(out, unknown), nil
	case "refusal":
		unknown, err := r.unknownIn(part, refusalPartMembers, field)
		if err != nil {
			return nil, err
		}
		ref, ok := part["refusal"].(string)
		if !ok {
			return nil, &wire.RequestError{Field: field + ".refusal", Msg: "must be a string"}
		}
		return withUnknown(map[string]any{"type": "refusal", "refusal": ref}, unknown), nil
	case "input_image":
		unknown, err := r.unknownIn(part, inputImageMembers, field)
		if err != nil {
			return nil, err
		}
		for _, k := range []string{"image_url", "file_id", "detail"} {
			if err := optString(part, k, field); err != nil {
				return nil, err
			}
		}
		url, _ := part["image_url"].(string)
		if url == "" {
			return part, nil // a file_id image keeps its native part, every member in it
		}
		img := map[string]any{"url": url}
		if d, ok := part["detail"].(string); ok {
			img["detail"] = d
		}
		if _, ok := part["file_id"]; ok {
			return nil, &wire.RequestError{Field: field, Msg: "must name image_url or file_id, not both"}
		}
		return withUnknown(map[string]any{"type": "image_url", "image_url": img}, unknown), nil
	case "input_file":
		if _, err := r.unknownIn(part, inputFileMembers, field); err != nil {
			return nil, err
		}
		for _, k := range []string{"file_id", "file_data", "file_url", "filename"} {
			if err := optString(part, k, field); err != nil {
				return nil, err
			}
		}
		return part, nil // the native part, every member in it
	}
	if !r.surf.strict && typ != "" && !partTypes[typ] {
		return part, nil // a type the gateway does not know: the native part, judged whole
	}
	return nil, &wire.RequestError{Field: field + ".type", Msg: "is not a content part type the gateway can mediate (it knows input_text, output_text, refusal, input_image, input_file); a deployment can judge others with " + unknownMembersSwitch + ": judge"}
}

// projectCallItem projects a function_call item to a chat tool call
// (with its unknown members); it returns the call_id too.
func (r *Request) projectCallItem(it map[string]any, field string, up *itemEdit) (map[string]any, string, error) {
	unknown, err := r.unknownIn(it, callItemMembers, field)
	if err != nil {
		return nil, "", err
	}
	if err := checkStatus(it, field); err != nil {
		return nil, "", err
	}
	if err := optString(it, "namespace", field); err != nil {
		return nil, "", err
	}
	if err := r.openItemID(it, field, false, up); err != nil {
		return nil, "", err
	}
	id, ok1 := it["call_id"].(string)
	name, ok2 := it["name"].(string)
	args, ok3 := it["arguments"].(string)
	if !ok1 || !ok2 || !ok3 {
		return nil, "", &wire.RequestError{Field: field, Msg: "call_id, name and arguments must be strings"}
	}
	name = qualifiedName(it, name)
	tc := map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
	return withUnknown(tc, unknown), id, nil
}

// projectOutputItem projects a function_call_output item to a tool
// message.
func (r *Request) projectOutputItem(it map[string]any, field string, up *itemEdit) (map[string]any, error) {
	unknown, err := r.unknownIn(it, outputItemMembers, field)
	if err != nil {
		return nil, err
	}
	if err := checkStatus(it, field); err != nil {
		return nil, err
	}
	if err := r.openItemID(it, field, true, up); err != nil {
		return nil, err
	}
	id, ok := it["call_id"].(string)
	if !ok {
		return nil, &wire.RequestError{Field: field + ".call_id", Msg: "must be a string"}
	}
	content, err := r.projectInputContent(it["output"], field+".output")
	if err != nil {
		return nil, err
	}
	msg := map[string]any{"role": "tool", "tool_call_id": id, "content": content}
	if cid := clientID(it); cid != "" {
		msg["id"] = cid
	}
	return withUnknown(msg, unknown), nil
}

// projectReasoningItem projects a reasoning item to an assistant message
// of reasoning parts; its id and encrypted_content must be the gateway's
// seals and go upstream opened.
func (r *Request) projectReasoningItem(it map[string]any, field string, up *itemEdit) (map[string]any, error) {
	unknown, err := r.unknownIn(it, reasoningMembers, field)
	if err != nil {
		return nil, err
	}
	if err := checkStatus(it, field); err != nil {
		return nil, err
	}
	if err := r.openItemID(it, field, false, up); err != nil {
		return nil, err
	}
	switch enc := it["encrypted_content"].(type) {
	case nil:
	case string:
		orig, err := openBlob(r.surf.keys, enc)
		if err != nil {
			return nil, wire.NotIssued(field + ".encrypted_content")
		}
		up.setRaw("encrypted_content", appendString(make([]byte, 0, len(orig)+2), orig))
	default:
		return nil, &wire.RequestError{Field: field + ".encrypted_content", Msg: "must be a string"}
	}
	parts := []any{}
	for _, src := range []struct{ key, typ string }{{"summary", "summary_text"}, {"content", "reasoning_text"}} {
		v, ok := it[src.key]
		if !ok || v == nil {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			return nil, &wire.RequestError{Field: field + "." + src.key, Msg: "must be an array"}
		}
		for j, e := range list {
			f := fieldIndex(field+"."+src.key, j)
			p, ok := e.(map[string]any)
			if !ok {
				return nil, &wire.RequestError{Field: f, Msg: "must be an object"}
			}
			entryUnknown, err := r.unknownIn(p, summaryPartMembers, f)
			if err != nil {
				return nil, err
			}
			text, ok := p["text"].(string)
			if p["type"] != src.typ || !ok {
				return nil, &wire.RequestError{Field: f, Msg: "must be a " + src.typ + " part with a string text"}
			}
			parts = append(parts, withUnknown(map[string]any{"type": "reasoning", "text": text}, entryUnknown))
		}
	}
	return withUnknown(map[string]any{"role": "assistant", "content": parts}, unknown), nil
}

// projectUnknownItem projects an input item of a type the gateway does
// not know: a message of the item's own role (assistant when it names
// none) whose content is the whole item as a native part, judged and
// forwarded as the client sent it (a transform cannot change it). Its id,
// when a seal, must open, as an answer's items of unknown types carry
// seals; any other id is judged with the item.
func (r *Request) projectUnknownItem(it map[string]any, field string, up *itemEdit) (map[string]any, error) {
	if known := nativeItemMembers.CollisionIn(it); known != "" {
		return nil, &wire.RequestError{Field: field, Msg: collisionMessage(known)}
	}
	if err := r.openItemID(it, field, true, up); err != nil {
		return nil, err
	}
	role, _ := it["role"].(string)
	if !messageRoles[role] {
		role = "assistant"
	}
	return map[string]any{"role": role, "content": []any{jsonvalue.DeepCopy(it)}}, nil
}

// qualifiedName is a call's projected name: "<namespace>.<name>" for a
// call into a namespace tool, else the name.
func qualifiedName(it map[string]any, name string) string {
	if ns, _ := it["namespace"].(string); ns != "" {
		return ns + "." + name
	}
	return name
}
