package messages

import (
	"encoding/json"
	"net/http"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// errorEnvelope is Anthropic's error body with the gateway's verdict
// members inside "error" (the SDKs keep unknown members on the error they
// raise, and choose its class by HTTP status).
type errorEnvelope struct {
	Type  string      `json:"type"`
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Type              string `json:"type"`
	Message           string `json:"message"`
	Code              string `json:"code,omitempty"`
	Param             string `json:"param,omitempty"`
	InterceptionPoint string `json:"interception_point,omitempty"`
	SessionID         string `json:"session_id,omitempty"`
	Sequence          *int64 `json:"sequence,omitempty"`
}

// deniedType is the gateway's error type of a policy deny.
const deniedType = "agent_hooks_denied"

// AnthropicErrorType maps an HTTP status to the error type Anthropic
// sends with it.
func AnthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return "timeout_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 400 && status < 500 {
		return "invalid_request_error"
	}
	return "api_error"
}

// PolicyDenyStatus is the HTTP status of a policy deny on this surface:
// 451, not the gateway's usual 403. Measured with Claude Code 2.1.332: it
// shows every 403 as "Failed to authenticate. API Error: 403 …", which
// sends users to check their key, and retries 400, 409 and 422 five
// times; a 451 it shows as "API Error: 451 <the policy's message>" and
// does not retry. The Anthropic SDKs raise it as an APIStatusError with
// status 451 and the error type permission_error.
func (s *Surface) PolicyDenyStatus() int { return http.StatusUnavailableForLegalReasons }

// ErrorBody implements wire.Surface: {"type":"error","error":{"type",
// "message","code","param","interception_point","session_id",
// "sequence"}}, the type from the status, code the verdict reason or the
// gateway's error code.
func (s *Surface) ErrorBody(e wire.Error) []byte {
	code := e.Code
	if code == "" {
		code = e.Type
	}
	typ := AnthropicErrorType(e.Status)
	if e.Type == deniedType {
		typ = "permission_error" // whatever the status: a policy said no
	}
	env := errorEnvelope{Type: "error", Error: errorDetail{
		Type:              typ,
		Message:           e.Message,
		Code:              code,
		Param:             e.Param,
		InterceptionPoint: e.Point,
		SessionID:         e.SessionID,
		Sequence:          e.Sequence,
	}}
	b, _ := json.Marshal(env) // plain strings and ints always marshal
	return b
}

// StreamError implements wire.Surface: an "error" event carrying the
// ErrorBody, which the SDKs raise as an API error mid-stream.
func (s *Surface) StreamError(e wire.Error) []byte {
	b := append([]byte("event: error\ndata: "), s.ErrorBody(e)...)
	return append(b, "\n\n"...)
}
