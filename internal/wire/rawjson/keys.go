package rawjson

// knownKey returns the member name held by an escape-free key token's
// text when it is one of the request members the surfaces parse on every
// call, as a constant; otherwise "". A hit spares DecodeKey the
// allocation of the key; the switch compares without converting.
func knownKey(b []byte) string {
	if len(b) == 0 || len(b) > 24 {
		return ""
	}
	switch string(b) {
	case "model":
		return "model"
	case "messages":
		return "messages"
	case "stream":
		return "stream"
	case "stream_options":
		return "stream_options"
	case "include_usage":
		return "include_usage"
	case "temperature":
		return "temperature"
	case "top_p":
		return "top_p"
	case "max_tokens":
		return "max_tokens"
	case "max_completion_tokens":
		return "max_completion_tokens"
	case "max_output_tokens":
		return "max_output_tokens"
	case "tools":
		return "tools"
	case "tool_choice":
		return "tool_choice"
	case "user":
		return "user"
	case "n":
		return "n"
	case "seed":
		return "seed"
	case "stop":
		return "stop"
	case "metadata":
		return "metadata"
	case "response_format":
		return "response_format"
	case "input":
		return "input"
	case "instructions":
		return "instructions"
	case "system":
		return "system"
	case "role":
		return "role"
	case "content":
		return "content"
	case "type":
		return "type"
	case "text":
		return "text"
	case "id":
		return "id"
	// The members of the items and blocks an agent's history repeats
	// (function calls and their outputs, tool_use and tool_result blocks)
	// and of tool declarations.
	case "call_id":
		return "call_id"
	case "arguments":
		return "arguments"
	case "name":
		return "name"
	case "status":
		return "status"
	case "output":
		return "output"
	case "namespace":
		return "namespace"
	case "tool_use_id":
		return "tool_use_id"
	case "is_error":
		return "is_error"
	case "cache_control":
		return "cache_control"
	case "description":
		return "description"
	case "parameters":
		return "parameters"
	case "input_schema":
		return "input_schema"
	case "strict":
		return "strict"
	case "encrypted_content":
		return "encrypted_content"
	case "summary":
		return "summary"
	case "signature":
		return "signature"
	case "thinking":
		return "thinking"
	}
	return ""
}
