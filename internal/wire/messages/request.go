package messages

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// Request is a validated Messages request. It keeps the body and the
// offsets of its members so that UpstreamBody rewrites only what a
// verdict changed. It is immutable and safe for concurrent use.
type Request struct {
	s       *Surface
	text    jsonvalue.Text // the body as bytes and as one string: the trees\' strings slice it
	root    rawjson.Span
	members []rawjson.Member
	op      wire.Operation

	model  string
	stream bool

	sysMember int   // index of the system member in members, or -1
	sysProj   []any // the projected system message, or nil

	msgSpan rawjson.Span
	msgRaw  []rawjson.Span
	groups  [][]any // projected messages of each wire message

	pool pool // original blocks, for byte-exact reuse on write-back

	tools     []any
	toolNames []string
	params    map[string]any
	stops     []string // stop_sequences, which an answer may echo

	// edits are, for every seal the client sent back, the bytes that
	// open it; body is the client's body with them applied, which the
	// spans above and the pool point into once parsing is done: the body
	// the upstream receives.
	edits []sealEdit
	body  []byte

	// memo is the session's memo while the request is parsed (see
	// memo.go); nil after.
	memo wire.Memo
}

// parse validates body as a request for op.
func (s *Surface) parse(body []byte, op wire.Operation) (*Request, error) {
	return s.parseWith(body, op, nil, nil)
}

// parseWith validates body as a request for op whose anthropic-beta
// header named betas, and opens the seals it holds; it reuses the
// projections memo kept (nil: none).
func (s *Surface) parseWith(body []byte, op wire.Operation, betas []string, memo wire.Memo) (*Request, error) {
	r, err := s.parseBody(body, op, memo)
	if err != nil {
		return nil, err
	}
	r.openSeals()
	if len(betas) > 0 {
		list := make([]any, len(betas))
		for i, b := range betas {
			list[i] = b
		}
		r.setParam(paramBeta, list)
	}
	return r, nil
}

// parseBody parses body, reusing the projections memo kept; its seals
// are still to open.
func (s *Surface) parseBody(body []byte, op wire.Operation, memo wire.Memo) (*Request, error) {
	// One pass: ScanRootDeferred checks the object's syntax and every
	// member value is decoded strictly, which validates it. Any failure
	// takes the Valid-first path, which decides every error, so a request
	// is accepted only when that path would accept it, with the same
	// result (TestParseOnePassMatchesValidFirst).
	text := jsonvalue.ShareText(body) // the body is never modified (wire.Surface.ParseRequest)
	if root, ms, ok := rawjson.ScanRootDeferred(body); ok {
		r := &Request{s: s, text: text, root: root, members: ms, op: op, sysMember: -1, memo: memo}
		err := s.parseMembers(r)
		r.memo = nil
		if err == nil {
			return r, nil
		}
	}
	return s.parseValidated(text, op, memo)
}

// parseValidated is parseBody behind encoding/json.Valid over the whole
// body: the path that decides every refusal.
func (s *Surface) parseValidated(text jsonvalue.Text, op wire.Operation, memo wire.Memo) (*Request, error) {
	body := text.Bytes()
	if !json.Valid(body) {
		if len(bytes.TrimLeft(body, " \t\r\n")) == 0 {
			return nil, &wire.RequestError{Msg: "body is empty: a JSON object is required"}
		}
		return nil, &wire.RequestError{Msg: "body is not valid JSON"}
	}
	r := &Request{s: s, text: text, root: rawjson.RootSpan(body), op: op, sysMember: -1}
	if r.root.Kind(body) != '{' {
		return nil, &wire.RequestError{Msg: "body must be a JSON object"}
	}
	ms, err := rawjson.ScanObject(body, r.root)
	if err != nil {
		return nil, &wire.RequestError{Msg: "body has a duplicate member"}
	}
	r.members = ms
	r.memo = memo
	err = s.parseMembers(r)
	r.memo = nil
	if err != nil {
		return nil, err
	}
	return r, nil
}

