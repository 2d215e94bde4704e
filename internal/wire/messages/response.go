package messages

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// responseMember is one known top-level answer member.
type responseMember struct {
	name string
	doc  string
}

// responseMemberTable lists the members of a Message (anthropic-sdk-go
// Message and BetaMessage, v2.17.0) and what the gateway does with each.
var responseMemberTable = []responseMember{
	{"id", "minted: the gateway's own `msg_` id, one per answer, the same in every event of a stream; the upstream's is never released"},
	{"type", `a constant: "message", else the answer is refused`},
	{"role", `a constant: "assistant", else the answer is refused`},
	{"model", "the request's model name, which pre_model_call judged as `model.id`; the upstream's is never released"},
	{"content", "projected: text, thinking, redacted_thinking and provider-tool blocks as `content`, tool_use as `tool_calls`; thinking signatures, redacted_thinking data and citations' encrypted_index sealed"},
	{"stop_reason", "an enumeration, projected as `finish_reason` (end_turn, stop_sequence, pause_turn → stop; max_tokens, model_context_window_exceeded → length; tool_use → tool_calls; refusal → content_filter); any other refuses the answer"},
	{"stop_sequence", "null or one of the request's stop_sequences (which pre_model_call judged); anything else refuses the answer"},
	{"stop_details", metaDoc["stop_details"]},
	{"usage", metaDoc["usage"]},
	{"container", metaDoc["container"]},
	{"context_management", metaDoc["context_management"]},
	{"diagnostics", metaDoc["diagnostics"]},
}

var responseKnown = func() rawjson.MemberSet {
	s := make(rawjson.MemberSet, len(responseMemberTable))
	for _, m := range responseMemberTable {
		s[m.name] = struct{}{}
	}
	return s
}()

// ResponseMembers lists every top-level answer member the gateway knows.
// Others are judged as {"type":"member","name","value"} parts (under
// wire.messages.unknown_members: refuse, removed unless allowed by
// wire.messages.allow_response_members).
func ResponseMembers() []MemberDoc {
	out := make([]MemberDoc, len(responseMemberTable))
	for i, m := range responseMemberTable {
		out[i] = MemberDoc{Name: m.name, Treatment: m.doc}
	}
	return out
}

// Answer content blocks and their members.
var answerBlockMembers = map[string]rawjson.MemberSet{
	"text":              rawjson.NewMemberSet("type", "text", "citations"),
	"thinking":          rawjson.NewMemberSet("type", "thinking", "signature"),
	"redacted_thinking": rawjson.NewMemberSet("type", "data"),
	"tool_use":          rawjson.NewMemberSet("type", "id", "name", "input", "caller"),
}

// stopReasons maps every stop_reason to its finish_reason.
var stopReasons = map[string]string{
	"end_turn":                      "stop",
	"stop_sequence":                 "stop",
	"pause_turn":                    "stop",
	"max_tokens":                    "length",
	"model_context_window_exceeded": "length",
	"tool_use":                      "tool_calls",
	"refusal":                       "content_filter",
}

// finishToStop renders a changed finish_reason back.
var finishToStop = map[string]string{
	"stop":           "end_turn",
	"length":         "max_tokens",
	"tool_calls":     "tool_use",
	"content_filter": "refusal",
}

// answerCtx is what an answer is released against: the request's stop
// sequences and model name, and the id the gateway minted for the answer.
type answerCtx struct {
	stops []string
	model string
	id    string
}

// answerFor is the context of an answer to req, a request of this surface
// (or nil), with a newly minted id.
func answerFor(req wire.Request) answerCtx {
	ac := answerCtx{id: wire.MintID("msg_")}
	if r, ok := req.(*Request); ok {
		ac.stops, ac.model = r.stops, r.model
	}
	return ac
}

// rblock is one answer content block.
type rblock struct {
	typ   string
	raw   []byte // its bytes to release: blobs sealed, removed members gone
	part  any    // its content part projection (nil for tool_use)
	call  map[string]any
	cites []poolEntry // text: the citations' projections and bytes
}

// metaValue is a metadata member as released.
type metaValue struct {
	tree    any
	changed bool // tree differs from the upstream's bytes
}

// Response is a parsed Messages answer. Immutable after parsing.
type Response struct {
	s       *Surface
	ac      answerCtx
	body    []byte
	top     []rawjson.Member
	topDrop []int
	// verbatim: every block's bytes are the upstream's (nothing sealed,
	// nothing removed); blocksClean: no block lost a member.
	verbatim    bool
	blocksClean bool
	blocks      []rblock
	contentSpan rawjson.Span   // the content array in body
	blockSpans  []rawjson.Span // its elements
	extras      []extraMember
	meta        map[string]*metaValue
	stop        string
	usage       map[string]any
	proj        map[string]any
	pool        pool
}

