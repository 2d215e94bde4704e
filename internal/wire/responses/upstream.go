package responses

import (
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// writePlan is how a verdicted conversation maps onto the request:
// instructions (keep, rewrite or drop) and the input items.
type writePlan struct {
	instr     instrAction
	instrText string
	items     [][]byte // rendered input items, nil entries never occur
	same      bool     // items are exactly the original input, in order
}

type instrAction int

const (
	instrKeep instrAction = iota
	instrRewrite
	instrDrop
)

// CheckMessages reports whether target can be written onto this request.
// Rules (docs/responses-wire.md, "Write-back"):
//
//   - When the request has instructions, a first message equal to their
//     projection keeps them; a first system message with string content
//     rewrites them; otherwise they are dropped.
//   - Every other message equal to a projected input segment re-emits that
//     segment's items byte for byte (matched by equality, so messages may
//     be removed, reordered or duplicated).
//   - A changed or new message is rendered as an item: a tool message as a
//     function_call_output, an assistant message with tool_calls as
//     function_call items (each id naming a function_call of the input:
//     calls cannot be added; content must be empty), any other
//     user/system/developer/assistant message as a message item with its
//     text, image_url, refusal, input_image and input_file parts mapped
//     back. Reasoning and provider-tool parts cannot be changed or added
//     (their encrypted or provider-held state would no longer match).
func (r *Request) CheckMessages(target any) error {
	_, err := r.plan(target)
	return err
}

// UpstreamBody renders the body for the upstream: messages nil keeps the
// client's conversation; otherwise the verdicted conversation is written
// back. Either way the upstream receives the originals of the gateway's
// seals and no logprobs of earlier answers (see upstreamItem).
func (r *Request) UpstreamBody(messages any) ([]byte, error) {
	if messages == nil && r.up == nil && r.prevID == nil {
		return r.text.Bytes(), nil
	}
	pl := &writePlan{same: true}
	if messages != nil {
		var err error
		if pl, err = r.plan(messages); err != nil {
			return nil, err
		}
	}
	if pl.same && pl.instr == instrKeep && r.prevID == nil && r.up != nil {
		// Only items' bytes differ (seals opened, logprobs removed): the
		// body with those items replaced, in one copy.
		items := make([][]byte, len(r.items))
		for i := range r.items {
			src, s := r.upstreamItem(i)
			items[i] = src[s.Start:s.End]
		}
		return rawjson.ReplaceSpans(r.text.Bytes(), r.items, items), nil
	}
	p := rawjson.NewObjPatch(r.text.Bytes(), r.root, r.members)
	switch pl.instr {
	case instrRewrite:
		raw, _ := jsonvalue.Marshal(pl.instrText)
		p.Set("instructions", raw)
	case instrDrop:
		p.Del("instructions")
	}
	if r.prevID != nil {
		p.Set("previous_response_id", r.prevID)
	}
	switch {
	case !pl.same && len(pl.items) == 0:
		return nil, &wire.WriteBackError{Field: "$target", Msg: "leaves no input item: the upstream requires input"}
	case !pl.same && r.inputString:
		p.Set("input", rawjson.RenderArray(r.text.Bytes(), rawjson.Span{}, nil, pl.items))
	case !pl.same:
		p.Set("input", rawjson.RenderArray(r.text.Bytes(), r.inputSpan, r.items, pl.items))
	case r.up != nil:
		items := make([][]byte, len(r.items))
		for i := range r.items {
			src, s := r.upstreamItem(i)
			items[i] = src[s.Start:s.End]
		}
		p.Set("input", rawjson.RenderArray(r.text.Bytes(), r.inputSpan, r.items, items))
	}
	if !p.Changed() {
		return r.text.Bytes(), nil
	}
	return rawjson.SpliceOwned(r.text.Bytes(), r.root, p.Render()), nil
}

// upstreamItem returns input item i as the upstream receives it (the
// client's bytes, or their rendering with the gateway's seals opened and
// output_text logprobs removed) and its span there.
func (r *Request) upstreamItem(i int) ([]byte, rawjson.Span) {
	if r.up != nil && r.up[i] != nil {
		// Rendered by the gateway: exactly the item, no space around it.
		return r.up[i], rawjson.Span{Start: 0, End: len(r.up[i])}
	}
	return r.text.Bytes(), r.items[i]
}

// plan validates target and maps it onto the request.
func (r *Request) plan(target any) (*writePlan, error) {
	list, ok := target.([]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: "$target", Msg: "must be an array of messages, got " + rawjson.TypeName(target)}
	}
	if err := wire.CheckEncodable(target); err != nil {
		return nil, err
	}
	pl := &writePlan{}
	start := 0
	if r.instr != nil {
		pl.instr = instrDrop
		if len(list) > 0 {
			if jsonvalue.Equal(list[0], r.instr) {
				pl.instr, start = instrKeep, 1
			} else if m, ok := list[0].(map[string]any); ok && m["role"] == "system" && len(m) == 2 {
				if s, ok := m["content"].(string); ok {
					pl.instr, pl.instrText, start = instrRewrite, s, 1
				}
			}
		}
	}
	used := make([]bool, len(r.segs))
	pl.same = len(list)-start == len(r.segs)
	for i := start; i < len(list); i++ {
		field := fieldIndex("$target", i)
		j := r.matchSegment(list[i], used)
		if j >= 0 {
			pl.same = pl.same && j == i-start
			pl.items = append(pl.items, r.segmentItems(j)...)
			continue
		}
		pl.same = false
		items, err := r.renderMessage(list[i], field)
		if err != nil {
			return nil, err
		}
		pl.items = append(pl.items, items...)
	}
	return pl, nil
}

// matchSegment returns the first unused segment equal to m (or, when all
// equal ones are used, the first equal one), or -1.
func (r *Request) matchSegment(m any, used []bool) int {
	first := -1
	for j := range r.segs {
		if !jsonvalue.Equal(r.segs[j].msg, m) {
			continue
		}
		if !used[j] {
			used[j] = true
			return j
		}
		if first < 0 {
			first = j
		}
	}
	return first
}

// segmentItems returns the raw bytes of segment j's items.
func (r *Request) segmentItems(j int) [][]byte {
	sg := r.segs[j]
	if r.inputString {
		content := r.text.Bytes()[r.inputSpan.Start:r.inputSpan.End]
		item := append(append([]byte(`{"role":"user","content":`), content...), '}')
		return [][]byte{item}
	}
	out := make([][]byte, sg.n)
	for k := range sg.n {
		src, s := r.upstreamItem(sg.first + k)
		out[k] = src[s.Start:s.End]
	}
	return out
}
