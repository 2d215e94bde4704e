package wire

import (
	"errors"
	"strconv"
)

// Sentinel errors classify every failure of this package so the proxy can
// map it to an HTTP status with errors.Is. None of the error values built on
// them ever quotes message or response content: they name field paths, event
// numbers and type names only.
var (
	// ErrResponseInvalid: the upstream response (or one of its stream
	// chunks) is not a chat completion this package understands. The
	// proxy answers 502 "upstream response not understood".
	ErrResponseInvalid = errors.New("upstream response not understood")
	// ErrBufferLimit: the upstream stream did not end within the buffer
	// limit. Spec §12.1: the gateway cannot buffer, so it must not
	// release anything (GW-POST-9).
	ErrBufferLimit = errors.New("stream buffer limit reached")
	// ErrStreamCut: the upstream stream ended (or failed) before
	// "data: [DONE]". The model call errored (GW-POST-8).
	ErrStreamCut = errors.New("upstream stream ended before [DONE]")
	// ErrUpstreamEvent: the upstream sent an error object inside the
	// stream. The model call errored (GW-POST-8).
	ErrUpstreamEvent = errors.New("upstream sent an error event")
)

// RequestError reports a chat request the gateway refuses (HTTP 400).
// Field is the wire path of the offending member ("messages[2].role",
// "n", "stream"); it is empty when the body as a whole is at fault.
type RequestError struct {
	Field string
	Msg   string
	// Code, when set, is the error code the gateway answers with instead
	// of invalid_request.
	Code string
}

// Error implements error.
func (e *RequestError) Error() string {
	return "wire: invalid request: " + withField(e.Field, e.Msg)
}

// ResponseError reports an upstream response that cannot be projected
// (HTTP 502). Field is the wire path of the offending member
// ("choices[0].message.tool_calls[1].function.arguments"). It unwraps to
// ErrResponseInvalid.
type ResponseError struct {
	Field string
	Msg   string
}

// Error implements error.
func (e *ResponseError) Error() string {
	return "wire: " + ErrResponseInvalid.Error() + ": " + withField(e.Field, e.Msg)
}

// Unwrap returns ErrResponseInvalid.
func (e *ResponseError) Unwrap() error { return ErrResponseInvalid }

// WriteBackError reports a verdicted target that cannot be written onto the
// OpenAI wire. Field is a transform-style path into the target
// ("$target[2].role", "$target.tool_calls[0].args"). The enforcement layer
// turns it into deny host_error:transform_invalid.
type WriteBackError struct {
	Field string
	Msg   string
}

// Error implements error.
func (e *WriteBackError) Error() string {
	return "wire: cannot write back transformed target: " + withField(e.Field, e.Msg)
}

// StreamError reports why an upstream SSE stream could not be buffered and
// assembled. Kind is ErrBufferLimit, ErrStreamCut, ErrUpstreamEvent or
// ErrResponseInvalid; Err is the underlying cause when there is one (a read
// error, or the *ResponseError of a chunk that was not understood).
type StreamError struct {
	Kind error
	// Event is the 1-based number of the SSE event at fault, 0 when the
	// failure is not tied to one event.
	Event  int
	Detail string
	Err    error
}

// Error implements error.
func (e *StreamError) Error() string {
	s := "wire: " + e.Kind.Error()
	if e.Event > 0 {
		s += ": event " + strconv.Itoa(e.Event)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	var re *ResponseError
	switch {
	case errors.As(e.Err, &re):
		s += ": " + withField(re.Field, re.Msg) // Kind already says "not understood"
	case e.Err != nil:
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns Kind and, when set, the underlying cause.
func (e *StreamError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

func withField(field, msg string) string {
	if field == "" {
		return msg
	}
	return field + ": " + msg
}

// CodeTooManyMessages is the code of a request refused for the number of
// its messages (limits.max_messages).
const CodeTooManyMessages = "too_many_messages"

// TooManyMessages is the error of a request whose conversation member
// field has more than limit elements.
func TooManyMessages(field string, limit int) *RequestError {
	return &RequestError{Field: field, Code: CodeTooManyMessages,
		Msg: "has more than " + strconv.Itoa(limit) + " elements (limits.max_messages)"}
}
