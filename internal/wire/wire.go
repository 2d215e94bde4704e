// Package wire is the contract between the gateway's model-call pipeline
// and the API surfaces it serves. Each surface (OpenAI Chat Completions,
// OpenAI Responses, Anthropic Messages) is one package implementing
// Surface: it parses the client's request, projects it into the one
// normalized shape every policy reads, writes a verdicted target back onto
// its own wire, buffers and assembles the upstream's answer, and renders
// errors in the envelope its clients raise. The pipeline (package proxy)
// knows none of the formats.
//
// # The normalized projection
//
// Whatever the surface, a pre_model_call context carries
//
//   - messages: chat-completions-shaped message objects in conversation
//     order. role is "system", "developer", "user", "assistant" or "tool";
//     content is a string, null, or an array of part objects: text as
//     {"type":"text","text"}, images as {"type":"image_url","image_url":
//     {"url"}}, reasoning as {"type":"reasoning","text"}, refusals as
//     {"type":"refusal","refusal"}; other parts keep their native members
//     under their native type. An assistant's tool calls are tool_calls:
//     [{"id","type":"function","function":{"name","arguments"}}] with
//     arguments the JSON text the model wrote; a tool result is a message
//     with role "tool", tool_call_id and content. Instructions and system
//     prompts given outside the message list are system messages at the
//     position the model reads them.
//   - tools: [{name, description?, schema?}] for function tools.
//   - model: {id, vendor, api, params?}; api is the surface (API), params
//     every other request member the surface projects.
//
// and a post_model_call context carries response {content, tool_calls:
// [{id, name, args}], finish_reason} with content a string or null for
// plain text, else the part array above (text parts may carry
// annotations [{type:"url_citation", url, title}]), and finish_reason in
// the chat-completions vocabulary: "stop", "length", "tool_calls",
// "content_filter". usage is {prompt_tokens, completion_tokens} when the
// upstream reported it.
//
// # Complete mediation
//
// A byte crosses only if a verdict covered it or the gateway made it. Every
// member of a request, an answer and a stream event, at any depth, is
// projected (policies judge it, a transform writes it back), made by the
// gateway (ids clients only read: MintID; the routed model name;
// enumerations checked against their lists), sealed by the gateway
// (opaque provider blobs that round-trip through the client: package
// seal), or removed. A shape check is not a verdict: a credential is
// token-shaped. Unknown members are judged (projected) by default; a
// surface built with StrictMembers refuses them in requests, with a
// RequestError naming the member's path and the switch, and removes them
// from answers. Ambiguous JSON (duplicate members, names that collide
// under case folding with a known one) is refused either way.
package wire

import (
	"io"
	"net/url"
)

// API names a surface. It is extensions.hooks_gateway.api in contexts (the
// spec's model object is closed) and the api label of
// request metrics.
type API string

// The surfaces the gateway serves.
const (
	ChatCompletions API = "chat_completions"
	Responses       API = "responses"
	Messages        API = "messages"
)

// Operation is one upstream endpoint a surface calls; providers map it to
// a URL. A surface's model call uses the operation named like its API.
type Operation string

// The upstream operations.
const (
	OpChatCompletions Operation = "chat_completions"
	OpResponses       Operation = "responses"
	OpMessages        Operation = "messages"
	// OpCountTokens is Anthropic's POST /v1/messages/count_tokens.
	OpCountTokens Operation = "messages_count_tokens"
)

