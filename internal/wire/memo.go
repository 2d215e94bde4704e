package wire

import (
	"net/http"
	"net/url"
)

// Memo is a session's memory of the wire units its requests sent before
// (see internal/sessioncache): a surface that finds a unit's exact bytes
// there reuses its projection instead of reading it again. A nil Memo
// remembers nothing.
type Memo interface {
	// Unit returns what was kept for the unit whose bytes are raw, within
	// scope (the surface and whatever else the projection depends on).
	Unit(scope any, raw []byte) (any, bool)
	// KeepUnit keeps v for raw within scope; size estimates v's memory
	// beyond raw's.
	KeepUnit(scope any, raw []byte, v any, size int)
	// KeepNode has the session remember canonical bytes and verdicts for
	// obj, a projected object it shares and nothing modifies.
	KeepNode(obj map[string]any)
}

// MemoParser is a surface that reuses a session's Memo when parsing.
type MemoParser interface {
	// ParseRequestMemo is ParseRequest for a request sent with header h
	// in a session whose memo is memo (nil: none). The result is the
	// same request ParseRequest makes of the body.
	ParseRequestMemo(body []byte, query url.Values, h http.Header, memo Memo) (Request, error)
}
