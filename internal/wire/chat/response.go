package chat

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// ResponseOptions configures how an answer is read and released.
type ResponseOptions struct {
	// Model is the request's model name, which the released answer
	// carries in place of the upstream's (pre_model_call judged it as
	// model.id).
	Model string
	// StrictMembers removes the members the gateway does not know instead
	// of projecting them as member parts (wire.chat.unknown_members:
	// refuse).
	StrictMembers bool
	// AllowMembers names message (and stream delta) members projected as
	// member parts even under StrictMembers.
	AllowMembers []string
	// id is the answer's id when set (tests); otherwise one is minted.
	id string
}

// mintID returns the answer's id: one the gateway made.
func (o *ResponseOptions) mintID() string {
	if o.id != "" {
		return o.id
	}
	return wire.MintID(idPrefix)
}

// judges reports whether the unknown message or delta member name is
// projected (else it is removed).
func (o *ResponseOptions) judges(allow rawjson.MemberSet, name string) bool {
	return !o.StrictMembers || allow.Has(name)
}

// Response is an upstream chat completion with exactly one choice, either
// parsed from a JSON body (ParseResponse) or assembled from an SSE stream
// (Stream.Response). It is immutable and safe for concurrent use.
type Response struct {
	meta  chunkMeta // id minted, model the request's
	ans   answer
	usage *usage
	// proj is the post_model_call target {content, tool_calls,
	// finish_reason}; Project hands out copies.
	proj map[string]any

	streamed bool
	wire     *wireResponse // nil for a streamed response
}

// call is one projected tool call and what write-back needs to rebuild it.
type call struct {
	id        string
	name      string
	arguments string         // the wire arguments string
	proj      map[string]any // {id, name, args, members?}
	rawArgs   bool           // args projected as {"raw_arguments": …}
	members   []extraMember  // unknown members of the call, projected under members
}

// wireResponse is what release needs of a JSON body: the body, the
// top-level and choice members, what release does with each top-level
// member, which choice members are removed, and whether the message
// object may be released as it is.
type wireResponse struct {
	body          []byte
	root          rawjson.Span
	top           []rawjson.Member
	topAct        []topAction // indexed like top
	topActBuf     [16]topAction
	haveID        bool
	haveModel     bool
	choice        rawjson.Span
	choiceMembers []rawjson.Member
	choiceDrop    map[int]bool
	messageClean  bool
}

// topAction is what release does with a top-level member of a body.
type topAction uint8

const (
	topKeep  topAction = iota // projected, or checked metadata
	topDrop                   // removed
	topID                     // the minted id replaces it
	topModel                  // the request's model replaces it
)

// Known members of each level of a chat.completion body.
var (
	responseTop     = rawjson.NewMemberSet("id", "object", "created", "model", "system_fingerprint", "service_tier", "choices", "usage")
	responseChoice  = rawjson.NewMemberSet("index", "message", "finish_reason", "logprobs")
	responseMessage = rawjson.NewMemberSet("role", "content", "refusal", wireReasoningContent, wireReasoning, wireReasoningDetails,
		"annotations", "tool_calls", "function_call", "audio")
	responseToolCall = rawjson.NewMemberSet("index", "id", "type", "function")
	responseFunction = rawjson.NewMemberSet("name", "arguments")
	// messageFields names each known message member's field for errors.
	messageFields = func() map[string]string {
		f := make(map[string]string, len(responseMessage))
		for k := range responseMessage {
			f[k] = "choices[0].message." + k
		}
		return f
	}()
	// responseKeys names the known members of every level without allocating.
	responseKeys = rawjson.NewKeyTable(responseTop, responseChoice, responseMessage, responseToolCall, responseFunction, usageKeys)
)

// ParseResponse parses a non-streaming chat completion. It accepts exactly
// one choice (the request side refuses n > 1). Errors are *ResponseError
// (wrapping ErrResponseInvalid) naming the wire field; they never quote
// content. The Response retains body, which the caller must not modify.
//
// Ambiguous JSON is refused: duplicate members anywhere, and members whose
// names equal a known member's but for case. Output channels the gateway
// cannot mediate (legacy function_call, audio, non-function tool calls)
// are refused rather than passed through.
func ParseResponse(body []byte, opts ResponseOptions) (*Response, error) {
	root, valid, dup := rawjson.CheckDocument(body)
	if !valid {
		return nil, &wire.ResponseError{Msg: "body is not valid JSON"}
	}
	if root.Kind(body) != '{' {
		return nil, &wire.ResponseError{Msg: "body must be a JSON object"}
	}
	if dup {
		return nil, &wire.ResponseError{Msg: "body has an object with a duplicate member"}
	}
	return parseTop(body, root, opts, readUsage)
}

