// Package responses is the OpenAI Responses API surface (POST
// /v1/responses) behind wire.Surface: it parses the client's request,
// projects every member of it into the normalized conversation of package
// wire (members it does not know too, unless the surface is strict),
// opens the gateway's seals the client hands back (item ids, encrypted
// reasoning), writes verdicted conversations back onto input items,
// parses JSON answers and buffers typed event streams, assembling them as
// openai-go and Codex do (items from response.output_item.done, the
// terminal response.completed), and renders the client's answer from the
// verdicted projection and values the gateway makes: minted and sealed
// ids, the request's model, its clock, enumerations. Streams are always
// synthesized from that rendering. It also implements wire.Incremental:
// OpenStream reads the same way an event at a time, reports while the
// answer is one plain output_text part, and renders the client's stream
// (all synthesized) around the released text.
//
// docs/responses-wire.md lists every member, item, tool type and event
// with its treatment; RequestMembers, ResponseMembers, ToolTypes,
// OutputItems and StreamEvents publish the same tables and a test holds
// them together.
package responses
