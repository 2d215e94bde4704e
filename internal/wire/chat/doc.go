// Package chat translates between the OpenAI chat-completions wire and
// AGENT-HOOKS-0.1 contexts: a request's messages become the
// pre_model_call target, an upstream response (JSON or a fully buffered
// SSE stream) becomes the post_model_call target {content, tool_calls,
// finish_reason}, and verdicted targets are written back onto the wire.
// For incremental mediation a stream is also read an event at a time
// (Surface.OpenStream), its plain text released as verdicts cover it.
//
// The rule, on both sides: a byte crosses only if a verdict covered it or
// the gateway made it. Every member of a request, a response or a stream
// chunk is exactly one of
//
//   - projected into the context, so policies see it and a transform is
//     written back (messages, tools, parameters; content, refusal,
//     reasoning under every name providers use, url citations, tool calls,
//     and the members the gateway does not know, as member parts, a tool
//     call's or a tool's members, or model.params);
//   - made by the gateway: the answer's id (minted), its model (the
//     request's), constants, integers and service_tier checked against its
//     enumeration; a shape check is never enough, since a credential is
//     token-shaped;
//   - removed before release (system_fingerprint, logprobs, obfuscation,
//     provider filter reports, unknown members in strict mode), or refused
//     (ambiguous JSON, output channels that cannot be mediated, unknown
//     request members in strict mode).
//
// Unknown members are judged by default; Options.StrictMembers refuses
// them (requests) or removes them (answers). RequestMembers,
// ResponseMembers and ChunkMembers publish the classification;
// docs/chat-completions-wire.md lists it and a test holds the two
// together.
//
// Bodies are handled as raw JSON with targeted rewrites: a request member
// or a response the verdict did not touch keeps its bytes (number tokens,
// key order, whitespace), with byte-offset edits for what the gateway
// makes or removes; what the verdict changed is re-rendered from the
// verdicted value. A stream is released as its own data events only
// (never comments or other SSE fields), each chunk's metadata replaced by
// the gateway's head, and re-synthesized when clients would assemble its
// fragments differently or it held a removed member. Projections use
// jsonvalue (UseNumber, lone surrogates rejected), so numbers such as
// 9007199254740993 or 1.0 stay exact, and "untouched" is decided with
// jsonvalue.Equal, which tells true from 1.
//
// Errors are typed so the proxy can map them to a status: *RequestError
// (400), *ResponseError and *StreamError wrapping ErrResponseInvalid,
// ErrStreamCut or ErrUpstreamEvent (502), ErrBufferLimit (the §12.1 cannot-
// buffer case), and *WriteBackError (deny host_error:transform_invalid).
// No error text ever contains message or response content: only field
// paths, event numbers and JSON type names.
//
// What the gateway cannot mediate it refuses instead of passing through:
// n > 1, legacy function calling, audio output, non-function tools, and,
// where the package interprets an object, duplicate keys and names that
// differ from a known member only in letter case (parsers disagree on
// which duplicate wins, and case-insensitive ones read "Content" as
// content, so the policy could judge one value while the receiver acts on
// another).
package chat
