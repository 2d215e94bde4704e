package enforcement

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stamps formats context timestamps (TimestampFormat) and keeps the
// current millisecond's: contexts come in bursts (a request's six
// emissions take well under a millisecond), so builders that share one,
// such as a gateway's per-request builders, pay for a timestamp once per
// millisecond instead of once per builder. It is safe for concurrent use;
// the zero value is ready. A new millisecond costs one allocation, the
// boxing of its string: the strings themselves are cut from a batch.
type Stamps struct {
	mu    sync.Mutex
	ms    int64 // Unix milliseconds of s; valid when boxed != nil
	s     string
	boxed any // s, boxed once as the context member holds it
	// batch holds the text of the last stamps; new ones are appended, so
	// the strings cut from it stay valid (a strings.Builder never
	// rewrites what it holds). A full batch is dropped for a new one.
	batch strings.Builder
}

// stampsPerBatch is how many stamps' text one allocation holds.
const stampsPerBatch = 64

// stamp returns t formatted as TimestampFormat, as a string and boxed.
func (c *Stamps) stamp(t time.Time) (string, any) {
	ms := t.UnixMilli()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.boxed != nil && c.ms == ms {
		return c.s, c.boxed
	}
	var buf [len(TimestampFormat) + 8]byte
	text := t.UTC().AppendFormat(buf[:0], TimestampFormat)
	if c.batch.Cap()-c.batch.Len() < len(text) {
		c.batch = strings.Builder{}
		c.batch.Grow(stampsPerBatch * len(TimestampFormat))
	}
	from := c.batch.Len()
	c.batch.Write(text)
	c.ms, c.s = ms, c.batch.String()[from:]
	c.boxed = c.s
	return c.s, c.boxed
}

// timestamp returns t formatted for b's contexts, from the shared Stamps
// when b has one.
func (b *Builder) timestamp(t time.Time) (string, any) {
	if b.Stamps != nil {
		return b.Stamps.stamp(t)
	}
	return b.stamps.stamp(t)
}

// smallSequences holds the boxed sequence members 0..63 (a session's
// contexts mostly number fewer): read-only after initialization.
var smallSequences = func() (t [64]any) {
	for i := range t {
		t[i] = json.Number(strconv.Itoa(i))
	}
	return t
}()

// sequenceValue is the sequence member for seq.
func sequenceValue(seq int64) any {
	if seq >= 0 && seq < int64(len(smallSequences)) {
		return smallSequences[seq]
	}
	return json.Number(strconv.FormatInt(seq, 10))
}

// pointValue is the interception_point member for a valid p, boxed
// without an allocation (the constants are static).
func pointValue(p Point) any {
	switch p {
	case AgentStartup:
		return string(AgentStartup)
	case Input:
		return string(Input)
	case PreModelCall:
		return string(PreModelCall)
	case PostModelCall:
		return string(PostModelCall)
	case PreToolCall:
		return string(PreToolCall)
	case PostToolCall:
		return string(PostToolCall)
	case Output:
		return string(Output)
	case AgentShutdown:
		return string(AgentShutdown)
	}
	return string(p)
}
