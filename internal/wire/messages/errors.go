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

// ErrorBody implements wire.Surface: {"type":"error","error":{"type",
// "message","code","param","interception_point","session_id",
// "sequence"}}, the type from the status, code the verdict reason or the
// gateway's error code.
func (s *Surface) ErrorBody(e wire.Error) []byte {
	code := e.Code
	if code == "" {
		code = e.Type
	}
	env := errorEnvelope{Type: "error", Error: errorDetail{
		Type:              AnthropicErrorType(e.Status),
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
