package responses

import (
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// incRender is what the reader has rendered for the client: every event
// is synthesized (upstream events are never replayed on this path), so
// sequence numbers are the gateway's own, consecutive from 0 across
// Head, Delta and Tail.
type incRender struct {
	seq      int
	headed   bool
	released int // bytes of Text written by Delta
	tailed   bool
}

// errRender refuses a rendering the reader's state does not allow.
func errRender(msg string) error { return &wire.WriteBackError{Msg: msg} }

// Head renders response.created and response.in_progress from the first
// upstream snapshot's releasable metadata, the message item's
// output_item.added and its output_text part's content_part.added.
func (rd *streamReader) Head() ([]byte, error) {
	p := &rd.a.plain
	switch {
	case rd.render.headed:
		return nil, errRender("the stream's head was already rendered")
	case p.snapshot == nil || !p.partAdded || p.text.Len() == 0:
		return nil, errRender("no plain text to release")
	}
	y := &synthesizer{seq: rd.render.seq}
	y.open(p.snapshot)
	y.emit("response.output_item.added", map[string]any{"output_index": 0,
		"item": map[string]any{"id": p.msgID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
	y.emit("response.content_part.added", itemLoc(p.msgID, 0)(map[string]any{"content_index": 0,
		"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}))
	rd.render.seq, rd.render.headed = y.seq, true
	return y.out, nil
}

// Delta renders text, Text()[from:from+len(text)], as one
// response.output_text.delta; from must be where the last Delta ended.
func (rd *streamReader) Delta(from int, text string) ([]byte, error) {
	all := rd.a.plain.text.String()
	switch {
	case !rd.render.headed || rd.render.tailed:
		return nil, errRender("text is released between the stream's head and tail")
	case from != rd.render.released || from+len(text) > len(all) || all[from:from+len(text)] != text:
		return nil, errRender("the released text is not the next part of the assembled text")
	case text == "":
		return nil, nil
	}
	y := &synthesizer{seq: rd.render.seq}
	y.emit("response.output_text.delta", itemLoc(rd.a.plain.msgID, 0)(map[string]any{"content_index": 0, "delta": text}))
	rd.render.seq, rd.render.released = y.seq, from+len(text)
	return y.out, nil
}

// Tail renders the rest of the stream Head and Delta opened: target
// (nil: st's projection) is rendered as the buffered path would release
// it, and must keep the released text as the start of the message's
// first part; the rest of that text arrives in one delta, then the
// part, the message and every further output item close as the
// synthesizer renders them, and the terminal event carries the whole
// verdicted response object.
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
	msg, first := rd.openedPart(output)
	if first == nil {
		return nil, &wire.WriteBackError{Field: "$target.content", Msg: "cannot be written on the stream already opened: it must begin with a text part"}
	}
	text, _ := first["text"].(string)
	if !strings.HasPrefix(text, released) {
		return nil, &wire.WriteBackError{Field: "$target.content", Msg: "does not begin with the text already released"}
	}
	y := &synthesizer{seq: rd.render.seq}
	loc := itemLoc(rd.a.plain.msgID, 0)
	if rest := text[len(released):]; rest != "" {
		y.emit("response.output_text.delta", loc(map[string]any{"content_index": 0, "delta": rest}))
	}
	y.closeText(loc, 0, first)
	content := msg["content"].([]any)
	for ci := 1; ci < len(content); ci++ {
		y.part(loc, ci, content[ci].(map[string]any))
	}
	y.emit("response.output_item.done", map[string]any{"output_index": 0, "item": msg})
	for oi := 1; oi < len(output); oi++ {
		y.item(oi, output[oi].(map[string]any))
	}
	y.terminal(resp)
	rd.render.seq, rd.render.tailed = y.seq, true
	return y.out, nil
}

// openedPart returns the rendered output's first item when it is the
// message Head opened, and that message's first part when it is
// output_text: what the stream already on the wire continues.
func (rd *streamReader) openedPart(output []any) (map[string]any, map[string]any) {
	if len(output) == 0 {
		return nil, nil
	}
	msg, _ := output[0].(map[string]any)
	if msg["type"] != "message" || msg["id"] != rd.a.plain.msgID {
		return nil, nil
	}
	content, _ := msg["content"].([]any)
	if len(content) == 0 {
		return nil, nil
	}
	first, _ := content[0].(map[string]any)
	if first["type"] != "output_text" {
		return nil, nil
	}
	return msg, first
}
