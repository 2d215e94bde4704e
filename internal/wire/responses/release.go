package responses

import (
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// CheckWriteBack reports whether target can be released. Rules: exactly
// content, tool_calls and finish_reason; content may change its text and
// refusal parts freely, rewrite or remove reasoning parts (not add them),
// and change the string values of provider-tool parts (not their type, id
// or members; they cannot be added or removed); fixed parts keep their
// order (see fixedparts.go); tool calls may be dropped, reordered or
// changed (string id of an upstream call, non-empty name, object args) but
// not added; finish_reason is stop, length, tool_calls or content_filter.
func (r *Response) CheckWriteBack(target any) error {
	_, err := r.checkTarget(target)
	return err
}

// verdict is a checked target mapped onto the upstream items.
type verdict struct {
	// text holds the text and refusal parts; nil when they are unchanged.
	text []any
	// items holds re-rendered reasoning and provider-tool items by index.
	items map[int][]byte
	// calls pairs each verdicted tool call with its upstream item.
	calls []*outItem
}

// checkTarget validates target and maps it onto the upstream items.
func (r *Response) checkTarget(target any) (*verdict, error) {
	t, ok := target.(map[string]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: "$target", Msg: "must be an object"}
	}
	if len(t) != 3 {
		return nil, &wire.WriteBackError{Field: "$target", Msg: "must hold exactly content, tool_calls and finish_reason"}
	}
	for _, k := range []string{"content", "tool_calls", "finish_reason"} {
		if _, ok := t[k]; !ok {
			return nil, &wire.WriteBackError{Field: "$target." + k, Msg: "is required"}
		}
	}
	if err := checkEncodable(target); err != nil {
		return nil, err
	}
	switch t["finish_reason"] {
	case "stop", "length", "tool_calls", "content_filter":
	default:
		return nil, &wire.WriteBackError{Field: "$target.finish_reason", Msg: "must be stop, length, tool_calls or content_filter"}
	}
	v := &verdict{}
	if !jsonvalue.Equal(t["content"], r.proj["content"]) {
		if err := r.checkContent(t["content"], v); err != nil {
			return nil, err
		}
	}
	calls, err := r.checkCalls(t["tool_calls"])
	if err != nil {
		return nil, err
	}
	v.calls = calls
	return v, nil
}

// checkContent validates changed content into v: its text and refusal
// parts (nil when unchanged, else non-nil) and the items its reasoning
// and provider-tool parts change.
func (r *Response) checkContent(c any, v *verdict) error {
	var parts []any
	switch x := c.(type) {
	case nil:
	case string:
		parts = []any{map[string]any{"type": "text", "text": x}}
	case []any:
		parts = x
	default:
		return &wire.WriteBackError{Field: "$target.content", Msg: "must be a string, null or an array of parts"}
	}
	var fixed []targetPart
	text := []any{}
	for i, p := range parts {
		f := fieldIndex("$target.content", i)
		m, ok := p.(map[string]any)
		if !ok {
			return &wire.WriteBackError{Field: f, Msg: "must be an object"}
		}
		switch m["type"] {
		case "text":
			if _, ok := m["text"].(string); !ok {
				return &wire.WriteBackError{Field: f + ".text", Msg: "must be a string"}
			}
			if err := checkAnnotations(m, f); err != nil {
				return err
			}
			text = append(text, m)
		case "refusal":
			if _, ok := m["refusal"].(string); !ok || len(m) != 2 {
				return &wire.WriteBackError{Field: f, Msg: "must be {type, refusal} with a string refusal"}
			}
			text = append(text, m)
		default:
			fixed = append(fixed, targetPart{idx: i, part: m})
		}
	}
	items, err := r.matchFixed(fixed)
	if err != nil {
		return err
	}
	v.items = items
	if !jsonvalue.Equal(text, r.textParts()) {
		v.text = text
	}
	return nil
}

// textParts are the projection's text and refusal parts.
func (r *Response) textParts() []any {
	out := []any{}
	for _, it := range r.items {
		if it.kind == itemMessage {
			out = append(out, it.parts...)
		}
	}
	return out
}

func checkAnnotations(m map[string]any, f string) error {
	for k := range m {
		if k != "type" && k != "text" && k != "annotations" {
			return &wire.WriteBackError{Field: f, Msg: "has a member other than type, text and annotations"}
		}
	}
	a, ok := m["annotations"]
	if !ok {
		return nil
	}
	list, ok := a.([]any)
	if !ok {
		return &wire.WriteBackError{Field: f + ".annotations", Msg: "must be an array"}
	}
	for i, e := range list {
		an, ok := e.(map[string]any)
		if _, isStr := an["type"].(string); !ok || !isStr {
			return &wire.WriteBackError{Field: fieldIndex(f+".annotations", i), Msg: "must be an object with a string type"}
		}
		if an["type"] == "url_citation" {
			_, ok1 := an["url"].(string)
			_, ok2 := an["title"].(string)
			if !ok1 || !ok2 || len(an) != 3 {
				return &wire.WriteBackError{Field: fieldIndex(f+".annotations", i), Msg: "url_citation must be {type, url, title} with strings"}
			}
		}
	}
	return nil
}