// Surface is one API surface's wire format. Implementations are immutable
// and safe for concurrent use; options (allowed members, switches for
// server-side state) are fixed when the surface is built.
type Surface interface {
	// API names the surface.
	API() API
	// ParseRequest validates and projects a client request. query is the
	// request URL's query (refused when the surface does not know a
	// parameter). Errors are *RequestError and never quote content. The
	// request and its projection share body's bytes: body must never be
	// modified afterwards.
	ParseRequest(body []byte, query url.Values) (Request, error)
	// ParseResponse parses a complete, non-streamed upstream answer to
	// req. Errors wrap ErrResponseInvalid.
	ParseResponse(req Request, body []byte) (Response, error)
	// ReadStream reads the whole upstream stream answering req, at most
	// limit bytes, and assembles it as the surface's official clients do.
	// Errors are *StreamError (ErrBufferLimit, ErrStreamCut,
	// ErrUpstreamEvent, ErrResponseInvalid).
	ReadStream(req Request, r io.Reader, limit int64) (Stream, error)
	// ErrorBody renders a gateway error as the surface's JSON error body.
	ErrorBody(e Error) []byte
	// StreamError renders a gateway error as the event(s) that end a
	// stream whose 200 status is already committed (keep-alive), so the
	// surface's clients raise it.
	StreamError(e Error) []byte
}

// Request is a validated client request. It is immutable and safe for
// concurrent use; it retains the body, which the caller must not modify.
type Request interface {
	// Model is the requested model name.
	Model() string
	// Stream reports whether the client asked for a stream.
	Stream() bool
	// Operation is the upstream operation that serves the request.
	Operation() Operation
	// ToolNames lists the request's function tools in order
	// (agent_startup's tools_registered).
	ToolNames() []string
	// Messages is the normalized projection of the conversation. The
	// slice is the caller's, but the message trees are the Request's,
	// shared by every call: the caller must not modify them (the engine
	// adopts them into contexts and copies before a transform).
	Messages() []any
	// Tools is the context's tools ([{name, description?, schema?}]), or
	// nil; read-only like Messages.
	Tools() []any
	// Params is model.params, or nil. The map is the caller's; its
	// values are read-only like Messages.
	Params() map[string]any
	// CheckMessages reports whether a verdicted pre_model_call target can
	// be written onto this request's wire; its errors are *WriteBackError
	// (deny host_error:transform_invalid).
	CheckMessages(target any) error
	// UpstreamBody renders the body to send upstream. messages is the
	// verdicted target, or nil to keep the client's conversation byte for
	// byte.
	UpstreamBody(messages any) ([]byte, error)
}

// BodyChecker is implemented by requests whose write-back check renders
// the body it checks. A host that checks a verdicted target and then sends
// it upstream renders it once.
type BodyChecker interface {
	// CheckedBody is UpstreamBody(target) for a non-nil target; its error
	// is the one CheckMessages(target) returns.
	CheckedBody(target any) ([]byte, error)
}

// Response is an upstream answer, parsed and projected.
type Response interface {
	// Project returns the post_model_call target {content, tool_calls,
	// finish_reason}.
	Project() map[string]any
	// Usage returns {prompt_tokens, completion_tokens} (those the upstream
	// reported), or nil.
	Usage() map[string]any
	// CheckWriteBack reports whether a verdicted target can be released;
	// errors are *WriteBackError.
	CheckWriteBack(target any) error
	// Release renders the body for the client: target nil (or equal to the
	// projection) releases the upstream's answer, re-rendered when the
	// closed world removed anything; any other target is written back.
	Release(target any) ([]byte, error)
}

// Stream is a fully buffered and assembled upstream stream.
type Stream interface {
	// Response is the assembled answer; its Release is not used.
	Response() Response
	// BufferedBytes is how much of the stream was held in memory.
	BufferedBytes() int64
	// Release renders the events for the client: target nil (or equal to
	// the projection) replays the upstream's own events when they are
	// safe to replay, else a stream is synthesized from the target.
	Release(target any) ([]byte, error)
}

// Error is a gateway error, independent of any envelope.
type Error struct {
	// Status is the HTTP status.
	Status int
	// Type is the gateway's error type (agent_hooks_denied,
	// agent_hooks_host_error, invalid_request_error, upstream_error, ...).
	Type string
	// Code is the verdict reason or the gateway's error code.
	Code string
	// Message is gateway-authored, or an interceptor's truncated verdict
	// message; never payload.
	Message string
	// Param names the offending request member, if any.
	Param string
	// Point, SessionID and Sequence are set for verdict errors; Sequence
	// is nil otherwise.
	Point     string
	SessionID string
	Sequence  *int64
}
