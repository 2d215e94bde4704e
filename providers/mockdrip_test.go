package providers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// dripBodies are /drip requests on every surface, with the marker that
// starts one of its text delta events.
var dripBodies = []struct {
	op          wire.Operation
	body, delta string
}{
	{wire.OpChatCompletions, `{"model":"m","stream":true,"messages":[{"role":"user","content":"/drip 5ms one two  three four"}]}`, `data: {"id":"chatcmpl-mock-`},
	{wire.OpResponses, `{"model":"m","stream":true,"input":"/drip 5ms one two  three four"}`, "event: response.output_text.delta\n"},
	{wire.OpMessages, `{"model":"m","max_tokens":99,"stream":true,"messages":[{"role":"user","content":"/drip 5ms one two  three four"}]}`, "event: content_block_delta\n"},
}

// TestMockDripPacesEveryDelta reads each surface's /drip stream with a
// large buffer: a read never crosses a pause, so the body arrives in one
// read per word, each after the first starting with that word's delta,
// and the whole has as many events as /say's stream.
func TestMockDripPacesEveryDelta(t *testing.T) {
	words := []string{"one ", "two  ", "three ", "four"}
	for _, tt := range dripBodies {
		t.Run(string(tt.op), func(t *testing.T) {
			resp, err := NewMock("", nil).Send(t.Context(), tt.op, []byte(tt.body), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var reads []string
			buf := make([]byte, 1<<16)
			for {
				n, err := resp.Body.Read(buf)
				if n > 0 {
					reads = append(reads, string(buf[:n]))
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if len(reads) != len(words) {
				t.Fatalf("%d reads, want one per word (%d):\n%q", len(reads), len(words), reads)
			}
			for i, r := range reads {
				if i > 0 && !strings.HasPrefix(r, tt.delta) {
					t.Errorf("read %d does not start with a text delta: %q", i, r)
				}
				if !strings.Contains(r, `"`+words[i]+`"`) {
					t.Errorf("read %d lacks the word %q: %q", i, words[i], r)
				}
			}
			whole := strings.Join(reads, "")
			say, body := sendMock(t, tt.op, strings.Replace(tt.body, "/drip 5ms", "/say", 1))
			if say.StatusCode != http.StatusOK || strings.Count(whole, "\n\n") != strings.Count(body, "\n\n") {
				t.Errorf("dripped stream and /say's differ in events:\n%s\n%s", whole, body)
			}
		})
	}
}

// TestMockDripStops checks that a pause ends with an error once the
// request's context is cancelled or the body closed, so an upstream
// cancelled mid-stream does not keep its reader waiting.
func TestMockDripStops(t *testing.T) {
	body := []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"/drip 1h one two"}]}`)
	buf := make([]byte, 1<<16)
	for _, stop := range []string{"cancel", "close"} {
		t.Run(stop, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			resp, err := NewMock("", nil).Send(ctx, wire.OpChatCompletions, body, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := resp.Body.Read(buf); err != nil || !strings.Contains(string(buf[:n]), `"one "`) {
				t.Fatalf("first read %q, %v; want the first word at once", buf[:n], err)
			}
			time.AfterFunc(10*time.Millisecond, func() {
				if stop == "cancel" {
					cancel()
				} else {
					resp.Body.Close()
				}
			})
			n, err := resp.Body.Read(buf)
			want := map[string]error{"cancel": context.Canceled, "close": http.ErrBodyReadAfterClose}[stop]
			if n != 0 || !errors.Is(err, want) {
				t.Errorf("read during the pause: %d bytes, %v; want %v", n, err, want)
			}
			if _, err := resp.Body.Read(buf); !errors.Is(err, want) {
				t.Errorf("read after: %v; want %v", err, want)
			}
		})
	}
}
