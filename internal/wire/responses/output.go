package responses

import (
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// OutputItems documents the treatment of each output item type.
func OutputItems() []MemberDoc {
	return []MemberDoc{
		{"message", "projected: output_text as text parts (url_citation annotations as {type, url, title}, others native), refusal as refusal parts; logprobs, unknown members and url_citation members beyond integer offsets removed (re-rendered); id and status metadata (502 when outside their shape)"},
		{"function_call", "projected: tool_calls {id: call_id, name (namespace-qualified), args}; id and status metadata (502 when outside their shape)"},
		{"reasoning", "projected: one reasoning part per summary and reasoning_text entry, written back to its entry (rewritten or removed, not added); encrypted_content (a base64 token, else 502) and id released unchanged, never projected"},
		{"web_search_call, file_search_call, code_interpreter_call, image_generation_call, mcp_call, mcp_list_tools", "projected: the whole item as a native part of content, written back as the item (string values may change; type, id and members stay; not added or removed)"},
		{"any other", "refused (502)"},
	}
}

// readOutput reads the output array.
func (r *Response) readOutput(s rawjson.Span, v any) error {
	list, ok := v.([]any)
	if !ok {
		return respErr("output", "must be an array")
	}
	spans := rawjson.ScanArray(r.body, s)
	r.items = make([]outItem, len(list))
	for i, e := range list {
		it, err := readOutputItem(r.body, spans[i], e, fieldIndex("output", i))
		if err != nil {
			return err
		}
		if len(it.drop) > 0 {
			r.clean = false
		}
		r.items[i] = *it
	}
	return nil
}

// readOutputItem reads one output item at span s (decoded as e).
func readOutputItem(body []byte, s rawjson.Span, e any, field string) (*outItem, error) {
	obj, ok := e.(map[string]any)
	if !ok {
		return nil, respErr(field, "must be an object")
	}
	ms, _ := rawjson.ScanObject(body, s) // duplicates were refused by the caller
	it := &outItem{span: s, ms: ms}
	it.id, _ = obj["id"].(string)
	typ, _ := obj["type"].(string)
	if !hostedCallTypes[typ] { // a hosted item is projected whole
		if err := checkItemMeta(obj, field); err != nil {
			return nil, err
		}
	}
	switch {
	case typ == "message":
		return it, it.readMessage(obj, field)
	case typ == "function_call":
		return it, it.readCall(obj, field)
	case typ == "reasoning":
		it.kind = itemReasoning
		parts, rerr := reasoningParts(obj, field)
		if rerr != nil {
			return nil, respErr(rerr.Field, rerr.Msg)
		}
		it.parts = parts
		// encrypted_content is a base64 token the client echoes back: it
		// is released unchanged and never projected, so at least it
		// cannot be prose.
		if v, ok := obj["encrypted_content"]; ok && v != nil && !matches(wire.IsOpaqueToken, v) {
			return nil, respErr(field+".encrypted_content", "is not an opaque base64 token")
		}
		summary, hasSummary := obj["summary"].([]any)
		_, hasContent := obj["content"].([]any)
		it.hasSummary, it.hasContent, it.nSummary = hasSummary, hasContent, len(summary)
	case hostedCallTypes[typ]:
		if hostedItemMembers.AmbiguousKeys(obj) {
			return nil, respErr(field, "has a member whose name differs from a known one only in letter case")
		}
		it.kind = itemHosted
		it.parts = []any{jsonvalue.DeepCopy(obj)}
	default:
		return nil, respErr(field+".type", "is not an output item type the gateway can mediate")
	}
	return it, nil
}

func (it *outItem) readMessage(obj map[string]any, field string) error {
	it.kind = itemMessage
	if outMessageMembers.AmbiguousKeys(obj) {
		return respErr(field, "has a member whose name differs from a known one only in letter case")
	}
	if obj["role"] != "assistant" {
		return respErr(field+".role", "must be assistant")
	}
	it.dropUnknown(outMessageMembers)
	content, ok := obj["content"].([]any)
	if !ok {
		return respErr(field+".content", "must be an array")
	}
	for j, c := range content {
		pf := fieldIndex(field+".content", j)
		p, ok := c.(map[string]any)
		if !ok {
			return respErr(pf, "must be an object")
		}
		switch p["type"] {
		case "output_text":
			if outTextMembers.AmbiguousKeys(p) {
				return respErr(pf, "has a member whose name differs from a known one only in letter case")
			}
			text, ok := p["text"].(string)
			if !ok {
				return respErr(pf+".text", "must be a string")
			}
			part := map[string]any{"type": "text", "text": text}
			anns, err := projectAnnotations(p["annotations"], pf+".annotations")
			if err != nil {
				return err
			}
			if len(anns) > 0 {
				part["annotations"] = anns
			}
			if lp, ok := p["logprobs"].([]any); (ok && len(lp) > 0) || outTextMembers.UnknownIn(p) || !citationsClean(p["annotations"]) {
				it.drop = append(it.drop, -1) // the item is re-rendered without them
			}
			it.parts = append(it.parts, part)
		case "refusal":
			ref, ok := p["refusal"].(string)
			if !ok || len(p) != 2 {
				return respErr(pf, "must be {type, refusal} with a string refusal")
			}
			it.parts = append(it.parts, map[string]any{"type": "refusal", "refusal": ref})
		default:
			return respErr(pf+".type", "is not a message part type the gateway can mediate")
		}
	}
	return nil
}

// citationsClean reports whether every url_citation annotation holds
// only what its projection and its offsets account for: {type, url,
// title, start_index, end_index} with count offsets. Otherwise the item is
// re-rendered from the projection.
func citationsClean(v any) bool {
	list, _ := v.([]any)
	for _, e := range list {
		a, _ := e.(map[string]any)
		if a["type"] != "url_citation" {
			continue
		}
		for k, x := range a {
			switch k {
			case "type", "url", "title":
			case "start_index", "end_index":
				if !isCount(x) {
					return false
				}
			default:
				return false
			}
		}
	}
	return true
}

// projectAnnotations projects output_text annotations: url_citation as
// {type, url, title}; other annotation types keep their native members.
func projectAnnotations(v any, field string) ([]any, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, respErr(field, "must be an array")
	}
	out := make([]any, len(list))
	for i, e := range list {
		a, ok := e.(map[string]any)
		if !ok {
			return nil, respErr(fieldIndex(field, i), "must be an object")
		}
		if a["type"] != "url_citation" {
			out[i] = jsonvalue.DeepCopy(a)
			continue
		}
		url, ok1 := a["url"].(string)
		title, ok2 := a["title"].(string)
		if !ok1 || !ok2 {
			return nil, respErr(fieldIndex(field, i), "url and title must be strings")
		}
		out[i] = map[string]any{"type": "url_citation", "url": url, "title": title}
	}
	return out, nil
}

