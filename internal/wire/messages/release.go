package messages

import (
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// CheckWriteBack implements wire.Response. The target is exactly
// {content, tool_calls, finish_reason}; content is a string (one text
// block, every other channel removed), null (no text) or a part array in
// which text parts are rendered (their annotations must be original
// citations: they can be removed, not changed), and reasoning,
// redacted_thinking, provider-tool and member parts must be originals
// (thinking is signed and cannot be re-signed; removing is allowed);
// tool_calls may be dropped, reordered or have their name and args
// changed, never added; finish_reason is stop, length, tool_calls or
// content_filter (unchanged keeps the upstream stop_reason).
func (r *Response) CheckWriteBack(target any) error {
	_, err := r.render(target)
	return err
}

// Release implements wire.Response: the answer with the gateway's id and
// the request's model, its metadata as released (sealed, enumerations
// checked, removals), its blobs sealed; the upstream's blocks in their
// order when the target is the projection, else the content rendered from
// the target with every unchanged block's bytes.
func (r *Response) Release(target any) ([]byte, error) {
	return r.render(target)
}

func (r *Response) render(target any) ([]byte, error) {
	if target == nil {
		target = r.proj
	}
	t, err := checkTargetObject(target)
	if err != nil {
		return nil, err
	}
	top, err := r.metaPatch()
	if err != nil {
		return nil, err
	}
	if jsonvalue.Equal(t, r.proj) {
		if !r.verbatim {
			raws := make([][]byte, len(r.blocks))
			for i, b := range r.blocks {
				raws[i] = b.raw
			}
			top.Set("content", rawjson.RenderArray(r.body, r.contentSpan, r.blockSpans, raws))
		}
		return top.Render(), nil
	}
	c := r.pool.claimer()
	blocks, extras, err := r.contentBlocks(c, t["content"])
	if err != nil {
		return nil, err
	}
	calls, err := r.callBlocks(c, t["tool_calls"])
	if err != nil {
		return nil, err
	}
	if err := r.setExtras(top, extras); err != nil {
		return nil, err
	}
	top.Set("content", joinArray(append(blocks, calls...)))
	fr := t["finish_reason"].(string)
	if fr != r.proj["finish_reason"] {
		top.Set("stop_reason", appendString(nil, finishToStop[fr]))
	}
	return top.Render(), nil
}

// metaPatch is what every release does to the answer's top level: the
// members removed dropped, the gateway's id and the request's model set,
// the metadata as released.
func (r *Response) metaPatch() (*rawjson.ObjPatch, error) {
	top := rawjson.NewObjPatch(r.body, rawjson.RootSpan(r.body), r.top)
	for _, i := range r.topDrop {
		top.Drop(i)
	}
	top.Set("id", appendString(nil, r.ac.id))
	top.Set("model", appendString(nil, r.ac.model))
	for key, mv := range r.meta {
		if mv.changed {
			b, err := jsonvalue.Marshal(mv.tree)
			if err != nil {
				return nil, &wire.WriteBackError{Field: key, Msg: "the released metadata is not encodable"}
			}
			top.Set(key, b)
		}
	}
	return top, nil
}

func checkTargetObject(target any) (map[string]any, error) {
	t, ok := target.(map[string]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: "$target", Msg: "must be an object, got " + rawjson.TypeName(target)}
	}
	for k := range t {
		switch k {
		case "content", "tool_calls", "finish_reason":
		default:
			return nil, &wire.WriteBackError{Field: "$target", Msg: "has a member other than content, tool_calls and finish_reason"}
		}
	}
	for _, k := range []string{"content", "tool_calls", "finish_reason"} {
		if _, ok := t[k]; !ok {
			return nil, &wire.WriteBackError{Field: "$target." + k, Msg: "is required"}
		}
	}
	if err := wire.CheckEncodable(target); err != nil {
		return nil, err
	}
	fr, ok := t["finish_reason"].(string)
	if _, known := finishToStop[fr]; !ok || !known {
		return nil, &wire.WriteBackError{Field: "$target.finish_reason", Msg: "must be stop, length, tool_calls or content_filter"}
	}
	return t, nil
}

// contentBlocks renders the target's content as blocks, and collects its
// member parts.
func (r *Response) contentBlocks(c *claimer, content any) ([][]byte, map[string]any, error) {
	switch v := content.(type) {
	case nil:
		return nil, nil, nil
	case string:
		if raw := c.claim(poolPart, map[string]any{"type": "text", "text": v}); raw != nil {
			return [][]byte{raw}, nil, nil
		}
		return [][]byte{textBlock(v)}, nil, nil
	case []any:
		var out [][]byte
		extras := map[string]any{}
		for i, e := range v {
			field := "$target.content[" + strconv.Itoa(i) + "]"
			p, ok := e.(map[string]any)
			if !ok {
				return nil, nil, &wire.WriteBackError{Field: field, Msg: "must be a part object"}
			}
			if p["type"] == "member" {
				name, _ := p["name"].(string)
				if _, dup := extras[name]; dup || !r.hasExtra(name) || len(p) != 3 {
					return nil, nil, &wire.WriteBackError{Field: field, Msg: "a member part names one of the answer's own member parts, once, as {type, name, value}"}
				}
				extras[name] = p["value"]
				continue
			}
			if raw := c.claim(poolPart, p); raw != nil {
				out = append(out, raw)
				continue
			}
			b, err := r.newPart(c, field, p)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, b)
		}
		return out, extras, nil
	}
	return nil, nil, &wire.WriteBackError{Field: "$target.content", Msg: "must be a string, null or an array of parts"}
}

