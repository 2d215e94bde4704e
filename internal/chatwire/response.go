package chatwire

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// Response is an upstream chat completion with exactly one choice, either
// parsed from a JSON body (ParseResponse) or assembled from an SSE stream
// (Stream.Response). It is immutable and safe for concurrent use.
type Response struct {
	id                string
	model             string
	created           int64
	systemFingerprint string

	// proj is the post_model_call target {content, tool_calls,
	// finish_reason}; Project hands out copies.
	proj map[string]any
	// fromRefusal: content was null and the projection shows
	// message.refusal instead, so a changed content is written to refusal.
	fromRefusal bool
	calls       []call
	usage       map[string]any
	usageRaw    []byte // the upstream usage object, for synthesized streams

	streamed bool
	wire     *wireResponse // nil for a streamed response
}

// call is one projected tool call and what write-back needs to rebuild it.
type call struct {
	id        string
	name      string
	arguments string         // the wire arguments string
	proj      map[string]any // {id, name, args}
	rawArgs   bool           // args projected as {"raw_arguments": …}
	wire      *wireCall      // nil for a streamed response
}

// wireResponse locates the parts of a JSON body that write-back may touch.
type wireResponse struct {
	body           []byte
	choice         span
	choiceMembers  []member
	message        span
	messageMembers []member
	calls          span // the tool_calls array, when there is one
}

type wireCall struct {
	obj       span
	members   []member
	fn        span
	fnMembers []member
}

// ParseResponse parses a non-streaming chat completion. It accepts exactly
// one choice (the request side refuses n > 1). Errors are *ResponseError
// (wrapping ErrResponseInvalid) naming the wire field; they never quote
// content. The Response retains body, which the caller must not modify.
//
// A message that carries output this package cannot put in front of the
// policy (legacy function_call, audio, tool calls other than function
// calls) is refused rather than passed through unmediated.
func ParseResponse(body []byte) (*Response, error) {
	if !json.Valid(body) {
		return nil, &ResponseError{Msg: "body is not valid JSON"}
	}
	root := rootSpan(body)
	if root.kind(body) != '{' {
		return nil, &ResponseError{Msg: "body must be a JSON object"}
	}
	if hasDuplicateKeys(body, root) {
		return nil, &ResponseError{Msg: "body has an object with a duplicate member"}
	}
	top, err := objectAt(body, root, "")
	if err != nil {
		return nil, err
	}
	r := &Response{wire: &wireResponse{body: body}}
	r.readMeta(body, top)

	ci := find(top, "choices")
	if ci < 0 || top[ci].val.kind(body) != '[' {
		return nil, &ResponseError{Field: "choices", Msg: "must be an array"}
	}
	choices := scanArray(body, top[ci].val)
	if len(choices) != 1 {
		return nil, &ResponseError{Field: "choices", Msg: "must hold exactly one choice, got " + strconv.Itoa(len(choices))}
	}
	w := r.wire
	w.choice = choices[0]
	if w.choiceMembers, err = objectAt(body, w.choice, "choices[0]"); err != nil {
		return nil, err
	}
	finish, err := optionalString(body, w.choiceMembers, "choices[0].finish_reason")
	if err != nil {
		return nil, err
	}
	mi := find(w.choiceMembers, "message")
	if mi < 0 {
		return nil, &ResponseError{Field: "choices[0].message", Msg: "is required"}
	}
	w.message = w.choiceMembers[mi].val
	if w.messageMembers, err = objectAt(body, w.message, "choices[0].message"); err != nil {
		return nil, err
	}
	content, refusal, err := readMessage(body, w.messageMembers)
	if err != nil {
		return nil, err
	}
	calls, err := readToolCalls(body, w.messageMembers)
	if i := find(w.messageMembers, "tool_calls"); i >= 0 {
		w.calls = w.messageMembers[i].val
	}
	if err != nil {
		return nil, err
	}
	var usage any
	if ui := find(top, "usage"); ui >= 0 && !top[ui].val.isNull(body) {
		s := top[ui].val
		if usage, err = decodeSpan(body, s); err != nil {
			return nil, &ResponseError{Field: "usage", Msg: decodeProblem(err)}
		}
		r.usageRaw = body[s.start:s.end]
	}
	r.build(content, refusal, calls, finish, usage)
	return r, nil
}

