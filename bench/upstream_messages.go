package main

import (
	"fmt"
)

// messagesJSON is the non-streamed Anthropic Messages answer: one text
// block of o.contentBytes, or a tool_use block.
func messagesJSON(o upstreamOptions) []byte {
	content, stop := `{"type":"text","text":`+jsonString(filler(o.contentBytes))+`}`, "end_turn"
	if o.toolCall {
		content = `{"type":"tool_use","id":"toolu_bench_0","name":"send_email","input":` + toolArguments + `}`
		stop = "tool_use"
	}
	return []byte(messagesObject("["+content+"]", fmt.Sprintf("%q", stop),
		`{"input_tokens":400,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":200}`))
}

// messagesSSE is the streamed Messages answer, one element per event.
func messagesSSE(o upstreamOptions) [][]byte { return messagesStream(o).events }

// messagesStream is the streamed Messages answer as Anthropic sends it:
// message_start, one text block (start, a ping, o.chunks text deltas,
// stop), message_delta with the stop reason and usage, message_stop.
func messagesStream(o upstreamOptions) streamAnswer {
	var evs [][]byte
	emit := func(typ, format string, args ...any) {
		evs = append(evs, fmt.Appendf(nil, "event: %s\ndata: {\"type\":%q%s}\n\n", typ, typ, fmt.Sprintf(format, args...)))
	}
	emit("message_start", `,"message":%s`, messagesObject("[]", "null",
		`{"input_tokens":400,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}`))
	emit("content_block_start", `,"index":0,"content_block":{"type":"text","text":""}`)
	emit("ping", "")
	first, texts := len(evs), o.deltaTexts()
	for _, t := range texts {
		emit("content_block_delta", `,"index":0,"delta":{"type":"text_delta","text":%s}`, jsonString(t))
	}
	emit("content_block_stop", `,"index":0`)
	emit("message_delta", `,"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":200}`)
	emit("message_stop", "")
	return streamAnswer{events: evs, first: first, n: len(texts)}
}

// messagesObject is a Message object with the given content array, stop
// reason and usage (JSON texts).
func messagesObject(content, stopReason, usage string) string {
	return fmt.Sprintf(`{"id":"msg_bench","type":"message","role":"assistant","model":"claude-bench","content":%s,"stop_reason":%s,"stop_sequence":null,"usage":%s}`,
		content, stopReason, usage)
}
