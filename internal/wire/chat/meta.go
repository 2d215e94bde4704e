package chat

import (
	"encoding/json"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
	"regexp"
	"slices"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// The closed world of the response side. Every member of an upstream
// answer (a chat.completion body or a chat.completion.chunk) is exactly
// one of:
//
//   - projected: model output, in the post_model_call target, so policies
//     judge it and a transform rewrites it;
//   - metadata: a known member whose value is type- and shape-checked and
//     is never model text (ids, object, created, model, fingerprints,
//     usage counts); a value that fails its check is removed;
//   - removed before release (unknown members, logprobs, provider filter
//     reports), or refused with 502 when it is an output channel the
//     gateway cannot mediate (legacy function_call, audio).
//
// The tables below are the single source of that classification; the
// parsers consult them and ResponseMembers/ChunkMembers publish them for
// the documentation, which a test checks against them.

// Member treatments, as documented.
const (
	TreatProjected = "projected"
	TreatMetadata  = "metadata"
	TreatRemoved   = "removed"
	TreatRefused   = "refused"
)

// metaPatterns bound the metadata strings: token-shaped, short, so they
// cannot carry model text. A value outside its shape is removed.
var metaPatterns = map[string]func(string) bool{
	"id":                 wire.IsID,
	"model":              wire.IsModelName,
	"system_fingerprint": regexp.MustCompile(`^[A-Za-z0-9._:-]{0,64}$`).MatchString,
	"service_tier":       regexp.MustCompile(`^[a-z0-9_-]{1,32}$`).MatchString,
}

// metaOK reports whether the raw value of a top-level metadata member is
// well shaped (see metaValueOK).
func metaOK(b []byte, m rawjson.Member, object string) bool {
	v, err := jsonvalue.Decode(b[m.Val.Start:m.Val.End])
	return err == nil && metaValueOK(m.Key, v, object)
}

// metaValueOK reports whether a decoded metadata value is well shaped:
// object must be the expected constant; created a non-negative integer
// token; the strings match metaPatterns; fingerprint and tier may also be
// null.
func metaValueOK(key string, v any, object string) bool {
	switch key {
	case "object":
		return v == object
	case "created":
		n, ok := v.(json.Number)
		return ok && isUint(string(n)) && len(n) <= 12
	case "system_fingerprint", "service_tier":
		if v == nil {
			return true
		}
	}
	s, ok := v.(string)
	return ok && metaPatterns[key](s)
}

// topMeta lists the top-level metadata members of both body kinds.
var topMeta = rawjson.NewMemberSet("id", "object", "created", "model", "system_fingerprint", "service_tier")

// Usage: the counts the gateway keeps, as non-negative integer tokens. The
// usage object is re-rendered from these whenever it holds anything else.
var (
	usageCounts  = []string{"prompt_tokens", "completion_tokens", "total_tokens"}
	usageDetails = map[string][]string{
		"prompt_tokens_details":     {"cached_tokens", "audio_tokens"},
		"completion_tokens_details": {"reasoning_tokens", "audio_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens"},
	}
)

// usage is a checked usage object: the raw text when it held only known
// counts, else a rendering of the known counts.
type usage struct {
	raw   []byte
	clean bool
	proj  map[string]any // {prompt_tokens, completion_tokens} present as counts
}

// readUsage checks the usage object at s (null gives nil).
func readUsage(b []byte, s rawjson.Span) (*usage, error) {
	if s.IsNull(b) {
		return nil, nil
	}
	if s.Kind(b) != '{' {
		return nil, &wire.ResponseError{Field: "usage", Msg: "must be an object, got " + rawjson.KindName(b, s)}
	}
	ms, err := rawjson.ScanObject(b, s)
	if err != nil {
		return nil, &wire.ResponseError{Field: "usage", Msg: "has a duplicate member"}
	}
	u := &usage{clean: true}
	out := []byte{'{'}
	add := func(key string, raw []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = appendString(out, key)
		out = append(out, ':')
		out = append(out, raw...)
	}
	for _, m := range ms {
		raw := b[m.Val.Start:m.Val.End]
		switch {
		case containsString(usageCounts, m.Key) && isUint(string(raw)):
			add(m.Key, raw)
			if m.Key != "total_tokens" {
				if u.proj == nil {
					u.proj = map[string]any{}
				}
				u.proj[m.Key] = jsonNumber(raw)
			}
		case usageDetails[m.Key] != nil && m.Val.Kind(b) == '{':
			d, clean, err := readUsageDetails(b, m.Val, usageDetails[m.Key])
			if err != nil {
				return nil, &wire.ResponseError{Field: "usage", Msg: "has a duplicate member"}
			}
			u.clean = u.clean && clean
			add(m.Key, d)
		default:
			u.clean = false
		}
	}
	u.raw = append(out, '}')
	if u.clean {
		u.raw = b[s.Start:s.End]
	}
	return u, nil
}

func readUsageDetails(b []byte, s rawjson.Span, known []string) ([]byte, bool, error) {
	ms, err := rawjson.ScanObject(b, s)
	if err != nil {
		return nil, false, err
	}
	clean := true
	out := []byte{'{'}
	for _, m := range ms {
		raw := b[m.Val.Start:m.Val.End]
		if !containsString(known, m.Key) || !isUint(string(raw)) {
			clean = false
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = appendString(out, m.Key)
		out = append(out, ':')
		out = append(out, raw...)
	}
	return append(out, '}'), clean, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isUint(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ResponseMembers lists how the gateway treats each member of a
// non-streaming chat.completion (paths relative to the body; [] marks
// array elements). Members not listed are removed, unless an operator
// allows them at the message level (wire.chat.allow_response_members),
// where they are projected.
func ResponseMembers() []MemberDoc {
	return slices.Concat(topMetaDocs(), choiceDocs("message", nil), usageDocs())
}

// ChunkMembers lists how the gateway treats each member of a streamed
// chat.completion.chunk, like ResponseMembers.
func ChunkMembers() []MemberDoc {
	return slices.Concat(
		topMetaDocs(),
		[]MemberDoc{{Name: "obfuscation", Treatment: TreatRemoved}},
		choiceDocs("delta", []MemberDoc{{Name: "tool_calls[].index", Treatment: TreatMetadata}}),
		[]MemberDoc{{Name: "error", Treatment: TreatRefused}},
		usageDocs(),
	)
}

// choiceDocs lists the members of choices[] whose answer object is named
// msg (message in a body, delta in a chunk); extra rows about that object
// follow its annotations.
func choiceDocs(msg string, extra []MemberDoc) []MemberDoc {
	p := "choices[]." + msg + "."
	docs := []MemberDoc{
		{Name: "choices", Treatment: TreatProjected},
		{Name: "choices[].index", Treatment: TreatMetadata},
		{Name: "choices[].finish_reason", Treatment: TreatProjected},
		{Name: "choices[].logprobs", Treatment: TreatRemoved},
		{Name: p + "role", Treatment: TreatMetadata},
		{Name: p + "content", Treatment: TreatProjected},
		{Name: p + "refusal", Treatment: TreatProjected},
		{Name: p + wireReasoningContent, Treatment: TreatProjected},
		{Name: p + wireReasoning, Treatment: TreatProjected},
		{Name: p + wireReasoningDetails + "[].text", Treatment: TreatProjected},
		{Name: p + wireReasoningDetails + "[].summary", Treatment: TreatProjected},
		{Name: p + "annotations[].url_citation.url", Treatment: TreatProjected},
		{Name: p + "annotations[].url_citation.title", Treatment: TreatProjected},
		{Name: p + "annotations[].url_citation.start_index", Treatment: TreatMetadata},
		{Name: p + "annotations[].url_citation.end_index", Treatment: TreatMetadata},
	}
	for _, e := range extra {
		docs = append(docs, MemberDoc{Name: p + e.Name, Treatment: e.Treatment})
	}
	return append(docs,
		MemberDoc{Name: p + "tool_calls[].id", Treatment: TreatProjected},
		MemberDoc{Name: p + "tool_calls[].type", Treatment: TreatMetadata},
		MemberDoc{Name: p + "tool_calls[].function.name", Treatment: TreatProjected},
		MemberDoc{Name: p + "tool_calls[].function.arguments", Treatment: TreatProjected},
		MemberDoc{Name: p + "function_call", Treatment: TreatRefused},
		MemberDoc{Name: p + "audio", Treatment: TreatRefused},
	)
}

func topMetaDocs() []MemberDoc {
	return []MemberDoc{
		{Name: "id", Treatment: TreatMetadata}, {Name: "object", Treatment: TreatMetadata}, {Name: "created", Treatment: TreatMetadata},
		{Name: "model", Treatment: TreatMetadata}, {Name: "system_fingerprint", Treatment: TreatMetadata}, {Name: "service_tier", Treatment: TreatMetadata},
	}
}

func usageDocs() []MemberDoc {
	docs := []MemberDoc{}
	for _, k := range usageCounts {
		docs = append(docs, MemberDoc{Name: "usage." + k, Treatment: TreatMetadata})
	}
	for _, d := range []string{"prompt_tokens_details", "completion_tokens_details"} {
		for _, k := range usageDetails[d] {
			docs = append(docs, MemberDoc{Name: "usage." + d + "." + k, Treatment: TreatMetadata})
		}
	}
	return docs
}

// jsonNumber returns a validated integer token as a projection number.
func jsonNumber(raw []byte) any {
	v, _ := jsonvalue.Decode(raw)
	return v
}

// fieldIndex formats "base[i]".
func fieldIndex(base string, i int) string { return base + "[" + strconv.Itoa(i) + "]" }
