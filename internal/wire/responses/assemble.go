package responses

import (
	"encoding/json"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// eventMembers are the members each known event may carry beyond type
// and sequence_number; others (obfuscation, logprobs, ...) are read and
// never released. A member whose name differs from a known one only in
// letter case refuses the stream.
var eventMembers = func() map[string]rawjson.MemberSet {
	loc := []string{"item_id", "output_index"}
	part := append([]string{"content_index"}, loc...)
	m := map[string][]string{
		"response.created": {"response"}, "response.in_progress": {"response"}, "response.queued": {"response"},
		"response.completed": {"response"}, "response.incomplete": {"response"},
		"response.output_item.added": {"output_index", "item"}, "response.output_item.done": {"output_index", "item"},
		"response.content_part.added": append([]string{"part"}, part...), "response.content_part.done": append([]string{"part"}, part...),
		"response.output_text.delta": append([]string{"delta"}, part...), "response.output_text.done": append([]string{"text"}, part...),
		"response.output_text.annotation.added": append([]string{"annotation", "annotation_index"}, part...),
		"response.refusal.delta":                append([]string{"delta"}, part...), "response.refusal.done": append([]string{"refusal"}, part...),
		"response.function_call_arguments.delta": append([]string{"delta"}, loc...), "response.function_call_arguments.done": append([]string{"arguments", "name"}, loc...),
		"response.reasoning_summary_part.added": append([]string{"part", "summary_index"}, loc...), "response.reasoning_summary_part.done": append([]string{"part", "summary_index"}, loc...),
		"response.reasoning_summary_text.delta": append([]string{"delta", "summary_index"}, loc...), "response.reasoning_summary_text.done": append([]string{"text", "summary_index"}, loc...),
		"response.reasoning_text.delta": append([]string{"delta"}, part...), "response.reasoning_text.done": append([]string{"text"}, part...),
		"response.code_interpreter_call_code.delta": append([]string{"delta"}, loc...), "response.code_interpreter_call_code.done": append([]string{"code"}, loc...),
		"response.image_generation_call.partial_image": append([]string{"partial_image_b64", "partial_image_index"}, loc...),
	}
	for k := range progressEvents {
		m[k] = loc
	}
	out := map[string]rawjson.MemberSet{}
	for k, v := range m {
		out[k] = rawjson.NewMemberSet(append(v, "type", "sequence_number")...)
	}
	return out
}()

// indexMembers are the event members that must be indices.
var indexMembers = []string{"output_index", "content_index", "summary_index", "annotation_index", "partial_image_index"}

// handle applies one decoded event.
func (a *assembler) handle(typ string, obj map[string]any, data []byte) (bool, error) {
	known, ok := eventMembers[typ]
	if !ok {
		if a.surface.strict {
			return false, a.invalid("event type the gateway does not know")
		}
		return false, nil // the answer is the done items and the terminal object
	}
	if known.AmbiguousKeys(obj) {
		return false, a.invalid("event member whose name differs from a known one only in letter case")
	}
	for _, k := range indexMembers {
		if v, ok := obj[k]; ok {
			if _, ok := index(v); !ok {
				return false, a.invalid("an index member is not a non-negative integer")
			}
		}
	}
	switch typ {
	case "response.created", "response.in_progress", "response.queued":
		resp, _ := obj["response"].(map[string]any)
		if out, ok := resp["output"].([]any); !ok || len(out) > 0 {
			return false, a.invalid("a response snapshot before the terminal event must have an empty output")
		}
		return false, nil
	case "response.completed", "response.incomplete":
		a.final = data
		resp, _ := obj["response"].(map[string]any)
		a.finalOutput = resp["output"] // finish compares it with the done items
		return true, nil
	case "response.output_item.added":
		oi, ok := index(obj["output_index"])
		item, ok2 := obj["item"].(map[string]any)
		if !ok || !ok2 || oi != len(a.items) {
			return false, a.invalid("output_item.added must add the next output index")
		}
		id, _ := item["id"].(string)
		t, _ := item["type"].(string)
		a.items = append(a.items, &streamItem{id: id, typ: t})
		return false, nil
	}
	it, err := a.item(obj)
	if err != nil {
		return false, err
	}
	if progressEvents[typ] || typ == "response.image_generation_call.partial_image" {
		return false, nil
	}
	return false, a.fragment(typ, obj, it)
}

// item returns the item an event addresses.
func (a *assembler) item(obj map[string]any) (*streamItem, error) {
	oi, ok := index(obj["output_index"])
	if !ok || oi >= len(a.items) {
		return nil, a.invalid("event addresses an output index that was not added")
	}
	it := a.items[oi]
	if id, ok := obj["item_id"]; ok && id != it.id {
		return nil, a.invalid("item_id does not match the output index")
	}
	if it.done != nil {
		return nil, a.invalid("event after its item was done")
	}
	return it, nil
}

// fragment applies a delta, done or part event to its item.
func (a *assembler) fragment(typ string, obj map[string]any, it *streamItem) error {
	ci, _ := index(obj["content_index"])
	si, _ := index(obj["summary_index"])
	c := textKey{'c', ci}
	sk := textKey{'s', si}
	args := textKey{list: 'a'}
	check := func(key textKey, v any) error {
		s, ok := v.(string)
		if !ok || s != it.text(key).String() {
			return a.invalid("a done event disagrees with its deltas")
		}
		return nil
	}
	if list, ok := deltaLists[typ]; ok {
		d, ok := obj["delta"].(string)
		if !ok {
			return a.invalid("delta must be a string")
		}
		it.text(deltaKey(list, ci, si)).WriteString(d)
		return nil
	}
	switch typ {
	case "response.output_item.done":
		return a.itemDone(obj, it)
	case "response.output_text.done", "response.reasoning_text.done":
		return check(c, obj["text"])
	case "response.refusal.done":
		return check(c, obj["refusal"])
	case "response.function_call_arguments.done":
		return check(args, obj["arguments"])
	case "response.code_interpreter_call_code.done":
		return check(args, obj["code"])
	case "response.reasoning_summary_text.done":
		return check(sk, obj["text"])
	case "response.content_part.done":
		p, _ := obj["part"].(map[string]any)
		switch p["type"] {
		case "refusal":
			return check(c, p["refusal"])
		case "output_text":
			return check(c, p["text"])
		}
		return nil // a part type newer than the gateway: removed from the answer (readMessage)
	case "response.reasoning_summary_part.done":
		p, _ := obj["part"].(map[string]any)
		return check(sk, p["text"])
	}
	// Added parts and annotations repeat what the done item carries, where
	// they are judged.
	return nil
}

// itemDone records the authoritative item and checks it against the
// assembled fragments.
func (a *assembler) itemDone(obj map[string]any, it *streamItem) error {
	item, ok := obj["item"].(map[string]any)
	if !ok {
		return a.invalid("output_item.done must carry an item")
	}
	if id, _ := item["id"].(string); id != it.id || item["type"] != it.typ {
		return a.invalid("output_item.done does not match its added item")
	}
	it.done = item
	agree := func(key textKey, v any) bool {
		b, seen := it.texts[key]
		if !seen {
			return true
		}
		s, ok := v.(string)
		return ok && s == b.String()
	}
	okAll := true
	entries := 0 // parts that texts may address: content, and summary entries
	switch it.typ {
	case "message":
		content, _ := item["content"].([]any)
		for j, p := range content {
			pm, _ := p.(map[string]any)
			v := pm["text"]
			if pm["type"] == "refusal" {
				v = pm["refusal"]
			}
			okAll = okAll && agree(textKey{'c', j}, v)
		}
		entries = len(content)
	case "function_call":
		okAll = agree(textKey{list: 'a'}, item["arguments"])
		entries = 1
	case "code_interpreter_call":
		okAll = agree(textKey{list: 'a'}, item["code"])
		entries = 1
	case "reasoning":
		summary, _ := item["summary"].([]any)
		for j, p := range summary {
			pm, _ := p.(map[string]any)
			okAll = okAll && agree(textKey{'s', j}, pm["text"])
		}
		content, _ := item["content"].([]any)
		for j, p := range content {
			pm, _ := p.(map[string]any)
			okAll = okAll && agree(textKey{'c', j}, pm["text"])
		}
		entries = len(summary) + len(content)
	}
	// Every delta must have gone into a part the done item has: text
	// streamed at an index the item lacks was never judged.
	for key := range it.texts {
		okAll = okAll && it.covers(key, item)
	}
	if !okAll || len(it.texts) > entries {
		return a.invalid("output_item.done disagrees with the streamed deltas")
	}
	return nil
}

// covers reports whether the texts key names a part of the done item.
func (it *streamItem) covers(key textKey, item map[string]any) bool {
	if key.list == 'a' {
		return it.typ == "function_call" || it.typ == "code_interpreter_call"
	}
	list := "content"
	if key.list == 's' {
		list = "summary"
	}
	l, _ := item[list].([]any)
	return key.n < len(l)
}

// emptyAdded reports whether an added item carries no text yet.
func emptyAdded(item map[string]any) bool {
	for _, k := range []string{"content", "summary"} {
		if l, ok := item[k].([]any); ok && len(l) > 0 {
			return false
		}
	}
	for _, k := range []string{"arguments", "code", "result"} {
		if s, ok := item[k].(string); ok && s != "" {
			return false
		}
	}
	return true
}

func index(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(n))
	return i, err == nil && i >= 0
}