func respErr(field, msg string) error { return &wire.ResponseError{Field: field, Msg: msg} }

// parseMessage parses a complete Message body answering in ac.
func (s *Surface) parseMessage(body []byte, ac answerCtx) (*Response, error) {
	root, valid, _ := rawjson.CheckDocument(body) // encoding/json.Valid's verdict
	if !valid {
		return nil, respErr("", "body is not valid JSON")
	}
	if root.Kind(body) != '{' {
		return nil, respErr("", "body must be an object")
	}
	ms, err := rawjson.ScanObject(body, root)
	if err != nil {
		return nil, respErr("", "body has a duplicate member")
	}
	r := &Response{s: s, ac: ac, body: body, top: ms, verbatim: true, blocksClean: true, meta: map[string]*metaValue{}}
	if i := responseKnown.Ambiguous(ms); i >= 0 {
		return nil, respErr("", "body "+collisionMessage(responseKnown.FoldsOnto(ms[i].Key)))
	}
	seen := map[string]bool{}
	text := jsonvalue.NewText(body) // the members' plain strings slice one string of the body
	mc := &metaCleaner{s: s}
	for i, m := range ms {
		v, err := text.DecodeStrictNested(m.Val.Start, m.Val.End, 0) // DecodeStrict of the member
		if err != nil {
			return nil, respErr(knownField(m.Key), rawjson.DecodeProblem(err))
		}
		if !responseKnown.Has(m.Key) {
			if !s.strict || s.allowResp.Has(m.Key) {
				r.extras = append(r.extras, extraMember{name: partName(m.Key, nil), top: m.Key, value: v})
			} else {
				r.topDrop = append(r.topDrop, i)
			}
			continue
		}
		seen[m.Key] = true
		if node := metaSchema[m.Key]; node != nil {
			if err := r.metaMember(mc, i, m.Key, node, v); err != nil {
				return nil, err
			}
			continue
		}
		if err := r.member(m, v); err != nil {
			return nil, err
		}
	}
	for _, k := range []string{"content", "type", "role"} {
		if !seen[k] {
			return nil, respErr(k, "is required")
		}
	}
	r.project()
	return r, nil
}

func knownField(k string) string {
	if responseKnown.Has(k) {
		return k
	}
	return ""
}

// metaMember releases metadata member i (key, value v) under node; its
// projected values become member parts.
func (r *Response) metaMember(mc *metaCleaner, i int, key string, node *metaNode, v any) error {
	if key == "usage" {
		if err := r.parseUsage(v); err != nil {
			return err
		}
	}
	mc.parts = mc.parts[:0]
	out, keep, changed, err := mc.clean(node, v, key, nil)
	if err != nil {
		return err
	}
	if !keep {
		r.topDrop = append(r.topDrop, i)
		return nil
	}
	r.meta[key] = &metaValue{tree: out, changed: changed}
	r.extras = append(r.extras, mc.parts...)
	return nil
}

func (r *Response) member(m rawjson.Member, v any) error {
	switch m.Key {
	case "type":
		if v != "message" {
			return respErr("type", `must be "message"`)
		}
	case "role":
		if v != "assistant" {
			return respErr("role", `must be "assistant"`)
		}
	case "content":
		return r.content(m.Val, v)
	case "stop_reason":
		if v == nil {
			return nil
		}
		s, _ := v.(string)
		if _, ok := stopReasons[s]; !ok {
			return respErr("stop_reason", "is not a stop reason the gateway knows")
		}
		r.stop = s
	case "stop_sequence":
		// It names the stop sequence matched, which the client wrote; any
		// other string would be text no verdict saw.
		if str, ok := v.(string); (!ok && v != nil) || (ok && !slices.Contains(r.ac.stops, str)) {
			return respErr(m.Key, "must be null or one of the request's stop_sequences")
		}
	}
	// id and model are the gateway's: replaced whatever they hold.
	return nil
}

// content parses the content blocks.
func (r *Response) content(s rawjson.Span, v any) error {
	list, ok := v.([]any)
	if !ok {
		return respErr("content", "must be an array")
	}
	spans := rawjson.ScanArray(r.body, s)
	r.contentSpan, r.blockSpans = s, spans
	for i, e := range list {
		b, err := r.block(i, e, spans[i])
		if err != nil {
			return err
		}
		r.blocks = append(r.blocks, b)
	}
	return nil
}

