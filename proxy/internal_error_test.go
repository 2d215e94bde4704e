package proxy

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	chatwire "github.com/hooks-gateway/hooks-gateway/internal/wire/chat"
	"github.com/hooks-gateway/hooks-gateway/metrics/metricstest"
)

// rewritingSurface is the chat surface whose incremental reader rewrites
// the first byte of its text once the answer goes on past the first text
// judged: a reader bug no part of the pipeline has an answer for.
type rewritingSurface struct{ *chatwire.Surface }

func (s rewritingSurface) OpenStream(req wire.Request, r io.Reader, limit int64) wire.StreamReader {
	return &rewritingReader{StreamReader: s.Surface.OpenStream(req, r, limit)}
}

type rewritingReader struct {
	wire.StreamReader
	first string // the first text read
}

func (r *rewritingReader) Text() string {
	t := r.StreamReader.Text()
	switch {
	case r.first == "":
		r.first = t
	case len(t) > len(r.first):
		return "X" + t[1:]
	}
	return t
}

// An internal_error is logged (one line: session, api, stage, point, the
// error's type and message, no payload) and counted by api and stage.
func TestInternalErrorIsLoggedAndCounted(t *testing.T) {
	up := newGatedSSE(false, "Hello. ", "wor. ", "ld. ", "Bye.")
	u := newUpstream(t, up.serve)
	logs := &lockedBuffer{}
	gw := newGateway(t, gatewayConfig{upstream: u.URL, streaming: incremental(), log: logs,
		surfaces: []wire.Surface{rewritingSurface{chatwire.New(chatwire.Options{})}}})
	up.release(3)
	c := gw.client()
	stream := c.Chat.Completions.NewStreaming(context.Background(), userParams("gpt-test", "hi"))
	var text strings.Builder
	for stream.Next() {
		if c := stream.Current(); len(c.Choices) > 0 {
			text.WriteString(c.Choices[0].Delta.Content)
		}
	}
	if err := stream.Err(); err == nil || !strings.Contains(err.Error(), "internal_error") {
		t.Fatalf("stream error %v, want internal_error", err)
	}
	var lines []string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "internal error") {
			lines = append(lines, line)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d internal error lines, want 1:\n%s", len(lines), logs.String())
	}
	session := gw.records.all()[0].SessionID
	for _, want := range []string{"level=ERROR", "session=" + session, "api=chat_completions", "stage=post_model_call", "point=post_model_call",
		"error_type=*errors.errorString", `error="agent-hooks: a segment does not extend the text judged before it"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the log line lacks %s:\n%s", want, lines[0])
		}
	}
	for _, payload := range []string{"Hello", "Xello", "wor"} {
		if strings.Contains(lines[0], payload) {
			t.Errorf("the log line carries %q", payload)
		}
	}
	metricstest.WantSeries(t, scrape(t, gw.URL), "hooks_gateway_internal_errors_total", map[string]float64{
		"api=chat_completions,stage=post_model_call": 1,
	})
}

// What an unexpected error quotes (a library's parsing "…") stays out of
// the log line; the rest of its message is kept.
func TestInternalErrorLogLeavesQuotesOut(t *testing.T) {
	for in, want := range map[string]string{
		`strconv.ParseInt: parsing "sk-proj-abc": invalid syntax`: `strconv.ParseInt: parsing …: invalid syntax`,
		"invalid character 'x' looking for value":                 "invalid character … looking for value",
		"a segment does not extend the text judged before it":     "a segment does not extend the text judged before it",
		`unterminated "sk-proj-abc`:                               "unterminated …",
	} {
		if got := withoutQuoted(in); got != want {
			t.Errorf("withoutQuoted(%q) = %q, want %q", in, got, want)
		}
	}
}
