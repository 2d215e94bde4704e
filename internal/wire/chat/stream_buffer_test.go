package chat

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/wiretest"
)

// longPlainStream is a plain text answer of n chunks.
func longPlainStream(n int) string {
	var b strings.Builder
	head := `data: {"id":"chatcmpl-B","object":"chat.completion.chunk","created":1741570600,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":`
	tail := `,"logprobs":null,"finish_reason":null}]}` + "\n\n"
	for i := range n {
		b.WriteString(head + `{"content":"token ` + strconv.Itoa(i) + ` "}` + tail)
	}
	b.WriteString(head + `{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	return b.String()
}

// TestReaderReplacesFullBuffer: a reader that replaces its full buffer
// (streams longer than it, read in any chunks) assembles, refuses at its
// limit, counts bytes and releases (whole, and incrementally) exactly as
// one whose buffer holds the whole stream.
func TestReaderReplacesFullBuffer(t *testing.T) {
	plain := longPlainStream(1500)
	tools := strings.Repeat(string(stream200()[:bytes.LastIndex(stream200(), []byte("data: [DONE]"))]), 3) + "data: [DONE]\n\n"
	streams := []string{
		plain,
		"\xEF\xBB\xBF" + plain,
		strings.ReplaceAll(plain, "\n", "\r\n"),
		strings.ReplaceAll(plain, "\n", "\r"),
		strings.Replace(plain, `"token 700 "`, `"`+strings.Repeat("x", 3*readChunk)+`"`, 1),
		strings.ReplaceAll(plain, `data: {"id":"chatcmpl-B",`, "data: {\"id\":\"chatcmpl-B\",\ndata: "), // multi-line data
		strings.ReplaceAll(plain, "}\n\n", "}\n: keep-alive\n\n"),                                       // a comment before each blank line
		plain[:len(plain)-len(plain)/3],                                                                 // cut
		tools,
	}
	opts := ResponseOptions{id: testID, Model: "asked"}
	for i, data := range streams {
		if len(data) < 4*readChunk {
			t.Fatalf("stream %d (%d bytes) does not outgrow the buffer", i, len(data))
		}
		limits := []int64{1 << 24, int64(len(data)), int64(len(data)) - 1, int64(len(data)) / 2, initialBuffer + 100}
		for name, open := range wiretest.Readers() {
			if name == "one byte" && i > 1 {
				continue // slow, and the cases above cover it
			}
			for _, limit := range limits {
				for _, watch := range []bool{false, true} {
					where := fmt.Sprintf("stream %d, %s reads, limit %d, watch %v", i, name, limit, watch)
					got := newStreamReader(open(data), limit, opts, watch)
					want := newStreamReader(open(data), limit, opts, watch)
					want.buf = make([]byte, 0, len(data)+2) // never full: never replaced
					gout, gerr := releaseAll(t, got, watch)
					wout, werr := releaseAll(t, want, watch)
					if fmt.Sprint(gerr) != fmt.Sprint(werr) || !bytes.Equal(gout, wout) {
						t.Fatalf("%s: released %d bytes, %v; want %d bytes, %v", where, len(gout), gerr, len(wout), werr)
					}
					if name == "one byte" && got.BufferedBytes() != want.BufferedBytes() {
						t.Fatalf("%s: %d bytes read, want %d", where, got.BufferedBytes(), want.BufferedBytes())
					}
					if gerr == nil {
						g, w := got.st, want.st
						if !jsonvalue.Equal(g.Response().Project(), w.Response().Project()) || g.Replayable() != w.Replayable() {
							t.Fatalf("%s: the streams differ", where)
						}
					}
					if cap(got.buf) > 2*initialBuffer && i != 4 {
						t.Errorf("%s: the buffer grew to %d bytes", where, cap(got.buf))
					}
				}
			}
		}
	}
}

// releaseAll reads sr to its end and releases it: whole, or (watch) the
// plain text every 50th event (so that a Delta replays chunks read into
// buffers since replaced), then the tail.
func releaseAll(t *testing.T, sr *streamReader, watch bool) ([]byte, error) {
	t.Helper()
	var out []byte
	released := 0
	for n := 0; ; n++ {
		done, err := sr.Next()
		if err != nil {
			return out, err
		}
		if done {
			break
		}
		if !watch || !sr.Plain() || n%50 != 0 || len(sr.Text()) == released {
			continue
		}
		if released == 0 {
			h, err := sr.Head()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, h...)
		}
		text := sr.Text()
		d, err := sr.Delta(released, text[released:])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d...)
		released = len(text)
	}
	ws, err := sr.Stream()
	if err != nil {
		t.Fatal(err)
	}
	if released == 0 {
		b, err := ws.Release(nil)
		return append(out, b...), err
	}
	tail, err := sr.Tail(ws, nil, sr.Text()[:released])
	return append(out, tail...), err
}
