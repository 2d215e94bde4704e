package messages

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// CheckMessages implements wire.Request: the target must be writable onto
// the Messages wire (see UpstreamBody for the rules).
func (r *Request) CheckMessages(target any) error {
	_, err := r.UpstreamBody(target)
	return err
}

// CheckedBody implements wire.BodyChecker: the check is the rendering.
func (r *Request) CheckedBody(target any) ([]byte, error) { return r.UpstreamBody(target) }

// UpstreamBody implements wire.Request.
//
// messages nil, or equal to the projection, returns the client's body,
// its seals opened (the provider receives the blobs it issued).
// Otherwise the target is mapped back: leading system messages become the
// system member (kept byte for byte when unchanged); a run of target
// messages equal to the projection of one original wire message re-emits
// that message's bytes; other messages are rendered, with every block
// whose projection equals an original block's re-emitting that block's
// bytes (signatures and encrypted data survive, opened); the members a
// projected object holds beside its projection (cache_control, caller,
// judged unknown ones) are rendered as the target holds them. Consecutive
// rendered user and tool messages form one user turn, tool results as
// tool_result blocks in order.
//
// What the wire cannot express is a *wire.WriteBackError: a reasoning part
// whose text is not an original thinking block's (thinking is signed and
// cannot be re-signed; removing it is allowed, though the upstream may
// require the thinking of the latest tool-use turn), a redacted_thinking
// part with no original, an annotation that is not an original citation,
// roles other than system, user, assistant and tool, tool calls outside
// assistant messages, arguments that are not a JSON object, members named
// like those the gateway renders, unknown part types, and under
// StrictMembers unknown members.
func (r *Request) UpstreamBody(messages any) ([]byte, error) {
	if messages == nil {
		return r.body, nil
	}
	list, err := checkTargetShape(messages)
	if err != nil {
		return nil, err
	}
	if r.isProjection(list) {
		return r.body, nil
	}
	w := &writer{r: r, c: r.pool.claimer(), usedGroup: make([]bool, len(r.groups))}
	return w.render(list)
}

func checkTargetShape(target any) ([]any, error) {
	list, ok := target.([]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: "$target", Msg: "must be an array of messages, got " + rawjson.TypeName(target)}
	}
	if err := wire.CheckEncodable(target); err != nil {
		return nil, err
	}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, &wire.WriteBackError{Field: tf(i, ""), Msg: "must be an object, got " + rawjson.TypeName(e)}
		}
		if _, ok := m["role"].(string); !ok {
			return nil, &wire.WriteBackError{Field: tf(i, ".role"), Msg: "must be a string"}
		}
	}
	return list, nil
}

func tf(i int, sub string) string { return "$target[" + strconv.Itoa(i) + "]" + sub }

func (r *Request) isProjection(list []any) bool {
	n := len(r.sysProj)
	for _, g := range r.groups {
		n += len(g)
	}
	if n != len(list) {
		return false
	}
	k := 0
	for _, m := range r.sysProj {
		if !jsonvalue.Equal(m, list[k]) {
			return false
		}
		k++
	}
	for _, g := range r.groups {
		for _, m := range g {
			if !jsonvalue.Equal(m, list[k]) {
				return false
			}
			k++
		}
	}
	return true
}

// writer maps one verdicted target back onto the wire.
type writer struct {
	r         *Request
	c         *claimer
	usedGroup []bool
	nextGroup int
	elems     [][]byte // rendered messages array elements
	same      bool     // elems are the original elements, in order
	turn      [][]byte // blocks of the user turn being rendered
	turnText  *string  // the turn's content when it is one string message
	turnMsgs  int
	turnOwn   map[string]any // the turn's own members beside role and content
}

func (w *writer) render(list []any) ([]byte, error) {
	r := w.r
	t := 0
	sysKeep := false
	var sys []any
	if len(r.sysProj) == 1 && len(list) > 0 && jsonvalue.Equal(list[0], r.sysProj[0]) {
		sysKeep, t = true, 1
	} else {
		for t < len(list) && roleOf(list[t]) == "system" && w.groupAt(list, t) < 0 {
			sys = append(sys, list[t])
			t++
		}
	}
	w.same = true
	for t < len(list) {
		if g := w.groupAt(list, t); g >= 0 {
			w.flushTurn()
			w.usedGroup[g], w.nextGroup = true, g+1
			w.same = w.same && g == len(w.elems)
			w.elems = append(w.elems, r.body[r.msgRaw[g].Start:r.msgRaw[g].End])
			t += len(r.groups[g])
			continue
		}
		w.same = false
		if err := w.message(t, list[t].(map[string]any)); err != nil {
			return nil, err
		}
		t++
	}
	w.flushTurn()
	if len(w.elems) == 0 {
		return nil, &wire.WriteBackError{Field: "$target", Msg: "holds no user or assistant message: the conversation would be empty"}
	}
	p := rawjson.NewObjPatch(r.body, r.root, r.members)
	if !sysKeep {
		if err := w.system(p, sys); err != nil {
			return nil, err
		}
	}
	if !w.same || len(w.elems) != len(r.msgRaw) {
		p.Set("messages", rawjson.RenderArray(r.body, r.msgSpan, r.msgRaw, w.elems))
	}
	if !p.Changed() {
		return r.body, nil
	}
	return rawjson.SpliceOwned(r.body, r.root, p.Render()), nil
}

