package responses

import (
	"encoding/json"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// CheckWriteBack reports whether target can be released. Rules: exactly
// content, tool_calls and finish_reason; content may change its text and
// refusal parts freely, rewrite or remove reasoning parts (not add them),
// change the string values of provider-tool parts (not their type, id or
// members; they cannot be added or removed), and change or remove member
// parts (each naming one of the answer's unknown members, once; not
// added); fixed parts keep their order (see fixedparts.go); tool calls may
// be dropped, reordered or changed (string id of an upstream call,
// non-empty name, object args) but not added; finish_reason is stop,
// length, tool_calls or content_filter.
func (r *Response) CheckWriteBack(target any) error {
	_, err := r.checkTarget(target)
	return err
}

// verdict is a checked target mapped onto the upstream items.
type verdict struct {
	// text holds the text and refusal parts; nil when they are unchanged.
	text []any
	// items holds the verdicted parts of the reasoning and provider-tool
	// items the verdict changed, by item index (a nil part: its entry is
	// removed).
	items map[int][]map[string]any
	// calls pairs each verdicted tool call with its upstream item.
	calls []*outItem
	// members are the verdicted values of the unknown members by path;
	// a member missing is removed.
	members map[string]any
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
	if err := wire.CheckEncodable(target); err != nil {
		return nil, err
	}
	switch t["finish_reason"] {
	case "stop", "length", "tool_calls", "content_filter":
	default:
		return nil, &wire.WriteBackError{Field: "$target.finish_reason", Msg: "must be stop, length, tool_calls or content_filter"}
	}
	v := &verdict{members: r.extraVals}
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
// parts (nil when unchanged, else non-nil), the items its reasoning and
// provider-tool parts change, and its member parts.
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
	v.members = map[string]any{}
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
		case partMember:
			name, _ := m["name"].(string)
			_, known := r.extraVals[name]
			_, seen := v.members[name]
			val, hasVal := m["value"]
			if !known || seen || !hasVal || len(m) != 3 {
				return &wire.WriteBackError{Field: f, Msg: "a member part must name one of the answer's own unknown members, once, as {type, name, value}"}
			}
			v.members[name] = val
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

// render renders the response object for target (nil: the projection):
// every member in the upstream's order, each from what the gateway
// released of it (a projected value as verdicted, a minted, sealed or
// enumerated value, the client's own value), in the gateway's own
// compact encoding; removed members are left out.
func (r *Response) render(target any) ([]byte, error) {
	if target == nil {
		target = r.proj
	}
	v, err := r.checkTarget(target)
	if err != nil {
		return nil, err
	}
	t := target.(map[string]any)
	status, reason := r.status, r.reason
	if fr := t["finish_reason"].(string); fr != r.proj["finish_reason"] {
		status, reason = "completed", ""
		switch fr {
		case "length":
			status, reason = "incomplete", "max_output_tokens"
		case "content_filter":
			status, reason = "incomplete", "content_filter"
		}
	}
	b := make([]byte, 0, r.root.End-r.root.Start+len(r.items)*200+256)
	b = append(b, '{')
	member := func(key string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendString(b, key)
		b = append(b, ':')
	}
	wroteDetails := false
	for i, m := range r.top {
		spec := responseMemberByName[m.Key]
		switch {
		case spec == nil:
			if val, ok := v.members[m.Key]; ok {
				member(m.Key)
				if b, err = appendValue(b, val); err != nil {
					return nil, &wire.WriteBackError{Field: "$target.content", Msg: "a member part's value is not encodable"}
				}
			}
		case m.Key == "output":
			member(m.Key)
			if b, err = r.appendOutput(b, v, t["tool_calls"].([]any)); err != nil {
				return nil, err
			}
		case m.Key == "status":
			member(m.Key)
			b = appendString(b, status)
		case m.Key == "incomplete_details":
			member(m.Key)
			b = appendDetails(b, status, reason)
			wroteDetails = true
		case m.Key == "error":
			member(m.Key)
			b = append(b, "null"...)
		case m.Key == "usage":
			if r.usageRaw != nil {
				member(m.Key)
				b = append(b, r.usageRaw...)
			}
		default:
			if val, ok := r.vals[i]; ok {
				member(m.Key)
				b, _ = appendValue(b, val) // decoded or made by the gateway: encodable
			}
		}
	}
	if !wroteDetails && status == "incomplete" {
		member("incomplete_details")
		b = appendDetails(b, status, reason)
	}
	return append(b, '}'), nil
}

// appendDetails renders incomplete_details for a status and reason.
func appendDetails(b []byte, status, reason string) []byte {
	if status != "incomplete" {
		return append(b, "null"...)
	}
	b = append(b, `{"reason":`...)
	return append(appendString(b, reason), '}')
}

// appendOutput appends the output array for verdict v; tcalls are the
// verdicted tool calls.
func (r *Response) appendOutput(b []byte, v *verdict, tcalls []any) ([]byte, error) {
	text, calls := v.text, v.calls
	b = append(b, '[')
	start := len(b)
	sep := func() {
		if len(b) > start {
			b = append(b, ',')
		}
	}
	textDone := text == nil
	nextCall := 0
	var err error
	for i := range r.items {
		it := &r.items[i]
		switch it.kind {
		case itemMessage:
			if text == nil {
				sep()
				b = it.appendMessage(b, it.parts, true, v.members)
				continue
			}
			if !textDone {
				textDone = true
				if len(text) > 0 {
					sep()
					b = it.appendMessage(b, text, false, v.members)
				}
			}
		case itemFunctionCall:
			if !textDone && len(text) > 0 {
				textDone = true
				sep()
				b = appendNewMessage(b, text)
			}
			if nextCall < len(calls) {
				sep()
				if b, err = calls[nextCall].appendCall(b, tcalls[nextCall].(map[string]any), v.members); err != nil {
					return nil, err
				}
				nextCall++
			}
		default:
			parts, ok := v.items[i]
			if !ok {
				parts = it.fixedParts()
			}
			sep()
			if b, err = it.appendFixed(b, parts, v.members); err != nil {
				return nil, err
			}
		}
	}
	if !textDone && len(text) > 0 {
		sep()
		b = appendNewMessage(b, text)
	}
	return append(b, ']'), nil
}

// appendNewMessage appends the message item the gateway adds when
// verdicted text has no message item to go into; its id is minted.
func appendNewMessage(b []byte, text []any) []byte {
	it := &outItem{kind: itemMessage, id: wire.MintID("msg_"), hasID: true, status: "completed", hasSt: true}
	return it.appendMessage(b, text, false, nil)
}

// appendExtras appends the verdicted values of extras (those the verdict
// removed are left out) as members of the object being rendered.
func appendExtras(b []byte, extras []extra, vals map[string]any) []byte {
	for _, x := range extras {
		val, ok := vals[x.path]
		if !ok {
			continue
		}
		b = append(b, ',')
		b = appendString(b, x.key)
		b = append(b, ':')
		b, _ = appendValue(b, val) // checked encodable with the target
	}
	return b
}

// appendValue appends v (a decoded, made or checked value) in the
// gateway's compact encoding: scalars directly, containers through
// jsonvalue.AppendCompact, whose encoder a renderer writing many scalars
// would otherwise set up for each.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return appendString(b, x), nil
	case json.Number:
		return append(b, x...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case nil:
		return append(b, "null"...), nil
	}
	return jsonvalue.AppendCompact(b, v)
}

// appendHead opens an item: {"id":…,"type":…[,"status":…].
func (it *outItem) appendHead(b []byte, typ string) []byte {
	b = append(b, '{')
	if it.hasID {
		b = append(b, `"id":`...)
		b = appendString(b, it.id)
		b = append(b, ',')
	}
	b = append(b, `"type":`...)
	b = appendString(b, typ)
	if it.hasSt {
		b = append(b, `,"status":`...)
		b, _ = appendValue(b, it.status) // a member of itemStatuses or null
	}
	return b
}

// appendMessage appends a message item holding parts (normalized text and
// refusal parts). own reports whether parts are the item's own, unchanged:
// their url_citation offsets and unknown members are kept (verdicted);
// rewritten text has its offsets 0 and none of them.
func (it *outItem) appendMessage(b []byte, parts []any, own bool, vals map[string]any) []byte {
	b = it.appendHead(b, "message")
	b = append(b, `,"role":"assistant"`...)
	if it.phase != nil {
		b = append(b, `,"phase":`...)
		b = appendString(b, it.phase.(string))
	}
	b = append(b, `,"content":[`...)
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		m := p.(map[string]any)
		if m["type"] == "refusal" {
			b = append(b, `{"type":"refusal","refusal":`...)
			b = appendString(b, m["refusal"].(string))
		} else {
			var offsets [][2]int
			if own {
				offsets = it.offsets[i]
			}
			b = append(b, `{"type":"output_text","annotations":`...)
			b = appendAnnotations(b, m["annotations"], offsets)
			b = append(b, `,"text":`...)
			b = appendString(b, m["text"].(string))
		}
		if own {
			b = appendExtras(b, it.partExtras[i], vals)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	b = appendExtras(b, it.extras, vals)
	return append(b, '}')
}

// appendAnnotations renders normalized annotations: url_citation with the
// offsets kept (0 when none were, as for rewritten text); native
// annotations as they are.
func appendAnnotations(b []byte, v any, offsets [][2]int) []byte {
	list, _ := v.([]any)
	b = append(b, '[')
	for i, e := range list {
		if i > 0 {
			b = append(b, ',')
		}
		a := e.(map[string]any)
		if a["type"] == "url_citation" {
			var off [2]int
			if i < len(offsets) {
				off = offsets[i]
			}
			a = map[string]any{"type": "url_citation", "url": a["url"], "title": a["title"], "start_index": off[0], "end_index": off[1]}
		}
		b, _ = jsonvalue.AppendCompact(b, a)
	}
	return append(b, ']')
}

// appendCall appends the function_call for verdicted call c: its name and
// arguments as verdicted (the upstream's arguments text when the args are
// unchanged).
func (it *outItem) appendCall(b []byte, c map[string]any, vals map[string]any) ([]byte, error) {
	name := c["name"].(string)
	args := c["args"].(map[string]any)
	text := it.arguments
	if !jsonvalue.Equal(args, it.args) {
		if s, ok := args["raw_arguments"].(string); ok && it.rawArgs && len(args) == 1 {
			text = s
		} else {
			raw, err := jsonvalue.Marshal(args)
			if err != nil {
				return nil, &wire.WriteBackError{Field: "$target.tool_calls", Msg: "args are not encodable"}
			}
			text = string(raw)
		}
	}
	if it.ns != "" {
		name = name[len(it.ns)+1:]
	}
	b = it.appendHead(b, "function_call")
	b = append(b, `,"call_id":`...)
	b = appendString(b, it.callID)
	b = append(b, `,"name":`...)
	b = appendString(b, name)
	if it.hasNS {
		b = append(b, `,"namespace":`...)
		b = appendString(b, it.ns)
	}
	b = append(b, `,"arguments":`...)
	b = appendString(b, text)
	if it.async != nil {
		b = append(b, `,"async":`...)
		b, _ = appendValue(b, it.async)
	}
	b = appendExtras(b, it.extras, vals)
	return append(b, '}'), nil
}

// fixedParts returns a reasoning or provider-tool item's own parts, as
// appendFixed takes them.
func (it *outItem) fixedParts() []map[string]any {
	out := make([]map[string]any, len(it.parts))
	for i, p := range it.parts {
		out[i] = p.(map[string]any)
	}
	return out
}
