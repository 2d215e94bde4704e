package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
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
	text    jsonvalue.Text // the body as bytes and as one string: the trees\' strings slice it
	root    rawjson.Span
	members []rawjson.Member

	model        string
	stream       bool
	includeUsage bool

	msgSpan rawjson.Span   // the messages array
	msgRaw  []rawjson.Span // its elements, in order
	msgs    []any          // their projections, index-aligned with msgRaw

	tools     []any
	toolNames []string
	params    map[string]any

	// memo is the session's memo while the request is parsed (see
	// memo.go); nil after.
	memo *requestMemo
}

// RequestParser parses chat-completions requests under one deployment's
// wire allowances. The zero value judges the members it does not know
// (see Parse). A RequestParser is immutable and safe for concurrent use.
type RequestParser struct {
	allow       rawjson.MemberSet
	maxMessages int
	strict      bool
}

// WithStrictMembers returns a copy of p that refuses, when strict is set,
// the members it does not know (wire.chat.unknown_members: refuse) at the
// top level (unless allowed) and inside the objects whose members it
// knows: tools entries and their function, stream_options,
// response_format and its json_schema, an object tool_choice and its
// function, custom and allowed_tools, content parts, and the entries of a
// message's tool_calls and their function.
func (p *RequestParser) WithStrictMembers(strict bool) *RequestParser {
	cp := *p
	cp.strict = strict
	return &cp
}

// WithMaxMessages returns a copy of p that refuses a request with more
// than n messages (n > 0) before decoding any.
func (p *RequestParser) WithMaxMessages(n int) *RequestParser {
	cp := *p
	cp.maxMessages = n
	return &cp
}

// NewRequestParser returns a parser that also accepts, under
// WithStrictMembers, the top-level members named in allow, projecting
// them verbatim (null included) into model.params and forwarding them, as
// it does every unknown member when it judges them. A known name in allow
// changes nothing (its treatment is fixed), and a name differing from a
// known member only in letter case never takes effect: such members are
// refused as ambiguous before allow is consulted. Configuration checks
// each name with CheckAllowedRequestMember.
func NewRequestParser(allow []string) *RequestParser {
	if len(allow) == 0 {
		return &RequestParser{}
	}
	return &RequestParser{allow: rawjson.NewMemberSet(allow...)}
}

// ParseRequest parses body with the zero RequestParser: unknown members
// judged, none allowed beyond them.
func ParseRequest(body []byte) (*Request, error) {
	var p RequestParser
	return p.Parse(body)
}

// Parse validates a chat-completions body and projects it. Errors are
// *RequestError naming the offending field; they never quote content.
//
// Every member of the request reaches a policy or is the gateway's own
// transport (see RequestMembers): the messages are the pre_model_call
// target, tools the context's tools, the other known top-level members
// model.params. A member the gateway does not know is judged: at the top
// level projected into model.params verbatim (null included), inside a
// tools entry or its function under the projected tool's members or
// function_members, inside stream_options under model.params'
// stream_options; everywhere else it already sits inside a projected
// value. It is forwarded as it came. Under WithStrictMembers it is
// refused instead, naming its path (see WithStrictMembers). A member whose
// name differs from a known member only in letter case is refused in
// both modes, at every level the gateway interprets.
//
// Explicit nulls for optional standard members mean "not set", as on the
// OpenAI API, and are not projected. Requests the gateway cannot mediate
// are refused: n > 1, legacy functions/function_call (their responses
// carry message.function_call, which has no place in the post_model_call
// target), audio output (its transcript would bypass policy), and tools
// other than function tools.
func (p *RequestParser) Parse(body []byte) (*Request, error) {
	return p.parse(body, nil)
}

// parse is Parse reusing the projections memo kept (nil: none).
func (p *RequestParser) parse(body []byte, memo wire.Memo) (*Request, error) {
	var rm *requestMemo
	if memo != nil {
		rm = &requestMemo{memo, p}
	}
	// One pass: ScanRoot validates every member but messages, whose
	// elements the strict decoder validates as it projects them. Any
	// failure takes the Valid-first path, which decides the error: a
	// request is accepted only when that path would accept it, with the
	// same result (FuzzParseOnePass).
	text := jsonvalue.ShareText(body) // the body is never modified (wire.Surface.ParseRequest)
	if root, ms, ok := rawjson.ScanRoot(body, "messages"); ok {
		r := &Request{text: text, root: root, members: ms, memo: rm}
		err := p.parseMembers(r)
		r.memo = nil
		if err == nil {
			return r, nil
		}
	}
	return p.parseValidated(text, rm)
}

