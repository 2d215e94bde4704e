package chatwire

import (
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// CheckWriteBack reports whether a verdicted post_model_call target can be
// written onto the wire (GW-TX-2); the enforcement layer runs it inside the
// emission so a target that cannot be released becomes deny
// host_error:transform_invalid. The projection itself always passes.
//
// Rules: the target is an object with exactly content, tool_calls and
// finish_reason; content is a string, null or an array of part objects
// (string or null when it stands for a refusal or the response was
// streamed, as neither can carry parts); tool_calls is an array; a call
// that differs from its original has a string id naming a call of the
// upstream response, a non-empty string name and an object args; ids are
// unique; finish_reason is a string.
//
// Decision: calls may be dropped or reordered but not added. A call the
// model never made has no provenance, and a policy that wants to make the
// agent do something else can deny or rewrite an existing call.
func (r *Response) CheckWriteBack(target any) error {
	t, ok := target.(map[string]any)
	if !ok {
		return &WriteBackError{Field: "$target", Msg: "must be an object, got " + typeName(target)}
	}
	for k := range t {
		switch k {
		case "content", "tool_calls", "finish_reason":
		default:
			return &WriteBackError{Field: "$target", Msg: "has a member other than content, tool_calls and finish_reason"}
		}
	}
	for _, k := range []string{"content", "tool_calls", "finish_reason"} {
		if _, ok := t[k]; !ok {
			return &WriteBackError{Field: "$target." + k, Msg: "is required"}
		}
	}
	if err := checkEncodable(target); err != nil {
		return err
	}
	if c := t["content"]; !jsonvalue.Equal(c, r.proj["content"]) {
		if _, isList := c.([]any); isList && (r.fromRefusal || r.streamed) {
			return &WriteBackError{Field: "$target.content", Msg: "must be a string or null here: a refusal or a streamed message cannot carry content parts"}
		}
		if sub, msg := contentProblem(c, ""); msg != "" {
			return &WriteBackError{Field: "$target.content" + sub, Msg: msg}
		}
	}
	if _, ok := t["finish_reason"].(string); !ok {
		return &WriteBackError{Field: "$target.finish_reason", Msg: "must be a string, got " + typeName(t["finish_reason"])}
	}
	if tc := t["tool_calls"]; !jsonvalue.Equal(tc, r.proj["tool_calls"]) {
		return r.checkCalls(tc)
	}
	return nil
}

func (r *Response) checkCalls(tc any) error {
	list, ok := tc.([]any)
	if !ok {
		return &WriteBackError{Field: "$target.tool_calls", Msg: "must be an array, got " + typeName(tc)}
	}
	if !r.uniqueIDs() {
		return &WriteBackError{Field: "$target.tool_calls", Msg: "cannot be changed: the upstream call ids are not unique, so calls cannot be matched"}
	}
	seen := make(map[string]bool, len(list))
	for i, e := range list {
		field := "$target.tool_calls[" + strconv.Itoa(i) + "]"
		c, ok := e.(map[string]any)
		if !ok {
			return &WriteBackError{Field: field, Msg: "must be an object, got " + typeName(e)}
		}
		for k := range c {
			if k != "id" && k != "name" && k != "args" {
				return &WriteBackError{Field: field, Msg: "has a member other than id, name and args"}
			}
		}
		id, ok := c["id"].(string)
		if !ok {
			return &WriteBackError{Field: field + ".id", Msg: "must be a string, got " + typeName(c["id"])}
		}
		if seen[id] {
			return &WriteBackError{Field: field + ".id", Msg: "duplicates an earlier call's id"}
		}
		seen[id] = true
		orig := r.callByID(id)
		if orig == nil {
			return &WriteBackError{Field: field + ".id", Msg: "names no call of the upstream response: calls may be dropped, not added"}
		}
		if jsonvalue.Equal(c, orig.proj) {
			continue
		}
		if name, ok := c["name"].(string); !ok || name == "" {
			return &WriteBackError{Field: field + ".name", Msg: "must be a non-empty string"}
		}
		if _, ok := c["args"].(map[string]any); !ok {
			return &WriteBackError{Field: field + ".args", Msg: "must be an object, got " + typeName(c["args"])}
		}
	}
	return nil
}

func (r *Response) uniqueIDs() bool {
	seen := make(map[string]bool, len(r.calls))
	for _, c := range r.calls {
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
			out[i] = &r.calls[i]
		} else {
			out[i] = r.callByID(e.(map[string]any)["id"].(string))
		}
	}
	return out
}

