package chat

import (
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// Part types of a projected content array. A plain text answer projects
// as a string; an answer with more than one channel of
// model text projects as an array of these parts, so that every channel a
// client can surface is in the post_model_call target, whose schema admits
// only content, tool_calls and finish_reason.
const (
	partReasoning = "reasoning" // {"type":"reasoning","text":…}
	partText      = "text"      // {"type":"text","text":…,"annotations":[…]?}
	partRefusal   = "refusal"   // {"type":"refusal","refusal":…}
	partMember    = "member"    // {"type":"member","name":…,"value":…,"in":…?}: a member the gateway does not know
)

// Where a member part's member sits on the wire (the part's "in"; absent
// for the message or delta).
const (
	inMessage    = ""           // choices[0].message, or a chunk's delta
	inChoice     = "choice"     // choices[0]
	inCompletion = "completion" // the body or chunk itself
)

// Wire members that carry reasoning text, in projection order.
const (
	wireReasoningContent = "reasoning_content" // vLLM, DeepSeek, Ollama, LM Studio
	wireReasoning        = "reasoning"         // OpenRouter, vLLM ≥ 0.10, Groq
	wireReasoningDetails = "reasoning_details" // OpenRouter: [{type, text | summary, …}]
)

// reasoningText is one reasoning channel: the member it came from and, for
// reasoning_details, the entry member holding the text.
type reasoningText struct {
	member string
	key    string // "text" or "summary" within a reasoning_details entry
	text   string
}

// annotation is a url_citation the model attached to its text. Its url
// and title are model output and are projected; the offsets are metadata.
type annotation struct {
	url, title string
	start, end string // raw non-negative integer tokens, or ""
}

// extraMember is a member the gateway does not know, projected whole: of
// the message (or delta), the choice or the completion (see in), or of a
// tool call (call.members).
type extraMember struct {
	in    string
	name  string
	value any
}

// answer is the model's output in every channel the gateway releases:
// the content text, its citations, the refusal, reasoning, allowed extra
// members and tool calls. Parsing fills it from the wire; a verdicted
// target is read back into one; rendering writes one onto the wire.
type answer struct {
	text        *string // nil: content null or absent
	annotations []annotation
	refusal     *string
	reasoning   []reasoningText
	extras      []extraMember
	calls       []call
	finish      *string
}

// simple reports whether the answer projects as a plain string or null:
// text only, no refusal, reasoning, citations or extras.
func (a *answer) simple() bool {
	return a.refusal == nil && len(a.reasoning) == 0 && len(a.annotations) == 0 && len(a.extras) == 0
}

// content returns the projection of every text channel (see the part
// constants): a string or null for a simple answer, else a part array.
func (a *answer) content() any {
	if a.simple() {
		if a.text != nil {
			return *a.text
		}
		return nil
	}
	parts := make([]any, 0, len(a.reasoning)+len(a.extras)+2)
	for _, r := range a.reasoning {
		parts = append(parts, map[string]any{"type": partReasoning, "text": r.text})
	}
	if a.text != nil || len(a.annotations) > 0 {
		p := map[string]any{"type": partText, "text": deref(a.text)}
		if len(a.annotations) > 0 {
			list := make([]any, len(a.annotations))
			for i, an := range a.annotations {
				list[i] = map[string]any{"type": "url_citation", "url": an.url, "title": an.title}
			}
			p["annotations"] = list
		}
		parts = append(parts, p)
	}
	if a.refusal != nil {
		parts = append(parts, map[string]any{"type": partRefusal, "refusal": *a.refusal})
	}
	for _, x := range a.extras {
		p := map[string]any{"type": partMember, "name": x.name, "value": jsonvalue.DeepCopy(x.value)}
		if x.in != inMessage {
			p["in"] = x.in
		}
		parts = append(parts, p)
	}
	return parts
}

// withContent returns the answer a verdicted content value stands for,
// keeping a's tool calls and finish reason. The rules, which CheckWriteBack
// enforces and the docs state:
//
//   - a string replaces the text and removes every other channel;
//   - null removes every channel;
//   - a part array sets each channel from its parts: reasoning parts map in
//     order onto the answer's reasoning channels (fewer parts remove the
//     trailing channels; more are refused: a reasoning channel has nowhere
//     to go that the client reads as the model's), at most one text part
//     (with url_citation annotations), at most one refusal part, member
//     parts naming the answer's own extra members (by in and name), each
//     once; a member part left out removes its member.
func (a *answer) withContent(c any) (*answer, error) {
	out := &answer{calls: a.calls, finish: a.finish}
	switch v := c.(type) {
	case nil:
		return out, nil
	case string:
		out.text = &v
		return out, nil
	case []any:
		return out, out.fromParts(a, v)
	}
	return nil, &wire.WriteBackError{Field: "$target.content", Msg: "must be a string, null or an array of parts, got " + rawjson.TypeName(c)}
}

func (out *answer) fromParts(orig *answer, parts []any) error {
	var sawText, sawRefusal bool
	seen := map[string]bool{}
	for i, e := range parts {
		field := "$target.content[" + strconv.Itoa(i) + "]"
		p, ok := e.(map[string]any)
		if !ok {
			return &wire.WriteBackError{Field: field, Msg: "must be a part object, got " + rawjson.TypeName(e)}
		}
		typ, _ := p["type"].(string)
		switch typ {
		case partReasoning:
			k := len(out.reasoning)
			if k >= len(orig.reasoning) {
				return &wire.WriteBackError{Field: field, Msg: "adds a reasoning part: reasoning can be rewritten or removed, not added"}
			}
			text, ok := p["text"].(string)
			if !ok || len(p) != 2 {
				return &wire.WriteBackError{Field: field, Msg: "a reasoning part is exactly {type, text} with a string text"}
			}
			r := orig.reasoning[k]
			r.text = text
			out.reasoning = append(out.reasoning, r)
		case partText:
			if sawText {
				return &wire.WriteBackError{Field: field, Msg: "is a second text part"}
			}
			sawText = true
			text, ok := p["text"].(string)
			if !ok {
				return &wire.WriteBackError{Field: field + ".text", Msg: "must be a string"}
			}
			out.text = &text
			anns, err := annotationsFrom(p, field, orig.annotations)
			if err != nil {
				return err
			}
			out.annotations = anns
		case partRefusal:
			if sawRefusal {
				return &wire.WriteBackError{Field: field, Msg: "is a second refusal part"}
			}
			sawRefusal = true
			r, ok := p["refusal"].(string)
			if !ok || len(p) != 2 {
				return &wire.WriteBackError{Field: field, Msg: "a refusal part is exactly {type, refusal} with a string refusal"}
			}
			out.refusal = &r
		case partMember:
			name, _ := p["name"].(string)
			in, hasIn := p["in"].(string)
			_, value := p["value"]
			n := 3
			if hasIn {
				n = 4
			}
			key := in + "." + name
			if !orig.hasExtra(in, name) || seen[key] || len(p) != n || !value || hasIn && in == inMessage {
				return &wire.WriteBackError{Field: field, Msg: "a member part must name one of the response's own members, once, as {type, name, value} with the in it was projected with"}
			}
			seen[key] = true
			out.extras = append(out.extras, extraMember{in: in, name: name, value: p["value"]})
		default:
			return &wire.WriteBackError{Field: field + ".type", Msg: "must be reasoning, text, refusal or member"}
		}
	}
	return nil
}

func (a *answer) hasExtra(in, name string) bool {
	return a.extra(in, name) != nil
}

// extra returns the answer's member named name in in, or nil.
func (a *answer) extra(in, name string) *extraMember {
	for i := range a.extras {
		if x := &a.extras[i]; x.in == in && x.name == name {
			return x
		}
	}
	return nil
}

// annotationsFrom reads a text part's annotations: url_citation objects
// with string url and title. Offsets are kept from the original citation
// at the same index while the text is unchanged in length; they are
// metadata a client uses to place the citation, and a rewrite of the text
// voids them.
func annotationsFrom(p map[string]any, field string, orig []annotation) ([]annotation, error) {
	for k := range p {
		if k != "type" && k != "text" && k != "annotations" {
			return nil, &wire.WriteBackError{Field: field, Msg: "a text part has only type, text and annotations"}
		}
	}
	raw, ok := p["annotations"]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, &wire.WriteBackError{Field: field + ".annotations", Msg: "must be an array, got " + rawjson.TypeName(raw)}
	}
	out := make([]annotation, len(list))
	for i, e := range list {
		af := field + ".annotations[" + strconv.Itoa(i) + "]"
		m, ok := e.(map[string]any)
		if !ok || m["type"] != "url_citation" || len(m) != 3 {
			return nil, &wire.WriteBackError{Field: af, Msg: "must be exactly {type: url_citation, url, title}"}
		}
		url, ok1 := m["url"].(string)
		title, ok2 := m["title"].(string)
		if !ok1 || !ok2 {
			return nil, &wire.WriteBackError{Field: af, Msg: "url and title must be strings"}
		}
		out[i] = annotation{url: url, title: title}
		if i < len(orig) && orig[i].url == url {
			out[i].start, out[i].end = orig[i].start, orig[i].end
		}
	}
	return out, nil
}