// objectAt scans the object at s, refusing non-objects and duplicate keys.
func objectAt(b []byte, s span, field string) ([]member, error) {
	if s.kind(b) != '{' {
		return nil, &ResponseError{Field: field, Msg: "must be an object, got " + kindName(b, s)}
	}
	ms, err := scanObject(b, s)
	if err != nil {
		return nil, &ResponseError{Field: field, Msg: "has a duplicate member"}
	}
	return ms, nil
}

// readMeta takes id, model, created and system_fingerprint when they have
// the expected type; they are metadata, not content, so a provider that
// omits or mistypes them is tolerated.
func (r *Response) readMeta(b []byte, top []member) {
	for _, m := range top {
		switch m.key {
		case "id", "model", "system_fingerprint":
			v, _ := decodeSpan(b, m.val)
			s, _ := v.(string)
			switch m.key {
			case "id":
				r.id = s
			case "model":
				r.model = s
			default:
				r.systemFingerprint = s
			}
		case "created":
			if m.val.kind(b) != '"' {
				r.created, _ = strconv.ParseInt(string(b[m.val.start:m.val.end]), 10, 64)
			}
		}
	}
}

// optionalString decodes the member named by the last segment of field
// when it is present and not null; it must be a string.
func optionalString(b []byte, ms []member, field string) (*string, error) {
	i := find(ms, field[strings.LastIndexByte(field, '.')+1:])
	if i < 0 || ms[i].val.isNull(b) {
		return nil, nil
	}
	v, err := decodeSpan(b, ms[i].val)
	if err != nil {
		return nil, &ResponseError{Field: field, Msg: decodeProblem(err)}
	}
	s, ok := v.(string)
	if !ok {
		return nil, &ResponseError{Field: field, Msg: "must be a string, got " + typeName(v)}
	}
	return &s, nil
}

// readMessage returns the message's content and refusal, refusing output
// channels that cannot be mediated.
func readMessage(b []byte, ms []member) (content any, refusal *string, err error) {
	for _, key := range []string{"function_call", "audio"} {
		if i := find(ms, key); i >= 0 && !ms[i].val.isNull(b) {
			return nil, nil, &ResponseError{Field: "choices[0].message." + key, Msg: "cannot be mediated"}
		}
	}
	if i := find(ms, "content"); i >= 0 {
		if content, err = decodeSpan(b, ms[i].val); err != nil {
			return nil, nil, &ResponseError{Field: "choices[0].message.content", Msg: decodeProblem(err)}
		}
		if sub, msg := contentProblem(content, ""); msg != "" {
			return nil, nil, &ResponseError{Field: "choices[0].message.content" + sub, Msg: msg}
		}
	}
	refusal, err = optionalString(b, ms, "choices[0].message.refusal")
	return content, refusal, err
}