// parseValidated is Parse behind encoding/json.Valid over the whole body:
// the path that decides every refusal.
func (p *RequestParser) parseValidated(text jsonvalue.Text, memo *requestMemo) (*Request, error) {
	body := text.Bytes()
	if !json.Valid(body) {
		if len(bytes.TrimLeft(body, " \t\r\n")) == 0 {
			return nil, &wire.RequestError{Msg: "body is empty: a JSON object is required"}
		}
		return nil, &wire.RequestError{Msg: "body is not valid JSON"}
	}
	r := &Request{text: text, root: rawjson.RootSpan(body)}
	if r.root.Kind(body) != '{' {
		return nil, &wire.RequestError{Msg: "body must be a JSON object"}
	}
	ms, err := rawjson.ScanObject(body, r.root)
	if err != nil {
		return nil, &wire.RequestError{Msg: "body has a duplicate member"}
	}
	r.members = ms
	r.memo = memo
	err = p.parseMembers(r)
	r.memo = nil
	if err != nil {
		return nil, err
	}
	return r, nil
}

// parseMembers projects r's members (r.members of r.text.Bytes()). Each value is
// valid JSON, except that a messages array may still be unvalidated
// (ScanRoot): parseMessages checks it, failing on anything invalid.
func (p *RequestParser) parseMembers(r *Request) error {
	body, ms := r.text.Bytes(), r.members
	if rawjson.ArrayLonger(body, ms, "messages", p.maxMessages) {
		return wire.TooManyMessages("messages", p.maxMessages)
	}
	var haveModel, haveMessages bool
	for _, m := range ms {
		spec := requestMembersByName[m.Key]
		if spec == nil {
			if err := r.parseExtra(p, m); err != nil {
				return err
			}
			continue
		}
		haveModel = haveModel || spec.treat == projectModel
		haveMessages = haveMessages || spec.treat == projectTarget
		if err := r.parseMember(spec, m, p.strict); err != nil {
			return err
		}
	}
	switch {
	case !haveModel:
		return &wire.RequestError{Field: "model", Msg: "is required"}
	case !haveMessages:
		return &wire.RequestError{Field: "messages", Msg: "is required"}
	}
	return nil
}

// parseKnown handles one known top-level member by its treatment; strict
// refuses the unknown members of the objects it interprets.
func (r *Request) parseKnown(spec *requestMember, m rawjson.Member, strict bool) error {
	// messages are decoded strictly, element by element.
	if spec.treat != projectTarget && rawjson.HasDuplicateKeys(r.text.Bytes(), m.Val) {
		return &wire.RequestError{Field: spec.name, Msg: "has an object with a duplicate member"}
	}
	switch spec.treat {
	case projectModel:
		return r.parseModel(m.Val)
	case projectTarget:
		return r.parseMessages(m.Val, strict)
	case transportStream:
		return r.parseStream(m.Val)
	case transportStreamOptions:
		return r.parseStreamOptions(m.Val, strict)
	case refuseN:
		return parseN(r.text.Bytes(), m.Val)
	case projectTools:
		return r.parseTools(m.Val, strict)
	case refuseLegacy:
		return &wire.RequestError{Field: spec.name, Msg: "legacy function calling is not supported; use tools"}
	case refuseAudio:
		return r.parseAudio(m.Val)
	default:
		return r.parseParam(spec, m.Val, strict)
	}
}

