package responses

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

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
	// treeInput parses every input array the tree way (decoded whole,
	// then projected); false projects it item by item from its bytes
	// (parseInputRaw). Tests compare the two.
	treeInput bool
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

// ParseRequestMemo implements wire.MemoParser: ParseRequest reusing the
// projections of input items memo kept.
func (s *Surface) ParseRequestMemo(body []byte, query url.Values, _ http.Header, memo wire.Memo) (wire.Request, error) {
	if len(query) > 0 {
		return nil, &wire.RequestError{Msg: "the responses endpoint takes no query parameters"}
	}
	r, err := s.parseRequestMemo(body, memo)
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

// StreamError renders the events that end a stream whose 200 went out
// with nothing of the answer before them (keep-alive comments only): an
// "error" event (sequence 0), then response.failed (sequence 1) carrying
// a failed response with the error. Both are needed, measured with the
// clients: openai-go's ssestream and the openai JS and Python SDKs raise
// an event whose data has a top-level "error" member and stop there;
// Codex ignores "error" events and shows the message of the
// response.failed that ends the stream (without it: "stream closed
// before response.completed").
func (s *Surface) StreamError(e wire.Error) []byte {
	return streamFailure(nil, e, 0, unnamedSnapshot())
}

// unnamedSnapshot is the response a failure reports when the client saw
// none created: a minted id, created now.
func unnamedSnapshot() map[string]any {
	return map[string]any{"id": wire.MintID("resp_"), "object": "response", "created_at": time.Now().Unix()}
}

// streamFailure appends the error event numbered seq and the
// response.failed numbered seq+1 whose response is snapshot's members
// marked failed with e (snapshot is not changed). e's strings are made
// valid UTF-8 first, as the envelope's encoding/json does: the gateway's
// encoders refuse invalid UTF-8, which would leave an event that is not
// JSON.
func streamFailure(b []byte, e wire.Error, seq int, snapshot map[string]any) []byte {
	e.Code = strings.ToValidUTF8(e.Code, "\uFFFD")
	e.Message = strings.ToValidUTF8(e.Message, "\uFFFD")
	e.Param = strings.ToValidUTF8(e.Param, "\uFFFD")
	env := wire.OpenAIErrorBody(e) // {"error":{...}}
	inner := env[len(`{"error":`) : len(env)-1]
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
	b = append(b, ",\"sequence_number\":"...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, ",\"error\":"...)
	b = append(b, inner...)
	b = append(b, "}\n\n"...)
	failed := make(map[string]any, len(snapshot)+6)
	for k, v := range snapshot {
		failed[k] = v
	}
	failed["status"] = "failed"
	failed["output"] = []any{}
	failed["usage"] = nil
	failed["incomplete_details"] = nil
	failed["error"] = map[string]any{"code": e.Code, "message": e.Message}
	y := &synthesizer{out: b, seq: seq + 1}
	y.emit("response.failed", map[string]any{"response": failed})
	return y.out
}
