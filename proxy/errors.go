package proxy

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// Error types of the OpenAI-style error envelope.
const (
	typeDenied       = "agent_hooks_denied"
	typeHostError    = "agent_hooks_host_error"
	typeInvalid      = "invalid_request_error"
	typeUpstream     = "upstream_error"
	typeSession      = "agent_hooks_session_error"
	typeAuth         = "authentication_error"
	typeNotFound     = "not_found_error"
	typeGatewayError = "gateway_error"
)

// apiError is an error answered with OpenAI's error envelope, so existing
// clients surface it. It never carries target content: messages are either
// gateway-authored (naming fields and types only) or an interceptor's
// verdict message truncated like a record's.
type apiError struct {
	status  int
	typ     string
	code    string
	message string
	param   string
	// Set for verdict errors.
	point    enforcement.Point
	session  string
	sequence *int64
	// retryAfter, when positive, is sent as Retry-After (whole seconds,
	// rounded up).
	retryAfter time.Duration
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

func errorf(status int, typ, code, format string, args ...any) *apiError {
	return &apiError{status: status, typ: typ, code: code, message: fmt.Sprintf(format, args...)}
}

// verdictError maps a blocking outcome to its HTTP answer: a policy deny is
// 403; a host_error:* deny is an outage (503, 504 for a timeout).
func verdictError(out *enforcement.Outcome) *apiError {
	v := out.Verdict
	rec := out.Record
	e := &apiError{
		status:  http.StatusForbidden,
		typ:     typeDenied,
		code:    v.Reason,
		message: enforcement.TruncateMessage(v.Message),
		point:   rec.InterceptionPoint,
		session: rec.SessionID,
	}
	seq := rec.Sequence
	e.sequence = &seq
	if enforcement.IsHostError(v.Reason) {
		e.typ = typeHostError
		e.status = http.StatusServiceUnavailable
		if v.Reason == enforcement.ReasonInterceptorTimeout {
			e.status = http.StatusGatewayTimeout
		}
	}
	if v.Reason == enforcement.ReasonContextInvalid && len(rec.Verdicts) == 0 {
		// No interceptor ran: the engine refused the context itself (over
		// the §12.3 bounds, or outside the identity provider's domain).
		// That is bad input, not an outage; a 503 would invite retries. The
		// type stays agent_hooks_host_error: it is still a verdict.
		switch rec.InterceptionPoint {
		case enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall:
			e.status = http.StatusBadRequest // built from the client's request
		case enforcement.PostModelCall, enforcement.Output:
			e.status = http.StatusBadGateway // built from the model's answer
		}
	}
	if e.code == "" {
		e.code = "denied"
	}
	if e.message == "" {
		e.message = fmt.Sprintf("%s denied by policy", rec.InterceptionPoint)
	}
	return e
}

// asAPIError converts any handler error into its envelope.
func asAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var blocked *enforcement.BlockedError
	if errors.As(err, &blocked) {
		return verdictError(blocked.Outcome)
	}
	return errorf(http.StatusInternalServerError, typeGatewayError, "internal_error", "the gateway failed to process the request")
}

// wireError is e independent of any envelope, for a surface to render.
func (e *apiError) wireError() wire.Error {
	return wire.Error{Status: e.status, Type: e.typ, Code: e.code, Message: e.message, Param: e.param,
		Point: string(e.point), SessionID: e.session, Sequence: e.sequence}
}

// body is e in OpenAI's envelope, the gateway's own routes' format.
func (e *apiError) body() []byte { return wire.OpenAIErrorBody(e.wireError()) }

// writeError answers err with its status and OpenAI's envelope (the
// gateway's own routes).
func writeError(w http.ResponseWriter, err error) {
	ae := asAPIError(err)
	ae.setRetryAfter(w)
	writeErrorBody(w, ae.status, ae.body())
}

// writeSurfaceError answers err with its status and surf's envelope, so
// the surface's clients raise it.
func writeSurfaceError(w http.ResponseWriter, surf wire.Surface, err error) {
	ae := asAPIError(err)
	ae.setRetryAfter(w)
	we := ae.wireError()
	we.Status = surfaceStatus(surf, ae)
	writeErrorBody(w, we.Status, surf.ErrorBody(we))
}

// denyStatuser is a surface whose clients show a policy deny under
// another status than 403 (messages.Surface.PolicyDenyStatus).
type denyStatuser interface{ PolicyDenyStatus() int }

// surfaceStatus is the status e is answered with on surf.
func surfaceStatus(surf wire.Surface, e *apiError) int {
	if ds, ok := surf.(denyStatuser); ok && e.typ == typeDenied && e.status == http.StatusForbidden {
		return ds.PolicyDenyStatus()
	}
	return e.status
}

func writeErrorBody(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// setRetryAfter sends e's Retry-After, if it has one.
func (e *apiError) setRetryAfter(w http.ResponseWriter) {
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64((e.retryAfter+time.Second-1)/time.Second), 10))
	}
}