func (r *Response) block(i int, e any, s rawjson.Span) (rblock, error) {
	field := "content[" + strconv.Itoa(i) + "]"
	m, ok := e.(map[string]any)
	if !ok {
		return rblock{}, respErr(field, "must be an object")
	}
	typ, _ := m["type"].(string)
	members := answerBlockMembers[typ]
	if members == nil {
		spec := blocksByType[typ]
		if spec == nil || spec.kind != kindServer {
			return rblock{}, respErr(field+".type", "is not an answer block type the gateway knows")
		}
		if !r.s.serverTools {
			return rblock{}, respErr(field, "is a provider-executed tool block, which "+AllowServerToolsKey+" does not allow")
		}
		members = spec.members
	}
	if k := members.CollisionIn(m); k != "" {
		return rblock{}, respErr(field, collisionMessage(k))
	}
	// The block's bytes are patched only when a blob is sealed or, under
	// StrictMembers, a member removed: scanned then, once.
	var ms []rawjson.Member
	var patch *rawjson.ObjPatch
	patched := func() *rawjson.ObjPatch {
		if patch == nil {
			ms, _ = rawjson.ScanObject(r.body, s) // decoded strictly already
			patch = rawjson.NewObjPatch(r.body, s, ms)
		}
		return patch
	}
	var extra map[string]any
	if members.UnknownIn(m) {
		if r.s.strict {
			p := patched()
			for j, bm := range ms {
				if !members.Has(bm.Key) {
					p.Drop(j)
					delete(m, bm.Key)
				}
			}
			r.blocksClean = false
		} else {
			extra = map[string]any{}
			for k, v := range m {
				if !members.Has(k) {
					extra[k] = v
				}
			}
		}
	}
	b := rblock{typ: typ}
	var p map[string]any
	switch typ {
	case "text":
		t, ok := m["text"].(string)
		if !ok {
			return b, respErr(field+".text", "must be a string")
		}
		p = map[string]any{"type": "text", "text": t}
		if err := r.citations(&b, s, patched, field, m["citations"]); err != nil {
			return b, err
		}
		if len(b.cites) > 0 {
			anns := make([]any, len(b.cites))
			for j, c := range b.cites {
				anns[j] = c.proj
			}
			p["annotations"] = anns
		}
	case "thinking":
		t, ok1 := m["thinking"].(string)
		sig, ok2 := m["signature"].(string)
		if !ok1 || !ok2 {
			return b, respErr(field, "thinking and signature must be strings")
		}
		if sig != "" {
			patched().Set("signature", r.s.sealString(kindSignature, sig))
		}
		p = map[string]any{"type": "reasoning", "text": t}
	case "redacted_thinking":
		data, ok := m["data"].(string)
		if !ok {
			return b, respErr(field+".data", "must be a string")
		}
		if data != "" {
			patched().Set("data", r.s.sealString(kindRedactedData, data))
		}
		p = map[string]any{"type": "redacted_thinking"}
	case "tool_use":
		id, ok1 := m["id"].(string)
		name, ok2 := m["name"].(string)
		in, ok3 := m["input"].(map[string]any)
		if !ok1 || !ok2 || !ok3 || name == "" {
			return b, respErr(field, "a tool_use block has a string id, a non-empty string name and an object input")
		}
		b.call = map[string]any{"id": id, "name": name, "args": in}
		if c, present := m["caller"]; present {
			b.call["caller"] = c // judged: its tool_id is an upstream id the client sends back
		}
		if err := addAnswerMembers(field, b.call, extra); err != nil {
			return b, err
		}
	default:
		b.part = m // a provider-tool block, native: every member judged
	}
	if p != nil {
		if err := addAnswerMembers(field, p, extra); err != nil {
			return b, err
		}
		b.part = p
	}
	b.raw = r.body[s.Start:s.End]
	if patch != nil && patch.Changed() {
		b.raw = patch.Render()
		r.verbatim = false
	}
	return b, nil
}

// addAnswerMembers puts a block's judged unknown members into its
// projection p; a name p already uses would make it ambiguous.
func addAnswerMembers(field string, p map[string]any, extra map[string]any) error {
	for k, v := range extra {
		if _, taken := p[k]; taken {
			return respErr(field, "has a member whose name the gateway's projection of its block uses")
		}
		p[k] = v
	}
	return nil
}

