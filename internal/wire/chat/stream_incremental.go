package chat

import (
	"errors"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

var _ wire.Incremental = (*Surface)(nil)

// OpenStream starts reading a chat-completions stream an event at a time
// (wire.Incremental). It shares ReadStream's parser and assembler, so the
// Stream it ends with is the one ReadStream would return for the same
// bytes; the usage chunk is rendered only when req asked for it.
func (s *Surface) OpenStream(req wire.Request, r io.Reader, limit int64) wire.StreamReader {
	var includeUsage bool
	if sr, ok := req.(surfaceRequest); ok {
		includeUsage = sr.IncludeUsage()
	}
	return openStream(r, limit, s.answerOptions(req), includeUsage)
}

// streamReader is the chat surface's wire.StreamReader.
//
// Rendering: Head is a synthesized role chunk; Delta replays an upstream
// chunk event whose content lies wholly inside the released range when
// the stream read so far is replayable (Stream.Release's rule) and the
// event carries nothing but that content and metadata, its metadata
// replaced by the head, and synthesizes a content chunk for everything
// else (a straddling event's part of the range included); Tail is
// synthesized from the verdicted target (Stream.Synthesize without the
// role chunk and the text already released). Every rendered chunk carries
// the head fixed at Head (one minted id), so openai-go's accumulator,
// which drops chunks whose id changes, keeps them all.
type streamReader struct {
	r            io.Reader
	limit        int64
	includeUsage bool
	watch        bool // follow the plain text event by event (OpenStream)
	p            *sseParser
	// buf holds the bytes read since it last replaced a full buffer,
	// dropped counts the bytes of the buffers it replaced (see
	// initialBuffer).
	buf     []byte
	dropped int64
	eof     bool  // r reported EOF
	readErr error // r failed; reported once the buffered events are read
	done    bool
	err     error
	st      *Stream

	plain    bool
	plainLen int       // len(Text()) after the last event that left the answer plain
	segs     []textSeg // the content each chunk event added, in order
	head     []byte    // chunk head fixed by Head; nil before
	released int       // bytes of Text rendered by Head and Delta
	scan     fastChunk // replay check scratch
}

// textSeg is the content one chunk event added: Text()[start:end], and the
// event's index in sseParser.chunks, or -1 (a multi-line event, never
// replayed).
type textSeg struct {
	start, end int
	chunk      int
}

// openStream is OpenStream's reader, watched.
func openStream(r io.Reader, limit int64, opts ResponseOptions, includeUsage bool) *streamReader {
	sr := newStreamReader(r, limit, opts, true)
	sr.includeUsage = includeUsage
	return sr
}

// newStreamReader reads r; watch makes Next stop after each chunk event
// and follow the plain text (OpenStream), else it reads whole batches
// and follows nothing (ReadStream).
func newStreamReader(r io.Reader, limit int64, opts ResponseOptions, watch bool) *streamReader {
	return &streamReader{
		r:     r,
		limit: limit,
		watch: watch,
		p:     &sseParser{asm: newAssembler(opts), step: watch},
		buf:   make([]byte, 0, int(min(max(limit, 0), initialBuffer))),
		plain: watch,
	}
}

// Next reads until one more chunk event is folded in, or the stream ends.
// It reads from r only when the buffered bytes hold no complete event, so
// it returns as soon as an event's bytes have arrived. Limits and errors
// are ReadStream's.
func (sr *streamReader) Next() (bool, error) {
	if sr.err != nil || sr.done {
		return sr.done, sr.err
	}
	sr.done, sr.err = sr.next()
	return sr.done, sr.err
}

func (sr *streamReader) next() (bool, error) {
	p := sr.p
	for {
		events, chunks, start := p.events, len(p.chunks), p.asm.pc.text.Len()
		done, err := p.feed(sr.buf, sr.eof)
		switch {
		case err != nil:
			return false, err
		case done:
			return true, nil
		case p.events != events:
			if sr.watch {
				sr.observe(chunks, start)
			}
			return false, nil
		case sr.readErr != nil:
			return false, &wire.StreamError{Kind: wire.ErrStreamCut, Detail: "read failed", Err: sr.readErr}
		case sr.eof:
			return false, &wire.StreamError{Kind: wire.ErrStreamCut}
		}
		if err := sr.fill(); err != nil {
			return false, err
		}
	}
}

// fill reads once into the buffer, making room in it (see makeRoom) while
// fewer than limit bytes were read, as ReadStream does; at the limit it
// probes for one more byte.
func (sr *streamReader) fill() error {
	read := sr.BufferedBytes()
	if read >= sr.limit {
		if err := probeLimit(sr.r, sr.limit); err != nil {
			return err
		}
		sr.eof = true
		return nil
	}
	if len(sr.buf) == cap(sr.buf) {
		sr.makeRoom(sr.limit - read)
	}
	buf := sr.buf
	room := buf[len(buf):cap(buf)]
	if left := sr.limit - read; int64(len(room)) > left {
		room = room[:left]
	}
	n, err := sr.r.Read(room)
	sr.buf = buf[:len(buf)+n]
	switch {
	case errors.Is(err, io.EOF):
		sr.eof = true
	case err != nil:
		sr.readErr = err
	}
	return nil
}

// makeRoom replaces the full buffer by one holding its bytes from the
// first the parser still needs (the pending event's data lines, else the
// unparsed ones), with room for readChunk more, or for as many as it
// holds when that is more, and never for more than left. The parsed bytes
// stay in the old buffer, where the chunk events read alias them.
func (sr *streamReader) makeRoom(left int64) {
	p := sr.p
	keep := p.pos
	if len(p.dataLines) > 0 {
		keep = p.dataLines[0].Start
	}
	tail := sr.buf[keep:]
	room := min(int64(max(readChunk, len(tail))), left)
	nb := make([]byte, len(tail), int64(len(tail))+room)
	copy(nb, tail)
	sr.dropped += int64(keep)
	p.bufs = append(p.bufs, sr.buf)
	sr.buf = nb
	p.pos -= keep
	for i := range p.dataLines {
		p.dataLines[i].Start -= keep
		p.dataLines[i].End -= keep
	}
}

// stream finalizes the stream once [DONE] was read.
func (sr *streamReader) stream() *Stream { return sr.p.stream(sr.buf, sr.dropped) }

// observe records what the event just folded in added to the text, and
// whether the answer is still plain text.
func (sr *streamReader) observe(chunks, start int) {
	a := sr.p.asm
	end := a.pc.text.Len()
	if end > start {
		ch := -1
		if len(sr.p.chunks) > chunks {
			ch = len(sr.p.chunks) - 1
		}
		sr.segs = append(sr.segs, textSeg{start: start, end: end, chunk: ch})
	}
	sr.plain = sr.plain && a.plain()
	if sr.plain {
		sr.plainLen = end
	}
}

// plain reports whether the answer assembled so far projects as a string:
// text only, no tool call, refusal, projected reasoning, citation or
// allowed extra member (answer.simple, and no calls).
func (a *assembler) plain() bool {
	pc := &a.pc
	return len(a.calls) == 0 && !pc.sawRefusal && len(pc.ans.reasoning) == 0 &&
		len(pc.ans.annotations) == 0 && len(pc.ans.extras) == 0
}

// Text returns the content assembled so far.
func (sr *streamReader) Text() string { return sr.p.asm.pc.text.String() }

// Plain reports whether the answer so far is plain text (see
// assembler.plain); once false it stays false.
func (sr *streamReader) Plain() bool { return sr.plain }

// BufferedBytes returns how many bytes of the stream are held.
func (sr *streamReader) BufferedBytes() int64 { return sr.dropped + int64(len(sr.buf)) }

// Head renders the role chunk that opens the client's stream and fixes the
// metadata every later chunk carries (the first values read so far).
func (sr *streamReader) Head() ([]byte, error) {
	switch {
	case sr.head != nil:
		return nil, errors.New("chat: stream head already rendered")
	case sr.plainLen == 0:
		return nil, errors.New("chat: no plain text to release")
	}
	m := sr.p.asm.meta
	sr.head = m.chunkHead()
	return appendChunk(nil, sr.head, []byte(roleDelta), ""), nil
}

// Delta renders Text()[from:from+len(text)], which must continue exactly
// what Head and earlier Deltas released, lie within the text read while
// the answer was plain, and end on a UTF-8 character boundary.
func (sr *streamReader) Delta(from int, text string) ([]byte, error) {
	full := sr.Text()
	end := from + len(text)
	switch {
	case sr.head == nil:
		return nil, errors.New("chat: Delta before Head")
	case from != sr.released:
		return nil, errors.New("chat: delta does not continue the released text")
	case end > sr.plainLen || full[from:end] != text:
		return nil, errors.New("chat: delta is not the plain text read")
	case end < len(full) && !utf8.RuneStart(full[end]):
		return nil, errors.New("chat: delta ends inside a UTF-8 sequence")
	case text == "":
		return nil, nil
	}
	replay := sr.p.asm.replayable && !sr.p.multiLine
	var out []byte
	pending := from // first byte of the range not yet rendered
	i := sort.Search(len(sr.segs), func(i int) bool { return sr.segs[i].end > from })
	for ; replay && i < len(sr.segs) && sr.segs[i].start < end; i++ {
		s := sr.segs[i]
		if s.start < from || s.end > end {
			continue // straddles a boundary: synthesized
		}
		data, split, ok := sr.replayable(s, full[s.start:s.end])
		if !ok {
			continue
		}
		if pending < s.start {
			out = appendChunk(out, sr.head, stringDelta("content", full[pending:s.start]), "")
		}
		out = append(out, "data: "...)
		out = appendReplayed(out, sr.head, data, split)
		out = append(out, "\n\n"...)
		pending = s.end
	}
	if pending < end {
		out = appendChunk(out, sr.head, stringDelta("content", full[pending:end]), "")
	}
	sr.released = end
	return out, nil
}

// replayable returns the data of seg's event and its split (see
// fastChunk.split) when that event may be written with its metadata
// replaced by the head: one choice with index 0 (the JS SDK throws on a
// choice without one) whose delta carries text exactly seg's text and
// nothing else but an assistant role, and no finish reason, usage or
// obfuscation. The fast path's scanner decides; a chunk it does not take
// is synthesized.
func (sr *streamReader) replayable(seg textSeg, text string) ([]byte, int, bool) {
	if seg.chunk < 0 {
		return nil, 0, false
	}
	e := sr.p.chunks[seg.chunk]
	b := sr.p.chunkData(e, sr.buf)
	fc := &sr.scan
	fc.reset()
	end, ok := fc.top(b, rawjson.SkipSpace(b, 0))
	if !ok || rawjson.SkipSpace(b, end) != len(b) || fc.obfuscation || fc.metaAfter || fc.usage != (rawjson.Span{}) || len(fc.choices) != 1 || len(fc.frags) != 0 {
		return nil, 0, false
	}
	c := fc.choices[0]
	none := rawjson.Span{}
	if c.index == none || string(b[c.index.Start:c.index.End]) != "0" || c.finish != none || c.refusal != none || c.reasoning != none || c.reasoningContent != none ||
		c.content == none || c.role != none && string(b[c.role.Start:c.role.End]) != `"assistant"` {
		return nil, 0, false
	}
	return b, fc.split, sr.holds(b, c.content, text)
}

// holds reports whether the token at s is a string holding text, through
// the assembler's unescape (its scratch is idle between events), compared
// without a copy.
func (sr *streamReader) holds(b []byte, s rawjson.Span, text string) bool {
	return b[s.Start] == '"' && string(sr.p.asm.unescape(b, s)) == text
}

// Stream returns the assembled stream once Next reported done.
func (sr *streamReader) Stream() (wire.Stream, error) {
	if !sr.done {
		return nil, errors.New("chat: stream not read to its end")
	}
	if sr.st == nil {
		sr.st = sr.stream()
	}
	return surfaceStream{sr.st, sr.includeUsage}, nil
}

// Tail renders the rest of the client's stream Head opened, after
// released: the verdicted answer (target, or st's projection when nil)
// synthesized without the text the client already has, then the finish
// chunk, the usage chunk when the request asked for it, and [DONE]. It
// refuses (*wire.WriteBackError) a target CheckWriteBack refuses or whose
// text does not begin with released.
func (sr *streamReader) Tail(st wire.Stream, target any, released string) ([]byte, error) {
	ss, ok := st.(surfaceStream)
	if !ok || ss.Stream == nil {
		return nil, errors.New("chat: Tail needs the chat stream this reader assembled")
	}
	if sr.head == nil {
		return nil, errors.New("chat: Tail before Head: a stream nothing was released of is Stream.Release's")
	}
	if len(released) != sr.released || sr.Text()[:sr.released] != released {
		return nil, errors.New("chat: released text differs from what Head and Delta rendered")
	}
	r := ss.resp
	if target == nil {
		target = r.proj
	}
	if err := r.CheckWriteBack(target); err != nil {
		return nil, err
	}
	t := target.(map[string]any)
	a, err := r.ans.withContent(t["content"])
	if err != nil {
		return nil, err
	}
	if released != "" && (a.text == nil || !strings.HasPrefix(*a.text, released)) {
		return nil, &wire.WriteBackError{Field: "$target.content", Msg: "does not begin with the text already released to the client"}
	}
	return r.appendAnswer(nil, sr.head, a, t, len(released), ss.includeUsage)
}

// chunkData returns the data of chunk event e while buf is the current
// buffer.
func (p *sseParser) chunkData(e streamEvent, buf []byte) []byte {
	if int(e.buf) < len(p.bufs) {
		buf = p.bufs[e.buf]
	}
	return buf[e.data.Start:e.data.End]
}
