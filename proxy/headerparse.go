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

// requestParser is how surf parses r's body: with r's headers when the
// surface judges some of them.
func requestParser(surf wire.Surface, r *http.Request) func([]byte, url.Values) (wire.Request, error) {
	if hj, ok := surf.(headerJudged); ok {
		return func(body []byte, q url.Values) (wire.Request, error) { return hj.ParseRequestHeader(body, q, r.Header) }
	}
	return surf.ParseRequest
}

// countParser is requestParser for the token-counting route of tc.
func countParser(tc tokenCounter, r *http.Request) func([]byte, url.Values) (wire.Request, error) {
	if hj, ok := tc.(countHeaderJudged); ok {
		return func(body []byte, q url.Values) (wire.Request, error) {
			return hj.ParseCountTokensHeader(body, q, r.Header)
		}
	}
	return tc.ParseCountTokens
}