// parseExtra handles a top-level member the gateway does not know. One
// whose name differs from a known member only in letter case is
// ambiguous; in strict mode one the deployment does not allow is refused;
// otherwise it is projected verbatim, null included: the gateway does not
// know what null means to the upstream.
func (r *Request) parseExtra(p *RequestParser, m rawjson.Member) error {
	if known := requestKnown.FoldsOnto(m.Key); known != "" {
		return &wire.RequestError{Msg: "body " + collisionMessage(known)}
	}
	if p.strict && !p.allow.Has(m.Key) {
		return unknownMemberError(m.Key)
	}
	field := safeField(m.Key)
	if rawjson.HasDuplicateKeys(r.text.Bytes(), m.Val) {
		return &wire.RequestError{Field: field, Msg: "has an object with a duplicate member"}
	}
	v, err := r.text.Decode(m.Val.Start, m.Val.End)
	if err != nil {
		return &wire.RequestError{Field: field, Msg: rawjson.DecodeProblem(err)}
	}
	r.setParam(m.Key, v)
	return nil
}

func (r *Request) parseModel(s rawjson.Span) error {
	v, err := r.text.Decode(s.Start, s.End)
	if err != nil {
		return &wire.RequestError{Field: "model", Msg: rawjson.DecodeProblem(err)}
	}
	model, ok := v.(string)
	if !ok || model == "" {
		return &wire.RequestError{Field: "model", Msg: "must be a non-empty string"}
	}
	r.model = model
	return nil
}

func (r *Request) parseMessages(s rawjson.Span, strict bool) error {
	if s.Kind(r.text.Bytes()) != '[' {
		return &wire.RequestError{Field: "messages", Msg: "must be an array, got " + rawjson.KindName(r.text.Bytes(), s)}
	}
	raw, ok := rawjson.ScanArrayChecked(r.text.Bytes(), s)
	if !ok {
		// Only an unvalidated array (ScanRoot) gets here.
		return &wire.RequestError{Field: "messages", Msg: "is not valid JSON"}
	}
	r.msgSpan, r.msgRaw = s, raw
	if len(r.msgRaw) == 0 {
		return &wire.RequestError{Field: "messages", Msg: "must not be empty"}
	}
	r.msgs = make([]any, len(r.msgRaw))
	for i, es := range r.msgRaw {
		if m, ok := r.memoMessage(es, strict); ok {
			r.msgs[i] = m
			continue
		}
		m, err := r.projectMessage(i, es, strict)
		if err != nil {
			return err
		}
		r.msgs[i] = m
	}
	return nil
}

