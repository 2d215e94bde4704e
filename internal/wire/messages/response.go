package messages

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"

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
// Message, v2.17.0) and what the gateway does with each.
var responseMemberTable = []responseMember{
	{"id", "metadata: a string"},
	{"type", `metadata: "message"`},
	{"role", `metadata: "assistant"`},
	{"model", "metadata: a string"},
	{"content", "projected: text, thinking, redacted_thinking and provider-tool blocks as `content`, tool_use as `tool_calls`"},
	{"stop_reason", "projected as `finish_reason` (end_turn, stop_sequence, pause_turn → stop; max_tokens, model_context_window_exceeded → length; tool_use → tool_calls; refusal → content_filter)"},
	{"stop_sequence", "metadata: a string or null (the stop sequence matched, which the client wrote)"},
	{"stop_details", metaObjectDoc},
	{"usage", "`usage` {prompt_tokens: input + cache creation + cache read tokens, completion_tokens: output_tokens}; unknown usage members removed"},
	{"container", metaObjectDoc},
	{"context_management", metaObjectDoc},
	{"diagnostics", metaObjectDoc},
}

// metaObjectDoc is the treatment of the metadata objects whose inner shape
// the gateway does not model.
const metaObjectDoc = "metadata: an object or null, released only with its known members holding ids, timestamps, short numbers or booleans; removed otherwise"

// metaObjectKeys are the members each metadata object may hold (see
// metaObjectOK). A refusal's explanation in stop_details is prose the
// policy never saw, so such a stop_details is removed.
var metaObjectKeys = map[string]rawjson.MemberSet{
	"stop_details":       rawjson.NewMemberSet("type", "category"),
	"container":          rawjson.NewMemberSet("id", "expires_at"),
	"context_management": rawjson.NewMemberSet("applied_edits"),
	"diagnostics":        rawjson.NewMemberSet(),
}

// appliedEditKeys are the members of a context_management edit.
var appliedEditKeys = rawjson.NewMemberSet("type", "cleared_tool_uses", "cleared_input_tokens", "cleared_thinking_turns")

// metaObjectOK reports whether a metadata object can be released: null,
// or only its known members, each a scalar metaScalarOK accepts (edits:
// an array of such objects).
func metaObjectOK(key string, v any) bool {
	if v == nil {
		return true
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, e := range obj {
		if !metaObjectKeys[key].Has(k) {
			return false
		}
		if k != "applied_edits" {
			if !metaScalarOK(e) {
				return false
			}
			continue
		}
		edits, ok := e.([]any)
		if !ok {
			return false
		}
		for _, x := range edits {
			edit, ok := x.(map[string]any)
			if !ok {
				return false
			}
			for ek, ev := range edit {
				if !appliedEditKeys.Has(ek) || !metaScalarOK(ev) {
					return false
				}
			}
		}
	}
	return true
}

// metaScalarOK accepts the values metadata objects hold: null, booleans,
// short number tokens, ids and RFC 3339 timestamps. Prose fits none.
func metaScalarOK(v any) bool {
	switch x := v.(type) {
	case nil, bool:
		return true
	case json.Number:
		return len(x) <= 32
	case string:
		if wire.IsID(x) {
			return true
		}
		_, err := time.Parse(time.RFC3339Nano, x)
		return err == nil
	}
	return false
}

var responseKnown = func() rawjson.MemberSet {
	s := make(rawjson.MemberSet, len(responseMemberTable))
	for _, m := range responseMemberTable {
		s[m.name] = struct{}{}
	}
	return s
}()

// ResponseMembers lists every top-level answer member the gateway knows.
// Others are removed unless allowed (wire.messages.allow_response_members),
// when they are projected as {"type":"member","name","value"} parts.
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

var usageMembers = rawjson.NewMemberSet("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
	"cache_creation", "server_tool_use", "service_tier", "inference_geo", "output_tokens_details", "speed")

// usageCounts are the usage members that must be non-negative integers.
var usageCounts = []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}

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

// rblock is one answer content block.
type rblock struct {
	typ   string
	raw   []byte // its bytes, unknown members removed
	part  any    // its content part projection (nil for tool_use)
	call  map[string]any
	cites []poolEntry // text: the citations' projections and bytes
}

