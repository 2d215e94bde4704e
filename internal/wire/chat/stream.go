package chat

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// Stream is an upstream SSE chat-completion stream read to its end
// ("data: [DONE]") and assembled. Nothing of it has reached the client:
// the caller releases it with Replay (verdict allow) or Synthesize
// (verdict transform), or drops it (deny). A Stream is immutable and safe
// for concurrent use.
type Stream struct {
	rawLen   int           // the bytes through [DONE]
	bufs     [][]byte      // the buffers the stream was read into, in order
	events   []streamEvent // the chunk events, in order
	buffered int64
	resp     *Response
	// replayable: every chunk holds only projected and well-shaped
	// metadata members and the fragments assemble alike in every official
	// client, so an allowed stream replays the upstream chunks.
	replayable bool
}

// streamEvent is one chunk event: the span of its data (one data line;
// multi-line data is not replayable) in the buffer numbered buf, whether
// it is usage-only, and where its members after the metadata begin (see
// fastChunk.split), relative to the data. It holds no pointer: the
// events of a long stream cost the collector nothing to scan.
type streamEvent struct {
	data      rawjson.Span
	buf       int32
	split     int32
	usageOnly bool
}

// initialBuffer is the first read buffer. A full buffer is replaced by
// one with room for readChunk more bytes (or twice the unparsed ones, when
// an event outgrows that), up to the limit: a short stream does not cost
// a limit-sized allocation, and a long one costs about its length, its
// parsed bytes staying where the events read alias them.
const (
	initialBuffer = 16 << 10
	readChunk     = 16 << 10
)

// ReadStream reads a whole SSE stream into memory and assembles it.
//
// Its buffer never holds more than limit bytes: once limit bytes are buffered
// without the stream having ended, it reads at most one more byte to tell
// a stream that ends exactly at the limit from one that goes on, and
// returns ErrBufferLimit for the latter without reading further. It stops
// reading at the "data: [DONE]" event and does not wait for EOF. It
// applies no time limit: bound it through r (the upstream request's
// context or deadline).
//
// Framing follows the SSE specification: lines end in CRLF, LF or CR; a
// leading BOM is skipped; ":" lines are comments; data lines of one event
// are joined with "\n"; fields other than data and event are parsed and
// dropped. Every event that carries data is parsed as a chunk whatever its
// event type, because OpenAI clients parse them all: an event the gateway
// skipped would reach the client unmediated. Only chunk data is ever
// released: comments, id, event, retry and unknown field lines are not.
//
// Errors are *StreamError: ErrBufferLimit; ErrStreamCut (EOF or a read
// error before [DONE]); ErrUpstreamEvent (an "error" event or an error
// object in a chunk); ErrResponseInvalid (a chunk that is not JSON or not
// a chat-completion chunk, or a choice index other than 0).
func ReadStream(r io.Reader, limit int64, opts ResponseOptions) (*Stream, error) {
	return readStream(r, limit, opts, false)
}

// readStream is ReadStream; treeOnly turns the fast path off, so tests can
// hold the fast path to the tree path's decisions. It runs the
// incremental reader's loop to the end, unwatched: feed takes every
// complete event in the buffer at once.
func readStream(r io.Reader, limit int64, opts ResponseOptions, treeOnly bool) (*Stream, error) {
	sr := newStreamReader(r, limit, opts, false)
	sr.p.treeOnly = treeOnly
	for {
		done, err := sr.Next()
		if err != nil {
			return nil, err
		}
		if done {
			return sr.stream(), nil
		}
	}
}

// probeLimit reads past a buffer holding limit bytes: one more byte is
// ErrBufferLimit, a read error ErrStreamCut, and nil means EOF (the
// buffered bytes are the whole stream).
func probeLimit(r io.Reader, limit int64) error {
	var one [1]byte
	for {
		n, err := r.Read(one[:])
		if n > 0 {
			return &wire.StreamError{Kind: wire.ErrBufferLimit, Detail: "more than " + strconv.FormatInt(limit, 10) + " bytes"}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &wire.StreamError{Kind: wire.ErrStreamCut, Detail: "read failed", Err: err}
		}
	}
}

// sseParser consumes complete lines of the buffer incrementally. It keeps
// offsets, never slices, because the buffer may be reallocated between
// calls.
type sseParser struct {
	pos       int // first byte not yet consumed
	bomDone   bool
	dataLines []rawjson.Span
	eventType []byte
	events    int
	asm       *assembler
	chunks    []streamEvent
	multiLine bool
	doneEnd   int
	scratch   []byte
	// bufs are the full buffers the reader replaced (the chunks' spans
	// name them by number; the current one is numbered len(bufs)).
	bufs     [][]byte
	treeOnly bool // decode every chunk as a tree (tests)
	// step makes feed return after each dispatched chunk event, so a
	// streamReader can look at the answer between events.
	step bool
}

