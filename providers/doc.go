// Package providers delivers chat-completion requests to model providers
// and routes model names to them.
//
// The proxy has already validated and rewritten the request body; an
// [Upstream] only sends those bytes and hands back the provider's raw HTTP
// response (JSON or SSE), which the proxy buffers and evaluates. Adapters
// never read, log or quote bodies in errors.
//
// Adapters:
//
//   - [OpenAI]: any OpenAI-compatible server (OpenAI, vLLM, Ollama,
//     LiteLLM, …), POST {BaseURL}/chat/completions.
//   - [Azure]: Azure OpenAI,
//     POST {Endpoint}/openai/deployments/{deployment}/chat/completions?api-version=….
//   - [Mock]: an in-process, deterministic model for quickstarts and tests.
//
// [Router] maps a request's model name to an Upstream with path.Match-style
// globs ("gpt-*", "*"), first match wins.
//
// # Headers
//
// Upstream requests carry Content-Type: application/json,
// User-Agent: hooks-gateway and Accept (the client's, else
// text/event-stream or application/json by the body's stream flag). Of the
// client's headers only traceparent and tracestate are forwarded, plus
// OpenAI-Organization and OpenAI-Project to OpenAI-compatible upstreams and
// Authorization when [OpenAIConfig.PassClientKey] is set. Cookies, session
// headers and everything else stay at the gateway.
//
// # Compression
//
// The adapters let net/http negotiate gzip and decompress transparently:
// the response handed back is always plain bytes with Content-Encoding and
// Content-Length removed when a decompression happened. The proxy must parse
// the body, so it never sees an encoded one, and the hop to the provider
// still saves bandwidth.
//
// # Mock directives
//
// The mock answers "echo: " followed by the text of the last user message
// (string content, or the concatenated text parts of a content-part array).
// When that text starts with a directive, the directive decides instead:
//
//	/tool NAME {json-args}   one tool call named NAME whose arguments are the
//	                         rest of the line verbatim ("{}" when absent);
//	                         content null, finish_reason "tool_calls". Every
//	                         non-blank line must then be a /tool line; each
//	                         adds a call (ids call_mock_0, call_mock_1, …).
//	/say TEXT                content exactly TEXT.
//	/error CODE [MESSAGE]    HTTP CODE (200–599) with an OpenAI error envelope
//	                         {"error":{"message","type":"mock_error","param":null,"code":"CODE"}}.
//	/cut [TEXT]              stream: the first chunks of TEXT, then the body
//	                         ends without a finish chunk or "data: [DONE]";
//	                         non-stream: the first half of the JSON body.
//	/chunks N TEXT           content TEXT, streamed in exactly N content chunks.
//	/sleep DURATION TEXT     waits DURATION (time.ParseDuration) before
//	                         answering TEXT; a cancelled ctx ends the wait
//	                         with ctx's error.
//
// A malformed directive or request yields HTTP 400 with an error envelope,
// like a real provider. Replies are deterministic: id "chatcmpl-mock-" plus
// the first 12 hex digits of sha256(body), created 1700000000,
// system_fingerprint "mock", the request's model echoed, and usage counted
// in whitespace-separated words (prompt: every message's text; completion:
// the content, or each tool call's name and arguments).
//
// With "stream": true the reply is text/event-stream shaped like OpenAI's: a
// role chunk (content "" — or null before tool calls), content chunks (one
// per word), tool-call chunks (a header with index, id, type and name, then
// the arguments in two or more fragments), a final chunk with an empty
// delta and the finish_reason, a usage chunk (choices [], every other chunk
// then carries "usage": null) only when stream_options.include_usage is
// true, and "data: [DONE]".
package providers
