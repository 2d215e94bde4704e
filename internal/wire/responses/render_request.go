package responses

import (
	"slices"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// renderMessage renders a changed or new normalized message as input
// items, or explains why it cannot be expressed.
func (r *Request) renderMessage(v any, field string) ([][]byte, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: field, Msg: "must be an object, got " + rawjson.TypeName(v)}
	}
	role, _ := m["role"].(string)
	allowed := map[string]bool{"role": true, "content": true, unknownMembersKey: true}
	switch {
	case role == "tool":
		allowed["tool_call_id"], allowed["id"] = true, true
	case role == "assistant":
		allowed["tool_calls"] = true
	case !messageRoles[role]:
		return nil, &wire.WriteBackError{Field: field + ".role", Msg: "must be system, developer, user, assistant or tool"}
	default:
		allowed["id"] = true
	}
	for k := range m {
		if !allowed[k] {
			return nil, &wire.WriteBackError{Field: field, Msg: "has a member a Responses input item cannot carry"}
		}
	}
	if role == "tool" {
		return r.renderToolOutput(m, field)
	}
	if tc, ok := m["tool_calls"]; ok && tc != nil {
		if list, ok := tc.([]any); !ok || len(list) > 0 {
			if _, ok := m[unknownMembersKey]; ok {
				return nil, &wire.WriteBackError{Field: field + "." + unknownMembersKey, Msg: "cannot accompany tool calls: each call carries its own"}
			}
			return r.renderCalls(m, field)
		}
	}
	content, err := renderContent(m["content"], role, field+".content")
	if err != nil {
		return nil, err
	}
	b := []byte(`{"type":"message"`)
	if b, err = appendID(b, m, field); err != nil {
		return nil, err
	}
	b = append(b, `,"role":`...)
	b = appendString(b, role)
	b = append(b, `,"content":`...)
	b = append(b, content...)
	b, err = appendUnknown(b, m, messageItemMembers, field)
	if err != nil {
		return nil, err
	}
	return [][]byte{append(b, '}')}, nil
}

// appendID appends a client-written item's judged id, if m carries one.
func appendID(b []byte, m map[string]any, field string) ([]byte, error) {
	v, ok := m["id"]
	if !ok {
		return b, nil
	}
	id, ok := v.(string)
	if !ok || isSealShaped(id) {
		// A seal is the gateway's own: the projection never carries one.
		return nil, &wire.WriteBackError{Field: field + ".id", Msg: "must be a string the client could have written"}
	}
	b = append(b, `,"id":`...)
	return appendString(b, id), nil
}

// appendUnknown appends the members projected under unknown_members of
// m, as members of the rendered wire object whose own members are known
// (a name among them would be ambiguous).
func appendUnknown(b []byte, m map[string]any, known rawjson.MemberSet, field string) ([]byte, error) {
	v, ok := m[unknownMembersKey]
	if !ok {
		return b, nil
	}
	u, ok := v.(map[string]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: field + "." + unknownMembersKey, Msg: "must be an object"}
	}
	for _, k := range sortedKeys(u) {
		if known.Has(k) || known.Collides(k) {
			return nil, &wire.WriteBackError{Field: field + "." + unknownMembersKey, Msg: "names a member the gateway knows: it cannot be written as an unknown one"}
		}
		b = append(b, ',')
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = jsonvalue.AppendCompact(b, u[k]); err != nil {
			return nil, &wire.WriteBackError{Field: field + "." + unknownMembersKey, Msg: "is not encodable JSON"}
		}
	}
	return b, nil
}

// sortedKeys lists m's keys in order, so renderings are stable.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// renderToolOutput renders a tool message as a function_call_output.
func (r *Request) renderToolOutput(m map[string]any, field string) ([][]byte, error) {
	id, ok := m["tool_call_id"].(string)
	if !ok || id == "" {
		return nil, &wire.WriteBackError{Field: field + ".tool_call_id", Msg: "must be a non-empty string"}
	}
	c := m["content"]
	if c == nil {
		c = ""
	}
	out, err := renderContent(c, "tool", field+".content")
	if err != nil {
		return nil, err
	}
	b := []byte(`{"type":"function_call_output"`)
	if b, err = appendID(b, m, field); err != nil {
		return nil, err
	}
	b = append(b, `,"call_id":`...)
	b = appendString(b, id)
	b = append(b, `,"output":`...)
	b = append(b, out...)
	if b, err = appendUnknown(b, m, outputItemMembers, field); err != nil {
		return nil, err
	}
	return [][]byte{append(b, '}')}, nil
}