// readToolCalls reads choices[0].message.tool_calls.
func readToolCalls(b []byte, ms []member) ([]call, error) {
	i := find(ms, "tool_calls")
	if i < 0 || ms[i].val.isNull(b) {
		return nil, nil
	}
	const base = "choices[0].message.tool_calls"
	if ms[i].val.kind(b) != '[' {
		return nil, &ResponseError{Field: base, Msg: "must be an array, got " + kindName(b, ms[i].val)}
	}
	elems := scanArray(b, ms[i].val)
	calls := make([]call, len(elems))
	for k, es := range elems {
		field := base + "[" + strconv.Itoa(k) + "]"
		wc := &wireCall{obj: es}
		var err error
		if wc.members, err = objectAt(b, es, field); err != nil {
			return nil, err
		}
		typ, err := optionalString(b, wc.members, field+".type")
		if err != nil {
			return nil, err
		}
		if typ != nil && *typ != "function" {
			return nil, &ResponseError{Field: field + ".type", Msg: "only function tool calls can be mediated"}
		}
		id, err := optionalString(b, wc.members, field+".id")
		if err != nil {
			return nil, err
		}
		fi := find(wc.members, "function")
		if fi < 0 {
			return nil, &ResponseError{Field: field + ".function", Msg: "is required"}
		}
		wc.fn = wc.members[fi].val
		if wc.fnMembers, err = objectAt(b, wc.fn, field+".function"); err != nil {
			return nil, err
		}
		name, err := optionalString(b, wc.fnMembers, field+".function.name")
		if err != nil {
			return nil, err
		}
		args, err := optionalString(b, wc.fnMembers, field+".function.arguments")
		if err != nil {
			return nil, err
		}
		calls[k] = call{id: deref(id), name: deref(name), arguments: deref(args), wire: wc}
	}
	return calls, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// build computes the projection shared by JSON and streamed responses.
// content is the decoded message content (nil for null or absent).
func (r *Response) build(content any, refusal *string, calls []call, finish *string, usage any) {
	if refusal != nil && (content == nil || content == "" && *refusal != "") {
		content, r.fromRefusal = *refusal, true
	}
	list := make([]any, len(calls))
	for i := range calls {
		c := &calls[i]
		var args map[string]any
		args, c.rawArgs = parseArguments(c.arguments)
		c.proj = map[string]any{"id": c.id, "name": c.name, "args": args}
		list[i] = jsonvalue.DeepCopy(c.proj)
	}
	r.calls = calls
	reason := "stop"
	if finish != nil {
		reason = *finish
	}
	r.proj = map[string]any{"content": content, "tool_calls": list, "finish_reason": reason}
	r.usage = usageOf(usage)
}

// parseArguments projects a tool call's arguments string: a JSON object
// becomes the args object (numbers exact); anything else, the empty string
// included, becomes {"raw_arguments": s} (MAF parity, GW-POST-3).
//
// An object with a duplicate key is shown raw too: the policy must judge
// the text the tool executor will parse, whichever duplicate it keeps.
func parseArguments(s string) (map[string]any, bool) {
	if v, err := jsonvalue.DecodeStrict([]byte(s)); err == nil {
		if m, ok := v.(map[string]any); ok {
			return m, false
		}
	}
	return map[string]any{"raw_arguments": s}, true
}

// usageOf keeps the well-known token counts that are non-negative integer
// tokens (spec usage schema); bools and floats are dropped.
func usageOf(v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out map[string]any
	for _, k := range []string{"prompt_tokens", "completion_tokens"} {
		n, ok := m[k].(json.Number)
		if !ok || !isUint(string(n)) {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k] = n
	}
	return out
}

func isUint(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Project returns the post_model_call target {content, tool_calls,
// finish_reason}: content is the message content (string, part array or
// null; the refusal text when content is null and a refusal is present);
// tool_calls is always an array of {id, name, args}; finish_reason is the
// upstream value, "stop" when absent. The result is a fresh tree.
func (r *Response) Project() map[string]any {
	return jsonvalue.DeepCopy(r.proj).(map[string]any)
}

// Usage returns {prompt_tokens, completion_tokens} (those present as
// non-negative integers), or nil when the upstream reported neither.
func (r *Response) Usage() map[string]any {
	if r.usage == nil {
		return nil
	}
	return jsonvalue.DeepCopy(r.usage).(map[string]any)
}

// ID returns the upstream completion id ("chatcmpl-…"), or "".
func (r *Response) ID() string { return r.id }

// Model returns the model the upstream reports, or "".
func (r *Response) Model() string { return r.model }

// Created returns the upstream creation time in Unix seconds, or 0.
func (r *Response) Created() int64 { return r.created }
