package messages

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	name      string
	data      []byte
	multiLine bool // data came on several lines: not replayed verbatim
}

// sseReader frames a byte stream into events: lines end in CRLF, LF or
// CR; a leading BOM is skipped; ":" lines are comments; fields other than
// event and data are dropped; a blank line dispatches.
type sseReader struct {
	name  []byte
	data  []byte
	lines int
	bom   bool
}

// line consumes one line; it returns an event when the line dispatched one.
func (p *sseReader) line(l []byte) (sseEvent, bool) {
	if len(l) == 0 {
		if p.lines == 0 {
			p.name = p.name[:0]
			return sseEvent{}, false
		}
		ev := sseEvent{name: string(p.name), data: append([]byte(nil), p.data...), multiLine: p.lines > 1}
		p.name, p.data, p.lines = p.name[:0], p.data[:0], 0
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
		if p.lines > 0 {
			p.data = append(p.data, '\n')
		}
		p.data = append(p.data, value...)
		p.lines++
	}
	return sseEvent{}, false
}

// readEvents reads r to the end of the stream, at most limit bytes, and
// hands each event to handle, which reports when the stream is complete
// (message_stop). It returns the bytes buffered.
func readEvents(r io.Reader, limit int64, handle func(sseEvent) (bool, error)) (int64, error) {
	var p sseReader
	buf := make([]byte, 0, min(max(limit, 0), 32<<10))
	pos := 0
	chunk := make([]byte, 32<<10)
	eof := false
	for {
		for {
			i := bytes.IndexAny(buf[pos:], "\r\n")
			if i < 0 || (buf[pos+i] == '\r' && pos+i+1 == len(buf) && !eof) {
				break
			}
			end := pos + i
			next := end + 1
			if buf[end] == '\r' && next < len(buf) && buf[next] == '\n' {
				next++
			}
			l := buf[pos:end]
			if !p.bom {
				l, p.bom = bytes.TrimPrefix(l, []byte("\xEF\xBB\xBF")), true
			}
			pos = next
			if ev, ok := p.line(l); ok {
				done, err := handle(ev)
				if err != nil || done {
					return int64(len(buf)), err
				}
			}
		}
		if eof {
			// A final line without terminator, then the pending event.
			if pos < len(buf) {
				p.line(buf[pos:])
			}
			if ev, ok := p.line(nil); ok {
				done, err := handle(ev)
				if err != nil || done {
					return int64(len(buf)), err
				}
			}
			return int64(len(buf)), &wire.StreamError{Kind: wire.ErrStreamCut, Detail: "no message_stop"}
		}
		n, err := r.Read(chunk)
		if int64(len(buf)+n) > limit {
			return int64(len(buf)), &wire.StreamError{Kind: wire.ErrBufferLimit, Detail: "more than " + strconv.FormatInt(limit, 10) + " bytes"}
		}
		buf = append(buf, chunk[:n]...)
		switch {
		case errors.Is(err, io.EOF):
			eof = true
		case err != nil:
			return int64(len(buf)), &wire.StreamError{Kind: wire.ErrStreamCut, Detail: "read failed", Err: err}
		}
	}
}
