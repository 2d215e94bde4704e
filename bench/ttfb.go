package main

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// dataField opens an SSE line that carries event data.
const dataField = "data:"

// firstDataReader passes a response body through unchanged and calls
// onFirst once, with the time of the Read that delivered the end of the
// first "data:" field name at the start of a line: the moment the client
// holds the first byte of an event carrying data. Everything before it
// (headers, ": keep-alive" comments, "event:" lines) does not count, so a
// gateway that commits its headers early is not credited with a first
// byte it has not sent.
type firstDataReader struct {
	r       io.ReadCloser
	onFirst func(at time.Time)
	// onEnd, when set, is called once at EOF with whether the stream's
	// last bytes hold a surface's terminal event (terminalEvents).
	onEnd func(complete bool)
	tail  []byte
	// matched is how much of dataField the current line has matched from
	// its start; -1 inside a line that is not a data line.
	matched int
	done    bool
}

func newFirstDataReader(r io.ReadCloser, onFirst func(time.Time)) *firstDataReader {
	return &firstDataReader{r: r, onFirst: onFirst}
}

// Read implements io.Reader.
func (f *firstDataReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if !f.done && n > 0 && f.scan(p[:n]) {
		f.done = true
		f.onFirst(time.Now())
	}
	if f.onEnd != nil {
		f.tail = append(f.tail, p[:n]...)
		if len(f.tail) > 2*tailBytes {
			f.tail = append(f.tail[:0], f.tail[len(f.tail)-tailBytes:]...)
		}
		if err == io.EOF {
			f.onEnd(terminated(f.tail))
			f.onEnd = nil
		}
	}
	return n, err
}

// tailBytes is how much of a stream's end is kept to find its terminal
// event: more than a final Responses event carrying the whole answer.
const tailBytes = 32 << 10

// terminalEvents mark a stream that ended properly, one per surface.
var terminalEvents = []string{"data: [DONE]", "event: response.completed", "event: message_stop"}

// terminated reports whether tail holds a terminal event.
func terminated(tail []byte) bool {
	for _, t := range terminalEvents {
		if bytes.Contains(tail, []byte(t)) {
			return true
		}
	}
	return false
}

// scan advances the line state over b and reports whether a data line
// started. SSE ends lines with \n, \r or \r\n; each is a line start here
// (an empty line between, as \r\n yields, is no data line and harmless).
func (f *firstDataReader) scan(b []byte) bool {
	for _, c := range b {
		switch {
		case c == '\n' || c == '\r':
			f.matched = 0
		case f.matched < 0:
		case c == dataField[f.matched]:
			f.matched++
			if f.matched == len(dataField) {
				return true
			}
		default:
			f.matched = -1
		}
	}
	return false
}

// Close implements io.Closer.
func (f *firstDataReader) Close() error { return f.r.Close() }

// ttfbRecorder holds what the transport saw of one attack's streams, by
// vegeta's sequence number, until the attack's results take it.
type ttfbRecorder struct {
	mu    sync.Mutex
	marks map[uint64]streamMark
}

// streamMark is what the transport saw of one request's stream.
type streamMark struct {
	first time.Time // its first data byte; zero: none arrived
	// cut says the stream ended without its terminal event (a deny, a
	// cut): not a completed answer.
	cut bool
}

func newTTFBRecorder() *ttfbRecorder {
	return &ttfbRecorder{marks: map[uint64]streamMark{}}
}

func (r *ttfbRecorder) set(seq uint64, at time.Time) {
	r.mu.Lock()
	m := r.marks[seq]
	m.first = at
	r.marks[seq] = m
	r.mu.Unlock()
}

func (r *ttfbRecorder) end(seq uint64, complete bool) {
	if complete {
		return
	}
	r.mu.Lock()
	m := r.marks[seq]
	m.cut = true
	r.marks[seq] = m
	r.mu.Unlock()
}

// take returns and forgets request seq's mark; every result takes its
// own, failed or not, so nothing outlives the attack's results.
func (r *ttfbRecorder) take(seq uint64) streamMark {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.marks[seq]
	delete(r.marks, seq)
	return m
}

// vegetaSeqHeader is the request header in which vegeta's Attacker sends
// each request's sequence number, the key its Result carries too.
const vegetaSeqHeader = "X-Vegeta-Seq"

// ttfbTransport wraps every answer's body in a firstDataReader that
// records the first data byte under the request's vegeta sequence
// number. It only observes reads: vegeta still sends on schedule and
// reads every body to the end.
type ttfbTransport struct {
	base http.RoundTripper
	rec  *ttfbRecorder
}

// RoundTrip implements http.RoundTripper.
func (t *ttfbTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	seq, perr := strconv.ParseUint(req.Header.Get(vegetaSeqHeader), 10, 64)
	if perr != nil {
		return resp, nil // not a vegeta request: nothing to key it by
	}
	fr := newFirstDataReader(resp.Body, func(at time.Time) { t.rec.set(seq, at) })
	fr.onEnd = func(complete bool) { t.rec.end(seq, complete) }
	resp.Body = fr
	return resp, nil
}
