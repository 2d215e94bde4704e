package messages

import (
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

var _ wire.Incremental = (*Surface)(nil)

// OpenStream implements wire.Incremental: the same reader and assembler
// as ReadStream, driven one event at a time.
func (s *Surface) OpenStream(req wire.Request, r io.Reader, limit int64) wire.StreamReader {
	return &streamReader{
		er:    newEventReader(r, limit),
		a:     &assembler{s: s, ac: answerFor(req), replayable: true},
		plain: true,
	}
}

// textEvent is an upstream text_delta of block 0 read while the answer was
// plain: its text ends at byte end of Text.
type textEvent struct {
	end    int
	data   []byte
	replay bool // only known members, on one data line: replayed as is
}

// streamReader implements wire.StreamReader. The plain case is content
// block 0 of type text extended by text_delta events only; anything else
// (another block of any type, a citation, a refusal, metadata that would
// make content a part array) ends it.
type streamReader struct {
	er     *eventReader
	a      *assembler
	ended  bool // Next reported done or an error
	st     *Stream
	plain  bool
	frozen string    // Text once the answer stopped being plain
	start  *Response // message_start's metadata, parsed as an answer
	opened bool      // block 0 is a text block Head can open
	texts  []textEvent
	// headed: Head rendered the stream's opening; released: the bytes of
	// Text Delta rendered since. Tail continues exactly that.
	headed   bool
	released int
}

// Next implements wire.StreamReader.
func (r *streamReader) Next() (bool, error) {
	if r.ended {
		return false, &wire.StreamError{Kind: wire.ErrResponseInvalid, Detail: "read past the end of the stream"}
	}
	ev, err := r.er.next()
	if err != nil {
		r.ended = true
		return false, err
	}
	n := len(r.a.events)
	done, err := r.a.handle(ev)
	if err != nil {
		r.ended = true
		return false, err
	}
	if r.plain && len(r.a.events) > n {
		r.observe(ev)
	}
	if !done {
		return false, nil
	}
	r.ended = true
	st, err := r.a.stream(r.er.buffered())
	if err != nil {
		return false, err
	}
	r.st = st
	return true, nil
}

// observe keeps the answer plain only while ev, just assembled, leaves it
// one text block extended by text.
func (r *streamReader) observe(ev sseEvent) {
	a := r.a
	switch ev.name {
	case "message_start":
		r.startMeta()
	case "content_block_start":
		if len(a.blocks) == 1 && plainTextStart(a.blocks[0].obj) {
			r.opened = true // Head may open it; any later block ends the plain case
			return
		}
		r.endPlain()
	case "content_block_delta":
		b := a.blocks[0] // the only block while plain
		if len(b.cites) > 0 {
			r.endPlain()
			return
		}
		r.texts = append(r.texts, textEvent{end: b.text.Len(), data: ev.data, replay: a.known})
	case "message_delta":
		if a.msg["stop_reason"] == "refusal" {
			r.endPlain()
		}
	}
}

// startMeta parses message_start's message as an answer with no content,
// by the closed world of a whole answer: Head renders it. Content already
// in it, a member that would project as a part, or metadata the final
// parse would refuse ends the plain case.
func (r *streamReader) startMeta() {
	if len(r.a.blocks) > 0 {
		r.endPlain()
		return
	}
	body, err := jsonvalue.Marshal(r.a.msg)
	if err != nil {
		r.endPlain()
		return
	}
	resp, err := r.a.s.parseMessage(body, r.a.ac)
	if err != nil || len(resp.extras) > 0 {
		r.endPlain()
		return
	}
	r.start = resp
}

// plainTextStart reports whether a block start is exactly an empty text
// block: no text yet, no citations, nothing the gateway would remove.
func plainTextStart(b map[string]any) bool {
	if b["type"] != "text" || b["text"] != "" || answerBlockMembers["text"].UnknownIn(b) {
		return false
	}
	c, present := b["citations"]
	list, _ := c.([]any)
	return !present || c == nil || (list != nil && len(list) == 0)
}

func (r *streamReader) endPlain() {
	r.frozen = r.text()
	r.plain = false
}

func (r *streamReader) text() string {
	if len(r.a.blocks) == 0 || !r.opened {
		return ""
	}
	return r.a.blocks[0].text.String()
}

// Text implements wire.StreamReader; once the answer is not plain it stays
// what it was then.
func (r *streamReader) Text() string {
	if !r.plain {
		return r.frozen
	}
	return r.text()
}

// Plain implements wire.StreamReader.
func (r *streamReader) Plain() bool { return r.plain }

// BufferedBytes implements wire.StreamReader.
func (r *streamReader) BufferedBytes() int64 { return r.er.buffered() }

// Stream implements wire.StreamReader.
func (r *streamReader) Stream() (wire.Stream, error) {
	if r.st == nil {
		return nil, &wire.StreamError{Kind: wire.ErrStreamCut, Detail: "the stream has not ended"}
	}
	return r.st, nil
}

// Head implements wire.StreamReader: message_start rendered from the
// upstream's message_start metadata as the synthesizer renders it, and
// content_block_start of an empty text block at index 0.
func (r *streamReader) Head() ([]byte, error) {
	if r.headed {
		return nil, &wire.WriteBackError{Msg: "the stream's head was already rendered"}
	}
	if r.start == nil || !r.opened {
		return nil, &wire.WriteBackError{Msg: "the answer does not open with a text block"}
	}
	body, err := r.start.render(nil)
	if err != nil {
		return nil, err
	}
	v, err := jsonvalue.Decode(body)
	msg, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, &wire.WriteBackError{Msg: "the message metadata cannot be streamed"}
	}
	r.headed = true
	out := appendMessageStart(nil, msg)
	return appendJSONEvent(out, "content_block_start", map[string]any{"type": "content_block_start", "index": jsonNumber(0),
		"content_block": map[string]any{"type": "text", "text": ""}}), nil
}

