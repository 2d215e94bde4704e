package responses

import (
	"strconv"

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
	allowed := map[string]bool{"role": true, "content": true}
	switch {
	case role == "tool":
		allowed["tool_call_id"] = true
	case role == "assistant":
		allowed["tool_calls"] = true
	case !messageRoles[role]:
		return nil, &wire.WriteBackError{Field: field + ".role", Msg: "must be system, developer, user, assistant or tool"}
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
			return r.renderCalls(m, field)
		}
	}
	content, err := renderContent(m["content"], role, field+".content")
	if err != nil {
		return nil, err
	}
	b := []byte(`{"type":"message","role":`)
	b = appendString(b, role)
	b = append(b, `,"content":`...)
	b = append(b, content...)
	return [][]byte{append(b, '}')}, nil
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
	b := []byte(`{"type":"function_call_output","call_id":`)
	b = appendString(b, id)
	b = append(b, `,"output":`...)
	b = append(b, out...)
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
	if !ok1 || !ok2 || name == "" || (call["type"] != nil && call["type"] != "function") || len(call) > 3 || len(fn) != 2 {
		return nil, &wire.WriteBackError{Field: field, Msg: "must be {id, type: function, function: {name, arguments}} with string name and arguments"}
	}
	s := r.items[idx]
	ms, _ := rawjson.ScanObject(r.text.Bytes(), s) // validated by ParseRequest
	orig, _ := rawjson.DecodeSpan(r.text.Bytes(), s)
	it := orig.(map[string]any)
	ns, _ := it["namespace"].(string)
	if ns != "" {
		if len(name) <= len(ns)+1 || name[:len(ns)+1] != ns+"." {
			return nil, &wire.WriteBackError{Field: field + ".function.name", Msg: "must stay inside the call's namespace"}
		}
		name = name[len(ns)+1:]
	}
	p := rawjson.NewObjPatch(r.text.Bytes(), s, ms)
	if name != it["name"] {
		raw, _ := jsonvalue.Marshal(name)
		p.Set("name", raw)
	}
	if args != it["arguments"] {
		raw, _ := jsonvalue.Marshal(args)
		p.Set("arguments", raw)
	}
	return p.Render(), nil
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
			if len(part) > 3 || (len(part) == 3 && !ok) {
				return nil, bad
			}
			return jsonvalue.Marshal(map[string]any{"type": "output_text", "text": text, "annotations": anns})
		}
		if len(part) != 2 {
			return nil, bad
		}
		return jsonvalue.Marshal(map[string]any{"type": "input_text", "text": text})
	case "image_url":
		img, _ := part["image_url"].(map[string]any)
		url, ok := img["url"].(string)
		if !ok || len(part) != 2 {
			return nil, bad
		}
		out := map[string]any{"type": "input_image", "image_url": url}
		if d, ok := img["detail"].(string); ok {
			out["detail"] = d
		}
		return jsonvalue.Marshal(out)
	case "refusal":
		if _, ok := part["refusal"].(string); !ok || len(part) != 2 {
			return nil, bad
		}
		return jsonvalue.Marshal(part)
	case "input_image", "input_file":
		known := inputImageMembers
		if part["type"] == "input_file" {
			known = inputFileMembers
		}
		if known.UnknownIn(part) {
			return nil, bad
		}
		return jsonvalue.Marshal(part)
	case "reasoning":
		return nil, &wire.WriteBackError{Field: field, Msg: "reasoning cannot be changed or added: its encrypted state would no longer match"}
	}
	return nil, bad
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	out, err := jsonvalue.AppendCompact(b, s)
	if err != nil {
		return strconv.AppendQuote(b, s) // invalid UTF-8 never reaches here: targets are checked
	}
	return out
}
