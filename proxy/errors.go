package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
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

// envelope is the JSON error body.
type envelope struct {
	Error envelopeBody `json:"error"`
}

type envelopeBody struct {
	Message           string  `json:"message"`
	Type              string  `json:"type"`
	Code              string  `json:"code"`
	Param             *string `json:"param"`
	InterceptionPoint string  `json:"interception_point,omitempty"`
	SessionID         string  `json:"session_id,omitempty"`
	Sequence          *int64  `json:"sequence,omitempty"`
}

func (e *apiError) body() []byte {
	env := envelope{Error: envelopeBody{
		Message:           e.message,
		Type:              e.typ,
		Code:              e.code,
		InterceptionPoint: string(e.point),
		SessionID:         e.session,
		Sequence:          e.sequence,
	}}
	if e.param != "" {
		env.Error.Param = &e.param
	}
	b, _ := json.Marshal(env) // plain strings and ints always marshal
	return b
}

// writeError answers err with its status and envelope.
func writeError(w http.ResponseWriter, err error) {
	ae := asAPIError(err)
	b := ae.body()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(ae.status)
	w.Write(b)
}
