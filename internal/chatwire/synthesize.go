package chatwire

import (
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// Synthesize builds a fresh SSE chunk sequence from a verdicted
// post_model_call target (GW-SSE-3: after a transform the released events
// are re-derived from the verdicted response, never mixed with upstream
// chunks). Every chunk carries the upstream id, model, created,
// system_fingerprint and service_tier. The sequence is:
//
//  1. a role chunk (with "content": "" when content is a string);
//  2. one content chunk (or refusal chunk) holding the whole text, when
//     it is not empty;
//  3. one tool_calls chunk carrying every call with its full arguments,
//     indexes 0..n-1, when there are calls;
//  4. a final chunk with the finish_reason and an empty delta;
//  5. the upstream usage object in a usage-only chunk, when includeUsage
//     and the upstream reported usage;
//  6. data: [DONE].
//
// Upstream logprobs and other per-chunk extras are not carried over. The
// target is checked with CheckWriteBack first.
func (s *Stream) Synthesize(target any, includeUsage bool) ([]byte, error) {
	r := s.resp
	if err := r.CheckWriteBack(target); err != nil {
		return nil, err
	}
	t := target.(map[string]any)
	head := s.chunkHead()
	out := make([]byte, 0, 512+len(s.raw)/4)

	textKey := "content"
	if r.fromRefusal {
		textKey = "refusal"
	}
	text, isText := t["content"].(string)
	role := []byte(`{"role":"assistant","content":null}`)
	if isText {
		role = []byte(`{"role":"assistant","` + textKey + `":""}`)
	}
	out = appendChunk(out, head, role, "")
	if isText && text != "" {
		delta, err := jsonvalue.Marshal(map[string]any{textKey: text})
		if err != nil {
			return nil, &WriteBackError{Field: "$target.content", Msg: "is not encodable JSON"}
		}
		out = appendChunk(out, head, delta, "")
	}

	if calls := t["tool_calls"].([]any); len(calls) > 0 {
		delta, err := r.callsDelta(calls)
		if err != nil {
			return nil, err
		}
		out = appendChunk(out, head, delta, "")
	}

	finish, _ := jsonvalue.Marshal(t["finish_reason"]) // a string: checked
	out = appendChunk(out, head, []byte(`{}`), string(finish))

	if includeUsage && r.usageRaw != nil {
		out = append(out, "data: "...)
		out = append(out, head...)
		out = append(out, `,"choices":[],"usage":`...)
		out = append(out, r.usageRaw...)
		out = append(out, "}\n\n"...)
	}
	return append(out, "data: [DONE]\n\n"...), nil
}

// chunkHead is the common opening of every synthesized chunk, up to (not
// including) the choices member.
func (s *Stream) chunkHead() []byte {
	m := s.meta
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
	if m.systemFingerprint != "" {
		b = append(b, `,"system_fingerprint":`...)
		b = appendString(b, m.systemFingerprint)
	}
	return b
}

// appendString appends s as a JSON string. The metadata strings came out
// of a JSON decode, so they are valid UTF-8 and cannot fail to encode.
func appendString(b []byte, s string) []byte {
	out, _ := jsonvalue.AppendCompact(b, s)
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

// callsDelta renders the delta carrying every verdicted call in full.
func (r *Response) callsDelta(calls []any) ([]byte, error) {
	b := []byte(`{"tool_calls":[`)
	origs := r.origCalls(calls)
	for i, e := range calls {
		c, orig := e.(map[string]any), origs[i]
		args, err := argumentsText(orig, c["args"].(map[string]any))
		if err != nil {
			return nil, &WriteBackError{Field: "$target.tool_calls[" + strconv.Itoa(i) + "].args", Msg: "is not encodable JSON"}
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"id":`...)
		b = appendString(b, orig.id)
		b = append(b, `,"type":"function","function":{"name":`...)
		if b, err = jsonvalue.AppendCompact(b, c["name"]); err != nil {
			return nil, &WriteBackError{Field: "$target.tool_calls[" + strconv.Itoa(i) + "].name", Msg: "is not encodable JSON"}
		}
		b = append(b, `,"arguments":`...)
		if b, err = jsonvalue.AppendCompact(b, args); err != nil {
			return nil, &WriteBackError{Field: "$target.tool_calls[" + strconv.Itoa(i) + "].args", Msg: "is not encodable JSON"}
		}
		b = append(b, "}}"...)
	}
	return append(b, "]}"...), nil
}