// parseMembers projects r's members (r.members of r.text.Bytes()), decoding every
// value strictly, which validates it where ScanRootDeferred has not.
func (s *Surface) parseMembers(r *Request) error {
	body, ms, op := r.text.Bytes(), r.members, r.op
	if rawjson.ArrayLonger(body, ms, "messages", s.maxMessages) {
		return wire.TooManyMessages("messages", s.maxMessages)
	}
	seen := map[treatment]bool{}
	haveMaxTokens := false
	for i, m := range ms {
		spec := requestMembersByName[m.Key]
		if spec == nil {
			if err := r.parseExtra(m); err != nil {
				return err
			}
			continue
		}
		seen[spec.treat] = true
		haveMaxTokens = haveMaxTokens || spec.name == "max_tokens"
		if spec.treat == projectSystem {
			r.sysMember = i
		}
		if spec.treat == projectTarget && !s.treeMessages && r.parseMessagesRaw(m.Val) {
			continue // projected message by message, without a tree of the conversation
		}
		if err := r.parseMember(spec, m); err != nil {
			return err
		}
	}
	switch {
	case !seen[projectModel]:
		return &wire.RequestError{Field: "model", Msg: "is required"}
	case !seen[projectTarget]:
		return &wire.RequestError{Field: "messages", Msg: "is required"}
	case op == wire.OpMessages && !haveMaxTokens:
		return &wire.RequestError{Field: "max_tokens", Msg: "is required"}
	case op == wire.OpCountTokens && r.stream:
		return &wire.RequestError{Field: "stream", Msg: "count_tokens does not stream"}
	}
	return nil
}

// parseMember is parseKnown, reusing the memo's projection of the system
// and tools members.
func (r *Request) parseMember(spec *requestMember, m rawjson.Member) error {
	switch {
	case r.memo == nil:
		return r.parseKnown(spec, m)
	case spec.treat == projectSystem:
		return r.parseSystemMemo(spec, m)
	case spec.treat == projectTools:
		return r.parseToolsMemo(spec, m)
	}
	return r.parseKnown(spec, m)
}

// parseExtra projects a top-level member the gateway does not know into
// model.params, as it is forwarded (refused under StrictMembers unless
// allowed).
func (r *Request) parseExtra(m rawjson.Member) error {
	if known := requestKnown.FoldsOnto(m.Key); known != "" {
		return &wire.RequestError{Msg: "body " + collisionMessage(known)}
	}
	if reservedParams.Has(m.Key) || reservedParams.Collides(m.Key) {
		return &wire.RequestError{Field: m.Key, Msg: "is a name the gateway itself puts in model.params, so a request member of that name is refused"}
	}
	if r.s.strict && !r.s.allowReq.Has(m.Key) {
		return strictMemberError("", m.Key)
	}
	v, err := r.text.DecodeStrictNested(m.Val.Start, m.Val.End, 1) // inside the body's object
	if err != nil {
		return &wire.RequestError{Field: m.Key, Msg: rawjson.DecodeProblem(err)}
	}
	r.setParam(m.Key, v)
	return nil
}

func (r *Request) setParam(k string, v any) {
	if list, ok := v.([]any); ok && k == "stop_sequences" {
		for _, e := range list {
			if str, ok := e.(string); ok {
				r.stops = append(r.stops, str)
			}
		}
	}
	if r.params == nil {
		r.params = map[string]any{}
	}
	r.params[k] = v
}

// parseKnown decodes one known member strictly (duplicate keys anywhere
// inside are refused) and handles it by its treatment.
func (r *Request) parseKnown(spec *requestMember, m rawjson.Member) error {
	v, err := r.text.DecodeStrictNested(m.Val.Start, m.Val.End, 1) // inside the body's object
	if err != nil {
		return &wire.RequestError{Field: spec.name, Msg: rawjson.DecodeProblem(err)}
	}
	switch spec.treat {
	case projectModel:
		s, ok := v.(string)
		if !ok || s == "" {
			return &wire.RequestError{Field: "model", Msg: "must be a non-empty string"}
		}
		r.model = s
		return nil
	case projectTarget:
		return r.parseMessages(m.Val, v)
	case projectSystem:
		return r.parseSystem(m.Val, v)
	case projectTools:
		return r.parseTools(v)
	case transportStream:
		b, ok := v.(bool)
		if !ok {
			return &wire.RequestError{Field: "stream", Msg: "must be a boolean, got " + rawjson.TypeName(v)}
		}
		r.stream = b
		return nil
	case serverMCP:
		return r.parseMCPServers(v)
	case projectContainer:
		return r.parseContainer(m.Val, v)
	}
	if v == nil && spec.name != "max_tokens" {
		return nil // null means "not set"; it carries nothing to judge
	}
	if !spec.shape.fits(v) {
		return &wire.RequestError{Field: spec.name, Msg: "must be " + spec.shape.describe() + ", got " + rawjson.TypeName(v)}
	}
	if err := r.paramProblem(spec.name, v); err != nil {
		return err
	}
	r.setParam(spec.name, v)
	return nil
}

