// Package messages is the Anthropic Messages surface of the gateway
// (POST /v1/messages and /v1/messages/count_tokens): it implements
// wire.Surface over the Messages wire, JSON and streaming.
//
// The wire is a closed world (docs/messages-wire.md lists it; a test holds
// the tables to RequestMembers, RequestBlocks, ResponseMembers and
// StreamEvents). Requests: every top-level member is projected, is
// transport, or is refused; every content block type and block member is
// known or refused; provider-executed tools and mcp_servers are refused
// unless Options.AllowServerTools. Answers: unknown members are removed,
// unknown blocks and stop reasons refused. Streams are buffered and
// assembled as the official SDKs do, and whatever the SDKs would read
// differently or ignore is refused.
//
// Bodies are handled as raw JSON: what a verdict did not touch keeps its
// bytes (wire messages, blocks, citations, signatures), what it changed is
// rendered. Thinking blocks are signed by the provider and cannot be
// re-signed, so a verdict may remove thinking but never change it.
//
// Errors are typed like every surface's: *wire.RequestError (400),
// *wire.ResponseError and *wire.StreamError (502, ErrBufferLimit),
// *wire.WriteBackError (deny host_error:transform_invalid). None quotes
// payload: paths use indices and the gateway's own member names.
package messages
