// Package responses is the OpenAI Responses API surface (POST
// /v1/responses) behind wire.Surface: it parses the client's request
// under a closed world of members, input items and tools, projects it
// into the normalized conversation of package wire, writes verdicted
// conversations back onto input items (untouched items keep their bytes),
// parses JSON answers and buffers typed event streams, assembling them as
// openai-go and Codex do (items from response.output_item.done, the
// terminal response.completed), and releases the upstream's bytes or
// events when the verdict and the closed world leave them untouched, else
// re-renders or synthesizes them from the verdicted answer. It also
// implements wire.Incremental: OpenStream reads the same way an event at
// a time, reports while the answer is one plain output_text part, and
// renders the client's stream (all synthesized) around the released
// text.
//
// docs/responses-wire.md lists every member, item, tool type and event
// with its treatment; RequestMembers, ToolTypes, OutputItems and
// StreamEvents publish the same tables and a test holds them together.
package responses