// renderCalls renders an assistant message's tool calls as function_call
// items. Each call must name a function_call of the input: an unchanged
// call keeps its item's bytes, a changed one patches name and arguments.
func (r *Request) renderCalls(m map[string]any, field string) ([][]byte, error) {
	switch c := m["content"].(type) {
	case nil:
	case string:
		if c != "" {
			return nil, &wire.WriteBackError{Field: field + ".content", Msg: "cannot accompany tool calls in a Responses input"}
		}
	case []any:
		if len(c) > 0 {
			return nil, &wire.WriteBackError{Field: field + ".content", Msg: "cannot accompany tool calls in a Responses input"}
		}
	default:
		return nil, &wire.WriteBackError{Field: field + ".content", Msg: "must be null beside tool calls"}
	}
	list, ok := m["tool_calls"].([]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: field + ".tool_calls", Msg: "must be an array"}
	}
	out := make([][]byte, 0, len(list))
	for i, e := range list {
		cf := fieldIndex(field+".tool_calls", i)
		item, err := r.renderCall(e, cf)
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, nil
}

func (r *Request) renderCall(e any, field string) ([]byte, error) {
	call, ok := e.(map[string]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: field, Msg: "must be an object"}
	}
	id, _ := call["id"].(string)
	idx, ok := r.callIDs[id]
	if !ok {
		return nil, &wire.WriteBackError{Field: field + ".id", Msg: "names no function_call of the request: calls cannot be added"}
	}
	fn, _ := call["function"].(map[string]any)
	name, ok1 := fn["name"].(string)
	args, ok2 := fn["arguments"].(string)
	n := len(call)
	if _, ok := call[unknownMembersKey]; ok {
		n--
	}
	if !ok1 || !ok2 || name == "" || (call["type"] != nil && call["type"] != "function") || n > 3 || len(fn) != 2 {
		return nil, &wire.WriteBackError{Field: field, Msg: "must be {id, type: function, function: {name, arguments}, unknown_members?} with string name and arguments"}
	}
	src, s := r.upstreamItem(idx)
	ms, _ := rawjson.ScanObject(src, s) // validated by ParseRequest
	orig, _ := rawjson.DecodeSpan(src, s)
	it := orig.(map[string]any)
	ns, _ := it["namespace"].(string)
	if ns != "" {
		if len(name) <= len(ns)+1 || name[:len(ns)+1] != ns+"." {
			return nil, &wire.WriteBackError{Field: field + ".function.name", Msg: "must stay inside the call's namespace"}
		}
		name = name[len(ns)+1:]
	}
	p := rawjson.NewObjPatch(src, s, ms)
	if name != it["name"] {
		raw, _ := jsonvalue.Marshal(name)
		p.Set("name", raw)
	}
	if args != it["arguments"] {
		raw, _ := jsonvalue.Marshal(args)
		p.Set("arguments", raw)
	}
	if err := patchUnknown(p, it, call, callItemMembers, field); err != nil {
		return nil, err
	}
	return p.Render(), nil
}

// patchUnknown writes the verdicted unknown members of target onto the
// wire object orig (patched by p): changed values replace, missing ones
// are removed, new ones are added (plain names only, none the gateway
// knows).
func patchUnknown(p *rawjson.ObjPatch, orig, target map[string]any, known rawjson.MemberSet, field string) error {
	u, _ := target[unknownMembersKey].(map[string]any)
	if _, ok := target[unknownMembersKey]; ok && u == nil {
		return &wire.WriteBackError{Field: field + "." + unknownMembersKey, Msg: "must be an object"}
	}
	for k, v := range orig {
		if known.Has(k) {
			continue
		}
		nv, ok := u[k]
		switch {
		case !ok:
			p.Del(k)
		case !jsonvalue.Equal(nv, v):
			raw, err := jsonvalue.Marshal(nv)
			if err != nil {
				return &wire.WriteBackError{Field: field + "." + unknownMembersKey, Msg: "is not encodable JSON"}
			}
			p.Set(k, raw)
		}
	}
	for _, k := range sortedKeys(u) {
		if _, ok := orig[k]; ok {
			continue
		}
		if known.Has(k) || known.Collides(k) || !rawjson.PlainName(k) {
			return &wire.WriteBackError{Field: field + "." + unknownMembersKey, Msg: "adds a member that is not a plain identifier, or that the gateway knows"}
		}
		raw, err := jsonvalue.Marshal(u[k])
		if err != nil {
			return &wire.WriteBackError{Field: field + "." + unknownMembersKey, Msg: "is not encodable JSON"}
		}
		p.Set(k, raw)
	}
	return nil
}

