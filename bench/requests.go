package main

import (
	"encoding/json"
	"fmt"
)

// The bench conversation: a system prompt, then alternating user and
// assistant turns, ending on a user turn (so the gateway emits one input).
const (
	systemPrompt = "You are a careful assistant."
	userTurn     = "Please summarise the quarterly report for the finance team, with the main figures."
)

// userText and assistantText are the i-th turns of the conversation.
func userText(i int) string { return fmt.Sprintf("Question %d: %s", i, userTurn) }
func assistantText(i int) string {
	return fmt.Sprintf("Answer %d: revenue grew, costs fell, and the outlook is stable overall.", i)
}

// toolSchema is the send_email tool's parameter schema.
func toolSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{
		"to": map[string]any{"type": "string"}, "subject": map[string]any{"type": "string"}, "body": map[string]any{"type": "string"},
	}}
}

// growRequest adds turns to req's conversation (under key, after head)
// until the compact request is at least size bytes. turn renders one
// message.
func growRequest(req map[string]any, key string, head []any, size int, turn func(role, text string) any) []byte {
	msgs := head
	for i := 0; ; i++ {
		req[key] = append(msgs, turn("user", userText(i)))
		b, err := json.Marshal(req)
		if err != nil {
			panic(err) // static shapes: cannot fail
		}
		if len(b) >= size {
			return b
		}
		msgs = append(msgs, turn("user", userText(i)), turn("assistant", assistantText(i)))
	}
}

// plainTurn is a {role, content} message with string content, the shape
// all three surfaces accept.
func plainTurn(role, text string) any { return map[string]any{"role": role, "content": text} }

// chatRequest is a compact chat-completion request whose conversation is
// about size bytes.
func chatRequest(size int, stream, tools bool) []byte {
	req := map[string]any{"model": "gpt-bench", "temperature": 0.2, "stream": stream}
	if tools {
		req["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "send_email", "description": "Send an e-mail.", "parameters": toolSchema(),
		}}}
	}
	head := []any{plainTurn("system", systemPrompt)}
	return growRequest(req, "messages", head, size, plainTurn)
}

// responsesRequest is a compact Responses request of about size bytes:
// the system prompt as instructions, the conversation as input messages,
// nothing stored at the provider.
func responsesRequest(size int, stream, tools bool) []byte {
	req := map[string]any{"model": "gpt-bench", "temperature": 0.2, "stream": stream, "store": false, "instructions": systemPrompt}
	if tools {
		req["tools"] = []any{map[string]any{"type": "function",
			"name": "send_email", "description": "Send an e-mail.", "parameters": toolSchema(),
		}}
	}
	return growRequest(req, "input", nil, size, func(role, text string) any {
		return map[string]any{"type": "message", "role": role, "content": text}
	})
}

// messagesRequest is a compact Anthropic Messages request of about size
// bytes: the system prompt as system, the conversation as messages.
func messagesRequest(size int, stream, tools bool) []byte {
	req := map[string]any{"model": "claude-bench", "max_tokens": 1024, "temperature": 0.2, "stream": stream, "system": systemPrompt}
	if tools {
		req["tools"] = []any{map[string]any{
			"name": "send_email", "description": "Send an e-mail.", "input_schema": toolSchema(),
		}}
	}
	return growRequest(req, "messages", nil, size, plainTurn)
}
