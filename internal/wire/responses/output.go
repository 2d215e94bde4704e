package responses

import (
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// OutputItems documents the treatment of each output item type.
func OutputItems() []MemberDoc {
	return []MemberDoc{
		{"message", "projected: output_text as text parts (url_citation annotations as {type, url, title}, others native), refusal as refusal parts; id sealed (kind responses.item.id), status an item status (else 502), role assistant, phase commentary or final_answer (else removed), logprobs removed, url_citation offsets kept when within the text (else 0) and other url_citation members removed; unknown members of the item and its parts as member parts; a part of another type (newer than the gateway: openai-go's OutputText reads output_text parts only) removed, and its stream events read, not released"},
		{"function_call", "projected: tool_calls {id: call_id, name (namespace-qualified), args}; id sealed, status an item status (else 502), async a boolean (else removed); unknown members as member parts"},
		{"reasoning", "projected: one reasoning part per summary and reasoning_text entry, written back to its entry (rewritten or removed, not added); id sealed, encrypted_content sealed (kind responses.reasoning.encrypted_content; a string, else 502), status an item status (else 502); unknown members of the item and its entries as member parts"},
		{"web_search_call, file_search_call, code_interpreter_call, image_generation_call, mcp_call, mcp_list_tools", "projected: the whole item, id sealed, as a native part of content, written back as the item (string values may change; type, id and members stay; not added or removed)"},
		{"any other", "projected like a provider-executed call (the whole item, a string id sealed, as a native part); refused (502) when the surface is strict or the type names a part type (text, refusal, reasoning, member, image_url)"},
	}
}

// Member sets of the answer's items and parts.
var (
	outMessageMembers = rawjson.NewMemberSet("id", "type", "role", "status", "phase", "content")
	outTextMembers    = rawjson.NewMemberSet("type", "text", "annotations", "logprobs")
	outCallMembers    = rawjson.NewMemberSet("type", "id", "call_id", "name", "namespace", "arguments", "status", "async")
	// nativeItemMembers are the members the gateway reads in an item
	// projected whole.
	nativeItemMembers = rawjson.NewMemberSet("type", "id")
	// partTypes are the normalized part types: an output item of one of
	// them could not be told from the part the gateway projects.
	partTypes = map[string]bool{"text": true, "refusal": true, "reasoning": true, partMember: true, "image_url": true}
)

// outItem is one output item.
type outItem struct {
	kind itemKind
	// id is the released id (the seal of the upstream's); hasID reports
	// whether the item has one.
	id     string
	hasID  bool
	status any // a member of itemStatuses, or nil
	hasSt  bool
	parts  []any // normalized parts this item contributes to content
	// extras are the item's unknown members; partExtras those of each of
	// parts (message parts, reasoning entries), aligned with parts.
	extras     []extra
	partExtras [][]extra
	// message
	phase   any
	offsets [][][2]int // per part, per url_citation annotation: the offsets kept
	// reasoning: the sealed encrypted_content (hasEnc: a string), whether
	// summary and content are arrays, and how many of parts came from
	// summary
	enc                    string
	hasEnc, encNull        bool
	hasSummary, hasContent bool
	nSummary               int
	// function calls
	callID, name, ns, arguments string
	hasNS                       bool
	async                       any
	args                        map[string]any
	rawArgs                     bool
}

// readOutput reads the output array.
func (r *Response) readOutput(s *Surface, ids *answerIDs, span rawjson.Span, v any) error {
	list, ok := v.([]any)
	if !ok {
		return respErr("output", "must be an array")
	}
	r.items = make([]outItem, len(list))
	for i, e := range list {
		if err := r.readOutputItem(s, ids, &r.items[i], e, fieldIndex("output", i)); err != nil {
			return err
		}
	}
	return nil
}

// readOutputItem reads one output item e into it.
func (r *Response) readOutputItem(s *Surface, ids *answerIDs, it *outItem, e any, field string) error {
	obj, ok := e.(map[string]any)
	if !ok {
		return respErr(field, "must be an object")
	}
	typ, _ := obj["type"].(string)
	if v, ok := obj["id"]; ok && v != nil {
		id, ok := v.(string)
		if !ok {
			return respErr(field+".id", "must be a string")
		}
		it.id, it.hasID = ids.item(id), true
	}
	switch {
	case typ == "message":
		return r.readMessage(s, it, obj, field)
	case typ == "function_call":
		return r.readCall(s, it, obj, field)
	case typ == "reasoning":
		return r.readReasoning(s, it, obj, field)
	case hostedCallTypes[typ]:
		if hostedItemMembers.AmbiguousKeys(obj) {
			return respErr(field, "has a member whose name differs from a known one only in letter case")
		}
	case s.strict || typ == "" || partTypes[typ]:
		return respErr(field+".type", "is not an output item type the gateway can mediate")
	case nativeItemMembers.AmbiguousKeys(obj):
		return respErr(field, "has a member whose name differs from a known one only in letter case")
	}
	// Provider-executed calls, and items of types the gateway does not
	// know, are projected whole: a native part, its id the seal.
	it.kind = itemHosted
	part := jsonvalue.DeepCopy(obj).(map[string]any)
	if it.hasID {
		part["id"] = it.id
	}
	it.parts = []any{part}
	return nil
}

// readStatus reads an item's status: an item status or null, else the
// answer is refused (clients read it).
func (it *outItem) readStatus(obj map[string]any, field string) error {
	v, ok := obj["status"]
	if !ok {
		return nil
	}
	if v != nil && !itemStatuses.has(v) {
		return respErr(field+".status", "is not an item status")
	}
	it.status, it.hasSt = v, true
	return nil
}

// unknownOf collects obj's members outside known as extras under path
// (removed when the surface is strict, or when null); a member whose name
// folds onto a known one refuses the answer.
func (r *Response) unknownOf(s *Surface, obj map[string]any, known rawjson.MemberSet, path string) ([]extra, error) {
	if known.AmbiguousKeys(obj) {
		return nil, respErr(path, "has a member whose name differs from a known one only in letter case")
	}
	if s.strict || !known.UnknownIn(obj) {
		return nil, nil
	}
	var out []extra
	for _, k := range sortedKeys(obj) {
		v := obj[k]
		if known.Has(k) || v == nil {
			continue
		}
		p := path + "." + k
		if err := r.addExtra(p, k, v); err != nil {
			return nil, err
		}
		out = append(out, extra{path: p, key: k, value: v})
	}
	return out, nil
}

func (r *Response) readMessage(s *Surface, it *outItem, obj map[string]any, field string) error {
	it.kind = itemMessage
	extras, err := r.unknownOf(s, obj, outMessageMembers, field)
	if err != nil {
		return err
	}
	it.extras = extras
	if obj["role"] != "assistant" {
		return respErr(field+".role", "must be assistant")
	}
	if err := it.readStatus(obj, field); err != nil {
		return err
	}
	if messagePhases.has(obj["phase"]) {
		it.phase = obj["phase"]
	}
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
		var part map[string]any
		var offsets [][2]int
		var known rawjson.MemberSet
		switch p["type"] {
		case "output_text":
			text, ok := p["text"].(string)
			if !ok {
				return respErr(pf+".text", "must be a string")
			}
			part = map[string]any{"type": "text", "text": text}
			anns, offs, err := projectAnnotations(p["annotations"], len(text), pf+".annotations")
			if err != nil {
				return err
			}
			if len(anns) > 0 {
				part["annotations"] = anns
			}
			offsets, known = offs, outTextMembers
		case "refusal":
			ref, ok := p["refusal"].(string)
			if !ok {
				return respErr(pf+".refusal", "must be a string")
			}
			part, known = map[string]any{"type": "refusal", "refusal": ref}, refusalPartMembers
		default:
			// A part type newer than the gateway (openai-go's OutputText
			// reads output_text parts only): removed, not refused. The
			// answer is rendered from its projection, so none of its
			// bytes is released.
			if _, ok := p["type"].(string); !ok {
				return respErr(pf+".type", "must be a string")
			}
			continue
		}
		pe, err := r.unknownOf(s, p, known, pf)
		if err != nil {
			return err
		}
		it.parts = append(it.parts, part)
		it.partExtras = append(it.partExtras, pe)
		it.offsets = append(it.offsets, offsets)
	}
	return nil
}

