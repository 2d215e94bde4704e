package proxy

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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

// codeInternal is the code of an error no part of the gateway had an
// answer for: a gateway bug. The model-call pipeline and the emit API log
// and count each (Server.callError).
const codeInternal = "internal_error"

// asAPIError converts any handler error into its envelope.
func asAPIError(err error) *apiError {
	ae, _ := apiErrorOf(err)
	return ae
}

// apiErrorOf converts err into its envelope, and reports whether err had
// none of its own (internal_error).
func apiErrorOf(err error) (*apiError, bool) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae, false
	}
	var blocked *enforcement.BlockedError
	if errors.As(err, &blocked) {
		return verdictError(blocked.Outcome), false
	}
	return errorf(http.StatusInternalServerError, typeGatewayError, codeInternal, "the gateway failed to process the request"), true
}

// apiNone labels an internal_error outside a model call (the emit API),
// as hooks_gateway_requests_total labels other routes.
const apiNone wire.API = "none"

// Stages of a model call that are not interception points, for
// internal_error's log line and metric (a call's stage is otherwise the
// point it last emitted).
const (
	stageAdmission = "admission" // before the call's turn began
	stageUpstream  = "upstream"  // calling the upstream, reading its answer
	stageRelease   = "release"   // rendering and writing the answer
)

// callError is err in its envelope for a model call on api (apiNone: an
// emit API request). An error with no envelope of its own (answered
// internal_error) is logged and counted first: session, the stage the
// call was at, the last point it emitted and what failed, the error's
// types and its message without what it quotes. The gateway's own errors
// name fields, types and counts; an unexpected one from a library may
// quote what it parsed (strconv's parsing "…", a decoder's invalid
// character '…'), so quoted spans are left out.
func (s *Server) callError(api wire.API, session, stage string, point enforcement.Point, err error) *apiError {
	ae, internal := apiErrorOf(err)
	if internal {
		s.log.Error("internal error in a model call", "session", session, "api", string(api), "stage", stage,
			"point", string(point), "error_type", errorTypes(err), "error", withoutQuoted(err.Error()))
		s.metrics.InternalError(string(api), stage)
	}
	return ae
}

// maxLoggedError bounds the error message an internal_error log line
// carries.
const maxLoggedError = 300

// withoutQuoted is msg with every span between double quotes, single
// quotes or backquotes replaced by "…", at most maxLoggedError bytes.
func withoutQuoted(msg string) string {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(msg) && b.Len() < maxLoggedError; i++ {
		c := msg[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
			b.WriteString("…")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// errorTypes names err's Go type and those of the errors it wraps,
// outermost first.
func errorTypes(err error) string {
	var b strings.Builder
	for e := err; e != nil; e = errors.Unwrap(e) {
		if b.Len() > 0 {
			b.WriteString(" > ")
		}
		fmt.Fprintf(&b, "%T", e)
	}
	return b.String()
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
	writeJSONBody(w, ae.status, ae.body())
}

// writeSurfaceError answers err with its status and surf's envelope, so
// the surface's clients raise it.
func writeSurfaceError(w http.ResponseWriter, surf wire.Surface, err error) {
	ae := asAPIError(err)
	ae.setRetryAfter(w)
	we := ae.wireError()
	we.Status = surfaceStatus(surf, ae)
	writeJSONBody(w, we.Status, surf.ErrorBody(we))
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

// writeJSONBody answers status with the JSON body b (an error envelope,
// or an MCP route's JSON-RPC answer).
func writeJSONBody(w http.ResponseWriter, status int, b []byte) {
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