// finish builds the Stream from the terminal event.
func (a *assembler) finish() (*Stream, error) {
	for _, it := range a.items {
		if it.done == nil {
			return nil, a.invalid("an output item was never done")
		}
	}
	ms, _ := rawjson.ScanObject(a.final, rawjson.RootSpan(a.final))
	i := rawjson.Find(ms, "response")
	if i < 0 || ms[i].Val.Kind(a.final) != '{' {
		return nil, a.invalid("the terminal event carries no response object")
	}
	body, span := a.final, ms[i].Val
	rms, err := rawjson.ScanObject(body, span)
	if err != nil {
		return nil, a.invalid("the response object has a duplicate member")
	}
	done := make([]any, len(a.items))
	for j, it := range a.items {
		done[j] = it.done
	}
	if k := rawjson.Find(rms, "output"); k >= 0 {
		// The terminal event was decoded whole (strictly): its output is
		// the tree of these bytes.
		list, _ := a.finalOutput.([]any)
		switch {
		case len(list) == 0 && len(done) > 0:
			// Assembled from the done items, as openai-go does.
			raws := make([][]byte, len(done))
			for j, item := range done {
				raws[j], _ = jsonvalue.Marshal(item) // a decoded tree always marshals
			}
			p := rawjson.NewObjPatch(body, span, rms)
			p.Set("output", rawjson.RenderArray(nil, rawjson.Span{}, nil, raws))
			body = p.Render()
			span = rawjson.RootSpan(body)
		case !jsonvalue.Equal(list, done):
			return nil, a.invalid("the terminal response's output disagrees with the streamed items")
		}
	}
	resp, err := a.surface.parseResponseAt(a.req, body, span, a.ids, true)
	if err != nil {
		return nil, a.invalid("the terminal response is not understood: " + err.Error())
	}
	resp.streamed = true
	return &Stream{resp: resp}, nil
}

// snapshotMeta returns the members of a response snapshot that the final
// object's rules release, as they release them (the incremental head's
// response.created).
func (a *assembler) snapshotMeta(resp map[string]any) map[string]any {
	return topRules{req: a.req, ids: a.ids}.snapshot(resp)
}