// checkCalls validates tool_calls and pairs each with its upstream call.
func (r *Response) checkCalls(tc any) ([]*outItem, error) {
	list, ok := tc.([]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: "$target.tool_calls", Msg: "must be an array"}
	}
	var orig []*outItem
	for i := range r.items {
		if r.items[i].kind == itemFunctionCall {
			orig = append(orig, &r.items[i])
		}
	}
	if jsonvalue.Equal(list, r.proj["tool_calls"]) {
		return orig, nil
	}
	byID := map[string]*outItem{}
	for _, c := range orig {
		if byID[c.callID] != nil {
			return nil, &wire.WriteBackError{Field: "$target.tool_calls", Msg: "cannot be changed: the upstream call ids are not unique"}
		}
		byID[c.callID] = c
	}
	seen := map[string]bool{}
	out := make([]*outItem, len(list))
	for i, e := range list {
		f := fieldIndex("$target.tool_calls", i)
		c, ok := e.(map[string]any)
		if !ok || len(c) != 3 {
			return nil, &wire.WriteBackError{Field: f, Msg: "must be {id, name, args}"}
		}
		id, _ := c["id"].(string)
		o := byID[id]
		if o == nil || seen[id] {
			return nil, &wire.WriteBackError{Field: f + ".id", Msg: "names no call of the upstream response (or repeats one): calls may be dropped, not added"}
		}
		seen[id] = true
		name, ok := c["name"].(string)
		if !ok || name == "" {
			return nil, &wire.WriteBackError{Field: f + ".name", Msg: "must be a non-empty string"}
		}
		if o.ns != "" && (len(name) <= len(o.ns)+1 || name[:len(o.ns)+1] != o.ns+".") {
			return nil, &wire.WriteBackError{Field: f + ".name", Msg: "must stay inside the call's namespace"}
		}
		if _, ok := c["args"].(map[string]any); !ok {
			return nil, &wire.WriteBackError{Field: f + ".args", Msg: "must be an object"}
		}
		out[i] = o
	}
	return out, nil
}

// Release renders the body for the client.
func (r *Response) Release(target any) ([]byte, error) {
	if r.streamed {
		return nil, &wire.WriteBackError{Msg: "a streamed response is released with Stream.Release"}
	}
	return r.render(target)
}

// render returns the response object for target: the upstream bytes when
// target is the projection and nothing was removed, else a re-rendering.
func (r *Response) render(target any) ([]byte, error) {
	if target == nil {
		target = r.proj
	}
	v, err := r.checkTarget(target)
	if err != nil {
		return nil, err
	}
	t := target.(map[string]any)
	if jsonvalue.Equal(t, r.proj) && r.clean {
		return r.body[r.root.Start:r.root.End], nil
	}
	p := rawjson.NewObjPatch(r.body, r.root, r.top)
	for i := range r.drop {
		p.Drop(i)
	}
	if r.usageRaw != nil {
		p.Set("usage", r.usageRaw)
	}
	out, err := r.renderOutput(v, t["tool_calls"].([]any))
	if err != nil {
		return nil, err
	}
	p.Set("output", out)
	if fr := t["finish_reason"].(string); fr != r.proj["finish_reason"] {
		switch fr {
		case "length":
			p.Set("status", []byte(`"incomplete"`))
			p.Set("incomplete_details", []byte(`{"reason":"max_output_tokens"}`))
		case "content_filter":
			p.Set("status", []byte(`"incomplete"`))
			p.Set("incomplete_details", []byte(`{"reason":"content_filter"}`))
		default:
			p.Set("status", []byte(`"completed"`))
			p.Set("incomplete_details", []byte(`null`))
		}
	}
	return p.Render(), nil
}

