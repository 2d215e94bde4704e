package proxy

import (
	"net/http"
	"net/url"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// headerJudged is a surface whose requests carry members in headers that
// are judged with the body (the Messages surface: anthropic-beta, which
// the upstream adapter then sends as judged).
type headerJudged interface {
	ParseRequestHeader(body []byte, query url.Values, h http.Header) (wire.Request, error)
}

// countHeaderJudged is headerJudged for a surface's token-counting route.
type countHeaderJudged interface {
	ParseCountTokensHeader(body []byte, query url.Values, h http.Header) (wire.Request, error)
}

// bodyParser parses a request body with its query, reusing a managed
// session's memo where the surface can (nil: none).
type bodyParser func(body []byte, query url.Values, memo wire.Memo) (wire.Request, error)

// requestParser is how surf parses r's body: with r's headers when the
// surface judges some of them, and with the session's memo when it
// reuses one.
func requestParser(surf wire.Surface, r *http.Request) bodyParser {
	switch x := surf.(type) {
	case wire.MemoParser:
		return func(body []byte, q url.Values, memo wire.Memo) (wire.Request, error) {
			return x.ParseRequestMemo(body, q, r.Header, memo)
		}
	case headerJudged:
		return func(body []byte, q url.Values, _ wire.Memo) (wire.Request, error) {
			return x.ParseRequestHeader(body, q, r.Header)
		}
	}
	return func(body []byte, q url.Values, _ wire.Memo) (wire.Request, error) { return surf.ParseRequest(body, q) }
}

// countParser is requestParser for the token-counting route of tc.
func countParser(tc tokenCounter, r *http.Request) bodyParser {
	if hj, ok := tc.(countHeaderJudged); ok {
		return func(body []byte, q url.Values, _ wire.Memo) (wire.Request, error) {
			return hj.ParseCountTokensHeader(body, q, r.Header)
		}
	}
	return func(body []byte, q url.Values, _ wire.Memo) (wire.Request, error) {
		return tc.ParseCountTokens(body, q)
	}
}