// parseTop reads the members of a valid body without duplicate members
// whose root object is at root; usage is read by readU.
func parseTop(body []byte, root rawjson.Span, opts ResponseOptions, readU func([]byte, rawjson.Span) (*usage, error)) (*Response, error) {
	top, err := objectAt(body, root, "", responseTop)
	if err != nil {
		return nil, err
	}
	w := &wireResponse{body: body, root: root, top: top}
	if w.topAct = w.topActBuf[:0]; len(top) > len(w.topActBuf) {
		w.topAct = make([]topAction, 0, len(top))
	}
	w.topAct = w.topAct[:len(top)]
	r := &Response{wire: w, meta: chunkMeta{id: opts.mintID(), model: opts.Model}}
	pc := &partsCollector{allow: rawjson.NewMemberSet(opts.AllowMembers...), opts: opts}
	haveChoices := false
	var unknown []int
	for i, m := range top {
		switch m.Key {
		case "choices":
			haveChoices = true
			if err := r.readChoices(m.Val, pc); err != nil {
				return nil, err
			}
		case "usage":
			if r.usage, err = readU(body, m.Val); err != nil {
				return nil, err
			}
		case "id":
			w.topAct[i], w.haveID = topID, true
		case "model":
			w.topAct[i], w.haveModel = topModel, true
		case "object", "created", "service_tier":
			if !r.meta.checkMeta(m.Key, body[m.Val.Start:m.Val.End], "chat.completion") {
				w.topAct[i] = topDrop
			}
		case "system_fingerprint", "prompt_filter_results":
			w.topAct[i] = topDrop
		default:
			unknown = append(unknown, i)
		}
	}
	if !haveChoices {
		return nil, &wire.ResponseError{Field: "choices", Msg: "must be an array"}
	}
	// After the choice's members: the part order is message, choice,
	// completion, each in wire order.
	for _, i := range unknown {
		if !pc.unknown(body, top[i], inCompletion) {
			w.topAct[i] = topDrop
		}
	}
	r.ans = pc.ans
	r.build()
	return r, nil
}

// idPrefix begins every minted chat completion id.
const idPrefix = "chatcmpl-"

// objectAt scans the object at s, refusing non-objects, duplicate keys and
// members that collide with known ones but for case.
func objectAt(b []byte, s rawjson.Span, field string, known rawjson.MemberSet) ([]rawjson.Member, error) {
	if s.Kind(b) != '{' {
		return nil, &wire.ResponseError{Field: field, Msg: "must be an object, got " + rawjson.KindName(b, s)}
	}
	ms, err := rawjson.ScanObjectInterned(b, s, responseKeys)
	if err != nil {
		return nil, &wire.ResponseError{Field: field, Msg: "has a duplicate member"}
	}
	if i := known.Ambiguous(ms); i >= 0 {
		return nil, &wire.ResponseError{Field: field, Msg: "has a member whose name differs from a known member's only in case"}
	}
	return ms, nil
}

func (r *Response) readChoices(s rawjson.Span, pc *partsCollector) error {
	b, w := r.wire.body, r.wire
	if s.Kind(b) != '[' {
		return &wire.ResponseError{Field: "choices", Msg: "must be an array"}
	}
	choices := rawjson.ScanArray(b, s)
	if len(choices) != 1 {
		return &wire.ResponseError{Field: "choices", Msg: "must hold exactly one choice, got " + strconv.Itoa(len(choices))}
	}
	w.choice = choices[0]
	var err error
	if w.choiceMembers, err = objectAt(b, w.choice, "choices[0]", responseChoice); err != nil {
		return err
	}
	haveMessage := false
	var unknown []int
	for i, m := range w.choiceMembers {
		switch m.Key {
		case "index":
			if string(b[m.Val.Start:m.Val.End]) != "0" {
				return &wire.ResponseError{Field: "choices[0].index", Msg: "only choice 0 is supported: " + nMessage}
			}
		case "finish_reason":
			if pc.ans.finish, err = optionalString(b, m.Val, "choices[0].finish_reason"); err != nil {
				return err
			}
		case "message":
			haveMessage = true
			if err := r.readMessage(m.Val, pc); err != nil {
				return err
			}
		case "logprobs": // removed unless null
			if !m.Val.IsNull(b) {
				w.dropChoice(i)
			}
		case "content_filter_results", "content_filter_offsets":
			w.dropChoice(i)
		default:
			unknown = append(unknown, i)
		}
	}
	if !haveMessage {
		return &wire.ResponseError{Field: "choices[0].message", Msg: "is required"}
	}
	for _, i := range unknown {
		if !pc.unknown(b, w.choiceMembers[i], inChoice) {
			w.dropChoice(i)
		}
	}
	return nil
}