// citations parses the citations of the text block at s (patched by
// patched()): each projects as an annotation (citationProjection), and its
// encrypted_index is sealed.
func (r *Response) citations(b *rblock, s rawjson.Span, patched func() *rawjson.ObjPatch, field string, v any) error {
	list, ok := v.([]any)
	if v == nil {
		return nil
	}
	if !ok {
		return respErr(field+".citations", "must be an array or null")
	}
	spans := rawjson.ScanArray(r.body, memberSpan(r.body, s, "citations"))
	resealed := false
	raws := make([][]byte, len(list))
	for j, e := range list {
		cf := field + ".citations[" + strconv.Itoa(j) + "]"
		c, ok := e.(map[string]any)
		if _, ok2 := c["cited_text"].(string); !ok || !ok2 {
			return respErr(cf, "must be an object with a string cited_text")
		}
		raw, err := r.s.sealCitation(r.body, spans[j], c, cf)
		if err != nil {
			return err
		}
		resealed = resealed || raw != nil
		if raw == nil {
			raw = r.body[spans[j].Start:spans[j].End]
		}
		raws[j] = raw
		b.cites = append(b.cites, poolEntry{proj: citationProjection(c), raw: raw})
	}
	if resealed {
		patched().Set("citations", joinArray(raws))
	}
	return nil
}

// sealCitation returns the citation at s of body (decoded as c, at path
// field) with its encrypted_index sealed, or nil when it has none.
func (s *Surface) sealCitation(body []byte, span rawjson.Span, c map[string]any, field string) ([]byte, error) {
	x, present := c["encrypted_index"]
	if !present || x == nil {
		return nil, nil
	}
	idx, ok := x.(string)
	if !ok {
		return nil, respErr(field+".encrypted_index", "must be a string")
	}
	if idx == "" {
		return nil, nil // an empty blob carries nothing
	}
	ms, _ := rawjson.ScanObject(body, span)
	p := rawjson.NewObjPatch(body, span, ms)
	p.Set("encrypted_index", s.sealString(kindEncryptedIndex, idx))
	return p.Render(), nil
}

// parseUsage checks the usage counts the normalized usage is made of and
// projects it.
func (r *Response) parseUsage(v any) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return respErr("usage", "must be an object")
	}
	var prompt, completion int64
	var havePrompt, haveCompletion bool
	for _, k := range usageCounts {
		x, present := obj[k]
		if !present || x == nil {
			continue
		}
		n, ok := count(x)
		if !ok {
			return respErr("usage."+k, "must be a non-negative integer")
		}
		if k == "output_tokens" {
			completion, haveCompletion = n, true
		} else {
			prompt, havePrompt = prompt+n, true
		}
	}
	if havePrompt || haveCompletion {
		r.usage = map[string]any{}
		if havePrompt {
			r.usage["prompt_tokens"] = json.Number(strconv.FormatInt(prompt, 10))
		}
		if haveCompletion {
			r.usage["completion_tokens"] = json.Number(strconv.FormatInt(completion, 10))
		}
	}
	return nil
}

func count(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil && i >= 0
}

// project builds the post_model_call target and the pool of originals.
func (r *Response) project() {
	var parts, calls []any
	texts, simple := 0, len(r.extras) == 0
	for _, b := range r.blocks {
		if b.call != nil {
			calls = append(calls, b.call)
			r.pool.add(poolCall, b.call, b.raw)
			continue
		}
		parts = append(parts, b.part)
		r.pool.add(poolPart, b.part, b.raw)
		if b.typ == "text" {
			texts++
			simple = simple && len(b.part.(map[string]any)) == 2 // {type, text}: nothing else to carry
		} else {
			simple = false
		}
	}
	for _, x := range r.extras {
		parts = append(parts, map[string]any{"type": "member", "name": x.name, "value": x.value})
	}
	var content any
	switch {
	case simple && texts == 0:
		content = nil
	case simple && texts == 1:
		content = parts[0].(map[string]any)["text"]
	default:
		if parts == nil {
			parts = []any{}
		}
		content = parts
	}
	if calls == nil {
		calls = []any{}
	}
	finish := "stop"
	if r.stop != "" {
		finish = stopReasons[r.stop]
	}
	r.proj = map[string]any{"content": content, "tool_calls": calls, "finish_reason": finish}
}

// Project implements wire.Response.
func (r *Response) Project() map[string]any {
	return jsonvalue.DeepCopy(r.proj).(map[string]any)
}

// Usage implements wire.Response.
func (r *Response) Usage() map[string]any {
	if r.usage == nil {
		return nil
	}
	return jsonvalue.DeepCopy(r.usage).(map[string]any)
}