func roleOf(v any) string {
	s, _ := v.(map[string]any)["role"].(string)
	return s
}

// groupAt returns the first unused original wire message whose projection
// equals list[t:t+k], trying the one after the last match first, or -1.
func (w *writer) groupAt(list []any, t int) int {
	try := func(g int) bool {
		grp := w.r.groups[g]
		if w.usedGroup[g] || t+len(grp) > len(list) || len(grp) == 0 {
			return false
		}
		for k, m := range grp {
			if !jsonvalue.Equal(m, list[t+k]) {
				return false
			}
		}
		return true
	}
	if w.nextGroup < len(w.r.groups) && try(w.nextGroup) {
		return w.nextGroup
	}
	for g := range w.r.groups {
		if try(g) {
			return g
		}
	}
	return -1
}

// system sets, replaces or removes the system member.
func (w *writer) system(p *rawjson.ObjPatch, sys []any) error {
	if len(sys) == 0 {
		p.Del("system")
		return nil
	}
	if len(sys) == 1 {
		if s, ok := sys[0].(map[string]any)["content"].(string); ok {
			p.Set("system", appendString(nil, s))
			return nil
		}
	}
	var blocks [][]byte
	for i, e := range sys {
		m := e.(map[string]any)
		if err := onlyMembers(i, m, "role", "content"); err != nil {
			return err
		}
		bs, err := w.parts(i, "system", m["content"])
		if err != nil {
			return err
		}
		blocks = append(blocks, bs...)
	}
	p.Set("system", joinArray(blocks))
	return nil
}

// message renders one unmatched target message. Members beside those
// its role has on the Messages wire are the message's own (judged, as the
// Agent SDK's output_config): they are rendered on its wire message, and a
// user message carrying some opens a user turn of its own.
func (w *writer) message(i int, m map[string]any) error {
	switch role := roleOf(m); role {
	case "system":
		w.flushTurn()
		own, err := w.own(i, m, messageWire, "role", "content")
		if err != nil {
			return err
		}
		return w.simple(i, role, m["content"], own)
	case "assistant":
		w.flushTurn()
		return w.assistant(i, m)
	case "user":
		own, err := w.own(i, m, messageWire, "role", "content")
		if err != nil {
			return err
		}
		if own != nil {
			w.flushTurn()
			w.turnOwn = own
		}
		if s, ok := m["content"].(string); ok && w.turnMsgs == 0 {
			w.turnText = &s
		} else {
			w.turnText = nil
		}
		bs, err := w.parts(i, "user", m["content"])
		if err != nil {
			return err
		}
		w.turn = append(w.turn, bs...)
		w.turnMsgs++
		return nil
	case "tool":
		b, err := w.toolResult(i, m)
		if err != nil {
			return err
		}
		w.turn = append(w.turn, b)
		w.turnText = nil
		w.turnMsgs++
		return nil
	default:
		return &wire.WriteBackError{Field: tf(i, ".role"), Msg: "must be system, user, assistant or tool on the Messages wire"}
	}
}

// simple renders a system message with string or part content and its
// own members.
func (w *writer) simple(i int, role string, content any, own map[string]any) error {
	b := append([]byte(`{"role":`), appendString(nil, role)...)
	b = append(b, `,"content":`...)
	if s, ok := content.(string); ok {
		b = appendString(b, s)
	} else {
		bs, err := w.parts(i, role, content)
		if err != nil {
			return err
		}
		b = append(b, joinArray(bs)...)
	}
	b, err := appendMembers(b, tf(i, ""), own)
	if err != nil {
		return err
	}
	w.elems = append(w.elems, append(b, '}'))
	return nil
}