// Response is a parsed Messages answer. Immutable after parsing.
type Response struct {
	s *Surface
	// stops are the request's stop_sequences: the only strings an answer's
	// stop_sequence may name.
	stops   []string
	body    []byte
	top     []rawjson.Member
	topDrop []int
	clean   bool // nothing was removed
	blocks  []rblock
	extras  []extraMember
	stop    string
	usage   *usage
	proj    map[string]any
	pool    pool
}

type extraMember struct {
	name  string
	value any
}

type usage struct {
	raw   []byte
	clean bool
	proj  map[string]any
}

func respErr(field, msg string) error { return &wire.ResponseError{Field: field, Msg: msg} }

// parseMessage parses a complete Message body answering a request whose
// stop_sequences were stops.
func (s *Surface) parseMessage(body []byte, stops []string) (*Response, error) {
	if !json.Valid(body) {
		return nil, respErr("", "body is not valid JSON")
	}
	root := rawjson.RootSpan(body)
	if root.Kind(body) != '{' {
		return nil, respErr("", "body must be an object")
	}
	ms, err := rawjson.ScanObject(body, root)
	if err != nil {
		return nil, respErr("", "body has a duplicate member")
	}
	r := &Response{s: s, stops: stops, body: body, top: ms, clean: true}
	if i := responseKnown.Ambiguous(ms); i >= 0 {
		return nil, respErr("", "body "+collisionMessage(responseKnown.FoldsOnto(ms[i].Key)))
	}
	seen := map[string]bool{}
	text := jsonvalue.NewText(body) // the members' plain strings slice one string of the body
	for i, m := range ms {
		v, err := text.DecodeStrictNested(m.Val.Start, m.Val.End, 0) // DecodeStrict of the member
		if err != nil {
			return nil, respErr(knownField(m.Key), rawjson.DecodeProblem(err))
		}
		if !responseKnown.Has(m.Key) {
			if s.allowResp.Has(m.Key) {
				r.extras = append(r.extras, extraMember{name: m.Key, value: v})
			} else {
				r.topDrop = append(r.topDrop, i)
				r.clean = false
			}
			continue
		}
		seen[m.Key] = true
		if _, ok := metaObjectKeys[m.Key]; ok && !metaObjectOK(m.Key, v) {
			// A refusal's explanation, say: text no verdict saw.
			r.topDrop = append(r.topDrop, i)
			r.clean = false
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

func (r *Response) member(m rawjson.Member, v any) error {
	switch m.Key {
	case "id", "model":
		// Clients show and echo these; a value outside its token shape
		// could carry text no verdict saw.
		if str, ok := v.(string); !ok || (m.Key == "id" && !wire.IsID(str)) || (m.Key == "model" && !wire.IsModelName(str)) {
			return respErr(m.Key, "must be a token-shaped string")
		}
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
		if str, ok := v.(string); (!ok && v != nil) || (ok && !slices.Contains(r.stops, str)) {
			return respErr(m.Key, "must be null or one of the request's stop_sequences")
		}
	case "usage":
		u, err := parseUsage(r.body, m.Val, v)
		if err != nil {
			return err
		}
		r.usage = u
		r.clean = r.clean && u.clean
	default: // stop_details, container, context_management, diagnostics
		if _, ok := v.(map[string]any); !ok && v != nil {
			return respErr(m.Key, "must be an object or null")
		}
	}
	return nil
}

// content parses the content blocks.
func (r *Response) content(s rawjson.Span, v any) error {
	list, ok := v.([]any)
	if !ok {
		return respErr("content", "must be an array")
	}
	spans := rawjson.ScanArray(r.body, s)
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
	b := rblock{typ: typ, raw: r.body[s.Start:s.End]}
	if members.UnknownIn(m) {
		b.raw = dropUnknown(r.body, s, members)
		for k := range m {
			if !members.Has(k) {
				delete(m, k)
			}
		}
		r.clean = false
	}
	switch typ {
	case "text":
		t, ok := m["text"].(string)
		if !ok {
			return b, respErr(field+".text", "must be a string")
		}
		p := map[string]any{"type": "text", "text": t}
		if err := b.citations(r.body, s, field, m["citations"]); err != nil {
			return b, err
		}
		if len(b.cites) > 0 {
			anns := make([]any, len(b.cites))
			for j, c := range b.cites {
				anns[j] = c.proj
			}
			p["annotations"] = anns
		}
		b.part = p
	case "thinking":
		t, ok1 := m["thinking"].(string)
		_, ok2 := m["signature"].(string)
		if !ok1 || !ok2 {
			return b, respErr(field, "thinking and signature must be strings")
		}
		b.part = map[string]any{"type": "reasoning", "text": t}
	case "redacted_thinking":
		if _, ok := m["data"].(string); !ok {
			return b, respErr(field+".data", "must be a string")
		}
		b.part = map[string]any{"type": "redacted_thinking"}
	case "tool_use":
		id, ok1 := m["id"].(string)
		name, ok2 := m["name"].(string)
		in, ok3 := m["input"].(map[string]any)
		if !ok1 || !ok2 || !ok3 || name == "" {
			return b, respErr(field, "a tool_use block has a string id, a non-empty string name and an object input")
		}
		b.call = map[string]any{"id": id, "name": name, "args": in}
	default:
		b.part = m
	}
	return b, nil
}

// citations parses a text block's citations: web search citations project
// as url_citation annotations with the text they quote, others as their
// native objects (their cited_text is document text the model quotes).
func (b *rblock) citations(body []byte, s rawjson.Span, field string, v any) error {
	list, ok := v.([]any)
	if v == nil {
		return nil
	}
	if !ok {
		return respErr(field+".citations", "must be an array or null")
	}
	ms, _ := rawjson.ScanObject(body, s)
	spans := rawjson.ScanArray(body, ms[rawjson.Find(ms, "citations")].Val)
	for j, e := range list {
		c, ok := e.(map[string]any)
		ct, ok2 := c["cited_text"].(string)
		if !ok || !ok2 {
			return respErr(field+".citations["+strconv.Itoa(j)+"]", "must be an object with a string cited_text")
		}
		var proj any = c
		if c["type"] == "web_search_result_location" {
			url, _ := c["url"].(string)
			title, _ := c["title"].(string)
			proj = map[string]any{"type": "url_citation", "url": url, "title": title, "cited_text": ct}
		}
		b.cites = append(b.cites, poolEntry{proj: proj, raw: body[spans[j].Start:spans[j].End]})
	}
	return nil
}

// dropUnknown renders the object at s without the members known lacks.
func dropUnknown(body []byte, s rawjson.Span, known rawjson.MemberSet) []byte {
	ms, _ := rawjson.ScanObject(body, s)
	p := rawjson.NewObjPatch(body, s, ms)
	for i, m := range ms {
		if !known.Has(m.Key) {
			p.Drop(i)
		}
	}
	return p.Render()
}

// parseUsage checks usage: known counts are non-negative integers (or
// null), unknown members are removed.
func parseUsage(body []byte, s rawjson.Span, v any) (*usage, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, respErr("usage", "must be an object")
	}
	if k := usageMembers.CollisionIn(obj); k != "" {
		return nil, respErr("usage", collisionMessage(k))
	}
	u := &usage{raw: body[s.Start:s.End], clean: true}
	if usageMembers.UnknownIn(obj) {
		u.raw, u.clean = dropUnknown(body, s, usageMembers), false
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
			return nil, respErr("usage."+k, "must be a non-negative integer")
		}
		if k == "output_tokens" {
			completion, haveCompletion = n, true
		} else {
			prompt, havePrompt = prompt+n, true
		}
	}
	if havePrompt || haveCompletion {
		u.proj = map[string]any{}
		if havePrompt {
			u.proj["prompt_tokens"] = json.Number(strconv.FormatInt(prompt, 10))
		}
		if haveCompletion {
			u.proj["completion_tokens"] = json.Number(strconv.FormatInt(completion, 10))
		}
	}
	return u, nil
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
			simple = simple && len(b.cites) == 0
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
	if r.usage == nil || r.usage.proj == nil {
		return nil
	}
	return jsonvalue.DeepCopy(r.usage.proj).(map[string]any)
}

// stopSequences returns the stop_sequences of req, a request of this
// surface.
func stopSequences(req wire.Request) []string {
	r, ok := req.(*Request)
	if !ok {
		return nil
	}
	return r.stops
}