// dropChoice marks choice member i removed.
func (w *wireResponse) dropChoice(i int) {
	if w.choiceDrop == nil {
		w.choiceDrop = map[int]bool{}
	}
	w.choiceDrop[i] = true
}

// unknown projects a member the gateway does not know, of the completion
// or the choice (in), as a member part, and reports whether it is
// released as it is; it is removed instead (false) under StrictMembers,
// when it is null (a name without a value), or when its value does not
// decode (invalid UTF-8, a lone surrogate).
func (pc *partsCollector) unknown(b []byte, m rawjson.Member, in string) bool {
	if pc.opts.StrictMembers || m.Val.IsNull(b) {
		return false
	}
	v, err := decodeSpan(b, m.Val)
	if err != nil {
		return false
	}
	pc.ans.extras = append(pc.ans.extras, extraMember{in: in, name: m.Key, value: v})
	return true
}

// readMessage reads choices[0].message into the parts collector.
func (r *Response) readMessage(s rawjson.Span, pc *partsCollector) error {
	b := r.wire.body
	const base = "choices[0].message"
	ms, err := objectAt(b, s, base, pc.known(responseMessage))
	if err != nil {
		return err
	}
	clean := true
	for _, m := range ms {
		field, known := messageFields[m.Key]
		if !known {
			if !pc.opts.judges(pc.allow, m.Key) || m.Val.IsNull(b) {
				clean = false // removed
				continue
			}
			v, err := decodeSpan(b, m.Val)
			if err != nil {
				clean = false // what no decode reads alike is removed
				continue
			}
			pc.ans.extras = append(pc.ans.extras, extraMember{name: m.Key, value: v})
			continue
		}
		v, err := decodeSpan(b, m.Val)
		if err != nil {
			return &wire.ResponseError{Field: field, Msg: rawjson.DecodeProblem(err)}
		}
		ok, err := pc.member(m.Key, v, field, false)
		if err != nil {
			return err
		}
		clean = clean && ok
	}
	calls, ok, err := readToolCalls(b, ms, base, !pc.opts.StrictMembers)
	if err != nil {
		return err
	}
	pc.ans.calls = calls
	r.wire.messageClean = clean && ok
	return nil
}

// partsCollector gathers the text channels of a message (JSON) or of the
// deltas of a stream into one answer, classifying each member.
type partsCollector struct {
	ans   answer
	allow rawjson.MemberSet
	opts  ResponseOptions
	// Stream assembly state: the text channels grow in builders (deltas
	// are many and small), and reasoning channels are found by source.
	text, refusal       strings.Builder
	sawText, sawRefusal bool
	reasoningB          []*strings.Builder // pointers: a Builder must not move once written
	reasoningAt         map[string]int
}

// finish moves the stream builders' text into the answer.
func (pc *partsCollector) finish() {
	if pc.sawText {
		t := pc.text.String()
		pc.ans.text = &t
	}
	if pc.sawRefusal {
		r := pc.refusal.String()
		pc.ans.refusal = &r
	}
	for i := range pc.reasoningB {
		pc.ans.reasoning[i].text = pc.reasoningB[i].String()
	}
}

// known returns the message-level member set extended by the allowed
// extras, for the case-collision check.
func (pc *partsCollector) known(base rawjson.MemberSet) rawjson.MemberSet {
	if len(pc.allow) == 0 {
		return base
	}
	s := make(rawjson.MemberSet, len(base)+len(pc.allow))
	for k := range base {
		s[k] = struct{}{}
	}
	for k := range pc.allow {
		s[k] = struct{}{}
	}
	return s
}

