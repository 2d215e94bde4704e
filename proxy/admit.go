package proxy

import (
	"io"
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
// Options.MaxRequests slots, and one of its client's
// Options.MaxRequestsPerClient, or is answered 503 with Retry-After at once.
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
			refuseReserved(w, r, s)
			return
		}
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		if max := s.opts.MaxRequests; max > 0 && n > int64(max) {
			s.metrics.Refused(metrics.RefusedRequests)
			s.overloaded(w, r, "the gateway is at its limit of concurrent requests")
			return
		}
		if max := s.opts.MaxRequestsPerClient; max > 0 {
			who := s.clientOf(r)
			if !s.clientSlots.acquire(who, max) {
				s.metrics.Refused(metrics.RefusedClient)
				s.overloaded(w, r, "this client is at its limit of concurrent requests")
				return
			}
			defer s.clientSlots.release(who)
		}
		next.ServeHTTP(w, r)
	})
}

// overloaded answers 503 with Retry-After, in the envelope of the
// surface the request was for.
func (s *Server) overloaded(w http.ResponseWriter, r *http.Request, msg string) {
	if !drainedSmallBody(w, r) {
		// Close rather than wait for a body the client may still be
		// sending: that would hold the answer until read_timeout.
		w.Header().Set("Connection", "close")
	}
	err := overloadedError(msg+"; retry shortly", overloadRetry)
	for _, surf := range s.opts.Surfaces {
		if p := surfacePath(surf.API()); r.URL.Path == p || r.URL.Path == p+"/count_tokens" {
			writeSurfaceError(w, surf, err)
			return
		}
	}
	writeError(w, err)
}

// drainBound and drainWait bound what a refusal reads of a request body to
// keep its connection: a small body already sent, the usual case.
const (
	drainBound = 64 << 10
	drainWait  = 5 * time.Millisecond
)

// drainedSmallBody reads the rest of a small request body that has
// already arrived (within drainWait), so the connection can carry the
// client's retry instead of costing a new one while the gateway is
// loaded. A body that is large, of unknown length or not all there yet
// is left unread, and the caller closes the connection.
func drainedSmallBody(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength < 0 || r.ContentLength > drainBound {
		return false
	}
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(drainWait)
	if rc.SetReadDeadline(deadline) != nil {
		return false
	}
	n, err := io.Copy(io.Discard, io.LimitReader(r.Body, drainBound+1))
	if err != nil || n > drainBound || rc.SetReadDeadline(time.Time{}) != nil {
		return false
	}
	// At the body's end net/http starts its read-ahead for the next
	// request under this deadline. Had the deadline passed before it was
	// cleared, that read failed and cancelled the connection's context,
	// which every later request on the connection inherits: close it.
	return time.Now().Before(deadline)
}

// overloadedError is the 503 of a request refused for load (requests,
// connections or buffered bytes), retryable after retry.
func overloadedError(msg string, retry time.Duration) *apiError {
	return &apiError{status: http.StatusServiceUnavailable, typ: typeGatewayError, code: "overloaded", message: msg, retryAfter: retry}
}

// RequestsInFlight returns the requests being handled, probes not counted.
func (s *Server) RequestsInFlight() int { return int(s.inFlight.Load()) }

// reserveRefusal is the whole answer to a non-probe request on a reserve
// connection.
const reserveRefusal = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"

// refuseReserved answers 503 and closes the connection at once: the
// server's own close would first wait for the client to stop sending its
// body, holding a reserve slot meant for probes.
func refuseReserved(w http.ResponseWriter, r *http.Request, s *Server) {
	c, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.overloaded(w, r, "the gateway is at its connection limit")
		return
	}
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write([]byte(reserveRefusal))
	c.Close()
}

// ProbeHandler serves the probes only (/healthz, /readyz, /metrics), for
// a listener of their own (listeners.probes).
func (s *Server) ProbeHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.handleHealth)
	mux.HandleFunc("GET /readyz", s.handleReady)
	mux.Handle("GET /metrics", s.metrics.Handler())
	return mux
}
