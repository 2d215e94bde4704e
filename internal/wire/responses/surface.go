package responses

import (
	"io"
	"net/url"

	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// Options are one deployment's allowances for the Responses surface
// (configuration block wire.responses).
type Options struct {
	// AllowRequestMembers names extra top-level request members that are
	// forwarded and projected verbatim into model.params even when
	// StrictMembers refuses unknown members
	// (wire.responses.allow_request_members).
	AllowRequestMembers []string
	// AllowResponseMembers names extra top-level answer members that are
	// projected as member parts and released as judged even when
	// StrictMembers removes unknown members
	// (wire.responses.allow_response_members).
	AllowResponseMembers []string
	// StrictMembers refuses unknown members of requests (400 naming the
	// member's path and wire.responses.unknown_members) and removes those
	// of answers, instead of judging them
	// (wire.responses.unknown_members: refuse; the default, judge, leaves
	// it false).
	StrictMembers bool
	// Seal seals the opaque values clients hand back (item ids, encrypted
	// reasoning, the response id with server state) and opens them in
	// requests. Nil uses a keyring made for this Surface alone
	// (seal.Ephemeral): its seals open only in this process.
	Seal *seal.Keyring
	// AllowServerState lets requests use server-side state
	// (previous_response_id, conversation, prompt, background: true) and
	// remote MCP tools (wire.responses.allow_server_state). The policy then
	// sees an incomplete conversation, flagged by model.params
	// partial_context: true.
	AllowServerState bool
	// MaxMessages, when positive, refuses a request with more "input"
	// elements before any of them is decoded (limits.max_messages).
	MaxMessages int
}

// Surface is the OpenAI Responses API surface (POST /v1/responses). It is
// immutable and safe for concurrent use.
type Surface struct {
	allowReq         rawjson.MemberSet
	allowResp        rawjson.MemberSet
	allowServerState bool
	strict           bool
	keys             *seal.Keyring
	maxMessages      int
}

var _ wire.Surface = (*Surface)(nil)

// New returns the Responses surface under opts.
func New(opts Options) *Surface {
	keys := opts.Seal
	if keys == nil {
		keys = seal.Ephemeral()
	}
	return &Surface{
		allowReq:         rawjson.NewMemberSet(opts.AllowRequestMembers...),
		allowResp:        rawjson.NewMemberSet(opts.AllowResponseMembers...),
		allowServerState: opts.AllowServerState,
		strict:           opts.StrictMembers,
		keys:             keys,
		maxMessages:      opts.MaxMessages,
	}
}

// API returns wire.Responses.
func (s *Surface) API() wire.API { return wire.Responses }

// ParseRequest validates and projects a Responses request. The endpoint
// takes no query parameters; any is refused.
func (s *Surface) ParseRequest(body []byte, query url.Values) (wire.Request, error) {
	if len(query) > 0 {
		return nil, &wire.RequestError{Msg: "the responses endpoint takes no query parameters"}
	}
	r, err := s.parseRequest(body)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ParseResponse parses a non-streamed upstream answer to req.
func (s *Surface) ParseResponse(req wire.Request, body []byte) (wire.Response, error) {
	r, ok := req.(*Request)
	if !ok {
		return nil, &wire.ResponseError{Msg: "request was not parsed by the responses surface"}
	}
	resp, err := s.parseResponse(r, body)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ReadStream reads and assembles a whole upstream event stream.
func (s *Surface) ReadStream(req wire.Request, r io.Reader, limit int64) (wire.Stream, error) {
	rq, ok := req.(*Request)
	if !ok {
		return nil, &wire.StreamError{Kind: wire.ErrResponseInvalid, Detail: "request was not parsed by the responses surface"}
	}
	st, err := s.readStream(rq, r, limit)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// ErrorBody renders e in OpenAI's error envelope.
func (s *Surface) ErrorBody(e wire.Error) []byte { return wire.OpenAIErrorBody(e) }

// StreamError renders e as one "event: error" event. Its data is both a
// Responses error event (type "error", code, message, param,
// sequence_number) and carries the envelope's "error" object: openai-go's
// ssestream, the openai JS and Python SDKs raise any event whose data has a
// truthy top-level "error" member, and clients that dispatch on the typed
// event (Codex) read code and message. sequence_number is 0: nothing but
// keep-alive comments precedes it.
func (s *Surface) StreamError(e wire.Error) []byte {
	env := wire.OpenAIErrorBody(e) // {"error":{...}}
	inner := env[len(`{"error":`) : len(env)-1]
	b := make([]byte, 0, 2*len(env)+128)
	b = append(b, "event: error\ndata: {\"type\":\"error\",\"code\":"...)
	b = appendString(b, e.Code)
	b = append(b, ",\"message\":"...)
	b = appendString(b, e.Message)
	b = append(b, ",\"param\":"...)
	if e.Param == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, e.Param)
	}
	b = append(b, ",\"sequence_number\":0,\"error\":"...)
	b = append(b, inner...)
	return append(b, "}\n\n"...)
}
