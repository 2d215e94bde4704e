package responses

import (
	"time"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// Response is a parsed upstream response object. Nothing of the upstream's
// bytes is released as they are: Release renders the object from the
// verdicted projection, the gateway's own values (ids, seals, clocks, the
// request's model and echoes) and the constants of enumerations.
type Response struct {
	req  *Request
	body []byte
	root rawjson.Span
	top  []rawjson.Member
	// vals are the released values of the top-level members the member
	// table treats (by member index); members absent from vals and not
	// projected are removed.
	vals map[int]any
	// usageRaw is the rendered usage, when the answer has a usage object.
	usageRaw []byte
	items    []outItem
	// extras are the unknown members projected as member parts, in
	// projection order (top-level members and those of items, parts and
	// entries); extraVals holds their values by path.
	extras    []extra
	extraVals map[string]any
	// status and reason are the upstream's status and
	// incomplete_details.reason.
	status, reason string
	usage          map[string]any
	proj           map[string]any
	streamed       bool
}

// extra is an answer member the gateway does not know, projected as a
// member part {type: member, name: path, value} and released as judged.
type extra struct {
	path  string // the member part's name: the member's path in the answer object
	key   string // the member's own name
	value any
}

func (r *Response) addExtra(path, key string, v any) error {
	if _, dup := r.extraVals[path]; dup {
		return respErr("", "has two unknown members at one path")
	}
	if r.extraVals == nil {
		r.extraVals = map[string]any{}
	}
	r.extraVals[path] = v
	r.extras = append(r.extras, extra{path: path, key: key, value: v})
	return nil
}

// parseResponse parses a complete response object answering req.
func (s *Surface) parseResponse(req *Request, body []byte) (*Response, error) {
	// encoding/json.Valid's verdict, and whether any object repeats a key,
	// in one pass.
	root, valid, dup := rawjson.CheckDocument(body)
	if !valid {
		return nil, respErr("", "body is not valid JSON")
	}
	return s.parseResponseAt(req, body, root, newAnswerIDs(s), dup)
}

// parseResponseAt parses the response object at root in body; ids are
// the answer's (a stream's events already released some). dup is false
// when the caller knows no object in the body repeats a key, which spares
// looking for one member by member.
func (s *Surface) parseResponseAt(req *Request, body []byte, root rawjson.Span, ids *answerIDs, dup bool) (*Response, error) {
	if root.Kind(body) != '{' {
		return nil, respErr("", "must be a JSON object")
	}
	ms, err := rawjson.ScanObject(body, root)
	if err != nil {
		return nil, respErr("", "has a duplicate member")
	}
	r := &Response{req: req, body: body, root: root, top: ms, vals: map[int]any{}}
	rules := topRules{req: req, ids: ids, now: time.Now().Unix()}
	haveOutput := false
	text := jsonvalue.NewText(body) // the members' plain strings slice one string of the body
	for i, m := range ms {
		if dup && rawjson.HasDuplicateKeys(body, m.Val) {
			return nil, respErr(safeField(m.Key), "has an object with a duplicate member")
		}
		if responseKnown.Collides(m.Key) {
			return nil, respErr("", "has a member whose name differs from a known one only in letter case")
		}
		v, err := text.Decode(m.Val.Start, m.Val.End)
		if err != nil {
			return nil, respErr(safeField(m.Key), rawjson.DecodeProblem(err))
		}
		spec := responseMemberByName[m.Key]
		switch {
		case spec == nil:
			if err := r.unknownTop(s, m.Key, v); err != nil {
				return nil, err
			}
		case spec.treat == topProjected:
			if err := r.projected(s, ids, m, v); err != nil {
				return nil, err
			}
			haveOutput = haveOutput || m.Key == "output"
		default:
			out, keep, err := rules.value(spec, v)
			if err != nil {
				return nil, err
			}
			if keep {
				r.vals[i] = out
			}
		}
	}
	if !haveOutput {
		return nil, respErr("output", "is required")
	}
	if err := r.checkStatus(); err != nil {
		return nil, err
	}
	r.build()
	return r, nil
}

// unknownTop handles a top-level member the gateway does not know:
// projected as a member part (judged) unless the surface is strict and
// does not allow it; removed when null, or when its name is not valid
// UTF-8 (no projection can carry it).
func (r *Response) unknownTop(s *Surface, key string, v any) error {
	if v == nil || (s.strict && !s.allowResp.Has(key)) || !utf8.ValidString(key) {
		return nil
	}
	return r.addExtra(key, key, v)
}

// projected reads one of the projected top-level members.
func (r *Response) projected(s *Surface, ids *answerIDs, m rawjson.Member, v any) error {
	switch m.Key {
	case "output":
		return r.readOutput(s, ids, m.Val, v)
	case "status":
		st, ok := v.(string)
		if !ok {
			return respErr("status", "must be a string")
		}
		r.status = st
	case "incomplete_details":
		if v == nil {
			return nil
		}
		d, ok := v.(map[string]any)
		reason, ok2 := d["reason"].(string)
		if !ok || !ok2 {
			return respErr("incomplete_details", "must be {reason}")
		}
		r.reason = reason
	case "error":
		if v != nil {
			return &wire.ResponseError{Field: "error", Msg: "the upstream reported an error"}
		}
	case "usage":
		switch u := v.(type) {
		case map[string]any:
			r.usageRaw, r.usage = renderUsage(u)
		case nil:
			r.usageRaw = []byte("null")
		}
	}
	return nil
}

// checkStatus refuses statuses that are not a finished answer.
func (r *Response) checkStatus() error {
	switch r.status {
	case "completed":
		return nil
	case "incomplete":
		if incompleteReasons[r.reason] {
			return nil
		}
		return respErr("incomplete_details.reason", "is not a reason the gateway knows")
	case "failed", "cancelled":
		return respErr("status", "the upstream reports the response "+r.status)
	case "queued", "in_progress":
		if v, _ := r.req.params["background"].(bool); v {
			return nil
		}
		return respErr("status", "the response is not finished")
	}
	return respErr("status", "is not a status the gateway knows")
}

// build computes the projection: the items' parts, then a member part per
// unknown member.
func (r *Response) build() {
	var parts []any
	calls := []any{}
	for _, it := range r.items {
		parts = append(parts, it.parts...)
		if it.kind == itemFunctionCall {
			calls = append(calls, map[string]any{"id": it.callID, "name": it.name, "args": it.args})
		}
	}
	for _, x := range r.extras {
		parts = append(parts, map[string]any{"type": partMember, "name": x.path, "value": x.value})
	}
	r.proj = map[string]any{"content": contentOf(parts), "tool_calls": calls, "finish_reason": r.finishReason(len(calls) > 0)}
}

// partMember is the type of a member part.
const partMember = "member"

// contentOf is the normalized content of parts: null when none, the
// string when there is one plain text part, else the parts.
func contentOf(parts []any) any {
	switch {
	case len(parts) == 0:
		return nil
	case len(parts) == 1:
		if p := parts[0].(map[string]any); p["type"] == "text" && len(p) == 2 {
			return p["text"]
		}
	}
	return parts
}

func (r *Response) finishReason(calls bool) string {
	switch {
	case r.status == "incomplete" && r.reason == "content_filter":
		return "content_filter"
	case r.status == "incomplete":
		return "length"
	case calls:
		return "tool_calls"
	}
	return "stop"
}

// Project returns {content, tool_calls, finish_reason} (a fresh tree).
func (r *Response) Project() map[string]any {
	return jsonvalue.DeepCopy(r.proj).(map[string]any)
}

// Usage returns {prompt_tokens, completion_tokens} as reported, or nil.
func (r *Response) Usage() map[string]any {
	if len(r.usage) == 0 {
		return nil
	}
	return jsonvalue.DeepCopy(r.usage).(map[string]any)
}