func (r *Response) callByID(id string) *call {
	for i := range r.calls {
		if r.calls[i].id == id {
			return &r.calls[i]
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

// WriteBack returns the JSON body for the client. A target equal to the
// projection returns the original body slice unchanged. Otherwise only
// what changed is rewritten: choices[0].message.content (or refusal, when
// the projection showed the refusal), tool_calls matched by id (an
// unchanged call keeps its raw object bytes; a changed one gets a new name
// and arguments; dropped calls are removed, and the tool_calls member with
// them when none remain), and choices[0].finish_reason. Every other byte
// (ids, usage, system_fingerprint, logprobs, unknown members) is kept.
//
// WriteBack runs CheckWriteBack first. It is not available on a streamed
// response; use Stream.Synthesize.
func (r *Response) WriteBack(target any) ([]byte, error) {
	if r.wire == nil {
		return nil, &WriteBackError{Msg: "a streamed response is written back with Stream.Synthesize"}
	}
	if err := r.CheckWriteBack(target); err != nil {
		return nil, err
	}
	t := target.(map[string]any)
	w := r.wire
	if jsonvalue.Equal(t, r.proj) {
		return w.body, nil
	}
	msg := newObjPatch(w.body, w.message, w.messageMembers)
	if c := t["content"]; !jsonvalue.Equal(c, r.proj["content"]) {
		raw, err := jsonvalue.Marshal(c)
		if err != nil {
			return nil, &WriteBackError{Field: "$target.content", Msg: "is not encodable JSON"}
		}
		key := "content"
		if r.fromRefusal {
			key = "refusal"
		}
		msg.set(key, raw)
	}
	if tc := t["tool_calls"].([]any); !jsonvalue.Equal(tc, r.proj["tool_calls"]) {
		if len(tc) == 0 {
			msg.del("tool_calls")
		} else {
			raw, err := r.renderCalls(tc)
			if err != nil {
				return nil, err
			}
			msg.set("tool_calls", raw)
		}
	}
	choice := newObjPatch(w.body, w.choice, w.choiceMembers)
	if msg.changed() {
		choice.set("message", msg.render())
	}
	if fr := t["finish_reason"].(string); fr != r.proj["finish_reason"] {
		raw, _ := jsonvalue.Marshal(fr) // a string from CheckWriteBack
		choice.set("finish_reason", raw)
	}
	if !choice.changed() {
		return w.body, nil
	}
	return splice(w.body, w.choice, choice.render()), nil
}

// renderCalls builds the tool_calls array for the verdicted calls, which
// CheckWriteBack has validated.
func (r *Response) renderCalls(list []any) ([]byte, error) {
	body := r.wire.body
	elems := make([][]byte, len(list))
	origs := r.origCalls(list)
	for i, e := range list {
		c, orig := e.(map[string]any), origs[i]
		wc := orig.wire
		if jsonvalue.Equal(c, orig.proj) {
			elems[i] = body[wc.obj.start:wc.obj.end]
			continue
		}
		fn := newObjPatch(body, wc.fn, wc.fnMembers)
		if name := c["name"].(string); name != orig.name {
			raw, err := jsonvalue.Marshal(name)
			if err != nil {
				return nil, &WriteBackError{Field: "$target.tool_calls[" + strconv.Itoa(i) + "].name", Msg: "is not encodable JSON"}
			}
			fn.set("name", raw)
		}
		args := c["args"].(map[string]any)
		if !jsonvalue.Equal(args, orig.proj["args"]) {
			text, err := argumentsText(orig, args)
			var raw []byte
			if err == nil {
				raw, err = jsonvalue.Marshal(text)
			}
			if err != nil {
				return nil, &WriteBackError{Field: "$target.tool_calls[" + strconv.Itoa(i) + "].args", Msg: "is not encodable JSON"}
			}
			fn.set("arguments", raw)
		}
		callPatch := newObjPatch(body, wc.obj, wc.members)
		callPatch.set("function", fn.render())
		elems[i] = callPatch.render()
	}
	orig := make([]span, len(r.calls))
	for i := range r.calls {
		orig[i] = r.calls[i].wire.obj
	}
	return renderArray(body, r.wire.calls, orig, elems), nil
}
