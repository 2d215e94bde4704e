package config

import (
	"strconv"
)

// One set of limits: the body limits (limits.max_request_bytes,
// limits.max_response_bytes, streaming.buffer_limit) decide what the gateway
// accepts; enforcement.max_context_bytes, the §12.3 bound on the context an
// emission builds from a body, must never be the one that refuses a body
// within them. The engine counts a context's target once when it is the
// member it mirrors (as every gateway-built context's is), so a context
// holds each body's projection once; re-encoding can at most double a body
// (a raw U+2028 or U+2029, 3 bytes on the wire, is written as the 6-byte
// escape; every other character is written no longer than the wire form
// could carry it), and the members that do not come from the body (ids,
// model, trace, tenant, usage, extensions) are covered by
// ContextEnvelopeBytes.

// ContextEnvelopeBytes is the room a context bound leaves, beyond twice the
// largest body limit, for the members that do not come from that body.
// Header-derived ones are capped together by net/http's 1 MiB default
// header limit.
const ContextEnvelopeBytes = 1 << 20

// DefaultMaxContextBytes is max_context_bytes as derived from the default
// body limits (21 MiB).
const DefaultMaxContextBytes = 2*max(DefaultMaxRequestBytes, DefaultMaxResponseBytes, DefaultBufferLimit) + ContextEnvelopeBytes

// RequiredContextBytes is the smallest enforcement.max_context_bytes with
// which no body within l and s is refused for its context's size: twice the
// largest body limit plus ContextEnvelopeBytes.
func RequiredContextBytes(l Limits, s Streaming) int64 {
	return 2*max(l.MaxRequestBytes, l.MaxResponseBytes, s.BufferLimit) + ContextEnvelopeBytes
}

// largestBodyLimit names the body limit RequiredContextBytes follows.
func largestBodyLimit(l Limits, s Streaming) (string, int64) {
	name, n := "limits.max_request_bytes", l.MaxRequestBytes
	if l.MaxResponseBytes > n {
		name, n = "limits.max_response_bytes", l.MaxResponseBytes
	}
	if s.BufferLimit > n {
		name, n = "streaming.buffer_limit", s.BufferLimit
	}
	return name, n
}

// deriveContextBound sets max_context_bytes from the body limits when the
// file leaves it out, so raising a body limit raises it along.
func (c *Config) deriveContextBound() {
	if _, set := c.lines["enforcement.max_context_bytes"]; !set {
		c.Enforcement.MaxContextBytes = int(RequiredContextBytes(c.Limits, c.Streaming))
	}
}

// contextBound reports a max_context_bytes set below what the body limits
// require: such a gateway would accept a body and then refuse the context
// built from it (host_error:context_invalid).
func (v *validator) contextBound() {
	e, l, s := v.c.Enforcement, v.c.Limits, v.c.Streaming
	if e.MaxContextBytes <= 0 || l.MaxRequestBytes <= 0 || l.MaxResponseBytes <= 0 || s.BufferLimit <= 0 {
		return // reported as not positive
	}
	need := RequiredContextBytes(l, s)
	if int64(e.MaxContextBytes) >= need {
		return
	}
	name, n := largestBodyLimit(l, s)
	v.problem("enforcement.max_context_bytes", "%s is below the %s the body limits require (2 × %s %s + %s for the members not taken from a body); raise it, leave it out to derive it, or lower the body limits",
		sizeText(int64(e.MaxContextBytes)), sizeText(need), name, sizeText(n), sizeText(ContextEnvelopeBytes))
}

// sizeText writes n bytes with the largest binary suffix that divides it.
func sizeText(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