// member folds one known message or delta member (other than tool_calls,
// which have their own readers) into the answer. delta selects stream
// semantics: text is appended to what earlier chunks carried. It reports
// whether the member may be released as it is on the wire.
func (pc *partsCollector) member(key string, v any, field string, delta bool) (bool, error) {
	a := &pc.ans
	switch key {
	case "role":
		return v == "assistant" || (delta && v == nil), nil
	case "content":
		return pc.content(v, field, delta)
	case "refusal":
		if delta {
			return true, appendDelta(&pc.refusal, &pc.sawRefusal, v, field)
		}
		return true, appendOpt(&a.refusal, v, field)
	case wireReasoningContent, wireReasoning:
		s, ok := v.(string)
		if !ok && v != nil {
			return false, &wire.ResponseError{Field: field, Msg: "must be a string, got " + rawjson.TypeName(v)}
		}
		if ok {
			pc.reasoningText(key, "text", s, delta)
		}
		return true, nil
	case wireReasoningDetails:
		return pc.reasoningDetails(v, field, delta)
	case "annotations":
		return pc.annotations(v, field)
	case "tool_calls":
		return true, nil // read by readToolCalls / the stream assembler
	case "function_call", "audio":
		if v != nil {
			return false, &wire.ResponseError{Field: field, Msg: "cannot be mediated"}
		}
		return true, nil
	}
	return false, nil
}

// content reads message content: a string, null, or (JSON only) an array
// of text parts, whose texts are projected as one text. Parts of other
// types are removed.
func (pc *partsCollector) content(v any, field string, delta bool) (bool, error) {
	a := &pc.ans
	switch c := v.(type) {
	case nil:
		return true, nil
	case string:
		if delta {
			return true, appendDelta(&pc.text, &pc.sawText, c, field)
		}
		return true, appendOpt(&a.text, c, field)
	case []any:
		if delta {
			return false, &wire.ResponseError{Field: field, Msg: "must be a string in a stream, got array"}
		}
		clean := true
		var sb strings.Builder
		for i, e := range c {
			p, ok := e.(map[string]any)
			if !ok {
				return false, &wire.ResponseError{Field: fieldIndex(field, i), Msg: "content part must be an object, got " + rawjson.TypeName(e)}
			}
			text, isText := p["text"].(string)
			if p["type"] != "text" || !isText || len(p) != 2 {
				clean = false // not a plain text part: removed
				if p["type"] != "text" || !isText {
					continue
				}
			}
			sb.WriteString(text)
		}
		s := sb.String()
		a.text = &s
		return clean, nil
	}
	return false, &wire.ResponseError{Field: field, Msg: "must be a string, an array of parts or null, got " + rawjson.TypeName(v)}
}

// appendOpt sets an optional text channel of a JSON message.
func appendOpt(dst **string, v any, field string) error {
	switch s := v.(type) {
	case nil:
		return nil
	case string:
		*dst = &s
		return nil
	}
	return &wire.ResponseError{Field: field, Msg: "must be a string, got " + rawjson.TypeName(v)}
}

// appendDelta extends a stream text channel by one delta.
func appendDelta(b *strings.Builder, saw *bool, v any, field string) error {
	switch s := v.(type) {
	case nil:
		return nil
	case string:
		b.WriteString(s)
		*saw = true
		return nil
	}
	return &wire.ResponseError{Field: field, Msg: "must be a string, got " + rawjson.TypeName(v)}
}

// reasoningText adds text to the reasoning channel (member, key), creating
// it on first sight; in a stream later deltas extend it.
func (pc *partsCollector) reasoningText(member, key, text string, delta bool) {
	a := &pc.ans
	id := member + "." + key
	if delta {
		if pc.reasoningAt == nil {
			pc.reasoningAt = map[string]int{}
		}
		i, ok := pc.reasoningAt[id]
		if !ok {
			i = len(a.reasoning)
			pc.reasoningAt[id] = i
			a.reasoning = append(a.reasoning, reasoningText{member: member, key: key})
			pc.reasoningB = append(pc.reasoningB, new(strings.Builder))
		}
		pc.reasoningB[i].WriteString(text)
		return
	}
	a.reasoning = append(a.reasoning, reasoningText{member: member, key: key, text: text})
}

