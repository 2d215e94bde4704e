package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The mock's Responses identifiers.
const (
	responsesID    = "resp_bench"
	responsesMsgID = "msg_bench"
)

// responsesUsage is the usage object of a completed Responses answer.
const responsesUsage = `{"input_tokens":400,"input_tokens_details":{"cached_tokens":0},"output_tokens":200,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":600}`

// responsesJSON is the non-streamed Responses answer: one output item, a
// message of o.contentBytes of text, or a function call.
func responsesJSON(o upstreamOptions) []byte {
	item := responsesMessageItem(filler(o.contentBytes), "completed")
	if o.toolCall {
		item = responsesFunctionCallItem()
	}
	return []byte(responsesObject("completed", "["+item+"]", responsesUsage))
}

// responsesSSE is the streamed Responses answer, one element per event.
func responsesSSE(o upstreamOptions) [][]byte { return responsesStream(o).events }

// responsesStream is the streamed Responses answer as OpenAI sends it: the
// typed events from response.created to response.completed, each with
// its event line and its sequence_number, the text in o.chunks deltas.
func responsesStream(o upstreamOptions) streamAnswer {
	texts := o.deltaTexts()
	full := strings.Join(texts, "")
	var evs [][]byte
	emit := func(typ, format string, args ...any) {
		body := fmt.Sprintf(format, args...)
		evs = append(evs, fmt.Appendf(nil, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, len(evs), body))
	}
	inProgress := responsesObject("in_progress", "[]", "null")
	emit("response.created", `"response":%s`, inProgress)
	emit("response.in_progress", `"response":%s`, inProgress)
	emit("response.output_item.added", `"output_index":0,"item":{"id":%q,"type":"message","status":"in_progress","content":[],"role":"assistant"}`, responsesMsgID)
	part := func(text string) string {
		return `{"type":"output_text","annotations":[],"logprobs":[],"text":` + jsonString(text) + `}`
	}
	loc := fmt.Sprintf(`"item_id":%q,"output_index":0,"content_index":0`, responsesMsgID)
	emit("response.content_part.added", `%s,"part":%s`, loc, part(""))
	first := len(evs)
	for _, t := range texts {
		emit("response.output_text.delta", `%s,"delta":%s,"logprobs":[]`, loc, jsonString(t))
	}
	emit("response.output_text.done", `%s,"text":%s,"logprobs":[]`, loc, jsonString(full))
	emit("response.content_part.done", `%s,"part":%s`, loc, part(full))
	item := responsesMessageItem(full, "completed")
	emit("response.output_item.done", `"output_index":0,"item":%s`, item)
	emit("response.completed", `"response":%s`, responsesObject("completed", "["+item+"]", responsesUsage))
	return streamAnswer{events: evs, first: first, n: len(texts)}
}

// responsesObject is a Response object with the given status, output
// array and usage (JSON texts). Like OpenAI's, it echoes the request
// parameters the client left unset with their defaults (reasoning, text,
// tool_choice, tools, metadata, ...), as every real answer does.
func responsesObject(status, output, usage string) string {
	return fmt.Sprintf(`{"id":%q,"object":"response","created_at":1700000000,"status":%q,"background":false,"error":null,"incomplete_details":null,"instructions":%s,"max_output_tokens":null,"max_tool_calls":null,"model":"gpt-bench","output":%s,"parallel_tool_calls":true,"previous_response_id":null,"prompt_cache_key":null,"reasoning":{"effort":null,"summary":null},"safety_identifier":null,"service_tier":"default","store":false,"temperature":0.2,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[],"top_logprobs":0,"top_p":1.0,"truncation":"disabled","usage":%s,"user":null,"metadata":{}}`,
		responsesID, status, jsonString(systemPrompt), output, usage)
}

// responsesMessageItem is an assistant message output item holding text.
func responsesMessageItem(text, status string) string {
	return fmt.Sprintf(`{"id":%q,"type":"message","status":%q,"content":[{"type":"output_text","annotations":[],"logprobs":[],"text":%s}],"role":"assistant"}`,
		responsesMsgID, status, jsonString(text))
}

// responsesFunctionCallItem is the mock's function call output item.
func responsesFunctionCallItem() string {
	return `{"id":"fc_bench_0","type":"function_call","status":"completed","arguments":` + jsonString(toolArguments) + `,"call_id":"call_bench_0","name":"send_email"}`
}

// jsonString is s as a JSON string literal.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Go string always marshals
	}
	return string(b)
}
