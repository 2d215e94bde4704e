// Package providers delivers model requests (chat completions, responses,
// Anthropic messages and count_tokens; see [wire.Operation]) to model
// providers and routes model names to them.
//
// The proxy has already validated and rewritten the request body; an
// [Upstream] only sends those bytes and hands back the provider's raw HTTP
// response (JSON or SSE), which the proxy buffers and evaluates. Adapters
// never read, log or quote bodies in errors.
//
// Adapters:
//
//   - [OpenAI]: any OpenAI-compatible server (OpenAI, vLLM, Ollama,
//     LiteLLM, …), POST {BaseURL}/chat/completions and {BaseURL}/responses;
//     the base includes /v1.
//   - [Azure]: Azure OpenAI. Chat completions:
//     POST {Endpoint}/openai/deployments/{deployment}/chat/completions?api-version=….
//     Responses: the v1 API, POST {Endpoint}/openai/v1/responses, which
//     names the deployment in the body's model and takes no api-version; a
//     model listed in [AzureConfig.Deployments] is rewritten there to its
//     deployment (the one change an adapter makes to a body), any other
//     model must be a deployment's name.
//   - [Anthropic]: the Anthropic Messages API, POST {BaseURL}/v1/messages
//     and {BaseURL}/v1/messages/count_tokens; the base excludes /v1, as
//     Anthropic's SDKs take it.
//   - [Mock]: an in-process, deterministic model speaking every surface,
//     for quickstarts and tests.
//
// [Router] maps a request's model name to an Upstream with path.Match-style
// globs ("gpt-*", "*"), first match wins, skipping upstreams that do not
// serve the request's operation.
//
// # Headers
//
// Upstream requests carry Content-Type: application/json,
// User-Agent: hooks-gateway and Accept (the client's, else
// text/event-stream or application/json by the body's stream flag). Of the
// client's headers only traceparent and tracestate are forwarded, plus
// OpenAI-Organization and OpenAI-Project to OpenAI-compatible upstreams
// when the request goes with the client's own key (pass-through; with
// the configured key they would name the operator's account),
// anthropic-version to Anthropic (the configured
// [AnthropicConfig.Version] when the client sent none) and the betas of
// its anthropic-beta header as the Messages surface judged them
// (messages.BetaHeader, joined by commas), and the client's
// key when pass-through is configured ([OpenAIConfig.PassClientKey]: its
// Authorization; [AnthropicConfig.PassClientKey]: its x-api-key, else its
// bearer token, sent as x-api-key). Cookies, session headers and
// everything else stay at the gateway, and so does the client's query.
//
// # Compression
//
// The adapters let net/http negotiate gzip and decompress transparently:
// the response handed back is always plain bytes with Content-Encoding and
// Content-Length removed when a decompression happened. The proxy must parse
// the body, so it never sees an encoded one, and the hop to the provider
// still saves bandwidth.
//
// # Mock
//
// The mock serves chat completions, responses, messages and count_tokens.
// It reads the prompt, the last user turn of each surface's request shape:
//
//   - chat completions: the last "user" message; its text is the string
//     content or the concatenated "text" parts (one segment);
//   - responses: the input string, or the last user message item (type
//     "message" or absent, role "user"), one segment per input_text part;
//   - messages: the last user message that holds no tool_result block,
//     one segment per text block (string content is one); system is not
//     part of it.
//
// The tool results are what follows the prompt: "tool" messages (chat),
// function_call_output items (responses), tool_result blocks of later user
// messages (messages).
//
// The directive is the first line, in segment order, whose first word
// (after spaces and tabs) is a directive; its text runs from that word to
// the end of its segment. Lines before it and other segments are ignored,
// so agents that wrap prompts in reminders still reach the mock. Without a
// directive the mock answers "echo: " and the prompt's text (segments
// joined by newlines).
//
//	/tool NAME {json-args}   one tool call named NAME whose arguments are the
//	                         rest of the line verbatim ("{}" when absent).
//	                         Every further non-blank line of the directive's
//	                         text must be a /tool line; each adds a call.
//	                         Answered once per conversation: when tool
//	                         results follow the prompt, the reply is the text
//	                         "tool results: " and the results, one per line,
//	                         cut to 200 runes ("…" marks a cut), so agent
//	                         loops end. On the Responses surface a NAME
//	                         "NS.FN" is a call of FN in the namespace tool
//	                         NS (function_call namespace and name), as
//	                         Codex declares MCP tools.
//	/say TEXT                the reply is exactly TEXT (the rest of the
//	                         segment, newlines included).
//	/error CODE [MESSAGE]    HTTP CODE (200–599) with the surface's error
//	                         envelope (below).
//	/cut [TEXT]              stream: the first half of TEXT's deltas, then the
//	                         body ends without its closing events; non-stream:
//	                         the first half of the JSON body.
//	/chunks N TEXT           TEXT, streamed in exactly N text deltas.
//	/sleep DURATION TEXT     waits DURATION (time.ParseDuration) before
//	                         answering TEXT; a cancelled ctx ends the wait
//	                         with ctx's error.
//	/drip INTERVAL TEXT      TEXT, streamed one word per text delta with a
//	                         pause of INTERVAL (positive) before each delta
//	                         after the first, on every surface, as a model
//	                         generating word by word; a cancelled ctx or a
//	                         closed body ends a pause with an error.
//	                         Non-stream: TEXT after the time its stream
//	                         would take.
//
// A malformed directive or request yields HTTP 400 with the surface's
// error envelope, like a real provider. Error envelopes: OpenAI's
// {"error":{"message","type","param":null,"code"}} for chat completions and
// responses (type "mock_error" and code "CODE" for /error,
// "invalid_request_error" and code null for malformed requests);
// Anthropic's {"type":"error","error":{"type","message"}} for messages and
// count_tokens, typed by status (400 invalid_request_error, 401
// authentication_error, 402 billing_error, 403 permission_error, 404
// not_found_error, 413 request_too_large, 429 rate_limit_error, 504
// timeout_error, 529 overloaded_error, other 4xx invalid_request_error,
// other 5xx api_error).
//
// Replies are deterministic. H is the first 12 hex digits of sha256(body);
// timestamps are 1700000000; the request's model is echoed; usage counts
// whitespace-separated words (input: the text of every message, tool
// result, instructions and system prompt the mock reads; output: the
// reply's text, or each tool call's name and argument words).
//
// Chat completions: id "chatcmpl-mock-H", system_fingerprint "mock", tool
// call ids call_mock_0, call_mock_1, …; content null beside tool calls,
// finish_reason "stop" or "tool_calls". With "stream": true the reply is
// OpenAI's chunk stream: a role chunk (content "" — or null before tool
// calls), content chunks (one per word), tool-call chunks (a header with
// index, id, type and name, then the arguments in two or more fragments), a
// final chunk with an empty delta and the finish_reason, a usage chunk
// (choices [], every other chunk then carries "usage": null) only when
// stream_options.include_usage is true, and "data: [DONE]".
//
// Responses: a response object (id "resp_mock_H", object "response",
// status "completed", the API's default values for temperature, top_p,
// tool_choice and the like) whose output is one message item (id
// "msg_mock_H", one output_text part) or one function_call item per tool
// call (id "fc_mock_H_N", call_id "call_mock_N"), and usage {input_tokens,
// input_tokens_details, output_tokens, output_tokens_details, total_tokens}.
// Streamed, each event has an "event:" line and a sequence_number from 0:
// response.created, response.in_progress, then for text
// response.output_item.added, response.content_part.added,
// response.output_text.delta (one per word), response.output_text.done,
// response.content_part.done, response.output_item.done, or for each tool
// call response.output_item.added, response.function_call_arguments.delta
// (two or more), response.function_call_arguments.done,
// response.output_item.done; and response.completed with the whole
// response.
//
// Messages: a message (id "msg_mock_H", content one text block or one
// tool_use block per call, ids toolu_mock_0, …, stop_reason "end_turn" or
// "tool_use", usage {input_tokens, output_tokens}). A text reply longer
// than max_tokens words keeps its first max_tokens words and stops with
// "max_tokens". A non-stream tool_use input must be a JSON object, else
// the reply is a 400; streamed, the arguments travel verbatim in two or
// more input_json_delta fragments. The stream is message_start,
// content_block_start, ping (after the first block opens),
// content_block_delta (text_delta per word, or input_json_delta),
// content_block_stop per block, message_delta {stop_reason, usage}, and
// message_stop. count_tokens answers {"input_tokens": N} and reads no
// directive.
package providers