// paramProblem checks the members of the parameters whose inner shape
// the gateway interprets.
func (r *Request) paramProblem(name string, v any) error {
	switch name {
	case "metadata":
		obj := v.(map[string]any)
		if k := metadataMembers.CollisionIn(obj); k != "" {
			return &wire.RequestError{Field: name, Msg: collisionMessage(k)}
		}
		if _, err := r.unknownMembers(name, obj, metadataMembers); err != nil {
			return err
		}
		if u, ok := obj["user_id"]; ok && u != nil {
			if _, ok := u.(string); !ok {
				return &wire.RequestError{Field: "metadata.user_id", Msg: "must be a string or null"}
			}
		}
	case "thinking":
		obj := v.(map[string]any)
		if k := thinkingMembers.CollisionIn(obj); k != "" {
			return &wire.RequestError{Field: name, Msg: collisionMessage(k)}
		}
		switch obj["type"] {
		case "enabled":
			if rawjson.TypeName(obj["budget_tokens"]) != "number" {
				return &wire.RequestError{Field: "thinking.budget_tokens", Msg: "must be a number when type is enabled"}
			}
		case "disabled", "adaptive":
		default:
			return &wire.RequestError{Field: "thinking.type", Msg: "must be enabled, disabled or adaptive"}
		}
		if _, err := r.unknownMembers(name, obj, thinkingMembers); err != nil {
			return err
		}
	}
	return nil
}

// unknownMembers returns the members of obj (at path field) that known
// lacks: judged, they are projected beside the known ones. Under
// StrictMembers the first of them (by name) is refused instead.
func (r *Request) unknownMembers(field string, obj map[string]any, known rawjson.MemberSet) (map[string]any, error) {
	var extra map[string]any
	first := ""
	for k, v := range obj {
		if known.Has(k) {
			continue
		}
		if extra == nil {
			extra = map[string]any{}
		}
		extra[k] = v
		if len(extra) == 1 || k < first { // "" is a name too
			first = k
		}
	}
	if extra != nil && r.s.strict {
		return nil, strictMemberError(field, first)
	}
	return extra, nil
}

// addMembers puts the judged members extra into the projected object p;
// a name p uses, or may use (projected, the names its kind of projection
// holds), would make the projection ambiguous.
func addMembers(field string, p map[string]any, extra map[string]any, projected rawjson.MemberSet) error {
	for k, v := range extra {
		if _, taken := p[k]; taken || projected.Has(k) {
			return &wire.RequestError{Field: joinPath(field, k), Msg: "has a name the gateway's projection of its object uses, so it cannot be judged beside it"}
		}
		p[k] = v
	}
	return nil
}

// The names each kind of projection may hold besides a block's own
// members.
var (
	textProjected    = rawjson.NewMemberSet("annotations")
	imageProjected   = rawjson.NewMemberSet("image_url")
	callProjected    = rawjson.NewMemberSet("function")
	toolProjected    = rawjson.NewMemberSet("role", "tool_call_id")
	partProjected    = rawjson.NewMemberSet("text")
	noMoreProjected  = rawjson.MemberSet{}
	messageProjected = rawjson.NewMemberSet("tool_calls", "tool_call_id")
)

