package proxy

import (
	"net/http"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/netguard"
	"github.com/hooks-gateway/hooks-gateway/metrics"
)

// overloadRetry is the Retry-After of a request refused for load: long
// enough to let a slot free, short enough not to idle a client.
const overloadRetry = time.Second

// isProbe reports whether r is a health or metrics probe: those are
// answered whatever the load, on any connection, and not counted against
// server.max_requests.
func isProbe(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch r.URL.Path {
	case "/healthz", "/readyz", "/metrics":
		return true
	}
	return false
}

// admit keeps the gateway answering under load. Probes always pass; a
// connection admitted from the probe reserve (netguard.Reserved) serves
// them only, once, and then closes; every other request takes one of
// Options.MaxRequests slots, or is answered 503 with Retry-After at once.
func (s *Server) admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reserved := netguard.Reserved(r.Context())
		if reserved {
			// A reserve slot serves one request: keep-alive would hold it.
			w.Header().Set("Connection", "close")
		}
		if isProbe(r) {
			next.ServeHTTP(w, r)
			return
		}
		if reserved {
			s.metrics.Refused(metrics.RefusedProbeOnly)
			s.overloaded(w, r, "the gateway is at its connection limit")
			return
		}
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		if max := s.opts.MaxRequests; max > 0 && n > int64(max) {
			s.metrics.Refused(metrics.RefusedRequests)
			s.overloaded(w, r, "the gateway is at its limit of concurrent requests")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// overloaded answers 503 with Retry-After, in the envelope of the
// surface the request was for.
func (s *Server) overloaded(w http.ResponseWriter, r *http.Request, msg string) {
	err := &apiError{status: http.StatusServiceUnavailable, typ: typeGatewayError, code: "overloaded",
		message: msg + "; retry shortly", retryAfter: overloadRetry}
	for _, surf := range s.opts.Surfaces {
		if p := surfacePath(surf.API()); r.URL.Path == p || r.URL.Path == p+"/count_tokens" {
			writeSurfaceError(w, surf, err)
			return
		}
	}
	writeError(w, err)
}

// RequestsInFlight returns the requests being handled, probes not counted.
func (s *Server) RequestsInFlight() int { return int(s.inFlight.Load()) }
