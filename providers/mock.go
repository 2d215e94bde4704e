package providers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// Mock is an in-process, deterministic model: no network, the same body
// always yields the same bytes. See the package documentation for its
// directives.
type Mock struct {
	name   string
	models []string
}

var _ Upstream = (*Mock)(nil)

// NewMock returns a mock upstream. name defaults to "mock", models to
// ["mock"].
func NewMock(name string, models []string) *Mock {
	if name == "" {
		name = "mock"
	}
	if len(models) == 0 {
		models = []string{"mock"}
	}
	return &Mock{name: name, models: literalModels(models)}
}

// Name returns the upstream's name.
func (m *Mock) Name() string { return m.name }

// Models returns the literal model names the mock was configured with.
func (m *Mock) Models() []string { return slices.Clone(m.models) }

// Serves reports whether op is chat completions, responses, messages or
// messages count_tokens: the mock speaks every surface.
func (m *Mock) Serves(op wire.Operation) bool {
	switch op {
	case wire.OpChatCompletions, wire.OpResponses, wire.OpMessages, wire.OpCountTokens:
		return true
	}
	return false
}

// Send answers body in-process. It fails only when ctx is done or op is not
// served; a malformed request or directive is answered with HTTP 400 in
// op's error envelope, as a real provider would.
func (m *Mock) Send(ctx context.Context, op wire.Operation, body []byte, _ http.Header) (*http.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, m.errorf(err)
	}
	if !m.Serves(op) {
		return nil, m.errorf(ErrUnsupported)
	}
	prompt, err := parsePrompt(op, body)
	if err != nil {
		return m.errorResponse(op, http.StatusBadRequest, "invalid_request_error", err.Error(), "")
	}
	if op == wire.OpCountTokens {
		return m.jsonResponse(http.StatusOK, mockTokenCount{InputTokens: prompt.promptWords})
	}
	reply, err := decideReply(prompt)
	if err != nil {
		return m.errorResponse(op, http.StatusBadRequest, "mock_error", err.Error(), "")
	}
	if reply.status != 0 {
		return m.errorResponse(op, reply.status, "mock_error", reply.message, strconv.Itoa(reply.status))
	}
	if err := sleepCtx(ctx, reply.delay); err != nil {
		return nil, m.errorf(err)
	}
	sum := sha256.Sum256(body)
	b, breaks, err := render(op, hex.EncodeToString(sum[:6]), prompt, reply)
	if errors.Is(err, errToolInput) {
		return m.errorResponse(op, http.StatusBadRequest, "mock_error", err.Error(), "")
	}
	if err != nil {
		return nil, m.errorf(err)
	}
	if prompt.stream {
		resp := newResponse(http.StatusOK, "text/event-stream; charset=utf-8", b, -1)
		if reply.drip > 0 {
			resp.Body = newDripBody(ctx, b, breaks, reply.drip)
		}
		return resp, nil
	}
	if reply.drip > 0 {
		// Not streamed, the answer takes as long as its stream would.
		if err := sleepCtx(ctx, time.Duration(max(0, len(reply.contentPieces())-1))*reply.drip); err != nil {
			return nil, m.errorf(err)
		}
	}
	return newResponse(http.StatusOK, "application/json", b, int64(len(b))), nil
}

// render serializes reply on op's wire; hash (12 hex digits of the body's
// sha256) makes the ids. breaks are a stream's offsets where its second,
// third, … text deltas start.
func render(op wire.Operation, hash string, p mockPrompt, reply mockReply) (body []byte, breaks []int, err error) {
	switch op {
	case wire.OpResponses:
		w := responsesWriter{hash: hash, model: p.model, usage: reply.usage(p.promptWords), reply: reply}
		if p.stream {
			return w.stream()
		}
		body, err = w.response()
		return body, nil, err
	case wire.OpMessages:
		w := newMessagesWriter(hash, p, reply)
		if p.stream {
			return w.stream()
		}
		body, err = w.message()
		return body, nil, err
	}
	w := mockWriter{
		id:        "chatcmpl-mock-" + hash,
		model:     p.model,
		usage:     reply.usage(p.promptWords),
		withUsage: p.includeUsage,
		reply:     reply,
	}
	if p.stream {
		return w.stream()
	}
	body, err = w.completion()
	return body, nil, err
}

// sleepCtx waits d, or until ctx is done (then returning its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (m *Mock) errorf(err error) error { return fmt.Errorf("providers: %s: %w", m.name, err) }

// mockTokenCount is count_tokens' answer.
type mockTokenCount struct {
	InputTokens int `json:"input_tokens"`
}

// jsonResponse answers v as a JSON body.
func (m *Mock) jsonResponse(status int, v any) (*http.Response, error) {
	b, err := encodeJSON(v)
	if err != nil {
		return nil, m.errorf(err)
	}
	return newResponse(status, "application/json", b, int64(len(b))), nil
}

// newResponse builds an in-process response; contentLength -1 marks a
// stream of unknown length, as a real SSE response would be.
func newResponse(status int, contentType string, body []byte, contentLength int64) *http.Response {
	h := http.Header{"Content-Type": {contentType}}
	if contentLength < 0 {
		h.Set("Cache-Control", "no-cache")
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: contentLength,
	}
}