// parseContainer checks the container parameter: a container id, or an
// object whose id names one. The id came to the client sealed in an
// answer: it must open, and the provider's own id is forwarded.
func (r *Request) parseContainer(s rawjson.Span, v any) error {
	// The projection holds the provider's id, as the upstream receives it.
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		id, err := r.openAt(s, "container", kindContainerID, x)
		if err != nil {
			return err
		}
		v = id
	case map[string]any:
		if k := containerMembers.CollisionIn(x); k != "" {
			return &wire.RequestError{Field: "container", Msg: collisionMessage(k)}
		}
		if _, err := r.unknownMembers("container", x, containerMembers); err != nil {
			return err
		}
		switch sealed := x["id"].(type) {
		case nil:
		case string:
			id, err := r.openAt(r.member(s, "id"), "container.id", kindContainerID, sealed)
			if err != nil {
				return err
			}
			x["id"] = id // x was decoded for this request alone
		default:
			return &wire.RequestError{Field: "container.id", Msg: "must be a string or null"}
		}
	default:
		return &wire.RequestError{Field: "container", Msg: "must be a string or an object, got " + rawjson.TypeName(v)}
	}
	r.setParam("container", v)
	return nil
}

// parseSystem projects the system member: a string, or text blocks.
func (r *Request) parseSystem(s rawjson.Span, v any) error {
	switch x := v.(type) {
	case string:
		r.sysProj = []any{map[string]any{"role": "system", "content": x}}
		return nil
	case []any:
		spans := rawjson.ScanArray(r.text.Bytes(), s)
		parts := make([]any, len(x))
		for i, e := range x {
			field := "system[" + strconv.Itoa(i) + "]"
			b, ok := e.(map[string]any)
			if !ok || b["type"] != "text" {
				return &wire.RequestError{Field: field, Msg: "must be a text block"}
			}
			_, extra, err := r.checkBlock(field, b)
			if err != nil {
				return err
			}
			p, err := r.projectBlock(field, b, spans[i], extra)
			if err != nil {
				return err
			}
			parts[i] = p
			r.pool.addSpan(poolPart, p, r.text.Bytes(), spans[i])
		}
		r.sysProj = []any{map[string]any{"role": "system", "content": parts}}
		return nil
	}
	return &wire.RequestError{Field: "system", Msg: "must be a string or an array of text blocks, got " + rawjson.TypeName(v)}
}

// parseMessages validates and projects the conversation.
func (r *Request) parseMessages(s rawjson.Span, v any) error {
	list, ok := v.([]any)
	if !ok {
		return &wire.RequestError{Field: "messages", Msg: "must be an array, got " + rawjson.TypeName(v)}
	}
	if len(list) == 0 {
		return &wire.RequestError{Field: "messages", Msg: "must not be empty"}
	}
	r.msgSpan, r.msgRaw = s, rawjson.ScanArray(r.text.Bytes(), s)
	r.groups = make([][]any, len(list))
	for i, e := range list {
		g, err := r.projectMessage(i, e)
		if err != nil {
			return err
		}
		r.groups[i] = g
	}
	return nil
}

// projectMessage projects wire message i into one or more normalized
// messages: a user turn holding tool results splits into tool messages
// and user messages, in block order.
func (r *Request) projectMessage(i int, e any) ([]any, error) {
	field := "messages[" + strconv.Itoa(i) + "]"
	m, ok := e.(map[string]any)
	if !ok {
		return nil, &wire.RequestError{Field: field, Msg: "must be an object, got " + rawjson.TypeName(e)}
	}
	if k := messageMembers.CollisionIn(m); k != "" {
		return nil, &wire.RequestError{Field: field, Msg: collisionMessage(k)}
	}
	// Members beside role and content (the Agent SDK's output_config on a
	// system message, say) are judged on the message's first projection.
	extra, err := r.unknownMembers(field, m, messageMembers)
	if err != nil {
		return nil, err
	}
	if err := addMembers(field, map[string]any{}, extra, messageProjected); err != nil {
		return nil, err
	}
	role, _ := m["role"].(string)
	switch role {
	case "user", "assistant", "system":
	default:
		return nil, &wire.RequestError{Field: field + ".role", Msg: "must be user, assistant or system"}
	}
	switch c := m["content"].(type) {
	case string:
		// The decoded values themselves: boxing their strings again would
		// cost an allocation each.
		msg := map[string]any{"role": m["role"], "content": m["content"]}
		for k, v := range extra {
			msg[k] = v
		}
		return []any{msg}, nil
	case []any:
		spans := r.contentSpans(r.msgRaw[i])
		return r.projectBlocks(field+".content", role, m["role"], c, spans, extra)
	}
	return nil, &wire.RequestError{Field: field + ".content", Msg: "must be a string or an array of content blocks, got " + rawjson.TypeName(m["content"])}
}