// renderContent renders normalized content as Responses content: a string
// stays a string; parts map back to input parts (output_text for the
// assistant).
func renderContent(c any, role, field string) ([]byte, error) {
	switch x := c.(type) {
	case string:
		return jsonvalue.Marshal(x)
	case []any:
		b := []byte{'['}
		for i, p := range x {
			if i > 0 {
				b = append(b, ',')
			}
			part, err := renderPart(p, role, fieldIndex(field, i))
			if err != nil {
				return nil, err
			}
			b = append(b, part...)
		}
		return append(b, ']'), nil
	}
	return nil, &wire.WriteBackError{Field: field, Msg: "must be a string or an array of parts, got " + rawjson.TypeName(c)}
}

func renderPart(p any, role, field string) ([]byte, error) {
	part, ok := p.(map[string]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: field, Msg: "must be an object"}
	}
	bad := &wire.WriteBackError{Field: field, Msg: "cannot be expressed as a Responses content part (text, image_url, refusal, input_image, input_file)"}
	n := len(part) // members besides unknown_members
	if _, ok := part[unknownMembersKey]; ok {
		n--
	}
	var b []byte
	var known rawjson.MemberSet
	switch part["type"] {
	case "text":
		text, ok := part["text"].(string)
		if !ok {
			return nil, bad
		}
		if role == "assistant" {
			anns, ok := part["annotations"]
			if !ok {
				anns = []any{}
			}
			if n > 3 || (n == 3 && !ok) {
				return nil, bad
			}
			b = []byte(`{"type":"output_text","text":`)
			b = appendString(b, text)
			b = append(b, `,"annotations":`...)
			var err error
			if b, err = jsonvalue.AppendCompact(b, anns); err != nil {
				return nil, bad
			}
			known = outputTextMembers
			break
		}
		if n != 2 {
			return nil, bad
		}
		b = appendString([]byte(`{"type":"input_text","text":`), text)
		known = inputTextMembers
	case "image_url":
		img, _ := part["image_url"].(map[string]any)
		url, ok := img["url"].(string)
		if !ok || n != 2 {
			return nil, bad
		}
		b = appendString([]byte(`{"type":"input_image","image_url":`), url)
		if d, ok := img["detail"].(string); ok {
			b = appendString(append(b, `,"detail":`...), d)
		}
		known = inputImageMembers
	case "refusal":
		ref, ok := part["refusal"].(string)
		if !ok || n != 2 {
			return nil, bad
		}
		b = appendString([]byte(`{"type":"refusal","refusal":`), ref)
		known = refusalPartMembers
	case "input_image", "input_file":
		if _, ok := part[unknownMembersKey]; ok {
			return nil, bad // a native part holds its members itself
		}
		return jsonvalue.Marshal(part)
	case "reasoning":
		return nil, &wire.WriteBackError{Field: field, Msg: "reasoning cannot be changed or added: its encrypted state would no longer match"}
	default:
		return nil, bad
	}
	b, err := appendUnknown(b, part, known, field)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendString appends s as a JSON string. Invalid UTF-8 never reaches
// here (targets are checked); were it to, its bad bytes become U+FFFD, as
// encoding/json writes them, so the output stays JSON.
func appendString(b []byte, s string) []byte {
	if out, ok := jsonvalue.AppendString(b, s); ok {
		return out
	}
	out, _ := jsonvalue.AppendString(b, strings.ToValidUTF8(s, "\uFFFD"))
	return out
}
