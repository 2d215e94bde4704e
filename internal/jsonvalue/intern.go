package jsonvalue

// wellKnown returns, for the text of an escape-free string token that is
// one of the member names and enumerated values most frequent in the
// gateway's traffic (message roles, content part types, tool-call members),
// the same string as a constant boxed in an interface; otherwise nil.
// Returning a constant costs no allocation, where converting the input
// costs one for the bytes and one for the interface box: in a chat request
// most keys and every role are one of these. The switch compares the input
// without converting it.
func wellKnown(b []byte) any {
	if len(b) == 0 || len(b) > 20 {
		return nil
	}
	switch string(b) {
	// Members.
	case "role":
		return "role"
	case "content":
		return "content"
	case "type":
		return "type"
	case "text":
		return "text"
	case "name":
		return "name"
	case "id":
		return "id"
	case "tool_calls":
		return "tool_calls"
	case "tool_call_id":
		return "tool_call_id"
	case "function":
		return "function"
	case "arguments":
		return "arguments"
	case "description":
		return "description"
	case "parameters":
		return "parameters"
	case "properties":
		return "properties"
	case "required":
		return "required"
	case "image_url":
		return "image_url"
	case "url":
		return "url"
	case "detail":
		return "detail"
	case "call_id":
		return "call_id"
	case "output":
		return "output"
	case "input":
		return "input"
	case "status":
		return "status"
	case "tool_use_id":
		return "tool_use_id"
	case "is_error":
		return "is_error"
	case "cache_control":
		return "cache_control"
	case "refusal":
		return "refusal"
	case "annotations":
		return "annotations"
	case "index":
		return "index"
	case "delta":
		return "delta"
	case "finish_reason":
		return "finish_reason"
	case "message":
		return "message"
	// Values.
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	case "system":
		return "system"
	case "tool":
		return "tool"
	case "developer":
		return "developer"
	case "object":
		return "object"
	case "string":
		return "string"
	case "input_text":
		return "input_text"
	case "output_text":
		return "output_text"
	case "function_call":
		return "function_call"
	case "function_call_output":
		return "function_call_output"
	case "tool_use":
		return "tool_use"
	case "tool_result":
		return "tool_result"
	case "ephemeral":
		return "ephemeral"
	case "auto":
		return "auto"
	case "stop":
		return "stop"
	}
	return nil
}