func (it *outItem) readCall(obj map[string]any, field string) error {
	it.kind = itemFunctionCall
	if callItemMembers.AmbiguousKeys(obj) {
		return respErr(field, "has a member whose name differs from a known one only in letter case")
	}
	id, ok1 := obj["call_id"].(string)
	name, ok2 := obj["name"].(string)
	args, ok3 := obj["arguments"].(string)
	if !ok1 || !ok2 || !ok3 {
		return respErr(field, "call_id, name and arguments must be strings")
	}
	if ns, ok := obj["namespace"]; ok && ns != nil {
		if _, ok := ns.(string); !ok {
			return respErr(field+".namespace", "must be a string")
		}
	}
	it.dropUnknown(callItemMembers)
	it.callID, it.arguments = id, args
	it.ns, _ = obj["namespace"].(string)
	it.name = qualifiedName(obj, name)
	it.args, it.rawArgs = parseArguments(args)
	return nil
}

// dropUnknown marks members outside known for removal.
func (it *outItem) dropUnknown(known rawjson.MemberSet) {
	for i, m := range it.ms {
		if !known.Has(m.Key) {
			it.drop = append(it.drop, i)
		}
	}
}

// parseArguments projects arguments: a JSON object (no duplicate keys)
// becomes args; anything else {"raw_arguments": s}.
func parseArguments(s string) (map[string]any, bool) {
	if v, err := jsonvalue.DecodeStrict([]byte(s)); err == nil {
		if m, ok := v.(map[string]any); ok {
			return m, false
		}
	}
	return map[string]any{"raw_arguments": s}, true
}