// newPart renders a part that matches no original block: only text can be
// written; its annotations must be original citations, its other members
// (judged unknown ones) are rendered as they are.
func (r *Response) newPart(c *claimer, field string, p map[string]any) ([]byte, error) {
	switch p["type"] {
	case "text":
	case "reasoning":
		return nil, &wire.WriteBackError{Field: field, Msg: "is not an original thinking block: thinking is signed and cannot be changed or added, only removed"}
	default:
		return nil, &wire.WriteBackError{Field: field, Msg: "is not an original block: only text parts can be changed or added"}
	}
	text, ok := p["text"].(string)
	if !ok {
		return nil, &wire.WriteBackError{Field: field + ".text", Msg: "must be a string"}
	}
	own, err := ownMembers(field, p, textWire, nil, r.s.strict, "type", "text", "annotations")
	if err != nil {
		return nil, err
	}
	b := append([]byte(`{"type":"text","text":`), appendString(nil, text)...)
	if anns, ok := p["annotations"].([]any); ok && len(anns) > 0 {
		cites := make([][]byte, len(anns))
		for j, a := range anns {
			cites[j] = r.citationRaw(c, a)
			if cites[j] == nil {
				return nil, &wire.WriteBackError{Field: field + ".annotations[" + strconv.Itoa(j) + "]", Msg: "is not an original citation: citations can be removed, not changed or added"}
			}
		}
		b = append(append(b, `,"citations":`...), joinArray(cites)...)
	} else if a, present := p["annotations"]; present && a != nil && !ok {
		return nil, &wire.WriteBackError{Field: field + ".annotations", Msg: "must be an array"}
	}
	return closeObject(b, field, own)
}

// citationRaw returns the bytes of an unclaimed original citation equal to
// a, or nil.
func (r *Response) citationRaw(c *claimer, a any) []byte {
	for _, b := range r.blocks {
		for _, ct := range b.cites {
			if jsonvalue.Equal(ct.proj, a) {
				return ct.raw
			}
		}
	}
	return nil
}

func (r *Response) hasExtra(name string) bool {
	for _, x := range r.extras {
		if x.name == name {
			return true
		}
	}
	return false
}

// setExtras writes changed member parts at their paths and removes the
// members whose parts were removed.
func (r *Response) setExtras(top *rawjson.ObjPatch, extras map[string]any) error {
	var trees map[string]any // metadata members rewritten below their top
	for _, x := range r.extras {
		v, kept := extras[x.name]
		if kept && jsonvalue.Equal(v, x.value) {
			continue
		}
		if len(x.path) > 0 {
			tree, ok := trees[x.top]
			if !ok {
				tree = r.meta[x.top].tree
			}
			if trees == nil {
				trees = map[string]any{}
			}
			trees[x.top] = setAt(tree, x.path, v, !kept)
			continue
		}
		if !kept {
			top.Del(x.top)
			continue
		}
		b, err := jsonvalue.Marshal(v)
		if err != nil {
			return &wire.WriteBackError{Field: "$target.content", Msg: "a member part's value is not encodable JSON"}
		}
		top.Set(x.top, b)
	}
	for k, tree := range trees {
		b, err := jsonvalue.Marshal(tree)
		if err != nil {
			return &wire.WriteBackError{Field: "$target.content", Msg: "a member part's value is not encodable JSON"}
		}
		top.Set(k, b)
	}
	return nil
}

// callBlocks renders the target's tool calls as tool_use blocks.
func (r *Response) callBlocks(c *claimer, v any) ([][]byte, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: "$target.tool_calls", Msg: "must be an array, got " + rawjson.TypeName(v)}
	}
	seen := map[string]bool{}
	out := make([][]byte, len(list))
	for i, e := range list {
		field := "$target.tool_calls[" + strconv.Itoa(i) + "]"
		call, ok := e.(map[string]any)
		id, _ := call["id"].(string)
		if !ok || !r.hasCall(id) || seen[id] {
			return nil, &wire.WriteBackError{Field: field + ".id", Msg: "must name a call of the upstream answer, once: calls may be dropped, not added"}
		}
		seen[id] = true
		if raw := c.claim(poolCall, call); raw != nil {
			out[i] = raw
			continue
		}
		name, ok1 := call["name"].(string)
		args, ok2 := call["args"].(map[string]any)
		if !ok1 || !ok2 || name == "" {
			return nil, &wire.WriteBackError{Field: field, Msg: "must be {id, name, args} with a non-empty name and object args"}
		}
		own, err := ownMembers(field, call, answerCallWire, answerCallStrict, r.s.strict, "id", "name", "args")
		if err != nil {
			return nil, err
		}
		in, err := jsonvalue.Marshal(args)
		if err != nil {
			return nil, &wire.WriteBackError{Field: field + ".args", Msg: "is not encodable JSON"}
		}
		b := append([]byte(`{"type":"tool_use","id":`), appendString(nil, id)...)
		b = append(append(b, `,"name":`...), appendString(nil, name)...)
		b = append(append(b, `,"input":`...), in...)
		if out[i], err = closeObject(b, field, own); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// The wire names a rendered tool_use block takes from its call, and the
// members a call may carry beside id, name and args under StrictMembers.
var (
	answerCallWire   = rawjson.NewMemberSet("type", "id", "name", "input", "args")
	answerCallStrict = rawjson.NewMemberSet("caller")
)

func (r *Response) hasCall(id string) bool {
	for _, b := range r.blocks {
		if b.call != nil && b.call["id"] == id {
			return true
		}
	}
	return false
}