// projectAnnotations projects output_text annotations: url_citation as
// {type, url, title}, with its offsets kept when they lie within the text
// (textLen bytes), else 0; other annotation types keep their native
// members.
func projectAnnotations(v any, textLen int, field string) ([]any, [][2]int, error) {
	if v == nil {
		return nil, nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, nil, respErr(field, "must be an array")
	}
	out := make([]any, len(list))
	offsets := make([][2]int, len(list))
	for i, e := range list {
		a, ok := e.(map[string]any)
		if !ok {
			return nil, nil, respErr(fieldIndex(field, i), "must be an object")
		}
		if a["type"] != "url_citation" {
			out[i] = jsonvalue.DeepCopy(a)
			continue
		}
		url, ok1 := a["url"].(string)
		title, ok2 := a["title"].(string)
		if !ok1 || !ok2 {
			return nil, nil, respErr(fieldIndex(field, i), "url and title must be strings")
		}
		out[i] = map[string]any{"type": "url_citation", "url": url, "title": title}
		start, ok1 := count(a["start_index"])
		end, ok2 := count(a["end_index"])
		if ok1 && ok2 && start <= end && end <= uint64(textLen) {
			offsets[i] = [2]int{int(start), int(end)}
		}
	}
	return out, offsets, nil
}

func (r *Response) readCall(s *Surface, it *outItem, obj map[string]any, field string) error {
	it.kind = itemFunctionCall
	extras, err := r.unknownOf(s, obj, outCallMembers, field)
	if err != nil {
		return err
	}
	it.extras = extras
	if err := it.readStatus(obj, field); err != nil {
		return err
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
	if a, ok := obj["async"].(bool); ok {
		it.async = a
	}
	it.callID, it.arguments = id, args
	it.ns, it.hasNS = obj["namespace"].(string)
	it.name = qualifiedName(obj, name)
	it.args, it.rawArgs = parseArguments(args)
	return nil
}

func (r *Response) readReasoning(s *Surface, it *outItem, obj map[string]any, field string) error {
	it.kind = itemReasoning
	extras, err := r.unknownOf(s, obj, reasoningMembers, field)
	if err != nil {
		return err
	}
	it.extras = extras
	if err := it.readStatus(obj, field); err != nil {
		return err
	}
	switch enc := obj["encrypted_content"].(type) {
	case string:
		it.enc, it.hasEnc = sealBlob(s.keys, enc), true
	case nil:
		_, it.encNull = obj["encrypted_content"]
	default:
		return respErr(field+".encrypted_content", "must be a string")
	}
	for _, src := range []struct{ key, typ string }{{"summary", "summary_text"}, {"content", "reasoning_text"}} {
		v, ok := obj[src.key]
		if !ok || v == nil {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			return respErr(field+"."+src.key, "must be an array")
		}
		if src.key == "summary" {
			it.hasSummary, it.nSummary = true, len(list)
		} else {
			it.hasContent = true
		}
		for j, e := range list {
			f := fieldIndex(field+"."+src.key, j)
			p, ok := e.(map[string]any)
			if !ok {
				return respErr(f, "must be an object")
			}
			text, ok := p["text"].(string)
			if p["type"] != src.typ || !ok {
				return respErr(f, "must be a "+src.typ+" part with a string text")
			}
			pe, err := r.unknownOf(s, p, summaryPartMembers, f)
			if err != nil {
				return err
			}
			it.parts = append(it.parts, map[string]any{"type": "reasoning", "text": text})
			it.partExtras = append(it.partExtras, pe)
		}
	}
	return nil
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
