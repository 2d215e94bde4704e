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

// textEvent is an upstream text_delta of a text block read while the
// answer was plain: its text ends at byte end of Text (its block is the
// one whose text holds it, blockAt).
type textEvent struct {
	end    int
	data   []byte
	replay bool // only known members, on one data line: replayed as is
}

// streamReader implements wire.StreamReader. The plain case is text
// blocks one after the other from index 0, each extended by text_delta
// events only; Text is their text joined. Anything else (a block of any
// other type, a block started before the one before it stopped, a
// citation, a refusal, metadata that would make content a part array)
// ends it.
type streamReader struct {
	er    *eventReader
	a     *assembler
	ended bool // Next reported done or an error
	st    *Stream
	plain bool
	start *Response // message_start's metadata, parsed as an answer
	// starts[i] is where text block i's text begins in Text; joined holds
	// the blocks' text joined once there are two (one block's text is its
	// own); frozen is Text once the answer stopped being plain.
	starts []int
	joined strings.Builder
	frozen string
	texts  []textEvent
	// headed: Head rendered the stream's opening; released: the bytes of
	// Text Delta rendered since; block: the block open on the client's
	// stream. Tail continues exactly that.
	headed   bool
	released int
	block    int
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
	st, err := r.a.stream(r.er.buffered(), r.er.buffers())
	if err != nil {
		return false, err
	}
	r.st = st
	return true, nil
}

// observe keeps the answer plain only while ev, just assembled, leaves it
// text blocks, each started after the one before it stopped, the last
// one extended by text.
func (r *streamReader) observe(ev sseEvent) {
	a := r.a
	switch ev.name {
	case "message_start":
		r.startMeta()
	case "content_block_start":
		n := len(a.blocks)
		if n == len(r.starts)+1 && plainTextStart(a.blocks[n-1].obj) && (n == 1 || !a.blocks[n-2].open) {
			if n == 2 {
				r.joined.WriteString(a.blocks[0].text.String())
			}
			r.starts = append(r.starts, len(r.Text())) // Head or Delta may open it
			return
		}
		r.endPlain()
	case "content_block_delta":
		// Every earlier block stopped: the delta is the last block's.
		last := len(a.blocks) - 1
		b := a.blocks[last]
		if len(b.cites) > 0 {
			r.endPlain()
			return
		}
		if last > 0 {
			r.joined.WriteString(b.text.String()[r.joined.Len()-r.starts[last]:])
		}
		r.texts = append(r.texts, textEvent{end: r.starts[last] + b.text.Len(), data: ev.data, replay: a.known})
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
	r.frozen = r.Text()
	r.plain = false
}

// Text implements wire.StreamReader: the plain text blocks' text joined;
// once the answer is not plain it stays what it was then.
func (r *streamReader) Text() string {
	switch {
	case !r.plain:
		return r.frozen
	case len(r.starts) == 0:
		return ""
	case len(r.starts) == 1:
		return r.a.blocks[0].text.String()
	}
	return r.joined.String()
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
	if r.start == nil || len(r.starts) == 0 {
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
	r.headed, r.block = true, 0
	out := appendMessageStart(nil, msg)
	return appendTextStart(out, 0), nil
}

// Delta implements wire.StreamReader: the upstream's text_delta events
// lying wholly inside the range are replayed (re-framed), the parts of
// those straddling its ends re-synthesized. Where the range goes on into
// a later text block, the open block is stopped and the next started (an
// empty block between is started and stopped), so each block's text
// arrives at its own index. from must be where the last Delta ended,
// after Head.
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
			out = appendTextDelta(out, r.block, pending.String())
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
		if block := r.blockAt(start); block != r.block {
			flush()
			for ; r.block < block; r.block++ {
				out = appendBlockStop(out, r.block)
				out = appendTextStart(out, r.block+1)
			}
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

// blockAt is the text block whose text holds the byte at offset i of
// Text: the last one beginning at or before it (an empty block between
// holds none).
func (r *streamReader) blockAt(i int) int {
	return sort.Search(len(r.starts), func(k int) bool { return r.starts[k] > i }) - 1
}

func appendTextDelta(out []byte, block int, text string) []byte {
	return appendJSONEvent(out, "content_block_delta", map[string]any{"type": "content_block_delta", "index": jsonNumber(block),
		"delta": map[string]any{"type": "text_delta", "text": text}})
}

func appendTextStart(out []byte, block int) []byte {
	return appendJSONEvent(out, "content_block_start", map[string]any{"type": "content_block_start", "index": jsonNumber(block),
		"content_block": map[string]any{"type": "text", "text": ""}})
}

func appendBlockStop(out []byte, block int) []byte {
	return appendJSONEvent(out, "content_block_stop", map[string]any{"type": "content_block_stop", "index": jsonNumber(block)})
}

// Tail implements wire.StreamReader. released must be the text Head and
// Delta rendered. The verdicted message is rendered as for a buffered
// release; it must continue what the client holds: the blocks before the
// open one the same text blocks (same text, no citations), the open one a
// text block beginning with its released text. Rendered: the open
// block's citations, the rest of its text, its stop, every further block
// as the synthesizer renders it, message_delta (stop_reason,
// stop_sequence, stop_details, container, usage) and message_stop.
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
	open, err := r.continued(content, released)
	if err != nil {
		return nil, err
	}
	var out []byte
	cites, _ := open["citations"].([]any)
	for _, c := range cites {
		out = appendJSONEvent(out, "content_block_delta", map[string]any{"type": "content_block_delta", "index": jsonNumber(r.block),
			"delta": map[string]any{"type": "citations_delta", "citation": c}})
	}
	text, _ := open["text"].(string)
	if rest := text[len(released)-r.starts[r.block]:]; rest != "" {
		out = appendTextDelta(out, r.block, rest)
	}
	out = appendBlockStop(out, r.block)
	for i := r.block + 1; i < len(content); i++ {
		out = appendBlockEvents(out, i, content[i].(map[string]any))
	}
	return appendMessageEnd(out, msg, "stop_details", "container"), nil
}

// continued checks that content continues the blocks on the client's
// stream, released being their text, and returns the open block.
func (r *streamReader) continued(content []any, released string) (map[string]any, error) {
	if len(content) <= r.block {
		return nil, &wire.WriteBackError{Field: "$target.content", Msg: "does not keep the text blocks already streamed, which cannot be rewritten"}
	}
	for i := range r.block {
		b, _ := content[i].(map[string]any)
		cites, _ := b["citations"].([]any)
		if b["type"] != "text" || b["text"] != released[r.starts[i]:r.starts[i+1]] || len(cites) > 0 {
			return nil, &wire.WriteBackError{Field: "$target.content", Msg: "does not keep the text blocks already streamed, which cannot be rewritten"}
		}
	}
	open, _ := content[r.block].(map[string]any)
	text, _ := open["text"].(string)
	if open["type"] != "text" || !strings.HasPrefix(text, released[r.starts[r.block]:]) {
		return nil, &wire.WriteBackError{Field: "$target.content", Msg: "does not begin with the text already released, which cannot be rewritten"}
	}
	return open, nil
}
