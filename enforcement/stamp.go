package enforcement

import (
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"
)

// Stamps formats context timestamps (TimestampFormat) and keeps the
// last millisecond's: contexts come in bursts (a request's six emissions
// take well under a millisecond), so builders that share one, such as a
// gateway's per-request builders, format a timestamp once per millisecond
// instead of once per builder. Reading it is one atomic load; it is safe
// for concurrent use, and the zero value is ready.
type Stamps struct {
	last atomic.Pointer[stamp]
}

// stamp is one millisecond's timestamp, as a string and boxed once as the
// context member holds it.
type stamp struct {
	ms    int64 // Unix milliseconds
	s     string
	boxed any
}

// stamp returns t formatted as TimestampFormat, as a string and boxed.
func (c *Stamps) stamp(t time.Time) (string, any) {
	ms := t.UnixMilli()
	if st := c.last.Load(); st != nil && st.ms == ms {
		return st.s, st.boxed
	}
	s := t.UTC().Format(TimestampFormat)
	st := &stamp{ms: ms, s: s, boxed: s}
	c.last.Store(st)
	return st.s, st.boxed
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
