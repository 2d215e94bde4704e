package messages

import (
	"encoding/json"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// synthesize renders a released Message body as the event sequence the
// API sends: message_start (content empty, stop_reason and stop_sequence
// null), for each block a content_block_start holding the block without
// its streamed members, one delta per streamed member (text, citations,
// thinking, signature, tool input as one partial_json) and a
// content_block_stop, then message_delta (stop_reason, stop_sequence,
// usage) and message_stop.
func synthesize(body []byte) ([]byte, error) {
	v, err := jsonvalue.Decode(body)
	msg, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, &wire.WriteBackError{Msg: "the released message cannot be streamed"}
	}
	content, _ := msg["content"].([]any)
	out := appendMessageStart(nil, msg)
	for i, e := range content {
		out = appendBlockEvents(out, i, e.(map[string]any))
	}
	return appendMessageEnd(out, msg), nil
}

// appendMessageStart renders message_start for msg: its metadata, content
// empty, stop_reason and stop_sequence null.
func appendMessageStart(out []byte, msg map[string]any) []byte {
	start := make(map[string]any, len(msg))
	for k, x := range msg {
		start[k] = x
	}
	start["content"] = []any{}
	start["stop_reason"] = nil
	start["stop_sequence"] = nil
	return appendJSONEvent(out, "message_start", map[string]any{"type": "message_start", "message": start})
}

// appendMessageEnd renders message_delta (stop_reason, stop_sequence,
// stop_details, which the SDKs take from here, null when absent,
// container when present, usage, and the delta members of msg named in
// more) and message_stop.
func appendMessageEnd(out []byte, msg map[string]any, more ...string) []byte {
	delta := map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": msg["stop_sequence"], "stop_details": msg["stop_details"]}
	if c, ok := msg["container"]; ok {
		delta["container"] = c
	}
	for _, k := range more {
		if v, ok := msg[k]; ok {
			delta[k] = v
		}
	}
	md := map[string]any{"type": "message_delta", "delta": delta}
	if u, ok := msg["usage"]; ok {
		md["usage"] = u
	} else {
		md["usage"] = map[string]any{}
	}
	out = appendJSONEvent(out, "message_delta", md)
	return appendJSONEvent(out, "message_stop", map[string]any{"type": "message_stop"})
}

func appendBlockEvents(out []byte, i int, b map[string]any) []byte {
	idx := jsonNumber(i)
	startBlock := make(map[string]any, len(b))
	for k, x := range b {
		startBlock[k] = x
	}
	var deltas []map[string]any
	switch b["type"] {
	case "text":
		startBlock["text"] = ""
		delete(startBlock, "citations")
		cites, _ := b["citations"].([]any)
		for _, c := range cites {
			deltas = append(deltas, map[string]any{"type": "citations_delta", "citation": c})
		}
		if t, _ := b["text"].(string); t != "" {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": t})
		}
	case "thinking":
		startBlock["thinking"], startBlock["signature"] = "", ""
		if t, _ := b["thinking"].(string); t != "" {
			deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": t})
		}
		if s, _ := b["signature"].(string); s != "" {
			deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": s})
		}
	case "tool_use":
		startBlock["input"] = map[string]any{}
		if in, _ := b["input"].(map[string]any); len(in) > 0 {
			raw, _ := jsonvalue.Marshal(in)
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": string(raw)})
		}
	}
	out = appendJSONEvent(out, "content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": startBlock})
	for _, d := range deltas {
		out = appendJSONEvent(out, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": d})
	}
	return appendJSONEvent(out, "content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
}

func appendJSONEvent(out []byte, name string, v any) []byte {
	data, _ := jsonvalue.Marshal(v) // decoded values re-encode
	return appendEvent(out, name, data)
}

func jsonNumber(i int) any { return json.Number(strconv.Itoa(i)) }