// feed consumes every complete line in buf[p.pos:] (in step mode, up to
// the end of the next chunk event). At eof a final line without
// terminator is consumed too. It reports whether [DONE] was dispatched.
func (p *sseParser) feed(buf []byte, eof bool) (bool, error) {
	if !p.bomDone {
		bom := []byte("\xEF\xBB\xBF")
		if len(buf) < len(bom) && bytes.HasPrefix(bom, buf) && !eof {
			return false, nil
		}
		if bytes.HasPrefix(buf, bom) {
			p.pos = len(bom)
		}
		p.bomDone = true
	}
	for p.pos < len(buf) {
		rest := buf[p.pos:]
		i := wire.LineEnd(rest)
		var line rawjson.Span
		var next int
		switch {
		case i < 0:
			if !eof {
				return false, nil
			}
			line, next = rawjson.Span{Start: p.pos, End: len(buf)}, len(buf)
		case rest[i] == '\r' && i+1 == len(rest) && !eof:
			return false, nil // CR may be the first half of CRLF
		default:
			line, next = rawjson.Span{Start: p.pos, End: p.pos + i}, p.pos+i+1
			if rest[i] == '\r' && i+1 < len(rest) && rest[i+1] == '\n' {
				next++
			}
		}
		p.pos = next
		events := p.events
		done, err := p.line(buf, line)
		if err != nil || done || p.step && p.events != events {
			return done, err
		}
	}
	if eof && p.pending(buf) {
		p.doneEnd = len(buf)
		return true, nil
	}
	return false, nil
}

// pending reports whether the undispatched event at EOF is [DONE]: a
// stream whose last "data: [DONE]" line lacks the blank line is complete
// in every sense that matters, so it is accepted.
func (p *sseParser) pending(buf []byte) bool {
	return len(p.dataLines) > 0 && isDone(p.data(buf))
}

func isDone(data []byte) bool { return string(bytes.TrimSpace(data)) == "[DONE]" }

