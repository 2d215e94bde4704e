package main

import (
	"encoding/json"
	"strings"
)

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	name string // the event: line, if any
	data string // the data: lines, joined by \n
}

// parseSSE splits a stream into its events that carry data (comments and
// data-less events are dropped). A final event without its blank line
// still counts: a cut stream's last event is what the client saw.
func parseSSE(body string) []sseEvent {
	body = strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n")
	var out []sseEvent
	var cur sseEvent
	var data []string
	end := func() {
		if data != nil {
			cur.data = strings.Join(data, "\n")
			out = append(out, cur)
		}
		cur, data = sseEvent{}, nil
	}
	for line := range strings.Lines(body) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			end()
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			cur.name = value
		case "data":
			data = append(data, value)
		}
	}
	end()
	return out
}

// streamSurface reads one API surface's stream: the answer text an event
// carries, and whether it is the surface's normal last event.
type streamSurface struct {
	text     func(data string) string
	terminal func(ev sseEvent) bool
}

// surfaceOf is the stream reader of a model-call route.
func surfaceOf(path string) streamSurface {
	switch path {
	case responsesPath:
		return streamSurface{
			text: func(data string) string {
				var ev struct{ Type, Delta string }
				if json.Unmarshal([]byte(data), &ev) != nil || ev.Type != "response.output_text.delta" {
					return ""
				}
				return ev.Delta
			},
			terminal: func(ev sseEvent) bool { return eventType(ev) == "response.completed" },
		}
	case messagesPath:
		return streamSurface{
			text: func(data string) string {
				var ev struct {
					Type  string
					Delta struct{ Type, Text string }
				}
				if json.Unmarshal([]byte(data), &ev) != nil || ev.Type != "content_block_delta" || ev.Delta.Type != "text_delta" {
					return ""
				}
				return ev.Delta.Text
			},
			terminal: func(ev sseEvent) bool { return eventType(ev) == "message_stop" },
		}
	default:
		return streamSurface{
			text: func(data string) string {
				var ev struct {
					Choices []struct {
						Delta struct{ Content string }
					}
				}
				if json.Unmarshal([]byte(data), &ev) != nil || len(ev.Choices) == 0 {
					return ""
				}
				return ev.Choices[0].Delta.Content
			},
			terminal: func(ev sseEvent) bool { return ev.data == "[DONE]" },
		}
	}
}

// eventType is the "type" of an event's JSON data.
func eventType(ev sseEvent) string {
	var t struct{ Type string }
	json.Unmarshal([]byte(ev.data), &t)
	return t.Type
}
