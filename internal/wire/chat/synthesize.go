package chat

import (
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// Synthesize builds a fresh SSE chunk sequence from a verdicted
// post_model_call target (GW-SSE-3: after a transform the released events
// are re-derived from the verdicted response, never mixed with upstream
// chunks). Every chunk carries the gateway's head: the minted id, the
// request's model, the upstream's checked created and service_tier. The
// sequence is:
//
//  1. a role chunk ("content": "" when there is text, else null);
//  2. one chunk per reasoning channel, under the member it came from;
//  3. one content chunk holding the whole text, when it is not empty, and
//     one annotations chunk when the text carries url citations;
//  4. one refusal chunk, when there is a refusal;
//  5. one chunk per member part of the delta;
//  6. one tool_calls chunk carrying every call with its full arguments
//     and its members, indexes 0..n-1, when there are calls;
//  7. a final chunk with the finish_reason and an empty delta, carrying
//     the member parts of the choice and of the chunk;
//  8. the upstream usage (known counts only) in a usage-only chunk, when
//     includeUsage and the upstream reported usage;
//  9. data: [DONE].
//
// Upstream logprobs and other per-chunk extras are not carried over. The
// target is checked with CheckWriteBack first.
func (s *Stream) Synthesize(target any, includeUsage bool) ([]byte, error) {
	r := s.resp
	if err := r.CheckWriteBack(target); err != nil {
		return nil, err
	}
	t := target.(map[string]any)
	a, err := r.ans.withContent(t["content"])
	if err != nil {
		return nil, err
	}
	head := r.chunkHead()
	out := make([]byte, 0, 512+s.rawLen/4)

	role := `{"role":"assistant","content":null}`
	if a.text != nil {
		role = roleDelta
	}
	out = appendChunk(out, head, []byte(role), "")
	return r.appendAnswer(out, head, a, t, 0, includeUsage)
}

// roleDelta opens an answer that has text.
const roleDelta = `{"role":"assistant","content":""}`

// appendAnswer appends steps 2 to 9 of Synthesize for the verdicted answer
// a (target t) to out, leaving out the first skip bytes of the text,
// which the client already has.
func (r *Response) appendAnswer(out, head []byte, a *answer, t map[string]any, skip int, includeUsage bool) ([]byte, error) {
	for _, rt := range a.reasoning {
		out = appendChunk(out, head, reasoningDelta(rt), "")
	}
	if a.text != nil && len(*a.text) > skip {
		out = appendChunk(out, head, stringDelta("content", (*a.text)[skip:]), "")
	}
	if len(a.annotations) > 0 {
		out = appendChunk(out, head, append(appendAnnotations([]byte(`{"annotations":`), a.annotations), '}'), "")
	}
	if a.refusal != nil && *a.refusal != "" {
		out = appendChunk(out, head, stringDelta("refusal", *a.refusal), "")
	}
	for _, x := range a.extras {
		if x.in != inMessage {
			continue
		}
		delta, err := appendMembers([]byte{'{'}, []extraMember{x}, inMessage)
		if err != nil {
			return nil, err
		}
		delta[1] = ' ' // appendMembers starts each member with a comma
		out = appendChunk(out, head, append(delta, '}'), "")
	}
	if calls := t["tool_calls"].([]any); len(calls) > 0 {
		delta, err := appendCalls([]byte(`{"tool_calls":`), calls, r.origCalls(calls), true)
		if err != nil {
			return nil, err
		}
		out = appendChunk(out, head, append(delta, '}'), "")
	}

	finish, _ := jsonvalue.Marshal(t["finish_reason"]) // a string: checked
	choiceExtras, err := appendMembers(nil, a.extras, inChoice)
	if err != nil {
		return nil, err
	}
	chunkExtras, err := appendMembers(nil, a.extras, inCompletion)
	if err != nil {
		return nil, err
	}
	out = append(out, "data: "...)
	out = append(out, head...)
	out = append(out, chunkExtras...)
	out = append(out, `,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":`...)
	out = append(out, finish...)
	out = append(out, choiceExtras...)
	out = append(out, "}]}\n\n"...)

	if includeUsage && r.usage != nil {
		out = append(out, "data: "...)
		out = append(out, head...)
		out = append(out, `,"choices":[],"usage":`...)
		out = append(out, r.usage.raw...)
		out = append(out, "}\n\n"...)
	}
	return append(out, "data: [DONE]\n\n"...), nil
}

func stringDelta(key, text string) []byte {
	b := append([]byte{'{'}, `"`+key+`":`...)
	b = appendString(b, text)
	return append(b, '}')
}

// reasoningDelta renders one reasoning channel as a delta under the member
// it came from.
func reasoningDelta(rt reasoningText) []byte {
	if rt.member != wireReasoningDetails {
		return stringDelta(rt.member, rt.text)
	}
	b := []byte(`{"reasoning_details":[{"type":`)
	b = appendString(b, "reasoning."+rt.key)
	b = append(b, `,"index":0,`...)
	b = appendString(b, rt.key)
	b = append(b, ':')
	b = appendString(b, rt.text)
	return append(b, "}]}"...)
}

// chunkHead is the common opening of every synthesized chunk, up to (not
// including) the choices member.
func (r *Response) chunkHead() []byte { return r.meta.chunkHead() }

// chunkHead renders the chunk opening from metadata m.
func (m *chunkMeta) chunkHead() []byte {
	b := []byte(`{"id":`)
	b = appendString(b, m.id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, m.created, 10)
	b = append(b, `,"model":`...)
	b = appendString(b, m.model)
	if m.serviceTier != "" {
		b = append(b, `,"service_tier":`...)
		b = appendString(b, m.serviceTier)
	}
	return b
}

// appendString appends s as a JSON string. The strings come out of a JSON
// decode, so they are valid UTF-8 and cannot fail to encode.
func appendString(b []byte, s string) []byte {
	out, _ := jsonvalue.AppendString(b, s)
	return out
}

// appendChunk appends one "data:" event holding choice 0 with delta and
// the raw finish_reason token ("" for null).
func appendChunk(out, head, delta []byte, finish string) []byte {
	if finish == "" {
		finish = "null"
	}
	out = append(out, "data: "...)
	out = append(out, head...)
	out = append(out, `,"choices":[{"index":0,"delta":`...)
	out = append(out, delta...)
	out = append(out, `,"logprobs":null,"finish_reason":`...)
	out = append(out, finish...)
	return append(out, "}]}\n\n"...)
}
