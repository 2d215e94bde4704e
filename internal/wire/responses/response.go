package responses

import (
	"encoding/json"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// Response is a parsed upstream response object.
type Response struct {
	req  *Request
	body []byte
	root rawjson.Span
	top  []rawjson.Member
	drop map[int]bool // top-level members removed on release
	// usageRaw, when set, replaces the usage member on release (it held
	// more than the known counts).
	usageRaw []byte
	items    []outItem
	// status and reason are the upstream's status and
	// incomplete_details.reason.
	status, reason string
	usage          map[string]any
	proj           map[string]any
	clean          bool // nothing removed: the body can be released as is
	streamed       bool
}

// outItem is one output item.
type outItem struct {
	kind  itemKind
	span  rawjson.Span
	ms    []rawjson.Member
	drop  []int // members removed on release (logprobs, unknown)
	id    string
	parts []any // normalized parts this item contributes to content
	// reasoning: whether summary and content are arrays, and how many
	// of parts came from summary
	hasSummary, hasContent bool
	nSummary               int
	// function calls
	callID, name, ns, arguments string
	args                        map[string]any
	rawArgs                     bool
}

// Top-level response members. Echoes of the request that carry text are
// kept only when they equal what the client sent; the others are metadata
// (metaChecks, shape-checked).
var (
	echoMembers = map[string]bool{
		"instructions": true, "tools": true, "metadata": true, "text": true, "reasoning": true,
		"tool_choice": true, "prompt": true, "previous_response_id": true, "conversation": true,
		"user": true, "safety_identifier": true, "prompt_cache_key": true,
	}
	responseKnown = func() rawjson.MemberSet {
		names := []string{"output", "status", "incomplete_details", "error", "usage"}
		for k := range echoMembers {
			names = append(names, k)
		}
		for k := range metaChecks {
			names = append(names, k)
		}
		return rawjson.NewMemberSet(names...)
	}()
	outMessageMembers = rawjson.NewMemberSet("id", "type", "role", "status", "content")
	outTextMembers    = rawjson.NewMemberSet("type", "text", "annotations", "logprobs")
)

func respErr(field, msg string) error { return &wire.ResponseError{Field: field, Msg: msg} }

// parseResponse parses a complete response object answering req.
func (s *Surface) parseResponse(req *Request, body []byte) (*Response, error) {
	if !json.Valid(body) {
		return nil, respErr("", "body is not valid JSON")
	}
	root := rawjson.RootSpan(body)
	return s.parseResponseAt(req, body, root)
}

// parseResponseAt parses the response object at root in body.
func (s *Surface) parseResponseAt(req *Request, body []byte, root rawjson.Span) (*Response, error) {
	if root.Kind(body) != '{' {
		return nil, respErr("", "must be a JSON object")
	}
	ms, err := rawjson.ScanObject(body, root)
	if err != nil {
		return nil, respErr("", "has a duplicate member")
	}
	r := &Response{req: req, body: body, root: root, top: ms, clean: true, drop: map[int]bool{}}
	haveOutput := false
	text := jsonvalue.NewText(body) // the members' plain strings slice one string of the body
	for i, m := range ms {
		if rawjson.HasDuplicateKeys(body, m.Val) {
			return nil, respErr(safeField(m.Key), "has an object with a duplicate member")
		}
		if responseKnown.Collides(m.Key) {
			return nil, respErr("", "has a member whose name differs from a known one only in letter case")
		}
		v, err := text.Decode(m.Val.Start, m.Val.End)
		if err != nil {
			return nil, respErr(safeField(m.Key), rawjson.DecodeProblem(err))
		}
		keep, err := r.member(s, m, v)
		if err != nil {
			return nil, err
		}
		haveOutput = haveOutput || m.Key == "output"
		if !keep {
			r.drop[i] = true
			r.clean = false
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

// member reads one top-level member and reports whether it is released.
func (r *Response) member(s *Surface, m rawjson.Member, v any) (bool, error) {
	switch m.Key {
	case "output":
		return true, r.readOutput(m.Val, v)
	case "status":
		st, ok := v.(string)
		if !ok {
			return false, respErr("status", "must be a string")
		}
		r.status = st
		return responseStatuses[st], nil
	case "incomplete_details":
		if v == nil {
			return true, nil
		}
		d, ok := v.(map[string]any)
		reason, ok2 := d["reason"].(string)
		if !ok || !ok2 {
			return false, respErr("incomplete_details", "must be {reason}")
		}
		r.reason = reason
		return len(d) == 1 && incompleteReasons[reason], nil
	case "error":
		if v != nil {
			return false, &wire.ResponseError{Field: "error", Msg: "the upstream reported an error"}
		}
		return true, nil
	case "usage":
		return r.readUsage(v)
	}
	if echoMembers[m.Key] {
		return v == nil || jsonvalue.Equal(v, r.req.echo(m.Key)), nil
	}
	if _, ok := metaChecks[m.Key]; ok {
		return metaOK(m.Key, v), nil
	}
	if s.allowResp.Has(m.Key) {
		return v == nil || isBool(v) || isNumber(v), nil
	}
	return false, nil
}

// echo returns the request's own value of member name, or nil.
func (r *Request) echo(name string) any {
	i := rawjson.Find(r.members, name)
	if i < 0 {
		return nil
	}
	v, _ := rawjson.DecodeSpan(r.text.Bytes(), r.members[i].Val)
	return v
}

// readUsage keeps usage when it holds only known counts, re-renders it
// from them otherwise (removed when it is not an object), and projects
// input and output tokens. It reports whether the member is released.
func (r *Response) readUsage(v any) (bool, error) {
	u, ok := v.(map[string]any)
	if !ok {
		return v == nil, nil
	}
	kept, clean := checkedUsage(u)
	if !clean {
		raw, err := jsonvalue.Marshal(kept)
		if err != nil {
			return false, respErr("usage", "cannot be re-rendered")
		}
		r.usageRaw = raw
		r.clean = false
	}
	r.usage = map[string]any{}
	if n, ok := kept["input_tokens"]; ok {
		r.usage["prompt_tokens"] = n
	}
	if n, ok := kept["output_tokens"]; ok {
		r.usage["completion_tokens"] = n
	}
	return true, nil
}

// checkStatus refuses statuses that are not a finished answer.
func (r *Response) checkStatus() error {
	switch r.status {
	case "completed":
		return nil
	case "incomplete":
		switch r.reason {
		case "max_output_tokens", "content_filter":
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

// build computes the projection.
func (r *Response) build() {
	var parts []any
	calls := []any{}
	for _, it := range r.items {
		parts = append(parts, it.parts...)
		if it.kind == itemFunctionCall {
			calls = append(calls, map[string]any{"id": it.callID, "name": it.name, "args": it.args})
		}
	}
	r.proj = map[string]any{"content": contentOf(parts), "tool_calls": calls, "finish_reason": r.finishReason(len(calls) > 0)}
}

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
