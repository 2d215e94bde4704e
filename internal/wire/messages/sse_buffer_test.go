package messages

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/wiretest"
)

// readEvents reads every event of e, copying each event's data as it is
// dispatched; it returns the events, the copies and the error that ended
// them.
func readEvents(e *eventReader) ([]sseEvent, [][]byte, error) {
	var evs []sseEvent
	var copies [][]byte
	for {
		ev, err := e.next()
		if err != nil {
			return evs, copies, err
		}
		evs = append(evs, ev)
		copies = append(copies, bytes.Clone(ev.data))
	}
}

// TestEventReaderReplacesFullBuffer: a reader that replaces its full
// buffer (streams longer than it, read in any chunks) frames, refuses at
// its limit and counts bytes exactly as one whose buffer holds the whole
// stream, and the data of the events it read stays as read.
func TestEventReaderReplacesFullBuffer(t *testing.T) {
	var long strings.Builder
	for long.Len() < 5*readChunk {
		long.Write(stream200())
	}
	base := long.String()
	streams := []string{
		base,
		"\xEF\xBB\xBF" + base,
		strings.ReplaceAll(base, "\n", "\r\n"),
		strings.ReplaceAll(base, "\n", "\r"),
		strings.Replace(base, "tok7 ", strings.Repeat("x", 3*readChunk), 1),
		strings.Replace(base, "data: {\"type\":\"content_block_delta\"", "data: {\"type\":\ndata: \"content_block_delta\"", 50),
		strings.ReplaceAll(base, "}\n\n", "}\n: keep-alive\n\n"), // a comment before each blank line
		base[:len(base)-len(base)/3],
	}
	for i, data := range streams {
		limits := []int64{1 << 24, int64(len(data)), int64(len(data)) - 1, int64(len(data)) / 2, readChunk + 100, 0}
		for name, open := range wiretest.Readers() {
			for _, limit := range limits {
				where := fmt.Sprintf("stream %d, %s reads, limit %d", i, name, limit)
				got := newEventReader(open(data), limit)
				want := newEventReader(open(data), limit)
				want.buf = make([]byte, 0, len(data)+2) // never full: never replaced
				gevs, gcopies, gerr := readEvents(got)
				wevs, _, werr := readEvents(want)
				if fmt.Sprint(gerr) != fmt.Sprint(werr) || got.buffered() != want.buffered() && name == "one byte" {
					t.Fatalf("%s: %v after %d bytes, want %v after %d", where, gerr, got.buffered(), werr, want.buffered())
				}
				// How many events come before the limit is refused depends
				// on the reads' sizes, which the buffers' differ in.
				if len(gevs) != len(wevs) && !errors.Is(gerr, wire.ErrBufferLimit) {
					t.Fatalf("%s: %d events, want %d", where, len(gevs), len(wevs))
				}
				bufs := got.buffers()
				for j := range min(len(gevs), len(wevs)) {
					g, w := gevs[j], wevs[j]
					if g.name != w.name || !bytes.Equal(g.data, w.data) || g.multiLine != w.multiLine || !bytes.Equal(g.data, gcopies[j]) {
						t.Fatalf("%s, event %d: %q %q %v, want %q %q %v", where, j, g.name, g.data, g.multiLine, w.name, w.data, w.multiLine)
					}
					// Where the event says its data lies, it does.
					if (g.at.buf == 0) != (g.multiLine || g.data == nil) || g.at.buf > 0 && !bytes.Equal(bufs[g.at.buf-1][g.at.start:g.at.end], gcopies[j]) {
						t.Fatalf("%s, event %d: placed at %+v, not where its data lies", where, j, g.at)
					}
				}
				if cap(got.buf) > 2*readChunk && i != 4 {
					t.Errorf("%s: the buffer grew to %d bytes", where, cap(got.buf))
				}
			}
		}
	}
}

// TestRecNames: every event the assembler may keep has a name index.
func TestRecNames(t *testing.T) {
	if len(recNames) != len(eventMembers) {
		t.Fatalf("%d record names for %d events", len(recNames), len(eventMembers))
	}
	for name := range eventMembers {
		if recNames[recName(name)] != name {
			t.Errorf("%s: no record name", name)
		}
	}
}

// TestReplayAfterBufferReplaced: a stream read into several buffers
// replays each block event from the buffer it was read into.
func TestReplayAfterBufferReplaced(t *testing.T) {
	var b strings.Builder
	ev := func(name, data string) { b.WriteString("event: " + name + "\ndata: " + data + "\n\n") }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_B","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i := 0; b.Len() < 5*readChunk; i++ {
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"token `+strconv.Itoa(i)+` "}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":200}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	data := b.String()
	blocks := func(s string) string {
		return s[strings.Index(s, "event: content_block_start"):strings.Index(s, "event: message_delta")]
	}
	for name, open := range wiretest.Readers() {
		st, err := New(Options{}).ReadStream(nil, open(data), 1<<24)
		if err != nil {
			t.Fatal(err)
		}
		out, err := st.Release(nil)
		if err != nil || blocks(string(out)) != blocks(data) {
			t.Fatalf("%s reads: the replayed block events differ from the upstream's (%v)", name, err)
		}
	}
}