// Delta implements wire.StreamReader: the upstream's text_delta events
// lying wholly inside the range are replayed (re-framed), the parts of
// those straddling its ends re-synthesized. from must be where the last
// Delta ended, after Head.
func (r *streamReader) Delta(from int, text string) ([]byte, error) {
	t := r.Text()
	to := from + len(text)
	if !r.headed {
		return nil, &wire.WriteBackError{Msg: "text is released before the stream's head"}
	}
	// A cut inside a character would render text no client reads alike.
	if from != r.released || to > len(t) || t[from:to] != text || !utf8.ValidString(text) {
		return nil, &wire.WriteBackError{Msg: "the released text is not the next part of the answer's text"}
	}
	r.released = to
	var out []byte
	var pending strings.Builder
	flush := func() {
		if pending.Len() > 0 {
			out = appendTextDelta(out, pending.String())
			pending.Reset()
		}
	}
	// The first event ending after from.
	k := sort.Search(len(r.texts), func(i int) bool { return r.texts[i].end > from })
	for ; k < len(r.texts); k++ {
		start := 0
		if k > 0 {
			start = r.texts[k-1].end
		}
		e := r.texts[k]
		if start >= to {
			break
		}
		if start == e.end {
			continue // an empty delta
		}
		if e.replay && start >= from && e.end <= to {
			flush()
			out = appendEvent(out, "content_block_delta", e.data)
			continue
		}
		pending.WriteString(t[max(start, from):min(e.end, to)])
	}
	flush()
	return out, nil
}

func appendTextDelta(out []byte, text string) []byte {
	return appendJSONEvent(out, "content_block_delta", map[string]any{"type": "content_block_delta", "index": jsonNumber(0),
		"delta": map[string]any{"type": "text_delta", "text": text}})
}

// Tail implements wire.StreamReader. released must be the text Head and
// Delta rendered. The verdicted message is rendered as for a buffered
// release; its block 0 must be a text block beginning with released. Rendered: block 0's citations, the rest
// of its text, its stop, every further block as the synthesizer renders
// it, message_delta (stop_reason, stop_sequence, stop_details, container,
// usage) and message_stop.
func (r *streamReader) Tail(st wire.Stream, target any, released string) ([]byte, error) {
	s, ok := st.(*Stream)
	if !ok {
		return nil, &wire.WriteBackError{Msg: "the stream was not read by this surface"}
	}
	if !r.headed || released != r.Text()[:r.released] {
		return nil, &wire.WriteBackError{Msg: "released is not the text this reader rendered"}
	}
	body, err := s.resp.render(target)
	if err != nil {
		return nil, err
	}
	v, err := jsonvalue.Decode(body)
	msg, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, &wire.WriteBackError{Msg: "the released message cannot be streamed"}
	}
	content, _ := msg["content"].([]any)
	var first map[string]any
	if len(content) > 0 {
		first, _ = content[0].(map[string]any)
	}
	text, _ := first["text"].(string)
	if first["type"] != "text" || !strings.HasPrefix(text, released) {
		return nil, &wire.WriteBackError{Field: "$target.content", Msg: "does not begin with the text already released, which cannot be rewritten"}
	}
	var out []byte
	cites, _ := first["citations"].([]any)
	for _, c := range cites {
		out = appendJSONEvent(out, "content_block_delta", map[string]any{"type": "content_block_delta", "index": jsonNumber(0),
			"delta": map[string]any{"type": "citations_delta", "citation": c}})
	}
	if rest := text[len(released):]; rest != "" {
		out = appendTextDelta(out, rest)
	}
	out = appendJSONEvent(out, "content_block_stop", map[string]any{"type": "content_block_stop", "index": jsonNumber(0)})
	for i := 1; i < len(content); i++ {
		out = appendBlockEvents(out, i, content[i].(map[string]any))
	}
	return appendMessageEnd(out, msg, "stop_details", "container"), nil
}
