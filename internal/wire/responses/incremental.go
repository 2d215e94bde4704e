package responses

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

var _ wire.Incremental = (*Surface)(nil)

// OpenStream starts reading the upstream stream answering req an event
// at a time (wire.Incremental). A request the surface did not parse
// yields a reader whose Next fails with ErrResponseInvalid.
func (s *Surface) OpenStream(req wire.Request, r io.Reader, limit int64) wire.StreamReader {
	rd := &streamReader{}
	rq, ok := req.(*Request)
	if !ok {
		rd.err = &wire.StreamError{Kind: wire.ErrResponseInvalid, Detail: "request was not parsed by the responses surface"}
		return rd
	}
	rd.init(s, rq, r, limit, true)
	return rd
}

// streamReader reads one upstream stream through the package's only
// parser and assembler (ReadStream runs the same loop to its end).
type streamReader struct {
	a     assembler
	r     io.Reader
	limit int64
	// buf holds the bytes read and not yet parsed from pos on: the
	// assembler copies what it keeps of an event, so the parsed bytes
	// before pos are dropped (dropped counts them) when buf is full,
	// rather than growing it: the buffer is as long as the longest event,
	// not the stream.
	buf     []byte
	pos     int
	dropped int64
	// eof and readErr are the last read's outcome, acted on once the
	// bytes already read hold no further event.
	eof     bool
	readErr error
	st      *Stream
	err     error // sticky: Next after an error repeats it
	render  incRender
}

// init prepares rd; watch enables the plain-text tracking OpenStream's
// caller reads.
func (rd *streamReader) init(s *Surface, req *Request, r io.Reader, limit int64, watch bool) {
	rd.a = assembler{surface: s, req: req, lastSeq: -1, ids: newAnswerIDs(s)}
	rd.r, rd.limit = r, limit
	rd.buf = make([]byte, 0, int(min(max(limit, 0), initialBuffer)))
	rd.a.watch, rd.a.plain.plain = watch, watch
}

const initialBuffer = 8 << 10

// Next reads until one more event has been dispatched, reading no more
// bytes than that event needs beyond those already read.
func (rd *streamReader) Next() (bool, error) {
	if rd.err != nil {
		return false, rd.err
	}
	if rd.st != nil {
		return true, nil
	}
	for {
		if rd.pos == 0 && rd.dropped == 0 && bytes.HasPrefix(rd.buf, []byte("\xEF\xBB\xBF")) {
			rd.pos = 3 // a byte order mark starts the stream
		}
		events := rd.a.events
		done, err := rd.a.feed(rd.buf, &rd.pos, rd.eof)
		switch {
		case err != nil:
			return false, rd.fail(err)
		case done:
			st, err := rd.a.finish()
			if err != nil {
				return false, rd.fail(err)
			}
			st.buffered = rd.BufferedBytes()
			rd.st = st
			rd.a.plain.finish(st.resp)
			return true, nil
		case rd.a.events > events:
			return false, nil
		case rd.eof:
			return false, rd.fail(&wire.StreamError{Kind: wire.ErrStreamCut, Detail: "no terminal event"})
		case rd.readErr != nil:
			return false, rd.fail(&wire.StreamError{Kind: wire.ErrStreamCut, Detail: "read failed", Err: rd.readErr})
		}
		if err := rd.read(); err != nil {
			return false, rd.fail(err)
		}
	}
}

// read appends what one Read returns to the buffer, making room in it
// (dropping the parsed bytes, else growing it) while fewer than limit
// bytes were read; past limit one more byte means ErrBufferLimit, and EOF
// ends the stream as at any other length.
func (rd *streamReader) read() error {
	read := rd.BufferedBytes()
	if read >= rd.limit {
		var one [1]byte
		n, err := io.ReadFull(rd.r, one[:])
		switch {
		case n > 0:
			return &wire.StreamError{Kind: wire.ErrBufferLimit, Detail: "more than " + strconv.FormatInt(rd.limit, 10) + " bytes"}
		case errors.Is(err, io.EOF):
			rd.eof = true // the buffered bytes are the whole stream: its last event may await EOF
		default:
			rd.readErr = err
		}
		return nil
	}
	if len(rd.buf) == cap(rd.buf) {
		rd.makeRoom(rd.limit - read)
	}
	buf := rd.buf
	room := buf[len(buf):cap(buf)]
	if left := rd.limit - read; int64(len(room)) > left {
		room = room[:left]
	}
	n, err := rd.r.Read(room)
	rd.buf = buf[:len(buf)+n]
	switch {
	case errors.Is(err, io.EOF):
		rd.eof = true
	case err != nil:
		rd.readErr = err
	}
	return nil
}

// makeRoom makes room in the full buffer for more bytes, left of which
// may still be read: it drops the parsed bytes when there are any, and
// doubles the buffer (up to what it may yet have to hold) when the
// unparsed ones fill it.
func (rd *streamReader) makeRoom(left int64) {
	buf := rd.buf
	if rd.pos > 0 {
		n := copy(buf, buf[rd.pos:])
		rd.dropped += int64(rd.pos)
		rd.buf, rd.pos = buf[:n], 0
		return
	}
	nb := make([]byte, len(buf), len(buf)+int(min(int64(max(cap(buf), 1)), left)))
	copy(nb, buf)
	rd.buf = nb
}

func (rd *streamReader) fail(err error) error {
	rd.err = err
	rd.a.plain.plain = false
	return err
}

// Text is the text of the one message's output_text part so far.
func (rd *streamReader) Text() string { return rd.a.plain.text.String() }

// Plain reports whether the answer so far is that one part only.
func (rd *streamReader) Plain() bool { return rd.a.plain.plain }

// Stream returns the assembled stream once Next reported done.
func (rd *streamReader) Stream() (wire.Stream, error) {
	if rd.st == nil {
		if rd.err != nil {
			return nil, rd.err
		}
		return nil, &wire.StreamError{Kind: wire.ErrStreamCut, Detail: "the stream has not ended"}
	}
	return rd.st, nil
}

// BufferedBytes is how many bytes of the stream were read so far.
func (rd *streamReader) BufferedBytes() int64 { return rd.dropped + int64(len(rd.buf)) }
