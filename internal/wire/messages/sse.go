package messages

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	name      string
	data      []byte
	multiLine bool // data came on several lines: not replayed verbatim
	// at is where a one-line event's data lies in the reader's buffers
	// (its zero value: nowhere, the data is a copy).
	at dataAt
}

// dataAt places data in the buffers of an eventReader: buf is the
// buffer's number plus one (zero: none), start and end its span there.
type dataAt struct {
	buf, start, end int32
}

// sseReader frames a byte stream into events: lines end in CRLF, LF or
// CR; a leading BOM is skipped; ":" lines are comments; fields other than
// event and data are dropped; a blank line dispatches.
//
// A one-line event's data aliases the line it came on: eventReader never
// writes over bytes it has read (a full buffer is replaced, not reused),
// so the bytes stay as read. An event pending when the buffer is replaced
// moves with its unparsed bytes (replace), so that a dispatched event's
// data always lies in the reader's current buffer.
type sseReader struct {
	name  []byte
	one   []byte // the first data line
	data  []byte // the joined data lines, from the second on
	lines int
	bom   bool
}

// eventNames interns the known event names: a dispatched event's name
// costs no allocation.
var eventNames = func() map[string]string {
	m := make(map[string]string, len(eventMembers))
	for k := range eventMembers {
		m[k] = k
	}
	return m
}()

func eventName(b []byte) string {
	if n, ok := eventNames[string(b)]; ok {
		return n
	}
	return string(b)
}

// line consumes one line; it returns an event when the line dispatched one.
func (p *sseReader) line(l []byte) (sseEvent, bool) {
	if len(l) == 0 {
		if p.lines == 0 {
			p.name = p.name[:0]
			return sseEvent{}, false
		}
		ev := sseEvent{name: eventName(p.name), data: p.one, multiLine: p.lines > 1}
		if ev.multiLine {
			ev.data = append([]byte(nil), p.data...)
		}
		p.name, p.one, p.data, p.lines = p.name[:0], nil, p.data[:0], 0
		return ev, true
	}
	if l[0] == ':' {
		return sseEvent{}, false
	}
	field, value, _ := bytes.Cut(l, []byte{':'})
	value = bytes.TrimPrefix(value, []byte{' '})
	switch string(field) {
	case "event":
		p.name = append(p.name[:0], value...)
	case "data":
		switch p.lines {
		case 0:
			p.one = value
		case 1:
			p.data = append(p.data[:0], p.one...)
			fallthrough
		default:
			p.data = append(p.data, '\n')
			p.data = append(p.data, value...)
		}
		p.lines++
	}
	return sseEvent{}, false
}

// eventReader frames an upstream stream into events on demand: next
// reads only as many bytes as the next event needs.
type eventReader struct {
	r     io.Reader
	limit int64
	p     sseReader
	// buf holds the bytes read since the buffer was last replaced; pos is
	// the first not parsed. The events read alias the bytes before pos
	// (in this buffer or the ones it replaced): a full buffer's parsed
	// bytes stay where they are, dropped counts them.
	buf     []byte
	pos     int
	dropped int64
	eof     bool
	// bufs are the buffers buf replaced, in order (dataAt numbers them).
	bufs [][]byte
}

func newEventReader(r io.Reader, limit int64) *eventReader {
	return &eventReader{
		r:     r,
		limit: limit,
		buf:   make([]byte, 0, min(max(limit, 0), 32<<10)),
	}
}

// buffered is how many bytes of the stream were read.
func (e *eventReader) buffered() int64 { return e.dropped + int64(len(e.buf)) }

// next reads until one event is dispatched, at most limit bytes in all.
// At the end of the stream it dispatches the pending event, then reports
// ErrStreamCut.
func (e *eventReader) next() (sseEvent, error) {
	for {
		for {
			i := wire.LineEnd(e.buf[e.pos:])
			if i < 0 || (e.buf[e.pos+i] == '\r' && e.pos+i+1 == len(e.buf) && !e.eof) {
				break
			}
			end := e.pos + i
			next := end + 1
			if e.buf[end] == '\r' && next < len(e.buf) && e.buf[next] == '\n' {
				next++
			}
			l := e.buf[e.pos:end]
			if !e.p.bom {
				l, e.p.bom = bytes.TrimPrefix(l, []byte("\xEF\xBB\xBF")), true
			}
			e.pos = next
			if ev, ok := e.p.line(l); ok {
				return e.placed(ev), nil
			}
		}
		if e.eof {
			// A final line without terminator, then the pending event.
			if e.pos < len(e.buf) {
				e.p.line(e.buf[e.pos:])
				e.pos = len(e.buf)
			}
			if ev, ok := e.p.line(nil); ok {
				return e.placed(ev), nil
			}
			return sseEvent{}, &wire.StreamError{Kind: wire.ErrStreamCut, Detail: "no message_stop"}
		}
		if len(e.buf) == cap(e.buf) {
			e.replace()
		}
		n, err := e.r.Read(e.buf[len(e.buf):cap(e.buf)])
		if e.buffered()+int64(n) > e.limit {
			return sseEvent{}, &wire.StreamError{Kind: wire.ErrBufferLimit, Detail: "more than " + strconv.FormatInt(e.limit, 10) + " bytes"}
		}
		e.buf = e.buf[:len(e.buf)+n]
		switch {
		case errors.Is(err, io.EOF):
			e.eof = true
		case err != nil:
			return sseEvent{}, &wire.StreamError{Kind: wire.ErrStreamCut, Detail: "read failed", Err: err}
		}
	}
}

// readChunk is the room a new buffer has for bytes not read yet, at least.
const readChunk = 32 << 10

// replace replaces the full buffer by one holding its unparsed bytes with
// room for more: readChunk bytes, or as many as the unparsed ones when an
// event outgrows that (doubling), and never more than one byte past the
// limit, which is refused. The parsed bytes stay in the old buffer, which
// the events read alias: a stream costs about its length, not twice it
// and the copies of every doubling.
//
// A pending event's one data line moves along, so that its data lies in
// the new buffer when it is dispatched. A subslice of the buffer ends
// where the buffer does, so the line's offset is told by the capacities.
func (e *eventReader) replace() {
	keep, one := e.pos, -1
	if e.p.lines == 1 {
		one = cap(e.buf) - cap(e.p.one)
		keep = min(keep, one)
	}
	tail := e.buf[keep:]
	room := min(int64(max(readChunk, len(tail)-(e.pos-keep))), e.limit+1-e.buffered())
	nb := make([]byte, len(tail), int64(len(tail))+max(room, 1))
	copy(nb, tail)
	if one >= 0 {
		e.p.one = nb[one-keep : one-keep+len(e.p.one)]
	}
	e.dropped += int64(keep)
	e.bufs = append(e.bufs, e.buf)
	e.buf, e.pos = nb, e.pos-keep
}

// placed returns ev with where its data lies, when it is a one-line
// event's (see replace).
func (e *eventReader) placed(ev sseEvent) sseEvent {
	start := cap(e.buf) - cap(ev.data)
	if !ev.multiLine && ev.data != nil && start+len(ev.data) <= math.MaxInt32 {
		ev.at = dataAt{buf: int32(len(e.bufs)) + 1, start: int32(start), end: int32(start + len(ev.data))}
	}
	return ev
}

// buffers returns every buffer the stream was read into, in the order
// dataAt numbers them.
func (e *eventReader) buffers() [][]byte { return append(e.bufs[:len(e.bufs):len(e.bufs)], e.buf) }