// contentSpans returns the spans of the content blocks of the message at s.
func (r *Request) contentSpans(s rawjson.Span) []rawjson.Span {
	return rawjson.ScanArray(r.text.Bytes(), r.member(s, "content"))
}

// member returns the span of member name of the request's object at s,
// or an empty span. The request was decoded strictly, so the object has
// no duplicate members: memberSpan's answer, without its member list.
func (r *Request) member(s rawjson.Span, name string) rawjson.Span {
	v, _ := rawjson.MemberValue(r.text.Bytes(), s, name)
	return v
}

// projectBlocks projects a block array of one wire message whose own
// judged members are extra: they ride on its first projected message,
// which for a user turn is a user message even when the turn opens with a
// tool result (it then has no parts).
func (r *Request) projectBlocks(field, role string, roleV any, blocks []any, spans []rawjson.Span, extra map[string]any) ([]any, error) {
	t := newTurn(role, roleV, extra)
	for j, e := range blocks {
		bf := field + "[" + strconv.Itoa(j) + "]"
		b, ok := e.(map[string]any)
		if !ok {
			return nil, &wire.RequestError{Field: bf, Msg: "must be a content block object, got " + rawjson.TypeName(e)}
		}
		spec, blockExtra, err := r.checkBlock(bf, b)
		if err != nil {
			return nil, err
		}
		if err := roleAllows(bf, role, spec.kind); err != nil {
			return nil, err
		}
		switch spec.kind {
		case kindToolResult:
			tm, err := r.projectToolResult(bf, b, spans[j], blockExtra)
			if err != nil {
				return nil, err
			}
			t.result(tm)
			r.pool.addSpan(poolResult, tm, r.text.Bytes(), spans[j])
		case kindToolUse:
			if err := checkToolUse(bf, b); err != nil {
				return nil, err
			}
			c, err := projectCall(bf, b, r.text, spans[j], blockExtra)
			if err != nil {
				return nil, err
			}
			t.call(c)
			r.pool.addSpan(poolCall, c, r.text.Bytes(), spans[j])
		default:
			p, err := r.projectBlock(bf, b, spans[j], blockExtra)
			if err != nil {
				return nil, err
			}
			t.part(p)
			r.pool.addSpan(poolPart, p, r.text.Bytes(), spans[j])
		}
	}
	return t.done(), nil
}

// roleAllows refuses blocks a role cannot carry on the wire.
func roleAllows(field, role string, k blockKind) error {
	switch {
	case role == "assistant" && k == kindToolResult,
		role != "assistant" && (k == kindToolUse || k == kindThinking || k == kindRedacted),
		role == "system" && k != kindText:
		return &wire.RequestError{Field: field, Msg: "is a block type the message's role cannot carry"}
	}
	return nil
}

// checkBlock checks a block's type and members; it returns the members
// its type does not know, which are judged in the block's projection.
func (r *Request) checkBlock(field string, b map[string]any) (*blockSpec, map[string]any, error) {
	typ, _ := b["type"].(string)
	spec := blocksByType[typ]
	if spec == nil {
		return nil, nil, &wire.RequestError{Field: field + ".type", Msg: "is not a content block type the gateway knows"}
	}
	if spec.kind == kindServer && !r.s.serverTools {
		return nil, nil, &wire.RequestError{Field: field, Msg: "is a provider-executed tool block; allow them with " + AllowServerToolsKey + ": true"}
	}
	if k := spec.members.CollisionIn(b); k != "" {
		return nil, nil, &wire.RequestError{Field: field, Msg: collisionMessage(k)}
	}
	extra, err := r.unknownMembers(field, b, spec.members)
	return spec, extra, err
}