func (w *writer) flushTurn() {
	if w.turnMsgs == 0 {
		return
	}
	b := []byte(`{"role":"user","content":`)
	if w.turnText != nil && w.turnMsgs == 1 {
		b = appendString(b, *w.turnText)
	} else {
		b = append(b, joinArray(w.turn)...)
	}
	b, _ = appendMembers(b, "", w.turnOwn) // the target was checked encodable
	w.elems = append(w.elems, append(b, '}'))
	w.turn, w.turnText, w.turnMsgs, w.turnOwn = nil, nil, 0, nil
}

func (w *writer) assistant(i int, m map[string]any) error {
	own, err := w.own(i, m, messageWire, "role", "content", "tool_calls")
	if err != nil {
		return err
	}
	b := []byte(`{"role":"assistant","content":`)
	calls, err := w.calls(i, m["tool_calls"])
	if err != nil {
		return err
	}
	if s, ok := m["content"].(string); ok && len(calls) == 0 {
		b = appendString(b, s)
	} else {
		bs, err := w.parts(i, "assistant", m["content"])
		if err != nil {
			return err
		}
		b = append(b, joinArray(append(bs, calls...))...)
	}
	if b, err = appendMembers(b, tf(i, ""), own); err != nil {
		return err
	}
	w.elems = append(w.elems, append(b, '}'))
	return nil
}

// Wire names a rendered object must not take from a target's own members:
// they are the names the gateway renders from the projection.
var (
	messageWire = rawjson.NewMemberSet("role", "content", "tool_calls", "tool_call_id")
	textWire    = rawjson.NewMemberSet("type", "text", "annotations", "citations")
	imageWire   = rawjson.NewMemberSet("type", "image_url", "source")
	callWire    = rawjson.NewMemberSet("id", "type", "function", "name", "input")
	toolWire    = rawjson.NewMemberSet("role", "tool_call_id", "content", "is_error", "type", "tool_use_id")
)

// Members a target object may carry beside the projected ones under
// StrictMembers: the known wire members the projection keeps as they are.
var (
	strictPartOwn = rawjson.NewMemberSet("cache_control")
	strictCallOwn = rawjson.NewMemberSet("caller", "cache_control", "toolset_name")
	strictToolOwn = rawjson.NewMemberSet("cache_control", "toolset_name")
)

// own returns the members of target message i beside the projected ones
// (named in projected), which are rendered on its wire object as they
// are. A wire name the gateway renders itself (in wire) is refused, and
// under StrictMembers every other one too.
func (w *writer) own(i int, m map[string]any, wireNames rawjson.MemberSet, projected ...string) (map[string]any, error) {
	return ownMembers(tf(i, ""), m, wireNames, nil, w.r.s.strict, projected...)
}

// ownMembers is own for any object at path field; strictOK are the
// members StrictMembers still allows.
func ownMembers(field string, m map[string]any, wireNames, strictOK rawjson.MemberSet, strict bool, projected ...string) (map[string]any, error) {
	var own map[string]any
	for k, v := range m {
		if slices.Contains(projected, k) {
			continue
		}
		if wireNames.Has(k) || (strict && !strictOK.Has(k)) {
			return nil, &wire.WriteBackError{Field: field, Msg: "has a member the Messages wire cannot carry there (the projection's members: " + strings.Join(projected, ", ") + ")"}
		}
		if own == nil {
			own = map[string]any{}
		}
		own[k] = v
	}
	return own, nil
}

// appendMembers appends the members own to the object being rendered in b
// (after its first member), in name order.
func appendMembers(b []byte, field string, own map[string]any) ([]byte, error) {
	if len(own) == 0 {
		return b, nil
	}
	keys := slices.Sorted(maps.Keys(own))
	for _, k := range keys {
		v, err := jsonvalue.Marshal(own[k])
		if err != nil {
			return nil, &wire.WriteBackError{Field: field, Msg: "a member's value is not encodable JSON"}
		}
		b = append(appendString(append(b, ','), k), ':')
		b = append(b, v...)
	}
	return b, nil
}

// onlyMembers refuses a member of target message i other than names.
func onlyMembers(i int, m map[string]any, names ...string) error {
	for k := range m {
		ok := false
		for _, n := range names {
			ok = ok || k == n
		}
		if !ok {
			return &wire.WriteBackError{Field: tf(i, ""), Msg: "has a member the Messages wire cannot carry for its role (allowed: " + strings.Join(names, ", ") + ")"}
		}
	}
	return nil
}

