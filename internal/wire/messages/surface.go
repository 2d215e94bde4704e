package messages

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// Options are one deployment's allowances on the Messages wire.
type Options struct {
	// AllowRequestMembers are extra top-level request members projected
	// verbatim into model.params and forwarded
	// (wire.messages.allow_request_members).
	AllowRequestMembers []string
	// AllowResponseMembers are extra top-level answer members kept and
	// projected as member parts (wire.messages.allow_response_members).
	AllowResponseMembers []string
	// AllowServerTools admits provider-executed tools, their blocks and
	// mcp_servers (wire.messages.allow_server_tools). Their work happens
	// at the provider, so the context is marked partial.
	AllowServerTools bool
	// MaxMessages, when positive, refuses a request with more "messages"
	// elements before any of them is decoded (limits.max_messages).
	MaxMessages int
	// StrictMembers refuses a request holding a member the gateway does
	// not know, at any depth, with a 400 naming its path, and removes such
	// members from answers (wire.messages.unknown_members: refuse). By
	// default they are judged: projected where policies see them and
	// forwarded or released as the verdict leaves them.
	StrictMembers bool
	// Seal seals the opaque blobs that round-trip through the client
	// (thinking signatures, redacted thinking, citation indexes, container
	// ids) and opens them when the client sends them back. Nil uses a key
	// made for this surface alone (seal.Ephemeral).
	Seal *seal.Keyring
}

// Surface is the Anthropic Messages wire (POST /v1/messages and
// /v1/messages/count_tokens). It is immutable and safe for concurrent use.
type Surface struct {
	allowReq    rawjson.MemberSet
	allowResp   rawjson.MemberSet
	serverTools bool
	maxMessages int
	strict      bool
	seal        *seal.Keyring
	// treeMessages decodes every messages member whole before projecting
	// it; false projects it message by message from its bytes
	// (parseMessagesRaw). Tests compare the two.
	treeMessages bool
}

var _ wire.Surface = (*Surface)(nil)

// New returns the surface under opts. Configuration checks each allowed
// name with CheckAllowedRequestMember / CheckAllowedResponseMember.
func New(opts Options) *Surface {
	k := opts.Seal
	if k == nil {
		k = seal.Ephemeral()
	}
	return &Surface{
		allowReq:    rawjson.NewMemberSet(opts.AllowRequestMembers...),
		allowResp:   rawjson.NewMemberSet(opts.AllowResponseMembers...),
		serverTools: opts.AllowServerTools,
		maxMessages: opts.MaxMessages,
		strict:      opts.StrictMembers,
		seal:        k,
	}
}

// API implements wire.Surface.
func (s *Surface) API() wire.API { return wire.Messages }

// ParseRequest implements wire.Surface for POST /v1/messages. The query
// may hold beta=true (Claude Code's beta endpoint); any other parameter
// is refused.
func (s *Surface) ParseRequest(body []byte, query url.Values) (wire.Request, error) {
	if err := checkQuery(query); err != nil {
		return nil, err
	}
	return s.parse(body, wire.OpMessages)
}

// ParseCountTokens parses a POST /v1/messages/count_tokens body: the same
// closed world as ParseRequest, with max_tokens optional and stream
// refused unless false. Its Operation is wire.OpCountTokens; the answer is
// checked with CountTokensRelease.
func (s *Surface) ParseCountTokens(body []byte, query url.Values) (wire.Request, error) {
	if err := checkQuery(query); err != nil {
		return nil, err
	}
	return s.parse(body, wire.OpCountTokens)
}

// The request headers the upstream receives from the client, judged with
// the body.
const (
	// BetaHeaderName's betas are model.params.anthropic_beta.
	BetaHeaderName = "Anthropic-Beta"
	// VersionHeaderName's value is model.params.anthropic_version.
	VersionHeaderName = "Anthropic-Version"
)

// ParseRequestHeader is ParseRequest for a request sent with header h: the
// betas of its anthropic-beta header (BetaHeader) and its
// anthropic-version are judged with the body, as model.params'
// anthropic_beta and anthropic_version. The upstream must be sent exactly
// those betas, joined by commas, and that version.
func (s *Surface) ParseRequestHeader(body []byte, query url.Values, h http.Header) (wire.Request, error) {
	return s.parseHeader(body, query, h, wire.OpMessages, nil)
}

// ParseCountTokensHeader is ParseCountTokens for a request sent with
// header h, as ParseRequestHeader.
func (s *Surface) ParseCountTokensHeader(body []byte, query url.Values, h http.Header) (wire.Request, error) {
	return s.parseHeader(body, query, h, wire.OpCountTokens, nil)
}

// parseHeader parses a request for op sent with header h, reusing the
// projections memo kept (nil: none).
func (s *Surface) parseHeader(body []byte, query url.Values, h http.Header, op wire.Operation, memo wire.Memo) (wire.Request, error) {
	if err := checkQuery(query); err != nil {
		return nil, err
	}
	version := h.Values(VersionHeaderName)
	if len(version) > 1 {
		return nil, &wire.RequestError{Field: "anthropic-version", Msg: "header is sent more than once"}
	}
	r, err := s.parseWith(body, op, BetaHeader(h.Values(BetaHeaderName)), memo)
	if err != nil {
		return nil, err
	}
	if len(version) == 1 {
		r.setParam(paramVersion, version[0])
	}
	return r, nil
}

// BetaHeader returns the betas that the anthropic-beta header lines values
// name: each line split at its commas, spaces and tabs trimmed, empty
// names dropped. They are what the gateway projects and what it sends
// upstream (joined by commas), so the provider receives nothing beyond
// what the policy saw.
func BetaHeader(values []string) []string {
	var out []string
	for _, v := range values {
		for b := range strings.SplitSeq(v, ",") {
			if b = strings.Trim(b, " \t"); b != "" {
				out = append(out, b)
			}
		}
	}
	return out
}

// checkQuery admits the beta parameter only, naming others when they are
// plain identifiers.
func checkQuery(q url.Values) error {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == "beta" {
			if v := q[k]; len(v) == 1 && (v[0] == "true" || v[0] == "false") {
				continue
			}
			return &wire.RequestError{Field: "beta", Msg: "query parameter must be true or false, once"}
		}
		if rawjson.PlainName(k) {
			return &wire.RequestError{Field: k, Msg: "is not a query parameter the gateway knows (it knows beta)"}
		}
		return &wire.RequestError{Msg: "the query has a parameter the gateway does not know (it knows beta)"}
	}
	return nil
}

// ParseResponse implements wire.Surface.
func (s *Surface) ParseResponse(req wire.Request, body []byte) (wire.Response, error) {
	r, err := s.parseMessage(body, answerFor(req))
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ReadStream implements wire.Surface.
func (s *Surface) ReadStream(req wire.Request, r io.Reader, limit int64) (wire.Stream, error) {
	st, err := s.readStream(r, limit, answerFor(req))
	if err != nil {
		return nil, err
	}
	return st, nil
}
