package main

import (
	"encoding/json"
	"fmt"
)

// chatRequest is a compact chat-completion request whose conversation is
// about size bytes: alternating user and assistant turns after a system
// prompt, ending on a user turn (so the gateway emits one input).
func chatRequest(size int, stream, tools bool) []byte {
	const turn = "Please summarise the quarterly report for the finance team, with the main figures."
	msgs := []any{map[string]any{"role": "system", "content": "You are a careful assistant."}}
	req := map[string]any{"model": "gpt-bench", "temperature": 0.2, "stream": stream}
	if tools {
		req["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "send_email", "description": "Send an e-mail.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{
				"to": map[string]any{"type": "string"}, "subject": map[string]any{"type": "string"}, "body": map[string]any{"type": "string"},
			}},
		}}}
	}
	for i := 0; ; i++ {
		req["messages"] = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("Question %d: %s", i, turn)})
		b, err := json.Marshal(req)
		if err != nil {
			panic(err) // static shapes: cannot fail
		}
		if len(b) >= size {
			return b
		}
		msgs = append(msgs,
			map[string]any{"role": "user", "content": fmt.Sprintf("Question %d: %s", i, turn)},
			map[string]any{"role": "assistant", "content": fmt.Sprintf("Answer %d: revenue grew, costs fell, and the outlook is stable overall.", i)})
	}
}
