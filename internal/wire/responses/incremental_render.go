package responses

import (
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// incRender is what the reader has rendered for the client: every event
// is synthesized (upstream events are never replayed on this path), so
// sequence numbers are the gateway's own, consecutive from 0 across
// Head, Delta and Tail. The client holds the plain parts up to part (the
// one open on its stream, in item), every earlier one closed.
type incRender struct {
	seq        int
	headed     bool
	released   int // bytes of Text written by Delta
	tailed     bool
	item, part int // the item and part open on the client's stream
}

// errRender refuses a rendering the reader's state does not allow.
func errRender(msg string) error { return &wire.WriteBackError{Msg: msg} }

// Head renders response.created and response.in_progress from the first
// upstream snapshot's releasable metadata, then opens the first text
// part: its message item's output_item.added (after any empty message
// items before it, added and done) and its content_part.added.
func (rd *streamReader) Head() ([]byte, error) {
	p := &rd.a.plain
	switch {
	case rd.render.headed:
		return nil, errRender("the stream's head was already rendered")
	case p.snapshot == nil || len(p.parts) == 0 || p.text.Len() == 0:
		return nil, errRender("no plain text to release")
	}
	y := &synthesizer{seq: rd.render.seq}
	y.open(p.snapshot)
	rd.render.item, rd.render.part = -1, -1
	rd.moveTo(y, 0)
	rd.render.seq, rd.render.headed = y.seq, true
	return y.out, nil
}

// Delta renders text, Text()[from:from+len(text)], as output_text deltas
// of the parts it lies in; from must be where the last Delta ended. Where
// the text goes on into a later part, the part before is closed
// (output_text.done, content_part.done, and output_item.done when the
// next part is in a later item) and the next one opened, so the client
// sees each part's text in its own part, in order.
func (rd *streamReader) Delta(from int, text string) ([]byte, error) {
	p := &rd.a.plain
	all := p.text.String()
	to := from + len(text)
	switch {
	case !rd.render.headed || rd.render.tailed:
		return nil, errRender("text is released between the stream's head and tail")
	case from != rd.render.released || to > len(all) || all[from:to] != text:
		return nil, errRender("the released text is not the next part of the assembled text")
	case text == "":
		return nil, nil
	}
	y := &synthesizer{seq: rd.render.seq}
	for k := rd.render.part; ; k++ {
		if k > rd.render.part {
			rd.moveTo(y, k)
		}
		pt := &p.parts[k]
		if lo, hi := max(from, pt.start), min(to, pt.end); hi > lo {
			y.emit("response.output_text.delta", itemLoc(p.items[pt.item].id, pt.item)(map[string]any{"content_index": pt.ci, "delta": all[lo:hi]}))
		}
		if to <= pt.end || k+1 == len(p.parts) {
			break
		}
	}
	rd.render.seq, rd.render.released = y.seq, to
	return y.out, nil
}

// moveTo renders what takes the client from its open part (if any) to
// part k: the open part closed, its item closed when k is in a later
// item, the message items between (which hold no part) added and done,
// k's item added, and k added. Every part before k is done upstream and
// wholly released (text after it is).
func (rd *streamReader) moveTo(y *synthesizer, k int) {
	p := &rd.a.plain
	next := p.parts[k]
	if j := rd.render.part; j >= 0 {
		prev := p.parts[j]
		y.closeText(itemLoc(p.items[prev.item].id, prev.item), prev.ci, outputTextPart(p.partText(&prev)))
	}
	if rd.render.item != next.item {
		if oi := rd.render.item; oi >= 0 {
			y.emit("response.output_item.done", map[string]any{"output_index": oi, "item": rd.doneItem(oi)})
		}
		for oi := rd.render.item + 1; oi < next.item; oi++ {
			y.emit("response.output_item.added", map[string]any{"output_index": oi, "item": addedItem(p.items[oi].id)})
			y.emit("response.output_item.done", map[string]any{"output_index": oi, "item": rd.doneItem(oi)})
		}
		y.emit("response.output_item.added", map[string]any{"output_index": next.item, "item": addedItem(p.items[next.item].id)})
		rd.render.item = next.item
	}
	y.emit("response.content_part.added", itemLoc(p.items[next.item].id, next.item)(map[string]any{"content_index": next.ci,
		"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}))
	rd.render.part = k
}

// addedItem is a message item as output_item.added announces it.
func addedItem(id string) map[string]any {
	return map[string]any{"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}
}

// outputTextPart is an output_text part holding text, no annotation.
func outputTextPart(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
}

// doneItem is plain item oi as its output_item.done carries it, from the
// upstream's done item reduced to what was judged: its parts' text.
func (rd *streamReader) doneItem(oi int) map[string]any {
	p := &rd.a.plain
	it := p.items[oi]
	content := make([]any, 0, it.parts)
	for i := range p.parts {
		if p.parts[i].item == oi {
			content = append(content, outputTextPart(p.partText(&p.parts[i])))
		}
	}
	item := map[string]any{"id": it.id, "type": "message", "role": "assistant", "content": content}
	if it.status != "" {
		item["status"] = it.status
	}
	return item
}

// Tail renders the rest of the stream Head and Delta opened: target
// (nil: st's projection) is rendered as the buffered path would release
// it, and must continue what the client holds: the items it closed
// unchanged (the same message ids and part texts), the open item the same
// message with the same parts before the open one, and the open part's
// text beginning with its released text. Then the rest of that text
// arrives in one delta, the part, the message and every further output
// item close as the synthesizer renders them, and the terminal event
// carries the whole verdicted response object.
func (rd *streamReader) Tail(st wire.Stream, target any, released string) ([]byte, error) {
	s, ok := st.(*Stream)
	switch {
	case !ok || s != rd.st:
		return nil, errRender("the stream was not read by this reader")
	case !rd.render.headed || rd.render.tailed:
		return nil, errRender("no released stream to end")
	case released != rd.a.plain.text.String()[:rd.render.released]:
		return nil, errRender("released is not the text this reader rendered")
	}
	if target == nil {
		target = s.resp.proj
	}
	body, err := s.resp.render(target)
	if err != nil {
		return nil, err
	}
	v, err := jsonvalue.Decode(body)
	if err != nil {
		return nil, errRender("released response is not valid JSON")
	}
	resp := v.(map[string]any)
	output, _ := resp["output"].([]any)
	msg, first, err := rd.opened(output, released)
	if err != nil {
		return nil, err
	}
	p := &rd.a.plain
	open := p.parts[rd.render.part]
	y := &synthesizer{seq: rd.render.seq}
	loc := itemLoc(p.items[open.item].id, open.item)
	text, _ := first["text"].(string)
	if rest := text[len(released)-open.start:]; rest != "" {
		y.emit("response.output_text.delta", loc(map[string]any{"content_index": open.ci, "delta": rest}))
	}
	y.closeText(loc, open.ci, first)
	content := msg["content"].([]any)
	for ci := open.ci + 1; ci < len(content); ci++ {
		y.part(loc, ci, content[ci].(map[string]any))
	}
	y.emit("response.output_item.done", map[string]any{"output_index": open.item, "item": msg})
	for oi := open.item + 1; oi < len(output); oi++ {
		y.item(oi, output[oi].(map[string]any))
	}
	y.terminal(resp)
	rd.render.seq, rd.render.tailed = y.seq, true
	return y.out, nil
}

// opened checks that the rendered output continues the stream already on
// the wire, released being its text, and returns the open message item
// and its open part.
func (rd *streamReader) opened(output []any, released string) (msg, part map[string]any, err error) {
	p := &rd.a.plain
	open := p.parts[rd.render.part]
	bad := &wire.WriteBackError{Field: "$target.content", Msg: "cannot be written on the stream already opened: the text parts already streamed cannot change"}
	if len(output) <= open.item {
		return nil, nil, bad
	}
	for oi := 0; oi <= open.item; oi++ {
		m, _ := output[oi].(map[string]any)
		content, _ := m["content"].([]any)
		if m["type"] != "message" || m["id"] != p.items[oi].id {
			return nil, nil, bad
		}
		closed := p.items[oi].parts // the parts the client holds whole
		if oi == open.item {
			closed = open.ci
			if len(content) <= open.ci {
				return nil, nil, bad
			}
		} else if len(content) != closed {
			return nil, nil, bad
		}
		for ci := range closed {
			want := rd.partOf(oi, ci)
			if c, _ := content[ci].(map[string]any); want == nil || !emptyTextPart(c, p.partText(want)) {
				return nil, nil, bad
			}
		}
		msg = m
	}
	part, _ = msg["content"].([]any)[open.ci].(map[string]any)
	text, _ := part["text"].(string)
	if part["type"] != "output_text" || !strings.HasPrefix(text, released[open.start:]) {
		return nil, nil, &wire.WriteBackError{Field: "$target.content", Msg: "does not begin with the text already released"}
	}
	return msg, part, nil
}

// partOf returns the plain part at content index ci of item oi.
func (rd *streamReader) partOf(oi, ci int) *plainPart {
	p := &rd.a.plain
	for i := range p.parts {
		if p.parts[i].item == oi && p.parts[i].ci == ci {
			return &p.parts[i]
		}
	}
	return nil
}

// StreamError implements wire.StreamErrorer: once events went out, the
// error event and response.failed continue their sequence numbers, and
// the failed response is the one the client saw created (its id, model
// and created_at).
func (rd *streamReader) StreamError(e wire.Error) []byte {
	snap := rd.a.plain.snapshot
	if !rd.render.headed || snap == nil {
		return streamFailure(nil, e, rd.render.seq, unnamedSnapshot())
	}
	out := streamFailure(nil, e, rd.render.seq, snap)
	rd.render.seq += 2
	return out
}