// parts renders content (string, null or part array) as blocks.
func (w *writer) parts(i int, role string, content any) ([][]byte, error) {
	switch c := content.(type) {
	case nil:
		return nil, nil
	case string:
		if c == "" {
			return nil, nil
		}
		return [][]byte{textBlock(c)}, nil
	case []any:
		out := make([][]byte, 0, len(c))
		for j, e := range c {
			b, err := w.part(tf(i, ".content["+strconv.Itoa(j)+"]"), role, e)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		return out, nil
	}
	return nil, &wire.WriteBackError{Field: tf(i, ".content"), Msg: "must be a string, null or an array of parts, got " + rawjson.TypeName(content)}
}

// part renders one content part as a block.
func (w *writer) part(field, role string, e any) ([]byte, error) {
	p, ok := e.(map[string]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: field, Msg: "must be a part object, got " + rawjson.TypeName(e)}
	}
	typ, _ := p["type"].(string)
	if msg := partRoleProblem(role, typ); msg != "" {
		return nil, &wire.WriteBackError{Field: field, Msg: msg}
	}
	if raw := w.c.claim(poolPart, p); raw != nil {
		return raw, nil
	}
	switch typ {
	case "text":
		return w.textPart(field, p)
	case "image_url":
		own, err := ownMembers(field, p, imageWire, strictPartOwn, w.r.s.strict, "type", "image_url")
		if err != nil {
			return nil, err
		}
		b, err := imageBlock(field, p["image_url"])
		if err != nil {
			return nil, err
		}
		return closeObject(b, field, own)
	case "reasoning":
		return nil, &wire.WriteBackError{Field: field, Msg: "is not the text of an original thinking block: thinking is signed and cannot be changed or added, only removed"}
	case "redacted_thinking":
		return nil, &wire.WriteBackError{Field: field, Msg: "names no original redacted_thinking block: it can be removed, not added"}
	}
	spec := blocksByType[typ]
	if spec == nil || (spec.kind != kindNative && spec.kind != kindImage && spec.kind != kindServer) {
		return nil, &wire.WriteBackError{Field: field + ".type", Msg: "is not a part type the Messages wire can carry"}
	}
	if spec.kind == kindServer && !w.r.s.serverTools {
		return nil, &wire.WriteBackError{Field: field, Msg: "a provider-executed tool block needs " + AllowServerToolsKey}
	}
	if w.r.s.strict && spec.members.UnknownIn(p) {
		return nil, &wire.WriteBackError{Field: field, Msg: "has a member the gateway does not know for its type (" + UnknownMembersKey + ": refuse)"}
	}
	b, err := jsonvalue.Marshal(p)
	if err != nil {
		return nil, &wire.WriteBackError{Field: field, Msg: "is not encodable JSON"}
	}
	return b, nil
}

// partRoleProblem refuses parts the role cannot carry on the wire, before
// any original block is reused for them.
func partRoleProblem(role, typ string) string {
	switch {
	case role == "system" && typ != "text":
		return "a system message holds text parts only on the Messages wire"
	case role != "assistant" && (typ == "reasoning" || typ == "redacted_thinking"):
		return "reasoning belongs to assistant messages"
	case role != "assistant" && blocksByType[typ] != nil && blocksByType[typ].kind == kindServer:
		return "a provider-executed tool block belongs to assistant messages"
	}
	return ""
}

func textBlock(t string) []byte {
	b := append([]byte(`{"type":"text","text":`), appendString(nil, t)...)
	return append(b, '}')
}

// textPart renders a text part: its text, its annotations as the original
// citations they project (citations can be removed, not changed or
// added), and its own members (cache_control, judged unknown ones).
func (w *writer) textPart(field string, p map[string]any) ([]byte, error) {
	t, ok := p["text"].(string)
	if !ok {
		return nil, &wire.WriteBackError{Field: field + ".text", Msg: "must be a string"}
	}
	own, err := ownMembers(field, p, textWire, strictPartOwn, w.r.s.strict, "type", "text", "annotations")
	if err != nil {
		return nil, err
	}
	b := append([]byte(`{"type":"text","text":`), appendString(nil, t)...)
	switch anns := p["annotations"].(type) {
	case nil:
	case []any:
		cites := make([][]byte, len(anns))
		for j, a := range anns {
			if cites[j] = w.c.claim(poolCite, a); cites[j] == nil {
				return nil, &wire.WriteBackError{Field: field + ".annotations[" + strconv.Itoa(j) + "]", Msg: "is not an original citation: citations can be removed, not changed or added"}
			}
		}
		b = append(append(b, `,"citations":`...), joinArray(cites)...)
	default:
		return nil, &wire.WriteBackError{Field: field + ".annotations", Msg: "must be an array"}
	}
	return closeObject(b, field, own)
}

