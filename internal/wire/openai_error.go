package wire

import "encoding/json"

// openAIEnvelope is OpenAI's error body, with the gateway's verdict
// members beside the standard ones (clients ignore members they do not
// know and expose the body).
type openAIEnvelope struct {
	Error openAIError `json:"error"`
}

type openAIError struct {
	Message           string  `json:"message"`
	Type              string  `json:"type"`
	Code              string  `json:"code"`
	Param             *string `json:"param"`
	InterceptionPoint string  `json:"interception_point,omitempty"`
	SessionID         string  `json:"session_id,omitempty"`
	Sequence          *int64  `json:"sequence,omitempty"`
}

// OpenAIErrorBody renders e in OpenAI's error envelope:
// {"error":{"message","type","code","param",...}}. The OpenAI surfaces
// (chat completions, responses) answer errors with it.
func OpenAIErrorBody(e Error) []byte {
	env := openAIEnvelope{Error: openAIError{
		Message:           e.Message,
		Type:              e.Type,
		Code:              e.Code,
		InterceptionPoint: e.Point,
		SessionID:         e.SessionID,
		Sequence:          e.Sequence,
	}}
	if e.Param != "" {
		env.Error.Param = &e.Param
	}
	b, _ := json.Marshal(env) // plain strings and ints always marshal
	return b
}
