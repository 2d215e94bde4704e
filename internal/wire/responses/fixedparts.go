package responses

import (
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// Reasoning and provider-tool parts ("fixed" parts) are written back onto
// the items they were projected from. A reasoning part is display text
// (the model's reasoning travels in encrypted_content, which is never
// changed): it may be rewritten or removed, not added. A provider-tool
// part is an informational record of a call the provider already ran: its
// string values may change, its type, id and structure may not, and it
// cannot be removed or added. The mapping is order-preserving: the n-th
// fixed part of the target lands on an original at or after the place of
// the (n-1)-th.

// fixedPart is one reasoning or provider-tool part of the projection.
type fixedPart struct {
	item   int // index into Response.items
	hosted bool
	part   map[string]any
}

// targetPart is a fixed part of the target and its index in content.
type targetPart struct {
	idx  int
	part map[string]any
}

// fixedParts lists the projection's fixed parts in order.
func (r *Response) fixedParts() []fixedPart {
	var out []fixedPart
	for i := range r.items {
		it := &r.items[i]
		if it.kind != itemReasoning && it.kind != itemHosted {
			continue
		}
		for _, p := range it.parts {
			out = append(out, fixedPart{item: i, hosted: it.kind == itemHosted, part: p.(map[string]any)})
		}
	}
	return out
}

// matchFixed pairs the target's fixed parts with the originals and
// returns the verdicted parts of the items the verdict changed (by item
// index; a nil part removes its entry).
func (r *Response) matchFixed(target []targetPart) (map[int][]map[string]any, error) {
	orig := r.fixedParts()
	assigned := make([]map[string]any, len(orig)) // nil: removed
	j := 0
	for ti, t := range target {
		f := fieldIndex("$target.content", t.idx)
		if t.part["type"] == "reasoning" {
			k, err := matchReasoning(orig, target, ti, j, f)
			if err != nil {
				return nil, err
			}
			assigned[k], j = t.part, k+1
			continue
		}
		for j < len(orig) && !orig[j].hosted {
			j++ // reasoning entries passed over are removed
		}
		if j == len(orig) {
			return nil, &wire.WriteBackError{Field: f, Msg: "adds a provider-tool or native part, or moves one: they cannot be added or reordered"}
		}
		o := orig[j].part
		if t.part["type"] != o["type"] || t.part["id"] != o["id"] || !sameShape(t.part, o) {
			return nil, &wire.WriteBackError{Field: f, Msg: "changes a provider-tool part beyond its string values (its type, id and members must stay)"}
		}
		assigned[j] = t.part
		j++
	}
	for ; j < len(orig); j++ {
		if orig[j].hosted {
			return nil, &wire.WriteBackError{Field: "$target.content", Msg: "removes a provider-tool part: such parts cannot be removed"}
		}
	}
	return r.changedFixedItems(orig, assigned), nil
}

// matchReasoning returns the original index target[ti] (a reasoning part)
// is written to, searching the run of reasoning originals from j: the one
// at j, or a later one equal to it when entries before it were removed.
func matchReasoning(orig []fixedPart, target []targetPart, ti, j int, f string) (int, error) {
	if len(target[ti].part) != 2 {
		return 0, &wire.WriteBackError{Field: f, Msg: "must be {type, text}"}
	}
	if _, ok := target[ti].part["text"].(string); !ok {
		return 0, &wire.WriteBackError{Field: f + ".text", Msg: "must be a string"}
	}
	end := j
	for end < len(orig) && !orig[end].hosted {
		end++
	}
	left := 0 // reasoning parts of the target from ti up to its next other fixed part
	for x := ti; x < len(target) && target[x].part["type"] == "reasoning"; x++ {
		left++
	}
	if left > end-j {
		return 0, &wire.WriteBackError{Field: f, Msg: "adds a reasoning part: reasoning parts may be rewritten or removed, not added or moved"}
	}
	if left == end-j || jsonvalue.Equal(target[ti].part, orig[j].part) {
		return j, nil
	}
	for x := j + 1; x < end && left-1 <= end-x-1; x++ {
		if jsonvalue.Equal(target[ti].part, orig[x].part) {
			return x, nil
		}
	}
	return j, nil
}

// sameShape reports whether a and b have the same structure and the same
// non-string values: only strings may differ.
func sameShape(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameShape(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameShape(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		_, ok := b.(string)
		return ok
	}
	return jsonvalue.Equal(a, b)
}

// changedFixedItems returns the verdicted parts of each reasoning or
// provider-tool item whose parts the verdict changed.
func (r *Response) changedFixedItems(orig []fixedPart, assigned []map[string]any) map[int][]map[string]any {
	out := map[int][]map[string]any{}
	for x := 0; x < len(orig); {
		item := orig[x].item
		end := x
		changed := false
		for end < len(orig) && orig[end].item == item {
			changed = changed || assigned[end] == nil || !jsonvalue.Equal(assigned[end], orig[end].part)
			end++
		}
		if changed {
			out[item] = assigned[x:end]
		}
		x = end
	}
	return out
}

// appendFixed appends a reasoning item with its entries as verdicted (nil
// removes one; its id and encrypted_content are the gateway's seals, its
// own unknown members and those of the entries kept as verdicted), or a
// provider-tool item as its verdicted part.
func (it *outItem) appendFixed(b []byte, parts []map[string]any, vals map[string]any) ([]byte, error) {
	if it.kind == itemHosted {
		out, err := jsonvalue.AppendCompact(b, parts[0])
		if err != nil {
			return nil, &wire.WriteBackError{Field: "$target.content", Msg: "a provider-tool part is not encodable"}
		}
		return out, nil
	}
	b = it.appendHead(b, "reasoning")
	if it.hasSummary {
		b = append(b, `,"summary":`...)
		b = it.appendEntries(b, "summary_text", parts[:it.nSummary], 0, vals)
	}
	if it.hasContent {
		b = append(b, `,"content":`...)
		b = it.appendEntries(b, "reasoning_text", parts[it.nSummary:], it.nSummary, vals)
	}
	switch {
	case it.hasEnc:
		b = append(b, `,"encrypted_content":`...)
		b = appendString(b, it.enc)
	case it.encNull:
		b = append(b, `,"encrypted_content":null`...)
	}
	b = appendExtras(b, it.extras, vals)
	return append(b, '}'), nil
}

// appendEntries renders the kept reasoning entries as {type, text} with
// their unknown members; from is the index of parts[0] in the item's.
func (it *outItem) appendEntries(b []byte, typ string, parts []map[string]any, from int, vals map[string]any) []byte {
	b = append(b, '[')
	n := 0
	for i, p := range parts {
		if p == nil {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"`+typ+`","text":`...)
		b = appendString(b, p["text"].(string))
		b = appendExtras(b, it.partExtras[from+i], vals)
		b = append(b, '}')
		n++
	}
	return append(b, ']')
}
