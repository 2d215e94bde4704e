package chat

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// The response side. Every member of an upstream answer (a
// chat.completion body or a chat.completion.chunk) is exactly one of:
//
//   - projected: model output, in the post_model_call target, so policies
//     judge it and a transform rewrites it; unknown members are projected
//     as member parts (judge mode, the default);
//   - made by the gateway: the id is minted once per answer, model is the
//     request's model name, object a constant, created, counts and offsets
//     non-negative integers, service_tier one of OpenAI's documented values;
//     no upstream text crosses in them;
//   - removed before release (system_fingerprint, logprobs, obfuscation,
//     provider filter reports in usage, unknown members in strict mode), or
//     refused with 502 when it is an output channel the gateway cannot
//     mediate (legacy function_call, audio).
//
// The tables below are the single source of that classification; the
// parsers consult them and ResponseMembers/ChunkMembers publish them for
// the documentation, which a test checks against them.

// Member treatments, as documented.
const (
	TreatProjected = "projected"
	TreatMinted    = "minted"
	TreatModel     = "the request's model"
	TreatConstant  = "constant"
	TreatInteger   = "integer"
	TreatEnum      = "enumeration"
	TreatRemoved   = "removed"
	TreatRefused   = "refused"
	// TreatUnknown is the treatment of members the gateway does not know.
	TreatUnknown = "projected as a member part; removed in strict mode"
	// TreatUnknownCall is the treatment of a tool call's unknown members.
	TreatUnknownCall = "projected under the call's members; removed in strict mode"
)

// serviceTiers are the values of service_tier OpenAI documents; any other
// value is removed.
var serviceTiers = [...]string{"auto", "default", "flex", "scale", "priority"}

// isServiceTier reports whether s is one of serviceTiers.
func isServiceTier(s string) bool {
	for _, t := range serviceTiers {
		if s == t {
			return true
		}
	}
	return false
}

// checkMeta reports whether tok, the raw value of the top-level member
// key of a body or a chunk (one of object, created and service_tier), is
// released as the upstream sent it (see metaOK), and records it in m. It
// reads the token in place: only an escaped string is decoded.
func (m *chunkMeta) checkMeta(key string, tok []byte, object string) bool {
	kind, text := tok[0], ""
	switch kind {
	case '"':
		_, escaped, ok := rawjson.StrictString(tok, 0)
		if !ok { // what a decode refuses: invalid UTF-8, a lone surrogate
			return false
		}
		if escaped {
			text = string(rawjson.AppendUnescaped(nil, tok))
		} else {
			text = string(tok[1 : len(tok)-1])
		}
	case 'n':
	default: // a number; other tokens fail metaOK as one
		kind, text = '0', string(tok)
	}
	if !metaOK(key, kind, text, object) {
		return false
	}
	m.record(key, kind, text)
	return true
}

// metaOK is the one rule for the metadata the gateway releases: object
// the expected constant, created a non-negative integer token of at most
// 12 digits, service_tier one of serviceTiers or null. kind is '"' for a
// string (text its content), '0' for a number (text its token), 'n' for
// null.
func metaOK(key string, kind byte, text, object string) bool {
	switch key {
	case "object":
		return kind == '"' && text == object
	case "created":
		return kind == '0' && isUint(text) && len(text) <= 12
	case "service_tier":
		return kind == 'n' || kind == '"' && isServiceTier(text)
	}
	return false
}

// record keeps created and service_tier of a value metaOK accepted.
func (m *chunkMeta) record(key string, kind byte, text string) {
	switch {
	case kind == '0':
		m.created, _ = strconv.ParseInt(text, 10, 64)
	case kind == '"' && key == "service_tier":
		m.serviceTier = strings.Clone(text) // text may be the caller's scratch
	}
}

// metaKeys are the top-level metadata members of both body kinds; an
// assembler and the stream fast path index them in this order. id and
// model are replaced, system_fingerprint is removed; the others are
// checked.
var metaKeys = [...]string{"id", "object", "created", "model", "system_fingerprint", "service_tier"}

// topMeta is metaKeys as a member set.
var topMeta = rawjson.NewMemberSet(metaKeys[:]...)

