package chat

import (
	"io"
	"net/url"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// Options are a deployment's wire allowances for chat completions
// (configuration block wire.chat).
type Options struct {
	// StrictMembers refuses the request members the gateway does not know
	// (400 naming the member's path) and removes the answer members it
	// does not know, instead of judging them: projecting them where
	// policies read them and forwarding them as judged
	// (wire.chat.unknown_members: refuse; the default is judge).
	StrictMembers bool
	// AllowRequestMembers are top-level request members projected into
	// model.params and forwarded even under StrictMembers (see
	// NewRequestParser).
	AllowRequestMembers []string
	// AllowResponseMembers are message and delta members projected as
	// member parts even under StrictMembers (see ResponseOptions).
	AllowResponseMembers []string
	// MaxMessages, when positive, refuses a request with more "messages"
	// elements before any of them is decoded (limits.max_messages).
	MaxMessages int
}

// Surface is the chat-completions surface (POST /v1/chat/completions) as
// the gateway's model-call pipeline sees it. It is immutable and safe for
// concurrent use.
type Surface struct {
	requests *RequestParser
	answers  ResponseOptions
}

var _ wire.Surface = (*Surface)(nil)

// New returns the surface under opts.
func New(opts Options) *Surface {
	return &Surface{
		requests: NewRequestParser(opts.AllowRequestMembers).WithMaxMessages(opts.MaxMessages).WithStrictMembers(opts.StrictMembers),
		answers:  ResponseOptions{AllowMembers: opts.AllowResponseMembers, StrictMembers: opts.StrictMembers},
	}
}

// answerOptions are the surface's answer options for an answer to req:
// the answer names req's model.
func (s *Surface) answerOptions(req wire.Request) ResponseOptions {
	opts := s.answers
	if req != nil {
		opts.Model = req.Model()
	}
	return opts
}

// API returns wire.ChatCompletions.
func (s *Surface) API() wire.API { return wire.ChatCompletions }

// ParseRequest parses a chat-completions body (see RequestParser.Parse).
// The query is not read: the gateway builds the upstream URL itself, so
// nothing in it reaches the model.
func (s *Surface) ParseRequest(body []byte, _ url.Values) (wire.Request, error) {
	r, err := s.requests.Parse(body)
	if err != nil {
		return nil, err
	}
	return surfaceRequest{r}, nil
}

// ParseResponse parses a non-streamed chat completion (see ParseResponse).
func (s *Surface) ParseResponse(req wire.Request, body []byte) (wire.Response, error) {
	r, err := ParseResponse(body, s.answerOptions(req))
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ReadStream buffers and assembles a chat-completions stream (see
// ReadStream). The usage chunk is released only when req asked for it.
func (s *Surface) ReadStream(req wire.Request, r io.Reader, limit int64) (wire.Stream, error) {
	st, err := ReadStream(r, limit, s.answerOptions(req))
	if err != nil {
		return nil, err
	}
	var includeUsage bool
	if sr, ok := req.(surfaceRequest); ok {
		includeUsage = sr.IncludeUsage()
	}
	return surfaceStream{st, includeUsage}, nil
}

// ErrorBody renders e in OpenAI's error envelope.
func (s *Surface) ErrorBody(e wire.Error) []byte { return wire.OpenAIErrorBody(e) }

// StreamError renders e as one data event holding the error envelope, as
// OpenAI streams report errors (the clients raise it).
func (s *Surface) StreamError(e wire.Error) []byte {
	b := wire.OpenAIErrorBody(e)
	out := make([]byte, 0, len(b)+8)
	out = append(out, "data: "...)
	out = append(out, b...)
	return append(out, "\n\n"...)
}

// surfaceRequest adapts *Request to wire.Request.
type surfaceRequest struct{ *Request }

func (r surfaceRequest) Operation() wire.Operation { return wire.OpChatCompletions }

func (r surfaceRequest) CheckMessages(target any) error { return ValidateMessages(target) }

var _ wire.BodyChecker = surfaceRequest{}

// CheckedBody implements wire.BodyChecker: UpstreamBody validates the
// target as CheckMessages does before it renders, so a transformed turn
// is validated and rendered once rather than validated twice.
func (r surfaceRequest) CheckedBody(target any) ([]byte, error) { return r.UpstreamBody(target) }

// UpstreamBody always asks for the usage chunk of a stream: post_model_call
// needs usage even when the client did not ask for it (Release leaves it
// out then).
func (r surfaceRequest) UpstreamBody(messages any) ([]byte, error) {
	return r.Request.UpstreamBody(messages, r.Stream())
}

// surfaceStream adapts *Stream to wire.Stream.
type surfaceStream struct {
	*Stream
	includeUsage bool
}

func (s surfaceStream) Response() wire.Response { return s.Stream.Response() }

func (s surfaceStream) Release(target any) ([]byte, error) {
	return s.Stream.Release(target, s.includeUsage)
}