// projectMessage projects message i, at s.
func (r *Request) projectMessage(i int, s rawjson.Span, strict bool) (map[string]any, error) {
	// The field name is built only for an error: most requests have none.
	field := func() string { return "messages[" + strconv.Itoa(i) + "]" }
	// Inside the body's object and the messages array: the nesting
	// limit counts them, as encoding/json.Valid does.
	v, err := r.text.DecodeStrictNested(s.Start, s.End, 2)
	if err != nil {
		return nil, &wire.RequestError{Field: field(), Msg: rawjson.DecodeProblem(err)}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &wire.RequestError{Field: field(), Msg: "must be an object, got " + rawjson.TypeName(v)}
	}
	// The context schema requires content on every message; OpenAI
	// omits it on tool-call turns, where it means null.
	if _, ok := m["content"]; !ok {
		m["content"] = nil
	}
	if sub, msg := messageProblem(m); msg != "" {
		return nil, &wire.RequestError{Field: field() + sub, Msg: msg}
	}
	if strict {
		if err := strictMessage(m, field()); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// messageProblem checks one projected message: no member name that
// differs from a known one only in letter case (here, in its content parts
// and in its tool calls), a string role, and content that is a string,
// null or an array of content-part objects. It returns the sub-path
// (".role", ".content[3]") and a message, or "" when valid.
func messageProblem(m map[string]any) (sub, msg string) {
	if known := messageMembers.CollisionIn(m); known != "" {
		return "", collisionMessage(known)
	}
	if _, ok := m["role"].(string); !ok {
		return ".role", "must be a string, got " + rawjson.TypeName(m["role"])
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
// or an array of objects, so policies reading them see the wire's shape,
// with no member (nor function member) differing from a known one only in
// letter case.
func toolCallsProblem(tc any) (sub, msg string) {
	switch x := tc.(type) {
	case nil:
	case []any:
		for i, c := range x {
			call, ok := c.(map[string]any)
			if !ok {
				return toolCallPath(i), "must be an object, got " + rawjson.TypeName(c)
			}
			if known := toolCallMembers.CollisionIn(call); known != "" {
				return toolCallPath(i), collisionMessage(known)
			}
			if fn, ok := call["function"].(map[string]any); ok {
				if known := callFunctionMembers.CollisionIn(fn); known != "" {
					return toolCallPath(i) + ".function", collisionMessage(known)
				}
			}
		}
	default:
		return ".tool_calls", "must be an array, got " + rawjson.TypeName(tc)
	}
	return "", ""
}

// toolCallPath is the path of tool call i inside a message, built only
// for a refusal: every assistant turn of a long conversation is checked.
func toolCallPath(i int) string { return ".tool_calls[" + strconv.Itoa(i) + "]" }

// contentProblem checks a content value: string, null, or an array whose
// elements are all objects (content parts are never flattened) with no
// member differing from a known one only in letter case.
func contentProblem(c any, path string) (sub, msg string) {
	switch x := c.(type) {
	case nil, string:
		return "", ""
	case []any:
		for i, p := range x {
			part, ok := p.(map[string]any)
			if !ok {
				return path + "[" + strconv.Itoa(i) + "]", "content part must be an object, got " + rawjson.TypeName(p)
			}
			if known := partMembers.CollisionIn(part); known != "" {
				return path + "[" + strconv.Itoa(i) + "]", collisionMessage(known)
			}
		}
		return "", ""
	default:
		return path, "must be a string, an array of parts or null, got " + rawjson.TypeName(c)
	}
}

func (r *Request) parseStream(s rawjson.Span) error {
	switch r.text.Bytes()[s.Start] {
	case 't':
		r.stream = true
	case 'f', 'n':
	default:
		return &wire.RequestError{Field: "stream", Msg: "must be a boolean, got " + rawjson.KindName(r.text.Bytes(), s)}
	}
	return nil
}

// parseStreamOptions checks the gateway's own transport options: an
// object (or null) whose known members are booleans. The members it does
// not know are projected into model.params as stream_options, an object
// of them alone, and forwarded; strict refuses them.
func (r *Request) parseStreamOptions(s rawjson.Span, strict bool) error {
	if s.IsNull(r.text.Bytes()) {
		return nil
	}
	if s.Kind(r.text.Bytes()) != '{' {
		return &wire.RequestError{Field: "stream_options", Msg: "must be an object, got " + rawjson.KindName(r.text.Bytes(), s)}
	}
	ms, err := rawjson.ScanObject(r.text.Bytes(), s)
	if err != nil {
		return &wire.RequestError{Field: "stream_options", Msg: "has a duplicate member"}
	}
	if i := streamOptionsMembers.Ambiguous(ms); i >= 0 {
		return &wire.RequestError{Field: "stream_options", Msg: collisionMessage(streamOptionsMembers.FoldsOnto(ms[i].Key))}
	}
	var unknown map[string]any
	for _, m := range ms {
		if !streamOptionsMembers.Has(m.Key) {
			if strict {
				return strictMemberError("stream_options", m.Key)
			}
			v, err := r.text.Decode(m.Val.Start, m.Val.End)
			if err != nil {
				return &wire.RequestError{Field: memberPath("stream_options", m.Key), Msg: rawjson.DecodeProblem(err)}
			}
			if unknown == nil {
				unknown = map[string]any{}
			}
			unknown[m.Key] = v
			continue
		}
		switch r.text.Bytes()[m.Val.Start] {
		case 't':
			if m.Key == "include_usage" {
				r.includeUsage = true
			}
		case 'f', 'n':
		default:
			return &wire.RequestError{Field: "stream_options." + m.Key, Msg: "must be a boolean, got " + rawjson.KindName(r.text.Bytes(), m.Val)}
		}
	}
	if unknown != nil {
		r.setParam("stream_options", unknown)
	}
	return nil
}

func parseN(body []byte, s rawjson.Span) error {
	if s.IsNull(body) {
		return nil
	}
	v, err := rawjson.DecodeSpan(body, s)
	if err != nil {
		return &wire.RequestError{Field: "n", Msg: rawjson.DecodeProblem(err)}
	}
	num, ok := v.(json.Number)
	if !ok {
		return &wire.RequestError{Field: "n", Msg: "must be an integer, got " + rawjson.TypeName(v)}
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil {
		if !errors.Is(err, strconv.ErrRange) {
			return &wire.RequestError{Field: "n", Msg: "must be an integer"}
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
		return &wire.RequestError{Field: "n", Msg: nMessage}
	default:
		return &wire.RequestError{Field: "n", Msg: "must be 1"}
	}
}

// parseTools projects the function tools as {name, description?,
// schema?}, with the members of a tools entry the gateway does not know
// under members and those of its function under function_members (judge
// mode; strict refuses them).
func (r *Request) parseTools(s rawjson.Span, strict bool) error {
	if s.IsNull(r.text.Bytes()) {
		return nil
	}
	v, err := r.text.Decode(s.Start, s.End)
	if err != nil {
		return &wire.RequestError{Field: "tools", Msg: rawjson.DecodeProblem(err)}
	}
	list, ok := v.([]any)
	if !ok {
		return &wire.RequestError{Field: "tools", Msg: "must be an array, got " + rawjson.TypeName(v)}
	}
	for i, t := range list {
		field := "tools[" + strconv.Itoa(i) + "]"
		tool, ok := t.(map[string]any)
		if !ok {
			return &wire.RequestError{Field: field, Msg: "must be an object, got " + rawjson.TypeName(t)}
		}
		if known := toolMembers.CollisionIn(tool); known != "" {
			return &wire.RequestError{Field: field, Msg: collisionMessage(known)}
		}
		if typ, _ := tool["type"].(string); typ != "function" {
			return &wire.RequestError{Field: field + ".type", Msg: `must be "function": only function tools can be mediated`}
		}
		fn, ok := tool["function"].(map[string]any)
		if !ok {
			return &wire.RequestError{Field: field + ".function", Msg: "must be an object, got " + rawjson.TypeName(tool["function"])}
		}
		if known := toolFunctionMembers.CollisionIn(fn); known != "" {
			return &wire.RequestError{Field: field + ".function", Msg: collisionMessage(known)}
		}
		members, err := unknownMembers(tool, toolMembers, field, strict)
		if err != nil {
			return err
		}
		fnMembers, err := unknownMembers(fn, toolFunctionMembers, field+".function", strict)
		if err != nil {
			return err
		}
		switch st := fn["strict"].(type) {
		case nil, bool:
		default:
			return &wire.RequestError{Field: field + ".function.strict", Msg: "must be a boolean, got " + rawjson.TypeName(st)}
		}
		name, ok := fn["name"].(string)
		if !ok || name == "" {
			return &wire.RequestError{Field: field + ".function.name", Msg: "must be a non-empty string"}
		}
		// The decoded values themselves: boxing their strings again would
		// cost an allocation each.
		decl := map[string]any{"name": fn["name"]}
		switch d := fn["description"].(type) {
		case nil:
		case string:
			decl["description"] = fn["description"]
		default:
			return &wire.RequestError{Field: field + ".function.description", Msg: "must be a string, got " + rawjson.TypeName(d)}
		}
		switch p := fn["parameters"].(type) {
		case nil:
		case map[string]any:
			decl["schema"] = p
		default:
			return &wire.RequestError{Field: field + ".function.parameters", Msg: "must be an object, got " + rawjson.TypeName(p)}
		}
		if members != nil {
			decl["members"] = members
		}
		if fnMembers != nil {
			decl["function_members"] = fnMembers
		}
		r.tools = append(r.tools, decl)
		r.toolNames = append(r.toolNames, name)
	}
	return nil
}

// unknownMembers returns the members of obj (at path) that are not in
// known, or nil when there are none; strict refuses the first of them
// (in name order, so the error does not depend on map order).
func unknownMembers(obj map[string]any, known rawjson.MemberSet, path string, strict bool) (map[string]any, error) {
	var out map[string]any
	for k, v := range obj {
		if known.Has(k) {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k] = v
	}
	if strict && out != nil {
		return nil, strictMemberError(path, slices.Sorted(maps.Keys(out))[0])
	}
	return out, nil
}

// parseAudio refuses audio output; null means "not set".
func (r *Request) parseAudio(s rawjson.Span) error {
	if s.IsNull(r.text.Bytes()) {
		return nil
	}
	return &wire.RequestError{Field: "audio", Msg: "audio output is not supported: its transcript cannot be mediated"}
}

// parseParam checks a known parameter's shape and records it for
// model.params, refusing what would open an unmediated output channel or
// hide a member behind letter case. null means "not set".
func (r *Request) parseParam(spec *requestMember, s rawjson.Span, strict bool) error {
	v, err := r.text.Decode(s.Start, s.End)
	if err != nil {
		return &wire.RequestError{Field: spec.name, Msg: rawjson.DecodeProblem(err)}
	}
	if v == nil {
		return nil
	}
	if sub, msg := spec.shape.problem(v); msg != "" {
		return &wire.RequestError{Field: spec.name + sub, Msg: msg}
	}
	var sub, msg string
	switch spec.name {
	case "modalities":
		if slices.Contains(v.([]any), any("audio")) {
			msg = "audio output is not supported: its transcript cannot be mediated"
		}
	case "response_format":
		sub, msg = responseFormatProblem(v.(map[string]any))
	case "tool_choice":
		if obj, ok := v.(map[string]any); ok {
			sub, msg = toolChoiceProblem(obj)
		}
	}
	if msg != "" {
		return &wire.RequestError{Field: spec.name + sub, Msg: msg}
	}
	if strict {
		if err := strictParam(spec.name, v); err != nil {
			return err
		}
	}
	r.setParam(spec.name, v)
	return nil
}

// responseFormatProblem refuses members of response_format (and of its
// json_schema) that differ from known ones only in letter case.
func responseFormatProblem(rf map[string]any) (sub, msg string) {
	if known := responseFormatMembers.CollisionIn(rf); known != "" {
		return "", collisionMessage(known)
	}
	if js, ok := rf["json_schema"].(map[string]any); ok {
		if known := jsonSchemaMembers.CollisionIn(js); known != "" {
			return ".json_schema", collisionMessage(known)
		}
	}
	return "", ""
}

// toolChoiceProblem refuses members of an object tool_choice (and of its
// function, custom and allowed_tools) that differ from known ones only in
// letter case.
func toolChoiceProblem(tc map[string]any) (sub, msg string) {
	if known := toolChoiceMembers.CollisionIn(tc); known != "" {
		return "", collisionMessage(known)
	}
	for _, name := range []string{"function", "custom"} {
		if obj, ok := tc[name].(map[string]any); ok {
			if known := namedToolMembers.CollisionIn(obj); known != "" {
				return "." + name, collisionMessage(known)
			}
		}
	}
	if obj, ok := tc["allowed_tools"].(map[string]any); ok {
		if known := allowedToolsMembers.CollisionIn(obj); known != "" {
			return ".allowed_tools", collisionMessage(known)
		}
	}
	return "", ""
}

// setParam records one model.params member.
func (r *Request) setParam(name string, v any) {
	if r.params == nil {
		r.params = map[string]any{}
	}
	r.params[name] = v
}

// safeField returns key for use as an error's Field, or "" when it is not
// a short identifier: arbitrary client-chosen key text is never echoed.
func safeField(key string) string {
	if rawjson.PlainName(key) {
		return key
	}
	return ""
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
// it. The slice is the caller's; the message trees are the Request's,
// shared by every call, and must not be modified (the engine adopts them
// into contexts and copies before any transform).
func (r *Request) Messages() []any { return slices.Clone(r.msgs) }

// Tools returns the context's optional tools: [{name, description?,
// schema?}], or nil when the request declares none. Like Messages, the
// trees are shared and read-only.
func (r *Request) Tools() []any {
	if len(r.tools) == 0 {
		return nil
	}
	return slices.Clone(r.tools)
}

// Params returns model.params: every top-level member other than model,
// messages, tools, stream, stream_options and n, verbatim (temperature,
// top_p, max_tokens, stop, response_format, tool_choice, seed, user,
// metadata, ..., and the members the deployment allows). Standard members
// set to null are left out (null means "not set"); allowed extras keep
// theirs. It is nil when there are none. The map is the caller's; its
// values are shared and read-only, as with Messages.
func (r *Request) Params() map[string]any {
	if len(r.params) == 0 {
		return nil
	}
	return maps.Clone(r.params)
}