// projectBlock projects one non-tool block at span s as a content part;
// extra are its members the type does not know, judged in the part.
// Sealed blobs are opened and never projected.
func (r *Request) projectBlock(field string, b map[string]any, s rawjson.Span, extra map[string]any) (any, error) {
	var p map[string]any
	switch b["type"] {
	case "text":
		if _, ok := b["text"].(string); !ok {
			return nil, &wire.RequestError{Field: field + ".text", Msg: "must be a string"}
		}
		p = map[string]any{"type": "text", "text": b["text"]} // the decoded value: boxed once
		anns, err := r.citations(field, b["citations"], s)
		if err != nil {
			return nil, err
		}
		if anns != nil {
			p["annotations"] = anns
		}
	case "image":
		src, ok := b["source"].(map[string]any)
		st, _ := src["type"].(string)
		if !ok || !imageSourceKinds.Has(st) {
			return nil, &wire.RequestError{Field: field + ".source", Msg: "must be an object of type base64, url or file"}
		}
		if st != "url" || imageURLMembers.UnknownIn(src) {
			return jsonvalue.DeepCopy(b), nil
		}
		u, ok := src["url"].(string)
		if !ok {
			return nil, &wire.RequestError{Field: field + ".source.url", Msg: "must be a string"}
		}
		p = map[string]any{"type": "image_url", "image_url": map[string]any{"url": u}}
	case "thinking":
		t, ok1 := b["thinking"].(string)
		sig, ok2 := b["signature"].(string)
		if !ok1 || !ok2 {
			return nil, &wire.RequestError{Field: field, Msg: "thinking and signature must be strings"}
		}
		if _, err := r.openAt(r.member(s, "signature"), field+".signature", kindSignature, sig); err != nil {
			return nil, err
		}
		p = map[string]any{"type": "reasoning", "text": t}
	case "redacted_thinking":
		data, ok := b["data"].(string)
		if !ok {
			return nil, &wire.RequestError{Field: field + ".data", Msg: "must be a string"}
		}
		if _, err := r.openAt(r.member(s, "data"), field+".data", kindRedactedData, data); err != nil {
			return nil, err
		}
		p = map[string]any{"type": "redacted_thinking"}
	default:
		return jsonvalue.DeepCopy(b), nil
	}
	if cc, present := b["cache_control"]; present {
		p["cache_control"] = cc
	}
	projected := noMoreProjected
	switch p["type"] {
	case "text":
		projected = textProjected
	case "image_url":
		projected = imageProjected
	case "reasoning":
		projected = partProjected
	}
	if err := addMembers(field, p, extra, projected); err != nil {
		return nil, err
	}
	return p, nil
}

// citations projects a text block's citations (at path field, the block
// at s) as annotations, opening their sealed encrypted_index; each
// projection is pooled with its bytes, which a rewritten text block
// reuses. Nil when the block has none.
func (r *Request) citations(field string, v any, s rawjson.Span) ([]any, error) {
	list, ok := v.([]any)
	if v == nil {
		return nil, nil
	}
	if !ok {
		return nil, &wire.RequestError{Field: field + ".citations", Msg: "must be an array or null"}
	}
	body := r.text.Bytes()
	spans := rawjson.ScanArray(body, r.member(s, "citations"))
	anns := make([]any, len(list))
	for j, e := range list {
		cf := field + ".citations[" + strconv.Itoa(j) + "]"
		c, ok := e.(map[string]any)
		if !ok {
			return nil, &wire.RequestError{Field: cf, Msg: "must be an object"}
		}
		switch x := c["encrypted_index"].(type) {
		case nil:
		case string:
			if _, err := r.openAt(r.member(spans[j], "encrypted_index"), cf+".encrypted_index", kindEncryptedIndex, x); err != nil {
				return nil, err
			}
		default:
			return nil, &wire.RequestError{Field: cf + ".encrypted_index", Msg: "must be a string"}
		}
		anns[j] = citationProjection(c)
		r.pool.addSpan(poolCite, anns[j], body, spans[j])
	}
	return anns, nil
}

// projectCall projects a tool_use block (at path field, span s) as a chat
// tool call whose arguments are the JSON text the client sent for input;
// caller, cache_control, toolset_name and the members extra its type does
// not know are judged in the call.
func projectCall(field string, b map[string]any, text jsonvalue.Text, s rawjson.Span, extra map[string]any) (map[string]any, error) {
	in, _ := rawjson.MemberValue(text.Bytes(), s, "input") // decoded strictly: no duplicates
	c := map[string]any{
		"id":   b["id"],
		"type": "function",
		"function": map[string]any{
			"name":      b["name"],
			"arguments": text.Slice(in.Start, in.End),
		},
	}
	for _, k := range []string{"caller", "cache_control", "toolset_name"} {
		if v, present := b[k]; present {
			c[k] = v
		}
	}
	return c, addMembers(field, c, extra, callProjected)
}

