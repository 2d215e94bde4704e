package chat

import (
	"slices"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// CheckWriteBack reports whether a verdicted post_model_call target can be
// written onto the wire (GW-TX-2); the enforcement layer runs it inside the
// emission so a target that cannot be released becomes deny
// host_error:transform_invalid. The projection itself always passes.
//
// Rules: the target is an object with exactly content, tool_calls and
// finish_reason; content is a string, null or a part array as
// answer.withContent reads it; tool_calls is an array; a call that differs
// from its original has a string id naming a call of the upstream
// response, a non-empty string name and an object args; ids are unique;
// finish_reason is a string.
//
// Decision: calls may be dropped or reordered but not added. A call the
// model never made has no provenance, and a policy that wants to make the
// agent do something else can deny or rewrite an existing call.
func (r *Response) CheckWriteBack(target any) error {
	t, ok := target.(map[string]any)
	if !ok {
		return &wire.WriteBackError{Field: "$target", Msg: "must be an object, got " + rawjson.TypeName(target)}
	}
	for k := range t {
		switch k {
		case "content", "tool_calls", "finish_reason":
		default:
			return &wire.WriteBackError{Field: "$target", Msg: "has a member other than content, tool_calls and finish_reason"}
		}
	}
	for _, k := range []string{"content", "tool_calls", "finish_reason"} {
		if _, ok := t[k]; !ok {
			return &wire.WriteBackError{Field: "$target." + k, Msg: "is required"}
		}
	}
	if err := wire.CheckEncodable(target); err != nil {
		return err
	}
	if c := t["content"]; !jsonvalue.Equal(c, r.proj["content"]) {
		if _, err := r.ans.withContent(c); err != nil {
			return err
		}
	}
	if _, ok := t["finish_reason"].(string); !ok {
		return &wire.WriteBackError{Field: "$target.finish_reason", Msg: "must be a string, got " + rawjson.TypeName(t["finish_reason"])}
	}
	if tc := t["tool_calls"]; !jsonvalue.Equal(tc, r.proj["tool_calls"]) {
		return r.checkCalls(tc)
	}
	return nil
}

func (r *Response) checkCalls(tc any) error {
	list, ok := tc.([]any)
	if !ok {
		return &wire.WriteBackError{Field: "$target.tool_calls", Msg: "must be an array, got " + rawjson.TypeName(tc)}
	}
	if !r.uniqueIDs() {
		return &wire.WriteBackError{Field: "$target.tool_calls", Msg: "cannot be changed: the upstream call ids are not unique, so calls cannot be matched"}
	}
	seen := make(map[string]bool, len(list))
	for i, e := range list {
		field := fieldIndex("$target.tool_calls", i)
		c, ok := e.(map[string]any)
		if !ok {
			return &wire.WriteBackError{Field: field, Msg: "must be an object, got " + rawjson.TypeName(e)}
		}
		for k := range c {
			if k != "id" && k != "name" && k != "args" && k != "members" {
				return &wire.WriteBackError{Field: field, Msg: "has a member other than id, name, args and members"}
			}
		}
		id, ok := c["id"].(string)
		if !ok {
			return &wire.WriteBackError{Field: field + ".id", Msg: "must be a string, got " + rawjson.TypeName(c["id"])}
		}
		if seen[id] {
			return &wire.WriteBackError{Field: field + ".id", Msg: "duplicates an earlier call's id"}
		}
		seen[id] = true
		orig := r.callByID(id)
		if orig == nil {
			return &wire.WriteBackError{Field: field + ".id", Msg: "names no call of the upstream response: calls may be dropped, not added"}
		}
		if jsonvalue.Equal(c, orig.proj) {
			continue
		}
		if name, ok := c["name"].(string); !ok || name == "" {
			return &wire.WriteBackError{Field: field + ".name", Msg: "must be a non-empty string"}
		}
		if _, ok := c["args"].(map[string]any); !ok {
			return &wire.WriteBackError{Field: field + ".args", Msg: "must be an object, got " + rawjson.TypeName(c["args"])}
		}
		if err := checkCallMembers(c, orig, field); err != nil {
			return err
		}
	}
	return nil
}

// checkCallMembers holds a verdicted call's members to its upstream
// call's: an object whose members the call had (a member may be
// rewritten or removed, not added), or absent.
func checkCallMembers(c map[string]any, orig *call, field string) error {
	v, ok := c["members"]
	if !ok {
		return nil
	}
	mm, ok := v.(map[string]any)
	if !ok {
		return &wire.WriteBackError{Field: field + ".members", Msg: "must be an object, got " + rawjson.TypeName(v)}
	}
	for k := range mm {
		if !slices.ContainsFunc(orig.members, func(x extraMember) bool { return x.name == k }) {
			return &wire.WriteBackError{Field: field + ".members", Msg: "names a member the upstream call does not have: members can be rewritten or removed, not added"}
		}
	}
	return nil
}

func (r *Response) uniqueIDs() bool {
	seen := make(map[string]bool, len(r.ans.calls))
	for _, c := range r.ans.calls {
		if seen[c.id] {
			return false
		}
		seen[c.id] = true
	}
	return true
}

// origCalls pairs each verdicted call with its upstream call: by position
// when the list is the projection itself (upstream ids may be empty or
// repeated there), otherwise by id, which CheckWriteBack made unambiguous.
func (r *Response) origCalls(list []any) []*call {
	out := make([]*call, len(list))
	positional := jsonvalue.Equal(list, r.proj["tool_calls"])
	for i, e := range list {
		if positional {
			out[i] = &r.ans.calls[i]
		} else {
			out[i] = r.callByID(e.(map[string]any)["id"].(string))
		}
	}
	return out
}

func (r *Response) callByID(id string) *call {
	for i := range r.ans.calls {
		if r.ans.calls[i].id == id {
			return &r.ans.calls[i]
		}
	}
	return nil
}

// argumentsText is the wire arguments string for a verdicted call:
// unchanged args keep the upstream string byte-for-byte; args that were
// raw and now hold only a new raw_arguments string write that string
// verbatim (GW-TX-4); any other object is serialized as compact JSON.
func argumentsText(orig *call, args map[string]any) (string, error) {
	if jsonvalue.Equal(args, orig.proj["args"]) {
		return orig.arguments, nil
	}
	if s, ok := args["raw_arguments"].(string); ok && orig.rawArgs && len(args) == 1 {
		return s, nil
	}
	b, err := jsonvalue.Marshal(args)
	return string(b), err
}

// Release returns the JSON body for the client.
//
// The body is the upstream's with byte-offset edits: the id is the
// minted one and model the request's (added when absent), removed members
// (system_fingerprint, logprobs, unreleasable metadata, null or, in strict
// mode, unknown members) are cut out, usage keeps its known counts, and
// when the verdict changed the answer or the message held anything
// removed, choices[0].message is rendered from the verdicted target; a
// member part the verdict changed or left out rewrites or removes its
// member. Number tokens and every byte not edited keep their upstream
// text.
//
// A nil target stands for the projection, unchanged. Release runs
// CheckWriteBack first. It is not available on a streamed
// response; use Stream.Release.
func (r *Response) Release(target any) ([]byte, error) {
	w := r.wire
	if w == nil {
		return nil, &wire.WriteBackError{Msg: "a streamed response is released with Stream.Release"}
	}
	if target == nil {
		target = r.proj
	}
	if err := r.CheckWriteBack(target); err != nil {
		return nil, err
	}
	t := target.(map[string]any)
	unchanged := jsonvalue.Equal(t, r.proj)
	var a *answer // the verdicted answer, when it differs
	if !unchanged {
		var err error
		if a, err = r.ans.withContent(t["content"]); err != nil {
			return nil, err
		}
	}
	choices, err := r.releaseChoice(t, a)
	if err != nil {
		return nil, err
	}
	var opsBuf [16]memberOp
	ops := opsBuf[:0]
	if len(w.top) > len(opsBuf) {
		ops = make([]memberOp, 0, len(w.top))
	}
	ops = ops[:len(w.top)]
	// The id and model tokens, in one buffer: [:idEnd] and [idEnd:].
	toks := appendString(make([]byte, 0, len(r.meta.id)+len(r.meta.model)+4), r.meta.id)
	idEnd := len(toks)
	toks = appendString(toks, r.meta.model)
	for i, m := range w.top {
		switch w.topAct[i] {
		case topDrop:
			ops[i].drop = true
		case topID:
			ops[i].val = toks[:idEnd:idEnd]
		case topModel:
			ops[i].val = toks[idEnd:]
		default:
			switch {
			case m.Key == "usage" && r.usage != nil && !r.usage.clean:
				ops[i].val = r.usage.raw
			case m.Key == "choices" && choices != nil:
				ops[i].val = choices
			case a != nil && !topMeta.Has(m.Key) && !responseTop.Has(m.Key):
				ops[i] = r.memberOp(a, inCompletion, m.Key)
			}
		}
	}
	var insert []byte
	if !w.haveID {
		insert = append(appendString(append(insert, `"id":`...), r.meta.id), ',')
	}
	if !w.haveModel {
		insert = append(appendString(append(insert, `"model":`...), r.meta.model), ',')
	}
	if len(insert) > 0 {
		insert = insert[:len(insert)-1]
	}
	out := make([]byte, 0, len(w.body)+len(insert)+len(r.meta.id)+len(r.meta.model))
	return appendEdited(out, w.body, w.root, w.top, ops, insert), nil
}

// memberOp is what release does with the unknown member name in in,
// projected as a member part, under the verdicted answer a: keep it
// unchanged, replace its value, or remove it with its part.
func (r *Response) memberOp(a *answer, in, name string) memberOp {
	orig := r.ans.extra(in, name)
	if orig == nil { // removed at parse
		return memberOp{drop: true}
	}
	x := a.extra(in, name)
	switch {
	case x == nil:
		return memberOp{drop: true}
	case jsonvalue.Equal(x.value, orig.value):
		return memberOp{}
	}
	raw, _ := jsonvalue.Marshal(x.value) // CheckWriteBack checked it encodes
	return memberOp{val: raw}
}

// releaseChoice renders the choices array when the verdict or the closed
// world changes choices[0], or returns nil when it is released as it is.
// a is the verdicted answer, nil when the verdict is the projection.
func (r *Response) releaseChoice(t map[string]any, a *answer) ([]byte, error) {
	w := r.wire
	if a == nil && len(w.choiceDrop) == 0 && w.messageClean {
		return nil, nil
	}
	choice := rawjson.NewObjPatch(w.body, w.choice, w.choiceMembers)
	for i := range w.choiceDrop {
		choice.Drop(i)
	}
	answerChanged := a != nil && (!jsonvalue.Equal(t["content"], r.proj["content"]) || !jsonvalue.Equal(t["tool_calls"], r.proj["tool_calls"]))
	if answerChanged || !w.messageClean {
		msgAns := a
		if msgAns == nil {
			msgAns = &r.ans
		}
		calls := t["tool_calls"].([]any)
		msg, err := msgAns.appendMessage(nil, calls, r.origCalls(calls))
		if err != nil {
			return nil, err
		}
		choice.Set("message", msg)
	}
	if fr := t["finish_reason"].(string); fr != r.proj["finish_reason"] {
		raw, _ := jsonvalue.Marshal(fr) // a string from CheckWriteBack
		choice.Set("finish_reason", raw)
	}
	if a != nil {
		for i, m := range w.choiceMembers {
			if w.choiceDrop[i] || responseChoice.Has(m.Key) {
				continue
			}
			switch op := r.memberOp(a, inChoice, m.Key); {
			case op.drop:
				choice.Drop(i)
			case op.val != nil:
				choice.Set(m.Key, op.val)
			}
		}
	}
	if !choice.Changed() {
		return nil, nil
	}
	return append(append([]byte{'['}, choice.Render()...), ']'), nil
}