// line processes one line (without terminator); p.pos is already past it.
func (p *sseParser) line(buf []byte, l rawjson.Span) (bool, error) {
	text := buf[l.Start:l.End]
	if len(text) == 0 {
		return p.dispatch(buf)
	}
	if text[0] == ':' {
		return false, nil
	}
	field, value := text, text[len(text):]
	if c := bytes.IndexByte(text, ':'); c >= 0 {
		field, value = text[:c], text[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		start := l.End - len(value)
		p.dataLines = append(p.dataLines, rawjson.Span{Start: start, End: l.End})
	case "event":
		p.eventType = append(p.eventType[:0], value...)
	}
	return false, nil
}

// data joins the current event's data lines with "\n".
func (p *sseParser) data(buf []byte) []byte {
	if len(p.dataLines) == 1 {
		d := p.dataLines[0]
		return buf[d.Start:d.End]
	}
	p.scratch = p.scratch[:0]
	for i, d := range p.dataLines {
		if i > 0 {
			p.scratch = append(p.scratch, '\n')
		}
		p.scratch = append(p.scratch, buf[d.Start:d.End]...)
	}
	return p.scratch
}

// dispatch handles the end of an event (a blank line).
func (p *sseParser) dispatch(buf []byte) (bool, error) {
	if len(p.dataLines) == 0 {
		p.eventType = p.eventType[:0]
		return false, nil // comments and keep-alives join the next segment
	}
	data := p.data(buf)
	lines := p.dataLines
	isError := string(p.eventType) == "error"
	p.dataLines, p.eventType = p.dataLines[:0], p.eventType[:0]
	if !isError && isDone(data) {
		p.doneEnd = p.pos
		return true, nil
	}
	p.events++
	if isError {
		return false, &wire.StreamError{Kind: wire.ErrUpstreamEvent, Event: p.events}
	}
	if !p.treeOnly {
		if ok, usageOnly := p.asm.addFast(data); ok {
			p.record(lines, usageOnly, p.asm.fast.replaySplit())
			return false, nil
		}
	}
	v, err := jsonvalue.DecodeStrict(data)
	if err != nil {
		return false, &wire.StreamError{Kind: wire.ErrResponseInvalid, Event: p.events, Err: &wire.ResponseError{Msg: "chunk " + rawjson.DecodeProblem(err)}}
	}
	chunk, ok := v.(map[string]any)
	if !ok {
		return false, &wire.StreamError{Kind: wire.ErrResponseInvalid, Event: p.events, Err: &wire.ResponseError{Msg: "chunk must be an object, got " + rawjson.TypeName(v)}}
	}
	if e, ok := chunk["error"]; ok && e != nil {
		return false, &wire.StreamError{Kind: wire.ErrUpstreamEvent, Event: p.events}
	}
	usageOnly, err := p.asm.add(data, chunk)
	if err != nil {
		return false, &wire.StreamError{Kind: wire.ErrResponseInvalid, Event: p.events, Err: err}
	}
	p.record(lines, usageOnly, treeSplit(data))
	return false, nil
}

// record keeps the span of a folded chunk event in the current buffer
// for replay; a split below zero (metadata after other members) makes the
// stream re-synthesized.
func (p *sseParser) record(lines []rawjson.Span, usageOnly bool, split int) {
	if split < 0 {
		p.asm.replayable = false
	}
	if len(lines) == 1 {
		p.chunks = append(p.chunks, streamEvent{data: lines[0], buf: int32(len(p.bufs)), split: int32(split), usageOnly: usageOnly})
	} else {
		p.multiLine = true
	}
}

// treeSplit is fastChunk.split for a chunk the tree path read (a valid
// object without duplicate members), or -1 when metadata follows another
// member.
func treeSplit(data []byte) int {
	root := rawjson.RootSpan(data)
	ms, err := rawjson.ScanObjectInterned(data, root, responseKeys)
	if err != nil {
		return -1
	}
	split := -1
	for _, m := range ms {
		switch {
		case !topMeta.Has(m.Key):
			if split < 0 {
				split = m.KeyAt
			}
		case split >= 0:
			return -1
		}
	}
	if split < 0 {
		split = root.End - 1
	}
	return split
}

// stream finalizes a stream whose [DONE] event ended at p.doneEnd of
// buf, after dropped bytes of the buffers it replaced.
func (p *sseParser) stream(buf []byte, dropped int64) *Stream {
	resp := p.asm.response()
	return &Stream{
		rawLen:     int(dropped) + p.doneEnd,
		bufs:       append(p.bufs, buf),
		events:     p.chunks,
		buffered:   dropped + int64(len(buf)),
		resp:       resp,
		replayable: p.asm.replayable && !p.multiLine,
	}
}

// Response returns the assembled response: the same Project, Usage and
// CheckWriteBack API as a parsed JSON response. Its WriteBack is not
// available; a stream is released with Release.
func (s *Stream) Response() *Response { return s.resp }

// BufferedBytes returns how many bytes of the upstream stream were held in
// memory.
func (s *Stream) BufferedBytes() int64 { return s.buffered }

// Replayable reports whether an allowed stream is released as the
// upstream's own chunks (Release with the unchanged projection), rather
// than re-synthesized.
func (s *Stream) Replayable() bool { return s.replayable }

// Release returns the SSE bytes for the client. A target equal to the
// projection of a replayable stream replays the upstream chunks, each as
// one "data:" event and nothing else (comments, id, event and retry lines
// are not released), its metadata replaced by the gateway's head (the
// minted id, the request's model, the checked created and service_tier):
// a byte-offset edit of each chunk, through "data: [DONE]"; usage-only
// chunks are left out unless includeUsage. Any other target, or a stream
// that is not replayable, is re-synthesized from the verdicted target
// (Synthesize).
func (s *Stream) Release(target any, includeUsage bool) ([]byte, error) {
	if target == nil {
		target = s.resp.proj
	}
	if !s.replayable || !jsonvalue.Equal(target, s.resp.proj) {
		return s.Synthesize(target, includeUsage)
	}
	head := s.resp.chunkHead()
	n := len("data: [DONE]\n\n")
	for _, e := range s.events {
		n += len("data: ,\n\n") + len(head) + e.data.End - e.data.Start - int(e.split)
	}
	out := make([]byte, 0, n)
	for _, e := range s.events {
		if e.usageOnly && !includeUsage {
			continue
		}
		out = append(out, "data: "...)
		out = appendReplayed(out, head, s.data(e), int(e.split))
		out = append(out, "\n\n"...)
	}
	return append(out, "data: [DONE]\n\n"...), nil
}

// data returns the data of chunk event e.
func (s *Stream) data(e streamEvent) []byte { return s.bufs[e.buf][e.data.Start:e.data.End] }

// appendReplayed appends the chunk data with everything before split (its
// metadata) replaced by head.
func appendReplayed(out, head, data []byte, split int) []byte {
	out = slices.Grow(out, len(head)+1+len(data)-split+len("\n\n")) // one growth, however out began
	out = append(out, head...)
	if data[split] != '}' {
		out = append(out, ',')
	}
	return append(out, data[split:]...)
}