// projectToolResult projects a tool_result block (at span s) as a tool
// message; is_error, cache_control, toolset_name and the members extra its
// type does not know are judged as members of the message.
func (r *Request) projectToolResult(field string, b map[string]any, s rawjson.Span, extra map[string]any) (map[string]any, error) {
	_, ok := b["tool_use_id"].(string)
	if !ok {
		return nil, &wire.RequestError{Field: field + ".tool_use_id", Msg: "must be a string"}
	}
	tm := map[string]any{"role": "tool", "tool_call_id": b["tool_use_id"]} // id, the decoded value: boxed once
	switch c := b["content"].(type) {
	case nil:
		tm["content"] = nil
	case string:
		tm["content"] = b["content"] // c, boxed once
	case []any:
		parts := make([]any, len(c))
		spans := rawjson.ScanArray(r.text.Bytes(), r.member(s, "content"))
		for i, e := range c {
			pf := field + ".content[" + strconv.Itoa(i) + "]"
			pb, ok := e.(map[string]any)
			if !ok {
				return nil, &wire.RequestError{Field: pf, Msg: "must be a content block object"}
			}
			spec, pextra, err := r.checkBlock(pf, pb)
			if err != nil {
				return nil, err
			}
			if spec.kind != kindText && spec.kind != kindImage && spec.kind != kindNative {
				return nil, &wire.RequestError{Field: pf, Msg: "is a block type a tool result cannot carry"}
			}
			if parts[i], err = r.projectBlock(pf, pb, spans[i], pextra); err != nil {
				return nil, err
			}
		}
		tm["content"] = parts
	default:
		return nil, &wire.RequestError{Field: field + ".content", Msg: "must be a string or an array of blocks"}
	}
	switch e := b["is_error"].(type) {
	case nil:
	case bool:
		if e {
			tm["is_error"] = true
		}
	default:
		return nil, &wire.RequestError{Field: field + ".is_error", Msg: "must be a boolean"}
	}
	for _, k := range []string{"cache_control", "toolset_name"} {
		if v, present := b[k]; present {
			tm[k] = v
		}
	}
	return tm, addMembers(field, tm, extra, toolProjected)
}

// checkToolUse checks a tool_use block's id, name and object input.
func checkToolUse(field string, b map[string]any) error {
	if _, ok := b["id"].(string); !ok {
		return &wire.RequestError{Field: field + ".id", Msg: "must be a string"}
	}
	if n, ok := b["name"].(string); !ok || n == "" {
		return &wire.RequestError{Field: field + ".name", Msg: "must be a non-empty string"}
	}
	if _, ok := b["input"].(map[string]any); !ok {
		return &wire.RequestError{Field: field + ".input", Msg: "must be an object"}
	}
	return nil
}

// Model implements wire.Request.
func (r *Request) Model() string { return r.model }

// Stream implements wire.Request.
func (r *Request) Stream() bool { return r.stream }

// Operation implements wire.Request.
func (r *Request) Operation() wire.Operation { return r.op }

// ToolNames lists the client-executed tools (custom and Anthropic-defined
// client tools) in order.
func (r *Request) ToolNames() []string { return append([]string(nil), r.toolNames...) }

// Messages implements wire.Request: the system member (if any) as a
// leading system message, then every wire message's projection. The
// slice is the caller's; the message trees are the Request's, shared by
// every call, and must not be modified.
func (r *Request) Messages() []any {
	n := len(r.sysProj)
	for _, g := range r.groups {
		n += len(g)
	}
	out := make([]any, 0, n)
	out = append(out, r.sysProj...)
	for _, g := range r.groups {
		out = append(out, g...)
	}
	return out
}

// Tools implements wire.Request. The trees are shared and read-only, as
// with Messages.
func (r *Request) Tools() []any {
	if len(r.tools) == 0 {
		return nil
	}
	return slices.Clone(r.tools)
}

// Params implements wire.Request: every top-level member other than
// model, messages, system, tools and stream, verbatim (the container's id
// opened), plus partial_context: true when provider-executed tools are
// declared and anthropic_beta, the betas of the anthropic-beta header.
// The map is the caller's; its values are shared and read-only.
func (r *Request) Params() map[string]any {
	if len(r.params) == 0 {
		return nil
	}
	return maps.Clone(r.params)
}
