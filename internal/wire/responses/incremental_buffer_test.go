package responses

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire/wiretest"
)

// TestReaderDropsParsedBytes: a reader whose buffer drops the bytes it
// parsed (streams longer than the initial buffer, read in any chunks)
// reads, refuses at its limit and counts bytes exactly as one whose
// buffer holds the whole stream.
func TestReaderDropsParsedBytes(t *testing.T) {
	s := New(Options{})
	req := mustParse(t, s, plainRequest)
	long := string(benchStream(700))
	if len(long) < 4*initialBuffer {
		t.Fatalf("the stream (%d bytes) does not outgrow the buffer", len(long))
	}
	streams := []string{
		long,
		"\xEF\xBB\xBF" + long,
		strings.ReplaceAll(long, "\n", "\r\n"),
		strings.ReplaceAll(long, "\n", "\r"),
		strings.Replace(long, `"delta":"tok500 "`, `"delta":"`+strings.Repeat("x", 3*initialBuffer)+`"`, 1),
		long[:len(long)-len(long)/3], // cut
		// A line that starts with a byte order mark is no data line but at
		// the stream's start: some start the buffer once it dropped bytes.
		strings.ReplaceAll(long, "\ndata: ", "\n\xEF\xBB\xBFdata: x\ndata: "),
	}
	if !strings.Contains(streams[4], strings.Repeat("x", 3*initialBuffer)) {
		t.Fatal("the long event is missing")
	}
	for i, data := range streams {
		limits := []int64{1 << 24, int64(len(data)), int64(len(data)) - 1, int64(len(data)) / 2, initialBuffer + 100}
		for name, open := range wiretest.Readers() {
			if name == "one byte" && i > 1 {
				continue // slow, and the cases above cover it
			}
			for _, limit := range limits {
				var got, want streamReader
				got.init(s, req, open(data), limit, true)
				want.init(s, req, open(data), limit, true)
				want.buf = make([]byte, 0, len(data)+1) // never full: nothing is dropped
				for n := 0; ; n++ {
					gdone, gerr := got.Next()
					wdone, werr := want.Next()
					where := fmt.Sprintf("stream %d, %s reads, limit %d, event %d", i, name, limit, n)
					if gdone != wdone || fmt.Sprint(gerr) != fmt.Sprint(werr) {
						t.Fatalf("%s: %v %v, want %v %v", where, gdone, gerr, wdone, werr)
					}
					if n%97 != 0 && !gdone && gerr == nil {
						continue // the states are long: compared now and then, and at the end
					}
					if gs, ws := readerState(&got), readerState(&want); gs != ws {
						t.Fatalf("%s: state\n%s\nwant\n%s", where, gs, ws)
					}
					if gdone || gerr != nil {
						// How far past the last event a read went depends on
						// the reads' sizes, which the buffers' differ in; byte
						// by byte, the readers read alike.
						if name == "one byte" && got.BufferedBytes() != want.BufferedBytes() {
							t.Fatalf("%s: %d bytes read, want %d", where, got.BufferedBytes(), want.BufferedBytes())
						}
						if gerr == nil {
							agreeRelease(t, where, got.st, want.st)
							if d := int64(min(len(data), int(limit))) - got.st.BufferedBytes(); d < 0 || d > 1 {
								t.Fatalf("%s: %d bytes buffered of %d", where, got.st.BufferedBytes(), len(data))
							}
						}
						break
					}
				}
				if cap(got.buf) > 2*initialBuffer && i != 4 {
					t.Errorf("stream %d, %s reads: the buffer grew to %d bytes", i, name, cap(got.buf))
				}
			}
		}
	}
}
