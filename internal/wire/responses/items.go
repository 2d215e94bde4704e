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

// Member sets of the items and parts the gateway interprets.
var (
	messageItemMembers = rawjson.NewMemberSet("type", "id", "role", "content", "status")
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
)

// parseInput validates the input member and groups its items into
// segments, one per projected message.
func (r *Request) parseInput(raw rawjson.Span, v any, allowState bool) error {
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
	switch {
	case typ == "message":
		msg, err := projectMessageItem(it, field)
		if err != nil {
			return err
		}
		r.segs = append(r.segs, segment{msg: msg, first: i, n: 1, kind: itemMessage})
	case typ == "function_call":
		tc, id, err := projectCallItem(it, field)
		if err != nil {
			return err
		}
		r.callIDs[id] = i
		if n := len(r.segs); n > 0 && r.segs[n-1].kind == itemFunctionCall {
			last := &r.segs[n-1]
			last.msg["tool_calls"] = append(last.msg["tool_calls"].([]any), tc)
			last.n++
			return nil
		}
		r.segs = append(r.segs, segment{msg: map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{tc}}, first: i, n: 1, kind: itemFunctionCall})
	case typ == "function_call_output":
		msg, err := projectOutputItem(it, field)
		if err != nil {
			return err
		}
		r.segs = append(r.segs, segment{msg: msg, first: i, n: 1, kind: itemFunctionOutput})
	case typ == "reasoning":
		parts, err := reasoningParts(it, field)
		if err != nil {
			return err
		}
		r.segs = append(r.segs, segment{msg: map[string]any{"role": "assistant", "content": parts}, first: i, n: 1, kind: itemReasoning})
	case hostedCallTypes[typ]:
		if known := hostedItemMembers.CollisionIn(it); known != "" {
			return &wire.RequestError{Field: field, Msg: collisionMessage(known)}
		}
		part := jsonvalue.DeepCopy(it)
		r.segs = append(r.segs, segment{msg: map[string]any{"role": "assistant", "content": []any{part}}, first: i, n: 1, kind: itemHosted})
	default:
		return &wire.RequestError{Field: field + ".type", Msg: "is not an input item type the gateway can mediate (it knows message, function_call, function_call_output, reasoning, web_search_call, file_search_call, code_interpreter_call, image_generation_call)"}
	}
	return nil
}

// closedObject refuses members colliding with known ones and members the
// set does not know.
func closedObject(obj map[string]any, known rawjson.MemberSet, field string) *wire.RequestError {
	if k := known.CollisionIn(obj); k != "" {
		return &wire.RequestError{Field: field, Msg: collisionMessage(k)}
	}
	if known.UnknownIn(obj) {
		return &wire.RequestError{Field: field, Msg: "has a member the gateway does not know"}
	}
	return nil
}

func optString(obj map[string]any, key, field string) *wire.RequestError {
	if v, ok := obj[key]; ok && v != nil {
		if _, ok := v.(string); !ok {
			return &wire.RequestError{Field: field + "." + key, Msg: "must be a string"}
		}
	}
	return nil
}

// projectMessageItem projects a message item to {role, content}.
func projectMessageItem(it map[string]any, field string) (map[string]any, error) {
	if err := closedObject(it, messageItemMembers, field); err != nil {
		return nil, err
	}
	for _, k := range []string{"id", "status"} {
		if err := optString(it, k, field); err != nil {
			return nil, err
		}
	}
	role, _ := it["role"].(string)
	if !messageRoles[role] {
		return nil, &wire.RequestError{Field: field + ".role", Msg: "must be user, system, developer or assistant"}
	}
	content, err := projectInputContent(it["content"], field+".content", false)
	if err != nil {
		return nil, err
	}
	return map[string]any{"role": role, "content": content}, nil
}