// reasoningDetails reads OpenRouter's reasoning_details: entries of type
// reasoning.text (text) or reasoning.summary (summary). Entries of other
// types (reasoning.encrypted) and members other than type, text, summary,
// index and format are removed.
func (pc *partsCollector) reasoningDetails(v any, field string, delta bool) (bool, error) {
	if v == nil {
		return true, nil
	}
	list, ok := v.([]any)
	if !ok {
		return false, &wire.ResponseError{Field: field, Msg: "must be an array, got " + rawjson.TypeName(v)}
	}
	clean := true
	for i, e := range list {
		d, ok := e.(map[string]any)
		if !ok {
			return false, &wire.ResponseError{Field: fieldIndex(field, i), Msg: "must be an object, got " + rawjson.TypeName(e)}
		}
		for k := range d {
			switch k {
			case "type", "index", "format", "text", "summary":
			default:
				clean = false
			}
		}
		for _, k := range []string{"text", "summary"} { // fixed order: the projection is deterministic
			x, ok := d[k]
			if !ok {
				continue
			}
			s, ok := x.(string)
			if !ok {
				return false, &wire.ResponseError{Field: fieldIndex(field, i), Msg: "text and summary must be strings"}
			}
			pc.reasoningText(wireReasoningDetails, k, s, delta)
		}
		if t := d["type"]; t != "reasoning.text" && t != "reasoning.summary" {
			clean = false
		}
	}
	return clean, nil
}

// annotations reads url_citation annotations; other annotation types and
// unknown members are removed.
func (pc *partsCollector) annotations(v any, field string) (bool, error) {
	if v == nil {
		return true, nil
	}
	list, ok := v.([]any)
	if !ok {
		return false, &wire.ResponseError{Field: field, Msg: "must be an array, got " + rawjson.TypeName(v)}
	}
	clean := true
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return false, &wire.ResponseError{Field: fieldIndex(field, i), Msg: "must be an object, got " + rawjson.TypeName(e)}
		}
		uc, _ := m["url_citation"].(map[string]any)
		if m["type"] != "url_citation" || uc == nil || len(m) != 2 {
			clean = false
			if uc == nil {
				continue
			}
		}
		url, ok1 := uc["url"].(string)
		title, ok2 := uc["title"].(string)
		if !ok1 || !ok2 {
			return false, &wire.ResponseError{Field: fieldIndex(field, i) + ".url_citation", Msg: "url and title must be strings"}
		}
		an := annotation{url: url, title: title}
		for k, x := range uc {
			switch k {
			case "url", "title":
			case "start_index", "end_index":
				n, ok := x.(json.Number)
				if !ok || !isUint(string(n)) {
					clean = false
					continue
				}
				if k == "start_index" {
					an.start = string(n)
				} else {
					an.end = string(n)
				}
			default:
				clean = false
			}
		}
		pc.ans.annotations = append(pc.ans.annotations, an)
	}
	return clean, nil
}

// decodeSpan is rawjson.DecodeSpan, with the common tokens (null, a string
// without escapes) read in place.
func decodeSpan(b []byte, s rawjson.Span) (any, error) {
	if s.IsNull(b) {
		return nil, nil
	}
	if str, ok := plainString(b, s); ok {
		return str, nil
	}
	return rawjson.DecodeSpan(b, s)
}

// plainString returns the text of the string token at s when it holds no
// escape and is valid UTF-8 (what a decode gives for it).
func plainString(b []byte, s rawjson.Span) (string, bool) {
	if s.Kind(b) != '"' {
		return "", false
	}
	end, escaped, ok := rawjson.StrictString(b, s.Start)
	if !ok || escaped || end != s.End {
		return "", false
	}
	return string(b[s.Start+1 : s.End-1]), true
}

// optionalString decodes a value that must be a string or null.
func optionalString(b []byte, s rawjson.Span, field string) (*string, error) {
	if s.IsNull(b) {
		return nil, nil
	}
	if str, ok := plainString(b, s); ok {
		return &str, nil
	}
	v, err := rawjson.DecodeSpan(b, s)
	if err != nil {
		return nil, &wire.ResponseError{Field: field, Msg: rawjson.DecodeProblem(err)}
	}
	str, ok := v.(string)
	if !ok {
		return nil, &wire.ResponseError{Field: field, Msg: "must be a string, got " + rawjson.TypeName(v)}
	}
	return &str, nil
}