// appendMessage renders the answer as a chat.completion message object.
// Tool-call arguments keep their upstream text where the verdict left them
// unchanged (argumentsText); everything else is rendered from the answer.
func (a *answer) appendMessage(b []byte, calls []any, origs []*call) ([]byte, error) {
	b = append(b, `{"role":"assistant","content":`...)
	b = appendOptString(b, a.text)
	b = append(b, `,"refusal":`...)
	b = appendOptString(b, a.refusal)
	b = a.appendReasoning(b)
	if len(a.annotations) > 0 {
		b = append(b, `,"annotations":`...)
		b = appendAnnotations(b, a.annotations)
	}
	var err error
	if len(calls) > 0 {
		b = append(b, `,"tool_calls":`...)
		if b, err = appendCalls(b, calls, origs, false); err != nil {
			return nil, err
		}
	}
	if b, err = a.appendExtras(b, inMessage); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendReasoning renders each reasoning channel under its own member:
// reasoning_content and reasoning as strings, reasoning_details entries as
// {"type":"reasoning.text"|"reasoning.summary", "text"|"summary": …}.
func (a *answer) appendReasoning(b []byte) []byte {
	var details []reasoningText
	for _, r := range a.reasoning {
		if r.member == wireReasoningDetails {
			details = append(details, r)
			continue
		}
		b = append(b, ',')
		b = appendString(b, r.member)
		b = append(b, ':')
		b = appendString(b, r.text)
	}
	if len(details) == 0 {
		return b
	}
	b = append(b, `,"reasoning_details":[`...)
	for i, d := range details {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = appendString(b, "reasoning."+d.key)
		b = append(b, `,"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ',')
		b = appendString(b, d.key)
		b = append(b, ':')
		b = appendString(b, d.text)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendExtras renders the answer's members in in, each preceded by a
// comma.
func (a *answer) appendExtras(b []byte, in string) ([]byte, error) {
	return appendMembers(b, a.extras, in)
}

// appendMembers renders the members of list in in, each preceded by a
// comma.
func appendMembers(b []byte, list []extraMember, in string) ([]byte, error) {
	for _, x := range list {
		if x.in != in {
			continue
		}
		b = append(b, ',')
		b = appendString(b, x.name)
		b = append(b, ':')
		var err error
		if b, err = jsonvalue.AppendCompact(b, x.value); err != nil {
			return nil, &wire.WriteBackError{Field: "$target.content", Msg: "a member part's value is not encodable JSON"}
		}
	}
	return b, nil
}

func appendAnnotations(b []byte, anns []annotation) []byte {
	b = append(b, '[')
	for i, an := range anns {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"url_citation","url_citation":{"url":`...)
		b = appendString(b, an.url)
		b = append(b, `,"title":`...)
		b = appendString(b, an.title)
		if an.start != "" && an.end != "" {
			b = append(b, `,"start_index":`...)
			b = append(b, an.start...)
			b = append(b, `,"end_index":`...)
			b = append(b, an.end...)
		}
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

// appendCalls renders verdicted tool calls; indexed adds the "index"
// member stream deltas carry.
func appendCalls(b []byte, calls []any, origs []*call, indexed bool) ([]byte, error) {
	b = append(b, '[')
	for i, e := range calls {
		c, orig := e.(map[string]any), origs[i]
		field := "$target.tool_calls[" + strconv.Itoa(i) + "]"
		args, err := argumentsText(orig, c["args"].(map[string]any))
		if err != nil {
			return nil, &wire.WriteBackError{Field: field + ".args", Msg: "is not encodable JSON"}
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		if indexed {
			b = append(b, `"index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, ',')
		}
		b = append(b, `"id":`...)
		b = appendString(b, orig.id)
		b = append(b, `,"type":"function","function":{"name":`...)
		if b, err = jsonvalue.AppendCompact(b, c["name"]); err != nil {
			return nil, &wire.WriteBackError{Field: field + ".name", Msg: "is not encodable JSON"}
		}
		b = append(b, `,"arguments":`...)
		if b, err = jsonvalue.AppendCompact(b, args); err != nil {
			return nil, &wire.WriteBackError{Field: field + ".args", Msg: "is not encodable JSON"}
		}
		b = append(b, '}')
		if b, err = appendCallMembers(b, orig, c["members"]); err != nil {
			return nil, &wire.WriteBackError{Field: field + ".members", Msg: "is not encodable JSON"}
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendCallMembers renders a verdicted call's members (v, an object
// naming members of orig, as checkCalls holds it) in orig's order.
func appendCallMembers(b []byte, orig *call, v any) ([]byte, error) {
	mm, _ := v.(map[string]any)
	for _, x := range orig.members {
		val, ok := mm[x.name]
		if !ok {
			continue
		}
		b = append(b, ',')
		b = appendString(b, x.name)
		b = append(b, ':')
		var err error
		if b, err = jsonvalue.AppendCompact(b, val); err != nil {
			return nil, err
		}
	}
	return b, nil
}