// Provider filter reports: Azure OpenAI's verdicts on the prompt and the
// answer, never model text. They are removed in both modes (a member the
// gateway knows and does not release), so that they do not turn every
// Azure answer into member parts.
var (
	removedTop    = rawjson.NewMemberSet("prompt_filter_results")
	removedChoice = rawjson.NewMemberSet("content_filter_results", "content_filter_offsets")
)

// Usage: the counts the gateway keeps, as non-negative integer tokens. The
// usage object is re-rendered from these whenever it holds anything else.
var (
	usageCounts  = []string{"prompt_tokens", "completion_tokens", "total_tokens"}
	usageDetails = map[string][]string{
		"prompt_tokens_details":     {"cached_tokens", "audio_tokens"},
		"completion_tokens_details": {"reasoning_tokens", "audio_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens"},
	}
	usageKeys = rawjson.NewMemberSet(slices.Concat(usageCounts, []string{"prompt_tokens_details", "completion_tokens_details"},
		usageDetails["prompt_tokens_details"], usageDetails["completion_tokens_details"])...)
)

// usage is a checked usage object: the raw text when it held only known
// counts, else a rendering of the known counts.
type usage struct {
	raw   []byte
	clean bool
	proj  map[string]any // {prompt_tokens, completion_tokens} present as counts
}

// readUsage checks the usage object at s (null gives nil). The usage
// object is rendered anew only when it holds more than the known counts.
func readUsage(b []byte, s rawjson.Span) (*usage, error) {
	if s.IsNull(b) {
		return nil, nil
	}
	if s.Kind(b) != '{' {
		return nil, &wire.ResponseError{Field: "usage", Msg: "must be an object, got " + rawjson.KindName(b, s)}
	}
	ms, err := rawjson.ScanObjectInterned(b, s, responseKeys)
	if err != nil {
		return nil, &wire.ResponseError{Field: "usage", Msg: "has a duplicate member"}
	}
	u := &usage{clean: true}
	for _, m := range ms {
		raw := b[m.Val.Start:m.Val.End]
		switch {
		case containsString(usageCounts, m.Key) && isUint(string(raw)):
			if m.Key != "total_tokens" {
				if u.proj == nil {
					u.proj = make(map[string]any, 2)
				}
				u.proj[m.Key] = json.Number(raw) // a valid integer token: what a decode gives
			}
		case usageDetails[m.Key] != nil && m.Val.Kind(b) == '{':
			clean, err := usageDetailsClean(b, m.Val, usageDetails[m.Key])
			if err != nil {
				return nil, &wire.ResponseError{Field: "usage", Msg: "has a duplicate member"}
			}
			u.clean = u.clean && clean
		default:
			u.clean = false
		}
	}
	if u.clean {
		u.raw = b[s.Start:s.End]
		return u, nil
	}
	out := []byte{'{'}
	for _, m := range ms {
		raw := b[m.Val.Start:m.Val.End]
		switch {
		case containsString(usageCounts, m.Key) && isUint(string(raw)):
		case usageDetails[m.Key] != nil && m.Val.Kind(b) == '{':
			raw, _, _ = readUsageDetails(b, m.Val, usageDetails[m.Key])
		default:
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = appendKey(out, m.Key)
		out = append(out, raw...)
	}
	u.raw = append(out, '}')
	return u, nil
}

// usageDetailsClean reports whether the details object at s holds only
// known counts.
func usageDetailsClean(b []byte, s rawjson.Span, known []string) (bool, error) {
	ms, err := rawjson.ScanObjectInterned(b, s, responseKeys)
	if err != nil {
		return false, err
	}
	for _, m := range ms {
		if !containsString(known, m.Key) || !isUint(string(b[m.Val.Start:m.Val.End])) {
			return false, nil
		}
	}
	return true, nil
}

// readUsageDetails renders the known counts of the details object at s.
func readUsageDetails(b []byte, s rawjson.Span, known []string) ([]byte, bool, error) {
	ms, err := rawjson.ScanObjectInterned(b, s, responseKeys)
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
		out = appendKey(out, m.Key)
		out = append(out, raw...)
	}
	return append(out, '}'), clean, nil
}