// readToolCalls reads message.tool_calls. Unknown members of a call are
// projected under its members when judge is set, else removed; unknown
// members of its function are removed. It reports whether every call is
// released as it is (else the message is re-rendered).
func readToolCalls(b []byte, ms []rawjson.Member, base string, judge bool) ([]call, bool, error) {
	i := rawjson.Find(ms, "tool_calls")
	if i < 0 || ms[i].Val.IsNull(b) {
		return nil, true, nil
	}
	base += ".tool_calls"
	if ms[i].Val.Kind(b) != '[' {
		return nil, false, &wire.ResponseError{Field: base, Msg: "must be an array, got " + rawjson.KindName(b, ms[i].Val)}
	}
	elems := rawjson.ScanArray(b, ms[i].Val)
	calls := make([]call, len(elems))
	clean := true
	for k, es := range elems {
		field := fieldIndex(base, k)
		cm, err := objectAt(b, es, field, responseToolCall)
		if err != nil {
			return nil, false, err
		}
		var c call
		haveFn := false
		for _, m := range cm {
			switch m.Key {
			case "type":
				typ, err := optionalString(b, m.Val, field+".type")
				if err != nil {
					return nil, false, err
				}
				if typ != nil && *typ != "function" {
					return nil, false, &wire.ResponseError{Field: field + ".type", Msg: "only function tool calls can be mediated"}
				}
			case "id":
				id, err := optionalString(b, m.Val, field+".id")
				if err != nil {
					return nil, false, err
				}
				c.id = deref(id)
			case "function":
				haveFn = true
				fm, err := objectAt(b, m.Val, field+".function", responseFunction)
				if err != nil {
					return nil, false, err
				}
				for _, f := range fm {
					s, err := optionalString(b, f.Val, field+".function."+f.Key)
					switch {
					case !responseFunction.Has(f.Key):
						clean = false
						continue
					case err != nil:
						return nil, false, err
					case f.Key == "name":
						c.name = deref(s)
					default:
						c.arguments = deref(s)
					}
				}
			case "index": // a stream member: removed from a body
				clean = false
			default:
				if !judge || m.Val.IsNull(b) {
					clean = false
					continue
				}
				v, err := decodeSpan(b, m.Val)
				if err != nil {
					clean = false
					continue
				}
				c.members = append(c.members, extraMember{name: m.Key, value: v})
			}
		}
		if !haveFn {
			return nil, false, &wire.ResponseError{Field: field + ".function", Msg: "is required"}
		}
		calls[k] = c
	}
	return calls, clean, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// build computes the projection shared by JSON and streamed responses.
func (r *Response) build() {
	a := &r.ans
	list := make([]any, len(a.calls))
	for i := range a.calls {
		c := &a.calls[i]
		var args map[string]any
		args, c.rawArgs = parseArguments(c.arguments)
		c.proj = map[string]any{"id": c.id, "name": c.name, "args": args}
		if len(c.members) > 0 {
			mm := make(map[string]any, len(c.members))
			for _, x := range c.members {
				mm[x.name] = x.value
			}
			c.proj["members"] = mm
		}
		list[i] = jsonvalue.DeepCopy(c.proj)
	}
	reason := "stop"
	if a.finish != nil {
		reason = *a.finish
	}
	r.proj = map[string]any{"content": a.content(), "tool_calls": list, "finish_reason": reason}
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

// Project returns the post_model_call target {content, tool_calls,
// finish_reason}. content is the answer's text: a string or null for a
// plain text answer, else (a refusal, reasoning, citations or allowed
// extras are present) an array of parts holding every channel (reasoning, text with url
// citations, refusal, allowed extra members); tool_calls is always an
// array of {id, name, args}; finish_reason is the upstream value, "stop"
// when absent. The result is a fresh tree.
func (r *Response) Project() map[string]any {
	return jsonvalue.DeepCopy(r.proj).(map[string]any)
}

// Usage returns {prompt_tokens, completion_tokens} (those present as
// non-negative integers), or nil when the upstream reported neither.
func (r *Response) Usage() map[string]any {
	if r.usage == nil || r.usage.proj == nil {
		return nil
	}
	return jsonvalue.DeepCopy(r.usage.proj).(map[string]any)
}

// ID returns the answer's id, minted by the gateway ("chatcmpl-…").
func (r *Response) ID() string { return r.meta.id }

// Model returns the model the answer names: the request's.
func (r *Response) Model() string { return r.meta.model }

// Created returns the upstream creation time in Unix seconds, or 0.
func (r *Response) Created() int64 { return r.meta.created }

// chunkMeta is the metadata a released answer carries: the minted id, the
// request's model, and the upstream's checked created and service_tier,
// which rendered bodies and synthesized chunks repeat.
type chunkMeta struct {
	id, model, serviceTier string
	created                int64
}
