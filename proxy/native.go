package proxy

import "net/http"

// nativeSessionHeaders are the headers in which agents name their own run,
// in the order they are tried, with the prefix that keeps each agent's
// ids apart from the others' and from Agent-Hooks-Session ids. Measured on
// the agents' captured requests (e2e/testdata): Claude Code and the
// Claude Agent SDK send X-Claude-Code-Session-Id, one per run; Codex sends
// Session-Id and Thread-Id, one per session.
var nativeSessionHeaders = [...]struct{ header, prefix string }{
	{"X-Claude-Code-Session-Id", "claude-code:"},
	{"Session-Id", "session-id:"},
	{"Thread-Id", "thread-id:"},
}

// maxNativeSessionID bounds the id an agent sends (a UUID is 36 bytes).
const maxNativeSessionID = 128

// nativeSessionID returns the managed session id an agent's own run id
// names, prefixed by the header it came in, or "" when the request carries
// none the gateway can use. It is a session id in the key's namespace, as
// an Agent-Hooks-Session id is: the client chooses it, its key owns it.
func nativeSessionID(h http.Header) string {
	for _, n := range nativeSessionHeaders {
		if v := h.Get(n.header); v != "" {
			if !isNativeID(v) {
				return "" // a value the gateway will not echo: per-request
			}
			return n.prefix + v
		}
	}
	return ""
}

// isNativeID reports whether v is 1 to maxNativeSessionID ASCII letters,
// digits, '.', '_', ':' or '-': what the agents send (UUIDs), and safe in
// a response header and a record.
func isNativeID(v string) bool {
	if len(v) == 0 || len(v) > maxNativeSessionID {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}