// appendKey appends `"key":` for a known member name: plain ASCII that
// needs no escaping.
func appendKey(out []byte, key string) []byte {
	out = append(out, '"')
	out = append(out, key...)
	return append(out, '"', ':')
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
// array elements, * any member not listed at that level).
func ResponseMembers() []MemberDoc {
	return slices.Concat(topMetaDocs(), choiceDocs("message", []MemberDoc{{Name: "tool_calls[].index", Treatment: TreatRemoved}}), usageDocs())
}

// ChunkMembers lists how the gateway treats each member of a streamed
// chat.completion.chunk, like ResponseMembers.
func ChunkMembers() []MemberDoc {
	return slices.Concat(
		topMetaDocs(),
		[]MemberDoc{{Name: "obfuscation", Treatment: TreatRemoved}},
		choiceDocs("delta", []MemberDoc{{Name: "tool_calls[].index", Treatment: TreatInteger}}),
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
		{Name: "choices[].index", Treatment: TreatConstant},
		{Name: "choices[].finish_reason", Treatment: TreatProjected},
		{Name: "choices[].logprobs", Treatment: TreatRemoved},
		{Name: "choices[].content_filter_results", Treatment: TreatRemoved},
		{Name: "choices[].content_filter_offsets", Treatment: TreatRemoved},
		{Name: "choices[].*", Treatment: TreatUnknown},
		{Name: p + "role", Treatment: TreatConstant},
		{Name: p + "content", Treatment: TreatProjected},
		{Name: p + "refusal", Treatment: TreatProjected},
		{Name: p + wireReasoningContent, Treatment: TreatProjected},
		{Name: p + wireReasoning, Treatment: TreatProjected},
		{Name: p + wireReasoningDetails + "[].text", Treatment: TreatProjected},
		{Name: p + wireReasoningDetails + "[].summary", Treatment: TreatProjected},
		{Name: p + "annotations[].url_citation.url", Treatment: TreatProjected},
		{Name: p + "annotations[].url_citation.title", Treatment: TreatProjected},
		{Name: p + "annotations[].url_citation.start_index", Treatment: TreatInteger},
		{Name: p + "annotations[].url_citation.end_index", Treatment: TreatInteger},
	}
	for _, e := range extra {
		docs = append(docs, MemberDoc{Name: p + e.Name, Treatment: e.Treatment})
	}
	return append(docs,
		MemberDoc{Name: p + "tool_calls[].id", Treatment: TreatProjected},
		MemberDoc{Name: p + "tool_calls[].type", Treatment: TreatConstant},
		MemberDoc{Name: p + "tool_calls[].function.name", Treatment: TreatProjected},
		MemberDoc{Name: p + "tool_calls[].function.arguments", Treatment: TreatProjected},
		MemberDoc{Name: p + "tool_calls[].function.*", Treatment: TreatRemoved},
		MemberDoc{Name: p + "tool_calls[].*", Treatment: TreatUnknownCall},
		MemberDoc{Name: p + "function_call", Treatment: TreatRefused},
		MemberDoc{Name: p + "audio", Treatment: TreatRefused},
		MemberDoc{Name: p + "*", Treatment: TreatUnknown},
	)
}

func topMetaDocs() []MemberDoc {
	return []MemberDoc{
		{Name: "id", Treatment: TreatMinted}, {Name: "object", Treatment: TreatConstant}, {Name: "created", Treatment: TreatInteger},
		{Name: "model", Treatment: TreatModel}, {Name: "system_fingerprint", Treatment: TreatRemoved}, {Name: "service_tier", Treatment: TreatEnum},
		{Name: "prompt_filter_results", Treatment: TreatRemoved}, {Name: "*", Treatment: TreatUnknown},
	}
}

func usageDocs() []MemberDoc {
	docs := []MemberDoc{}
	for _, k := range usageCounts {
		docs = append(docs, MemberDoc{Name: "usage." + k, Treatment: TreatInteger})
	}
	for _, d := range []string{"prompt_tokens_details", "completion_tokens_details"} {
		for _, k := range usageDetails[d] {
			docs = append(docs, MemberDoc{Name: "usage." + d + "." + k, Treatment: TreatInteger})
		}
	}
	return append(docs, MemberDoc{Name: "usage.*", Treatment: TreatRemoved})
}

// fieldIndex formats "base[i]".
func fieldIndex(base string, i int) string { return base + "[" + strconv.Itoa(i) + "]" }