// closeObject appends the members own to the object rendered in b, and
// closes it.
func closeObject(b []byte, field string, own map[string]any) ([]byte, error) {
	b, err := appendMembers(b, field, own)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// imageBlock renders an image_url part's image_url member: a data: URL as
// a base64 source, any other URL as a url source. The block is left open
// for the part's own members.
func imageBlock(field string, v any) ([]byte, error) {
	iu, _ := v.(map[string]any)
	u, ok := iu["url"].(string)
	if !ok || len(iu) != 1 {
		return nil, &wire.WriteBackError{Field: field, Msg: "an image_url part holds image_url: {url} with a string url"}
	}
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		media, data, ok := strings.Cut(rest, ";base64,")
		if !ok {
			return nil, &wire.WriteBackError{Field: field + ".image_url.url", Msg: "a data URL must be base64"}
		}
		b := append([]byte(`{"type":"image","source":{"type":"base64","media_type":`), appendString(nil, media)...)
		b = append(append(b, `,"data":`...), appendString(nil, data)...)
		return append(b, '}'), nil
	}
	b := append([]byte(`{"type":"image","source":{"type":"url","url":`), appendString(nil, u)...)
	return append(b, '}'), nil
}

// calls renders an assistant's tool_calls as tool_use blocks.
func (w *writer) calls(i int, v any) ([][]byte, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: tf(i, ".tool_calls"), Msg: "must be an array"}
	}
	out := make([][]byte, len(list))
	for j, e := range list {
		field := tf(i, ".tool_calls["+strconv.Itoa(j)+"]")
		if raw := w.c.claim(poolCall, e); raw != nil {
			out[j] = raw
			continue
		}
		c, _ := e.(map[string]any)
		fn, _ := c["function"].(map[string]any)
		id, ok1 := c["id"].(string)
		name, ok2 := fn["name"].(string)
		args, ok3 := fn["arguments"].(string)
		if !ok1 || !ok2 || !ok3 || name == "" || len(fn) != 2 || (c["type"] != "function" && c["type"] != nil) {
			return nil, &wire.WriteBackError{Field: field, Msg: "must be {id, type: function, function: {name, arguments}} with strings"}
		}
		own, err := ownMembers(field, c, callWire, strictCallOwn, w.r.s.strict, "id", "type", "function")
		if err != nil {
			return nil, err
		}
		in, err := jsonvalue.DecodeStrict([]byte(args))
		if _, isObj := in.(map[string]any); err != nil || !isObj {
			return nil, &wire.WriteBackError{Field: field + ".function.arguments", Msg: "must be the JSON text of an object (tool_use input)"}
		}
		inRaw, _ := jsonvalue.Marshal(in)
		b := append([]byte(`{"type":"tool_use","id":`), appendString(nil, id)...)
		b = append(append(b, `,"name":`...), appendString(nil, name)...)
		b = append(append(b, `,"input":`...), inRaw...)
		if out[j], err = closeObject(b, field, own); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// toolResult renders a tool message as a tool_result block.
func (w *writer) toolResult(i int, m map[string]any) ([]byte, error) {
	if raw := w.c.claim(poolResult, m); raw != nil {
		return raw, nil
	}
	own, err := ownMembers(tf(i, ""), m, toolWire, strictToolOwn, w.r.s.strict, "role", "tool_call_id", "content", "is_error")
	if err != nil {
		return nil, err
	}
	id, ok := m["tool_call_id"].(string)
	if !ok {
		return nil, &wire.WriteBackError{Field: tf(i, ".tool_call_id"), Msg: "must be a string"}
	}
	b := append([]byte(`{"type":"tool_result","tool_use_id":`), appendString(nil, id)...)
	switch c := m["content"].(type) {
	case nil:
	case string:
		b = append(append(b, `,"content":`...), appendString(nil, c)...)
	default:
		bs, err := w.parts(i, "tool", c)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"content":`...), joinArray(bs)...)
	}
	switch e := m["is_error"].(type) {
	case nil:
	case bool:
		if e {
			b = append(b, `,"is_error":true`...)
		}
	default:
		return nil, &wire.WriteBackError{Field: tf(i, ".is_error"), Msg: "must be a boolean"}
	}
	return closeObject(b, tf(i, ""), own)
}

func joinArray(elems [][]byte) []byte {
	b := []byte{'['}
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}

// appendString appends s as a JSON string; s came out of a JSON decode or
// a checked target, so it encodes.
func appendString(b []byte, s string) []byte {
	out, _ := jsonvalue.AppendString(b, s)
	return out
}
