package enforcement

import (
	"encoding/json"
	"strconv"
	"time"
)

// stamp is a formatted context timestamp: the string, and the same string
// already boxed as the context member holds it.
type stamp struct {
	ms    int64 // Unix milliseconds
	s     string
	boxed any
}

// timestamp returns t formatted as TimestampFormat. A builder's contexts
// come in bursts (a request's six emissions take well under a
// millisecond), so the last stamp is kept and reused within its
// millisecond: the format, the string and its boxing are paid once.
func (b *Builder) timestamp(t time.Time) *stamp {
	ms := t.UnixMilli()
	if last := b.lastStamp.Load(); last != nil && last.ms == ms {
		return last
	}
	var buf [len(TimestampFormat) + 8]byte
	s := string(t.UTC().AppendFormat(buf[:0], TimestampFormat))
	st := &stamp{ms: ms, s: s, boxed: s}
	b.lastStamp.Store(st)
	return st
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
