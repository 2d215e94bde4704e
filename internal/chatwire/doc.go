// Package chatwire translates between the OpenAI chat-completions wire and
// AGENT-HOOKS-0.1 contexts: a request's messages become the
// pre_model_call target, an upstream response (JSON or a fully buffered
// SSE stream) becomes the post_model_call target {content, tool_calls,
// finish_reason}, and verdicted targets are written back onto the wire.
//
// Bodies are handled as raw JSON with targeted rewrites: members, number
// tokens, key order and whitespace that the verdict did not touch pass
// through byte-for-byte, so an allow verdict releases exactly the upstream
// bytes and a transform changes only what it changed. Projections use
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
// n > 1, legacy function calling, audio output, non-function tools,
// top-level request members it does not know (RequestMembers lists those
// it does; a RequestParser can allow more), and, where the package
// interprets an object, duplicate keys and names that differ from a known
// member only in letter case (parsers disagree on which duplicate wins,
// and case-insensitive ones read "Content" as content, so the policy
// could judge one value while the receiver acts on another).
package chatwire
