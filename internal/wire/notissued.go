package wire

// NotIssued is the refusal of a request value at field that should be a
// seal the gateway put in an answer and does not open. It names the path,
// never the value.
func NotIssued(field string) *RequestError {
	return &RequestError{Field: field, Msg: "was not issued through this gateway (it is not a seal the gateway made, or it was sealed under a key the gateway no longer holds: a retired key, or a restart without seal.keys; start a new conversation)"}
}