// renderOutput renders the output array for verdict v; tcalls are the
// verdicted tool calls.
func (r *Response) renderOutput(v *verdict, tcalls []any) ([]byte, error) {
	text, calls := v.text, v.calls
	b := []byte{'['}
	n := 0
	add := func(item []byte) {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, item...)
		n++
	}
	textDone := text == nil
	nextCall := 0
	for i := range r.items {
		it := &r.items[i]
		switch it.kind {
		case itemMessage:
			if textDone {
				if text == nil && len(it.drop) == 0 {
					add(it.renderKept(r.body))
				} else if text == nil {
					add(it.renderMessage(it.parts, r.body))
				}
				continue
			}
			textDone = true
			if len(text) > 0 {
				add(it.renderMessage(text, r.body))
			}
		case itemFunctionCall:
			if !textDone && len(text) > 0 {
				textDone = true
				add((&outItem{id: newMessageID(it.callID)}).renderMessage(text, nil))
			}
			if nextCall < len(calls) {
				item, err := calls[nextCall].renderCall(r.body, tcalls[nextCall].(map[string]any))
				if err != nil {
					return nil, err
				}
				add(item)
				nextCall++
			}
		default:
			if b, ok := v.items[i]; ok {
				add(b)
			} else {
				add(it.renderKept(r.body))
			}
		}
	}
	if !textDone && len(text) > 0 {
		add((&outItem{id: newMessageID(r.id())}).renderMessage(text, nil))
	}
	return append(b, ']'), nil
}

// newMessageID names a message item the gateway adds: "msg_" and the id
// of what it answers, when that makes an id of the item id shape.
func newMessageID(base string) string {
	if id := "msg_" + base; wire.IsID(id) {
		return id
	}
	return "msg_gateway"
}

// id is the response id, or "".
func (r *Response) id() string {
	if i := rawjson.Find(r.top, "id"); i >= 0 {
		v, _ := rawjson.DecodeSpan(r.body, r.top[i].Val)
		s, _ := v.(string)
		return s
	}
	return ""
}

// renderKept renders an item the verdict did not change: its bytes, minus
// removed members.
func (it *outItem) renderKept(body []byte) []byte {
	if len(it.drop) == 0 {
		return body[it.span.Start:it.span.End]
	}
	return it.patch(body).Render()
}

// patch starts a patch of the item that removes its dropped members.
func (it *outItem) patch(body []byte) *rawjson.ObjPatch {
	p := rawjson.NewObjPatch(body, it.span, it.ms)
	for _, i := range it.drop {
		if i >= 0 {
			p.Drop(i)
		}
	}
	return p
}

// renderMessage renders a message item holding parts (normalized text and
// refusal parts), keeping the item's id and status.
func (it *outItem) renderMessage(parts []any, body []byte) []byte {
	b := []byte{'{'}
	if it.id != "" { // an item the upstream sent without an id stays so
		b = append(b, `"id":`...)
		b = appendString(b, it.id)
		b = append(b, ',')
	}
	b = append(b, `"type":"message","status":"completed","role":"assistant","content":[`...)
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		m := p.(map[string]any)
		if m["type"] == "refusal" {
			b = append(b, `{"type":"refusal","refusal":`...)
			b = appendString(b, m["refusal"].(string))
			b = append(b, '}')
			continue
		}
		b = append(b, `{"type":"output_text","annotations":`...)
		b = appendAnnotations(b, m["annotations"])
		b = append(b, `,"text":`...)
		b = appendString(b, m["text"].(string))
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendAnnotations renders normalized annotations: url_citation gains
// start_index and end_index 0 (offsets into rewritten text are not known);
// native annotations are written as they are.
func appendAnnotations(b []byte, v any) []byte {
	list, _ := v.([]any)
	b = append(b, '[')
	for i, e := range list {
		if i > 0 {
			b = append(b, ',')
		}
		a := e.(map[string]any)
		if a["type"] == "url_citation" {
			a = map[string]any{"type": "url_citation", "url": a["url"], "title": a["title"], "start_index": 0, "end_index": 0}
		}
		b, _ = jsonvalue.AppendCompact(b, a)
	}
	return append(b, ']')
}

// renderCall renders the function_call for verdicted call c.
func (it *outItem) renderCall(body []byte, c map[string]any) ([]byte, error) {
	name := c["name"].(string)
	args := c["args"].(map[string]any)
	unchangedName := name == it.name
	unchangedArgs := jsonvalue.Equal(args, it.args)
	if unchangedName && unchangedArgs {
		return it.renderKept(body), nil
	}
	p := it.patch(body)
	if !unchangedName {
		if it.ns != "" {
			name = name[len(it.ns)+1:]
		}
		p.Set("name", appendString(nil, name))
	}
	if !unchangedArgs {
		text := ""
		if s, ok := args["raw_arguments"].(string); ok && it.rawArgs && len(args) == 1 {
			text = s
		} else {
			raw, err := jsonvalue.Marshal(args)
			if err != nil {
				return nil, &wire.WriteBackError{Field: "$target.tool_calls", Msg: "args are not encodable"}
			}
			text = string(raw)
		}
		p.Set("arguments", appendString(nil, text))
	}
	return p.Render(), nil
}
