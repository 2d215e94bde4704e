package chatwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// nMessage is the refusal for n > 1: a post_model_call must pair with
// exactly one pre_model_call (spec §3.1(4)), so several choices cannot be
// mediated.
const nMessage = "n > 1 is not supported: AGENT-HOOKS pairs one post_model_call with each pre_model_call"

// Request is a validated chat-completions request. It keeps the body and
// the offsets of its top-level members, so UpstreamBody can rewrite one
// member and leave every other byte as the client sent it. A Request is
// immutable after ParseRequest and safe for concurrent use; it retains the
// body slice, which the caller must not modify.
type Request struct {
	body    []byte
	root    span
	members []member

	model        string
	stream       bool
	includeUsage bool

	msgSpan span   // the messages array
	msgRaw  []span // its elements, in order
	msgs    []any  // their projections, index-aligned with msgRaw

	tools     []any
	toolNames []string
	params    map[string]any
}

// ParseRequest validates a chat-completions body and projects it. Errors
// are *RequestError naming the offending field; they never quote content.
//
// Explicit nulls for optional members (stream, stream_options, n, tools)
// mean "not set", as on the OpenAI API. Requests the gateway cannot mediate
// are refused: n > 1, legacy functions/function_call (their responses
// carry message.function_call, which has no place in the post_model_call
// target), audio output (its transcript would bypass policy), and tools
// other than function tools.
func ParseRequest(body []byte) (*Request, error) {
	if !json.Valid(body) {
		if len(bytes.TrimLeft(body, " \t\r\n")) == 0 {
			return nil, &RequestError{Msg: "body is empty: a JSON object is required"}
		}
		return nil, &RequestError{Msg: "body is not valid JSON"}
	}
	r := &Request{body: body, root: rootSpan(body)}
	if r.root.kind(body) != '{' {
		return nil, &RequestError{Msg: "body must be a JSON object"}
	}
	ms, err := scanObject(body, r.root)
	if err != nil {
		return nil, &RequestError{Msg: "body has a duplicate member"}
	}
	r.members = ms
	var haveModel, haveMessages bool
	for _, m := range ms {
		if m.key != "messages" && hasDuplicateKeys(body, m.val) {
			return nil, &RequestError{Field: safeField(m.key), Msg: "has an object with a duplicate member"}
		}
		var err error
		switch m.key {
		case "model":
			haveModel = true
			err = r.parseModel(m.val)
		case "messages":
			haveMessages = true
			err = r.parseMessages(m.val)
		case "stream":
			err = r.parseStream(m.val)
		case "stream_options":
			err = r.parseStreamOptions(m.val)
		case "n":
			err = parseN(body, m.val)
		case "tools":
			err = r.parseTools(m.val)
		case "functions", "function_call":
			err = &RequestError{Field: m.key, Msg: "legacy function calling is not supported; use tools"}
		case "user", "metadata":
			// Neither a sampling parameter nor content the policy judges.
		default:
			err = r.parseParam(m)
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case !haveModel:
		return nil, &RequestError{Field: "model", Msg: "is required"}
	case !haveMessages:
		return nil, &RequestError{Field: "messages", Msg: "is required"}
	}
	return r, nil
}

func (r *Request) parseModel(s span) error {
	v, err := decodeSpan(r.body, s)
	if err != nil {
		return &RequestError{Field: "model", Msg: decodeProblem(err)}
	}
	model, ok := v.(string)
	if !ok || model == "" {
		return &RequestError{Field: "model", Msg: "must be a non-empty string"}
	}
	r.model = model
	return nil
}

func (r *Request) parseMessages(s span) error {
	if s.kind(r.body) != '[' {
		return &RequestError{Field: "messages", Msg: "must be an array, got " + kindName(r.body, s)}
	}
	r.msgSpan, r.msgRaw = s, scanArray(r.body, s)
	if len(r.msgRaw) == 0 {
		return &RequestError{Field: "messages", Msg: "must not be empty"}
	}
	r.msgs = make([]any, len(r.msgRaw))
	for i, es := range r.msgRaw {
		field := "messages[" + strconv.Itoa(i) + "]"
		v, err := jsonvalue.DecodeStrict(r.body[es.start:es.end])
		if err != nil {
			return &RequestError{Field: field, Msg: decodeProblem(err)}
		}
		m, ok := v.(map[string]any)
		if !ok {
			return &RequestError{Field: field, Msg: "must be an object, got " + typeName(v)}
		}
		// The context schema requires content on every message; OpenAI
		// omits it on tool-call turns, where it means null.
		if _, ok := m["content"]; !ok {
			m["content"] = nil
		}
		if sub, msg := messageProblem(m); msg != "" {
			return &RequestError{Field: field + sub, Msg: msg}
		}
		r.msgs[i] = m
	}
	return nil
}

// messageProblem checks one projected message: a string role and content
// that is a string, null or an array of content-part objects. It returns
// the sub-path (".role", ".content[3]") and a message, or "" when valid.
func messageProblem(m map[string]any) (sub, msg string) {
	if _, ok := m["role"].(string); !ok {
		return ".role", "must be a string, got " + typeName(m["role"])
	}
	c, ok := m["content"]
	if !ok {
		return ".content", "is required (string, array of parts, or null)"
	}
	if sub, msg := contentProblem(c, ".content"); msg != "" {
		return sub, msg
	}
	return toolCallsProblem(m["tool_calls"])
}

// toolCallsProblem checks an assistant message's tool_calls: absent, null
// or an array of objects, so policies reading them see the wire's shape.
func toolCallsProblem(tc any) (sub, msg string) {
	switch x := tc.(type) {
	case nil:
	case []any:
		for i, c := range x {
			if _, ok := c.(map[string]any); !ok {
				return ".tool_calls[" + strconv.Itoa(i) + "]", "must be an object, got " + typeName(c)
			}
		}
	default:
		return ".tool_calls", "must be an array, got " + typeName(tc)
	}
	return "", ""
}

// contentProblem checks a content value: string, null, or an array whose
// elements are all objects (content parts are never flattened).
func contentProblem(c any, path string) (sub, msg string) {
	switch x := c.(type) {
	case nil, string:
		return "", ""
	case []any:
		for i, p := range x {
			if _, ok := p.(map[string]any); !ok {
				return path + "[" + strconv.Itoa(i) + "]", "content part must be an object, got " + typeName(p)
			}
		}
		return "", ""
	default:
		return path, "must be a string, an array of parts or null, got " + typeName(c)
	}
}

func (r *Request) parseStream(s span) error {
	switch r.body[s.start] {
	case 't':
		r.stream = true
	case 'f', 'n':
	default:
		return &RequestError{Field: "stream", Msg: "must be a boolean, got " + kindName(r.body, s)}
	}
	return nil
}

func (r *Request) parseStreamOptions(s span) error {
	if s.isNull(r.body) {
		return nil
	}
	if s.kind(r.body) != '{' {
		return &RequestError{Field: "stream_options", Msg: "must be an object, got " + kindName(r.body, s)}
	}
	ms, err := scanObject(r.body, s)
	if err != nil {
		return &RequestError{Field: "stream_options", Msg: "has a duplicate member"}
	}
	if i := find(ms, "include_usage"); i >= 0 {
		switch v := ms[i].val; r.body[v.start] {
		case 't':
			r.includeUsage = true
		case 'f', 'n':
		default:
			return &RequestError{Field: "stream_options.include_usage", Msg: "must be a boolean, got " + kindName(r.body, v)}
		}
	}
	return nil
}

func parseN(body []byte, s span) error {
	if s.isNull(body) {
		return nil
	}
	v, err := decodeSpan(body, s)
	if err != nil {
		return &RequestError{Field: "n", Msg: decodeProblem(err)}
	}
	num, ok := v.(json.Number)
	if !ok {
		return &RequestError{Field: "n", Msg: "must be an integer, got " + typeName(v)}
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil {
		if !errors.Is(err, strconv.ErrRange) {
			return &RequestError{Field: "n", Msg: "must be an integer"}
		}
		n = 2 // beyond int64: only its sign matters
		if num[0] == '-' {
			n = 0
		}
	}
	switch {
	case n == 1:
		return nil
	case n > 1:
		return &RequestError{Field: "n", Msg: nMessage}
	default:
		return &RequestError{Field: "n", Msg: "must be 1"}
	}
}

func (r *Request) parseTools(s span) error {
	if s.isNull(r.body) {
		return nil
	}
	v, err := decodeSpan(r.body, s)
	if err != nil {
		return &RequestError{Field: "tools", Msg: decodeProblem(err)}
	}
	list, ok := v.([]any)
	if !ok {
		return &RequestError{Field: "tools", Msg: "must be an array, got " + typeName(v)}
	}
	for i, t := range list {
		field := "tools[" + strconv.Itoa(i) + "]"
		tool, ok := t.(map[string]any)
		if !ok {
			return &RequestError{Field: field, Msg: "must be an object, got " + typeName(t)}
		}
		if typ, _ := tool["type"].(string); typ != "function" {
			return &RequestError{Field: field + ".type", Msg: `must be "function": only function tools can be mediated`}
		}
		fn, ok := tool["function"].(map[string]any)
		if !ok {
			return &RequestError{Field: field + ".function", Msg: "must be an object, got " + typeName(tool["function"])}
		}
		name, ok := fn["name"].(string)
		if !ok || name == "" {
			return &RequestError{Field: field + ".function.name", Msg: "must be a non-empty string"}
		}
		decl := map[string]any{"name": name}
		switch d := fn["description"].(type) {
		case nil:
		case string:
			decl["description"] = d
		default:
			return &RequestError{Field: field + ".function.description", Msg: "must be a string, got " + typeName(d)}
		}
		switch p := fn["parameters"].(type) {
		case nil:
		case map[string]any:
			decl["schema"] = p
		default:
			return &RequestError{Field: field + ".function.parameters", Msg: "must be an object, got " + typeName(p)}
		}
		r.tools = append(r.tools, decl)
		r.toolNames = append(r.toolNames, name)
	}
	return nil
}

// parseParam records a sampling parameter for model.params, refusing the
// ones that would open an unmediated output channel.
func (r *Request) parseParam(m member) error {
	field := safeField(m.key)
	v, err := decodeSpan(r.body, m.val)
	if err != nil {
		return &RequestError{Field: field, Msg: decodeProblem(err)}
	}
	switch m.key {
	case "audio":
		if v != nil {
			return &RequestError{Field: "audio", Msg: "audio output is not supported: its transcript cannot be mediated"}
		}
	case "modalities":
		if list, ok := v.([]any); ok && slices.Contains(list, any("audio")) {
			return &RequestError{Field: "modalities", Msg: "audio output is not supported: its transcript cannot be mediated"}
		}
	}
	if v == nil {
		return nil
	}
	if r.params == nil {
		r.params = map[string]any{}
	}
	r.params[m.key] = v
	return nil
}

// safeField returns key for use as an error's Field, or "" when it is not
// a short identifier: arbitrary client-chosen key text is never echoed.
func safeField(key string) string {
	if plainName(key) {
		return key
	}
	return ""
}

// plainName reports whether s is a short identifier safe to put in an error.
func plainName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Model returns the request's model name.
func (r *Request) Model() string { return r.model }

// Stream reports whether the client asked for an SSE stream.
func (r *Request) Stream() bool { return r.stream }

// IncludeUsage reports whether the client asked for the usage chunk
// (stream_options.include_usage: true).
func (r *Request) IncludeUsage() bool { return r.includeUsage }

// ToolNames returns the names of the request's function tools, in order
// (agent_startup's tools_registered).
func (r *Request) ToolNames() []string { return slices.Clone(r.toolNames) }

// Messages returns the pre_model_call projection of the messages: each
// message decoded as-is (role, content as string / part array / null,
// tool_calls with function.arguments as the wire has it, tool_call_id,
// name, unknown members), with content set to null where the wire omits
// it. The result is a fresh tree the caller may mutate. The error is
// reserved for projections that can fail; ParseRequest has already
// validated everything this projection needs, so it is currently nil.
func (r *Request) Messages() ([]any, error) {
	out := make([]any, len(r.msgs))
	for i, m := range r.msgs {
		out[i] = jsonvalue.DeepCopy(m)
	}
	return out, nil
}

// Tools returns the context's optional tools: [{name, description?,
// schema?}], or nil when the request declares none.
func (r *Request) Tools() []any {
	if len(r.tools) == 0 {
		return nil
	}
	return jsonvalue.DeepCopy(r.tools).([]any)
}

// Params returns model.params: every top-level member that is not model,
// messages, tools, stream, stream_options, n, user or metadata and is not
// null (temperature, top_p, max_tokens, stop, response_format,
// tool_choice, seed, ...). It is nil when there are none.
func (r *Request) Params() map[string]any {
	if len(r.params) == 0 {
		return nil
	}
	return jsonvalue.DeepCopy(r.params).(map[string]any)
}
