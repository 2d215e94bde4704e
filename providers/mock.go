package providers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
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

// Serves reports whether op is chat completions.
func (m *Mock) Serves(op wire.Operation) bool { return op == wire.OpChatCompletions }

// Send answers body in-process. It fails only when ctx is done or op is not
// served; a malformed request or directive is answered with HTTP 400, as a
// real provider would.
func (m *Mock) Send(ctx context.Context, op wire.Operation, body []byte, _ http.Header) (*http.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, m.errorf(err)
	}
	if !m.Serves(op) {
		return nil, m.errorf(ErrUnsupported)
	}
	req, err := parseMockRequest(body)
	if err != nil {
		return m.errorResponse(http.StatusBadRequest, "invalid_request_error", err.Error(), "")
	}
	reply, err := parseDirective(req.lastUserText())
	if err != nil {
		return m.errorResponse(http.StatusBadRequest, "mock_error", err.Error(), "")
	}
	if reply.status != 0 {
		return m.errorResponse(reply.status, "mock_error", reply.message, strconv.Itoa(reply.status))
	}
	if reply.delay > 0 {
		t := time.NewTimer(reply.delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, m.errorf(ctx.Err())
		case <-t.C:
		}
	}
	sum := sha256.Sum256(body)
	w := mockWriter{
		id:        "chatcmpl-mock-" + hex.EncodeToString(sum[:6]),
		model:     req.Model,
		usage:     reply.usage(req.promptWords()),
		withUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage,
		reply:     reply,
	}
	if req.Stream {
		b, err := w.stream()
		if err != nil {
			return nil, m.errorf(err)
		}
		return newResponse(http.StatusOK, "text/event-stream; charset=utf-8", b, -1), nil
	}
	b, err := w.completion()
	if err != nil {
		return nil, m.errorf(err)
	}
	return newResponse(http.StatusOK, "application/json", b, int64(len(b))), nil
}

func (m *Mock) errorf(err error) error { return fmt.Errorf("providers: %s: %w", m.name, err) }

// mockRequest is the part of a chat.completions request the mock reads.
type mockRequest struct {
	Model         string            `json:"model"`
	Messages      []mockMessage     `json:"messages"`
	Stream        bool              `json:"stream"`
	StreamOptions *mockStreamOpts   `json:"stream_options"`
	Tools         []json.RawMessage `json:"tools"` // decoded only to reject a non-array

	texts []string // text of each message, filled by parseMockRequest
}

type mockStreamOpts struct {
	IncludeUsage bool `json:"include_usage"`
}

type mockMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// parseMockRequest decodes body; its errors never quote the body.
func parseMockRequest(body []byte) (mockRequest, error) {
	var req mockRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	err := dec.Decode(&req)
	if err == nil {
		if _, tail := dec.Token(); tail != io.EOF {
			err = fmt.Errorf("trailing data")
		}
	}
	if err != nil {
		return req, fmt.Errorf("mock: request body is not a chat completion request")
	}
	if req.Model == "" {
		return req, fmt.Errorf("mock: you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return req, fmt.Errorf("mock: messages must not be empty")
	}
	req.texts = make([]string, len(req.Messages))
	for i, msg := range req.Messages {
		if req.texts[i], err = messageText(msg.Content); err != nil {
			return req, err
		}
	}
	return req, nil
}

// lastUserText is the text of the last user message, "" when there is none.
func (r mockRequest) lastUserText() string {
	for i, msg := range slices.Backward(r.Messages) {
		if msg.Role == "user" {
			return r.texts[i]
		}
	}
	return ""
}

// promptWords counts the words of every message's text.
func (r mockRequest) promptWords() int {
	n := 0
	for _, text := range r.texts {
		n += len(strings.Fields(text))
	}
	return n
}

// messageText returns a content member's text: the string itself, or the
// concatenated text parts of a content-part array; null and absent are "".
func messageText(content json.RawMessage) (string, error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || string(content) == "null" {
		return "", nil
	}
	var s string
	if content[0] == '"' {
		if err := json.Unmarshal(content, &s); err != nil {
			return "", fmt.Errorf("mock: message content is not a string")
		}
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(content, &parts); err != nil {
		return "", fmt.Errorf("mock: message content is neither a string nor an array of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
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
