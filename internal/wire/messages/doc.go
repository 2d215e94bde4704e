// Package messages is the Anthropic Messages surface of the gateway
// (POST /v1/messages and /v1/messages/count_tokens): it implements
// wire.Surface over the Messages wire, JSON and streaming.
//
// A byte crosses only if a verdict covered it or the gateway made it
// (docs/messages-wire.md lists every member; a test holds the tables to
// RequestMembers, RequestBlocks, ResponseMembers and StreamEvents).
// Requests: every member, at any depth, is projected (top-level members
// into model.params, a message's, block's or tool's beside their
// projection) and forwarded as judged, or is transport; provider-executed
// tools and mcp_servers are refused unless Options.AllowServerTools.
// Answers: the id is minted, the model is the request's, metadata holds
// counts and documented enumerations or is projected as member parts,
// unknown members are projected; unknown blocks and stop reasons are
// refused. Options.StrictMembers refuses unknown request members and
// removes unknown answer members instead. Opaque blobs that round-trip
// through the client (thinking signatures, redacted thinking, citation
// indexes, container ids) are sealed in answers and opened in requests;
// one that does not open is refused. Streams are buffered and assembled
// as the official SDKs do, and whatever the SDKs would read differently
// or ignore is refused.
//
// Bodies are handled as raw JSON: what a verdict did not touch keeps its
// bytes (wire messages, blocks, citations), what it changed is rendered.
// Thinking blocks are signed by the provider and cannot be re-signed, so
// a verdict may remove thinking but never change it.
//
// Errors are typed like every surface's: *wire.RequestError (400),
// *wire.ResponseError and *wire.StreamError (502, ErrBufferLimit),
// *wire.WriteBackError (deny host_error:transform_invalid). None quotes
// payload: paths use indices and the gateway's own member names.
package messages
