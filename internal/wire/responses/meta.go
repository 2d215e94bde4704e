package responses

import (
	"encoding/json"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// An answer's members that are not model text are never released on
// their shape: each is minted by the gateway (ids, clocks), the request's
// own value (model, echoes), a constant of its documented enumeration, or
// removed. Unknown members are projected as member parts (see output.go).

// topTreat is what happens to one top-level answer member.
type topTreat int

const (
	topProjected  topTreat = iota // output, status, incomplete_details, error, usage: read by parseResponseAt
	topResponseID                 // minted, or sealed with server state
	topObject                     // the constant "response"
	topCreated                    // the gateway's clock when it accepted the request
	topCompleted                  // the gateway's clock when it read the answer
	topModel                      // the request's model
	topEnum                       // one of values
	topBool                       // true or false
	topNumber                     // the client's own value, else the documented default
	topEcho                       // equal to the client's own value
	topPrevious                   // previous_response_id: the client's own seal
	topRemoved                    // no client needs it
)

// responseMember is one known top-level answer member.
type responseMember struct {
	name   string
	treat  topTreat
	values []string // topEnum
	deflt  any      // topNumber: the documented default (nil: null)
	doc    string
}

const echoDoc = "released as the client's own value when equal to it, else removed"

// responseMemberTable is every top-level answer member the gateway knows.
var responseMemberTable = []*responseMember{
	{name: "output", doc: "projected: content and tool_calls (see Output items)"},
	{name: "status", doc: "projected: finish_reason; completed, or incomplete with a known reason (queued and in_progress for background requests); failed, cancelled and any other value are refused (502)"},
	{name: "incomplete_details", doc: "projected: finish_reason; {reason} with max_output_tokens or content_filter, else removed"},
	{name: "error", doc: "null; anything else is an upstream error (502)"},
	{name: "usage", doc: "usage {prompt_tokens: input_tokens, completion_tokens: output_tokens}; rendered from those counts: total_tokens their sum, input_tokens_details.cached_tokens and output_tokens_details.reasoning_tokens when at most input_tokens and output_tokens; anything else removed"},
	{name: "id", treat: topResponseID, doc: "minted (resp_ and 24 hex digits, one per answer); with allow_server_state, sealed (kind responses.response.id) so a later previous_response_id opens"},
	{name: "object", treat: topObject, doc: "the constant response, else removed"},
	{name: "created_at", treat: topCreated, doc: "minted: the gateway's clock when it accepted the request"},
	{name: "completed_at", treat: topCompleted, doc: "minted: the gateway's clock when it read the answer (null stays null)"},
	{name: "model", treat: topModel, doc: "the request's model"},
	{name: "service_tier", treat: topEnum, values: []string{"auto", "default", "flex", "scale", "priority"}, doc: "one of auto, default, flex, scale, priority, else removed"},
	{name: "prompt_cache_retention", treat: topEnum, values: []string{"in_memory", "in-memory", "24h"}, doc: "one of in_memory, in-memory, 24h, else removed"},
	{name: "truncation", treat: topEnum, values: []string{"auto", "disabled"}, doc: "one of auto, disabled, else removed"},
	{name: "store", treat: topBool, doc: "a boolean, else removed"},
	{name: "background", treat: topBool, doc: "a boolean, else removed"},
	{name: "parallel_tool_calls", treat: topBool, doc: "a boolean, else removed"},
	{name: "temperature", treat: topNumber, deflt: json.Number("1"), doc: "the client's own value, or 1 when it sent none; else removed"},
	{name: "top_p", treat: topNumber, deflt: json.Number("1"), doc: "the client's own value, or 1 when it sent none; else removed"},
	{name: "top_logprobs", treat: topNumber, deflt: json.Number("0"), doc: "the client's own value, or 0 when it sent none; else removed"},
	{name: "max_output_tokens", treat: topNumber, doc: "the client's own value, or null when it sent none; else removed"},
	{name: "max_tool_calls", treat: topNumber, doc: "the client's own value, or null when it sent none; else removed"},
	{name: "instructions", treat: topEcho, doc: echoDoc},
	{name: "tools", treat: topEcho, doc: echoDoc},
	{name: "metadata", treat: topEcho, doc: echoDoc},
	{name: "text", treat: topEcho, doc: echoDoc},
	{name: "reasoning", treat: topEcho, doc: echoDoc},
	{name: "tool_choice", treat: topEcho, doc: echoDoc},
	{name: "prompt", treat: topEcho, doc: echoDoc},
	{name: "conversation", treat: topEcho, doc: echoDoc},
	{name: "user", treat: topEcho, doc: echoDoc},
	{name: "safety_identifier", treat: topEcho, doc: echoDoc},
	{name: "prompt_cache_key", treat: topEcho, doc: echoDoc},
	{name: "previous_response_id", treat: topPrevious, doc: "the client's own value (its seal, when the upstream echoes the id the gateway opened), else removed"},
	{name: "billing", treat: topRemoved, doc: "removed (account information)"},
}

var (
	responseMemberByName = func() map[string]*responseMember {
		m := make(map[string]*responseMember, len(responseMemberTable))
		for _, rm := range responseMemberTable {
			m[rm.name] = rm
		}
		return m
	}()
	responseKnown = func() rawjson.MemberSet {
		names := make([]string, len(responseMemberTable))
		for i, rm := range responseMemberTable {
			names[i] = rm.name
		}
		return rawjson.NewMemberSet(names...)
	}()
)

// ResponseMembers documents every top-level answer member the gateway
// knows. Any other is projected as a member part (judged) unless
// StrictMembers, which removes it (allowed ones are still projected); an
// unknown member whose value is null is removed either way.
func ResponseMembers() []MemberDoc {
	out := make([]MemberDoc, len(responseMemberTable))
	for i, rm := range responseMemberTable {
		out[i] = MemberDoc{Name: rm.name, Treatment: rm.doc}
	}
	return out
}

// topRules apply the member table for one answer.
type topRules struct {
	req *Request
	ids *answerIDs
	now int64 // Unix seconds: completed_at
}

// value returns what a top-level member (not topProjected) is released as,
// and whether it is released at all. An error refuses the answer.
func (t topRules) value(m *responseMember, v any) (any, bool, error) {
	switch m.treat {
	case topResponseID:
		if !t.ids.sealResponse {
			return t.ids.response(""), true, nil
		}
		id, ok := v.(string)
		if !ok {
			return nil, false, respErr("id", "must be a string")
		}
		return t.ids.response(id), true, nil
	case topObject:
		return "response", v == "response", nil
	case topCreated:
		return json.Number(strconv.FormatInt(t.req.created, 10)), true, nil
	case topCompleted:
		if v == nil {
			return nil, true, nil
		}
		return json.Number(strconv.FormatInt(t.now, 10)), true, nil
	case topModel:
		return t.req.model, true, nil
	case topEnum:
		if v == nil {
			return nil, true, nil
		}
		for _, x := range m.values {
			if v == x {
				return x, true, nil
			}
		}
		return nil, false, nil
	case topBool:
		_, ok := v.(bool)
		return v, ok || v == nil, nil
	case topNumber:
		if own := t.req.echo(m.name); own != nil {
			return own, sameNumber(v, own), nil
		}
		if m.deflt == nil {
			return nil, v == nil, nil
		}
		return m.deflt, sameNumber(v, m.deflt), nil
	case topEcho:
		if v == nil {
			return nil, true, nil
		}
		own := t.req.echo(m.name)
		return own, jsonvalue.Equal(v, own), nil
	case topPrevious:
		own, _ := t.req.echo(m.name).(string)
		switch {
		case v == nil:
			return nil, true, nil
		case own != "" && (v == own || v == t.req.prevOrig):
			return own, true, nil
		}
	}
	return nil, false, nil
}

// sameNumber reports whether v is a number of the value of want.
func sameNumber(v, want any) bool {
	a, ok1 := v.(json.Number)
	b, ok2 := want.(json.Number)
	if !ok1 || !ok2 {
		return false
	}
	x, err1 := strconv.ParseFloat(string(a), 64)
	y, err2 := strconv.ParseFloat(string(b), 64)
	return err1 == nil && err2 == nil && x == y
}

// snapshot returns the members of a response snapshot (response.created)
// that the final object's rules release, as they release them: the
// incremental stream's head carries it before the final object is read.
// Projected and unknown members are left out (the synthesizer sets
// output, status, usage and incomplete_details).
func (t topRules) snapshot(resp map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range resp {
		m := responseMemberByName[k]
		if m == nil || m.treat == topProjected || m.treat == topCompleted {
			continue
		}
		if x, keep, err := t.value(m, v); err == nil && keep {
			out[k] = x
		}
	}
	return out
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

// isCount accepts a non-negative integer token of at most 20 digits.
func isCount(v any) bool {
	n, ok := v.(json.Number)
	return ok && isUint(string(n), 20)
}

func isUint(s string, maxLen int) bool {
	if s == "" || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// count returns a count's value, and whether v is one.
func count(v any) (uint64, bool) {
	if !isCount(v) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(v.(json.Number)), 10, 64)
	return n, err == nil
}

// enum is a closed set of string values.
type enum map[string]bool

// has reports whether v is one of the set's strings (any other JSON value,
// a container included, is not).
func (e enum) has(v any) bool {
	s, ok := v.(string)
	return ok && e[s]
}

// itemStatuses are the statuses of message, function_call and reasoning
// items.
var itemStatuses = enum{"in_progress": true, "completed": true, "incomplete": true}

// responseStatuses are the statuses of a response object.
var responseStatuses = enum{"queued": true, "in_progress": true, "completed": true, "incomplete": true, "failed": true, "cancelled": true}

// incompleteReasons are the reasons of incomplete_details.
var incompleteReasons = map[string]bool{"max_output_tokens": true, "content_filter": true}

// renderUsage renders usage from its counts: input_tokens and
// output_tokens as reported (the projection's prompt and completion
// tokens), total_tokens their sum, cached_tokens and reasoning_tokens when
// within them. Nothing else of u is released. It returns the rendering
// and the projected usage.
func renderUsage(u map[string]any) ([]byte, map[string]any) {
	in, hasIn := count(u["input_tokens"])
	out, hasOut := count(u["output_tokens"])
	proj := map[string]any{}
	b := make([]byte, 1, 160)
	b[0] = '{'
	sep := func() {
		if len(b) > 1 {
			b = append(b, ',')
		}
	}
	if hasIn {
		proj["prompt_tokens"] = u["input_tokens"]
		b = strconv.AppendUint(append(b, `"input_tokens":`...), in, 10)
	}
	if d, ok := u["input_tokens_details"].(map[string]any); ok && hasIn {
		sep()
		b = append(b, `"input_tokens_details":{`...)
		if c, ok := count(d["cached_tokens"]); ok && c <= in {
			b = strconv.AppendUint(append(b, `"cached_tokens":`...), c, 10)
		}
		b = append(b, '}')
	}
	if hasOut {
		sep()
		proj["completion_tokens"] = u["output_tokens"]
		b = strconv.AppendUint(append(b, `"output_tokens":`...), out, 10)
	}
	if d, ok := u["output_tokens_details"].(map[string]any); ok && hasOut {
		sep()
		b = append(b, `"output_tokens_details":{`...)
		if c, ok := count(d["reasoning_tokens"]); ok && c <= out {
			b = strconv.AppendUint(append(b, `"reasoning_tokens":`...), c, 10)
		}
		b = append(b, '}')
	}
	if hasIn && hasOut && in+out >= in {
		sep()
		b = strconv.AppendUint(append(b, `"total_tokens":`...), in+out, 10)
	}
	return append(b, '}'), proj
}

func respErr(field, msg string) error { return &wire.ResponseError{Field: field, Msg: msg} }