// projectInputContent maps a request content value (string or input
// parts) to the normalized content. allowEmpty admits null (a tool
// output may be empty).
func projectInputContent(c any, field string, allowEmpty bool) (any, error) {
	switch x := c.(type) {
	case string:
		return x, nil
	case []any:
		out := make([]any, len(x))
		for i, p := range x {
			np, err := projectInputPart(p, fieldIndex(field, i))
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
func projectInputPart(p any, field string) (any, error) {
	part, ok := p.(map[string]any)
	if !ok {
		return nil, &wire.RequestError{Field: field, Msg: "must be an object, got " + rawjson.TypeName(p)}
	}
	typ, _ := part["type"].(string)
	switch typ {
	case "input_text":
		if err := closedObject(part, inputTextMembers, field); err != nil {
			return nil, err
		}
		text, ok := part["text"].(string)
		if !ok {
			return nil, &wire.RequestError{Field: field + ".text", Msg: "must be a string"}
		}
		return map[string]any{"type": "text", "text": text}, nil
	case "output_text":
		if err := closedObject(part, outputTextMembers, field); err != nil {
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
		if lp, ok := part["logprobs"]; ok && lp != nil {
			if _, ok := lp.([]any); !ok {
				return nil, &wire.RequestError{Field: field + ".logprobs", Msg: "must be an array"}
			}
		}
		return out, nil
	case "refusal":
		if err := closedObject(part, refusalPartMembers, field); err != nil {
			return nil, err
		}
		ref, ok := part["refusal"].(string)
		if !ok {
			return nil, &wire.RequestError{Field: field + ".refusal", Msg: "must be a string"}
		}
		return map[string]any{"type": "refusal", "refusal": ref}, nil
	case "input_image":
		if err := closedObject(part, inputImageMembers, field); err != nil {
			return nil, err
		}
		for _, k := range []string{"image_url", "file_id", "detail"} {
			if err := optString(part, k, field); err != nil {
				return nil, err
			}
		}
		url, _ := part["image_url"].(string)
		if url == "" {
			return part, nil // a file_id image keeps its native part
		}
		img := map[string]any{"url": url}
		if d, ok := part["detail"].(string); ok {
			img["detail"] = d
		}
		if _, ok := part["file_id"]; ok {
			return nil, &wire.RequestError{Field: field, Msg: "must name image_url or file_id, not both"}
		}
		return map[string]any{"type": "image_url", "image_url": img}, nil
	case "input_file":
		if err := closedObject(part, inputFileMembers, field); err != nil {
			return nil, err
		}
		for _, k := range []string{"file_id", "file_data", "file_url", "filename"} {
			if err := optString(part, k, field); err != nil {
				return nil, err
			}
		}
		return part, nil
	}
	return nil, &wire.RequestError{Field: field + ".type", Msg: "is not a content part type the gateway can mediate (it knows input_text, output_text, refusal, input_image, input_file)"}
}

// projectCallItem projects a function_call item to a chat tool call.
func projectCallItem(it map[string]any, field string) (map[string]any, string, error) {
	if err := closedObject(it, callItemMembers, field); err != nil {
		return nil, "", err
	}
	for _, k := range []string{"id", "status"} {
		if err := optString(it, k, field); err != nil {
			return nil, "", err
		}
	}
	if err := optString(it, "namespace", field); err != nil {
		return nil, "", err
	}
	id, ok1 := it["call_id"].(string)
	name, ok2 := it["name"].(string)
	args, ok3 := it["arguments"].(string)
	if !ok1 || !ok2 || !ok3 {
		return nil, "", &wire.RequestError{Field: field, Msg: "call_id, name and arguments must be strings"}
	}
	name = qualifiedName(it, name)
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}, id, nil
}

// projectOutputItem projects a function_call_output item to a tool
// message.
func projectOutputItem(it map[string]any, field string) (map[string]any, error) {
	if err := closedObject(it, outputItemMembers, field); err != nil {
		return nil, err
	}
	for _, k := range []string{"id", "status"} {
		if err := optString(it, k, field); err != nil {
			return nil, err
		}
	}
	id, ok := it["call_id"].(string)
	if !ok {
		return nil, &wire.RequestError{Field: field + ".call_id", Msg: "must be a string"}
	}
	content, err := projectInputContent(it["output"], field+".output", true)
	if err != nil {
		return nil, err
	}
	return map[string]any{"role": "tool", "tool_call_id": id, "content": content}, nil
}

// reasoningParts validates a reasoning item (input or output) and returns
// its normalized parts: one {"type":"reasoning","text"} per summary entry,
// then one per reasoning_text content entry. encrypted_content is opaque
// and never projected.
func reasoningParts(it map[string]any, field string) ([]any, *wire.RequestError) {
	if err := closedObject(it, reasoningMembers, field); err != nil {
		return nil, err
	}
	for _, k := range []string{"id", "status", "encrypted_content"} {
		if err := optString(it, k, field); err != nil {
			return nil, err
		}
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
			if err := closedObject(p, summaryPartMembers, f); err != nil {
				return nil, err
			}
			text, ok := p["text"].(string)
			if p["type"] != src.typ || !ok {
				return nil, &wire.RequestError{Field: f, Msg: "must be a " + src.typ + " part with a string text"}
			}
			parts = append(parts, map[string]any{"type": "reasoning", "text": text})
		}
	}
	return parts, nil
}

// qualifiedName is a call's projected name: "<namespace>.<name>" for a
// call into a namespace tool, else the name.
func qualifiedName(it map[string]any, name string) string {
	if ns, _ := it["namespace"].(string); ns != "" {
		return ns + "." + name
	}
	return name
}
