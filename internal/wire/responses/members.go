package responses

import (
	"encoding/json"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// treatment is what the gateway does with one top-level request member.
type treatment int

const (
	treatParam         treatment = iota // projected into model.params, forwarded
	treatModel                          // model.id
	treatInput                          // the conversation (messages)
	treatInstructions                   // a leading system message
	treatTools                          // tools
	treatStream                         // transport: stream
	treatStreamOptions                  // transport: stream_options
	treatServerState                    // refused unless allow_server_state; then a param
)

// kind is a set of JSON types a member may have (null always means "not
// set" for the standard members).
type kind uint8

const (
	kString kind = 1 << iota
	kNumber
	kBool
	kObject
	kArray
)

// requestMember is one known top-level request member.
type requestMember struct {
	name  string
	treat treatment
	kinds kind
	// members, when set, closes an object value: its members must be
	// among these (case-fold collisions refused).
	members rawjson.MemberSet
	// strings requires every element of an array value to be a string.
	strings bool
	doc     string
}

// requestMembers is the closed world of top-level request members.
var requestMembers = []*requestMember{
	{name: "model", treat: treatModel, kinds: kString, doc: "projected: model.id"},
	{name: "input", treat: treatInput, kinds: kString | kArray, doc: "projected: messages (see Input items)"},
	{name: "instructions", treat: treatInstructions, kinds: kString, doc: "projected: a leading system message"},
	{name: "tools", treat: treatTools, kinds: kArray, doc: "projected: tools (see Tools)"},
	{name: "stream", treat: treatStream, kinds: kBool, doc: "transport"},
	{name: "stream_options", treat: treatStreamOptions, kinds: kObject, members: rawjson.NewMemberSet("include_obfuscation"), doc: "transport (include_obfuscation, a boolean: obfuscation members are removed from the answer); other members make it model.params"},
	{name: "tool_choice", kinds: kString | kObject, doc: "model.params"},
	{name: "parallel_tool_calls", kinds: kBool, doc: "model.params"},
	{name: "store", kinds: kBool, doc: "model.params"},
	{name: "reasoning", kinds: kObject, members: rawjson.NewMemberSet("effort", "summary", "generate_summary"), doc: "model.params"},
	{name: "include", kinds: kArray, strings: true, doc: "model.params"},
	{name: "prompt_cache_key", kinds: kString, doc: "model.params"},
	{name: "prompt_cache_retention", kinds: kString, doc: "model.params"},
	{name: "safety_identifier", kinds: kString, doc: "model.params"},
	{name: "user", kinds: kString, doc: "model.params"},
	{name: "metadata", kinds: kObject, doc: "model.params"},
	{name: "client_metadata", kinds: kObject, doc: "model.params"},
	{name: "max_output_tokens", kinds: kNumber, doc: "model.params"},
	{name: "max_tool_calls", kinds: kNumber, doc: "model.params"},
	{name: "temperature", kinds: kNumber, doc: "model.params"},
	{name: "top_p", kinds: kNumber, doc: "model.params"},
	{name: "top_logprobs", kinds: kNumber, doc: "model.params (logprobs are removed from the answer)"},
	{name: "text", kinds: kObject, members: rawjson.NewMemberSet("format", "verbosity"), doc: "model.params"},
	{name: "truncation", kinds: kString, doc: "model.params"},
	{name: "service_tier", kinds: kString, doc: "model.params"},
	{name: "previous_response_id", treat: treatServerState, kinds: kString, doc: "server state: refused unless allow_server_state; then it must be an id the gateway sealed (400 otherwise), forwarded opened, model.params"},
	{name: "conversation", treat: treatServerState, kinds: kString | kObject, doc: "server state: refused unless allow_server_state, then model.params"},
	{name: "prompt", treat: treatServerState, kinds: kObject, doc: "server state: refused unless allow_server_state, then model.params"},
	{name: "background", treat: treatServerState, kinds: kBool, doc: "server state when true: refused unless allow_server_state, then model.params"},
}

var (
	requestMemberByName = func() map[string]*requestMember {
		m := make(map[string]*requestMember, len(requestMembers))
		for _, rm := range requestMembers {
			m[rm.name] = rm
		}
		return m
	}()
	requestKnown = func() rawjson.MemberSet {
		names := make([]string, len(requestMembers))
		for i, rm := range requestMembers {
			names[i] = rm.name
		}
		return rawjson.NewMemberSet(names...)
	}()
)

// CheckAllowedRequestMember reports whether name may be listed in
// wire.responses.allow_request_members (see rawjson.MemberSet.CheckExtra).
func CheckAllowedRequestMember(name string) error {
	return requestKnown.CheckExtra(name, "request")
}

// MemberDoc documents one member, item type or event and its treatment.
type MemberDoc struct {
	Name      string
	Treatment string
}

// RequestMembers lists the known top-level request members.
func RequestMembers() []MemberDoc {
	out := make([]MemberDoc, len(requestMembers))
	for i, rm := range requestMembers {
		out[i] = MemberDoc{Name: rm.name, Treatment: rm.doc}
	}
	return out
}

// problem checks a decoded non-null value against the member's shape.
// An object the gateway closes (stream_options, reasoning, text) may hold
// members beyond the known ones unless strict: they are projected with the
// rest of the value.
func (rm *requestMember) problem(v any, strict bool) (sub, msg string) {
	var k kind
	switch x := v.(type) {
	case string:
		k = kString
	case json.Number:
		k = kNumber
	case bool:
		k = kBool
	case map[string]any:
		k = kObject
		if rm.members != nil {
			if known := rm.members.CollisionIn(x); known != "" {
				return "", collisionMessage(known)
			}
			if strict && rm.members.UnknownIn(x) {
				return "", "has a member the gateway does not know (it knows " + strings.Join(rm.members.SortedNames(), ", ") + "); a deployment can judge it with " + unknownMembersSwitch + ": judge"
			}
		}
	case []any:
		k = kArray
		if rm.strings {
			for _, e := range x {
				if _, ok := e.(string); !ok {
					return "", "must be an array of strings"
				}
			}
		}
	}
	if rm.kinds&k == 0 {
		return "", "has the wrong type: " + rawjson.TypeName(v)
	}
	return "", ""
}

func collisionMessage(known string) string {
	return "has a member whose name differs from " + known + " only in letter case"
}

// unknownMembersSwitch is the configuration key that chooses between
// judging and refusing unknown members.
const unknownMembersSwitch = "wire.responses.unknown_members"

// unknownMemberError refuses an unknown top-level member (strict mode).
func unknownMemberError(key string) *wire.RequestError {
	msg := "is not a member the gateway knows; a deployment can judge it with " + unknownMembersSwitch + ": judge, or allow it with wire.responses.allow_request_members"
	if f := safeField(key); f != "" {
		return &wire.RequestError{Field: f, Msg: msg}
	}
	return &wire.RequestError{Msg: "body has a member that " + msg[3:]}
}

// strictMemberError refuses an unknown member key of the object at field
// (strict mode), naming its path when the name is a plain identifier.
func strictMemberError(field, key string) *wire.RequestError {
	const tail = "; a deployment can judge it with " + unknownMembersSwitch + ": judge"
	if f := safeField(key); f != "" {
		return &wire.RequestError{Field: field + "." + f, Msg: "is not a member the gateway knows" + tail}
	}
	return &wire.RequestError{Field: field, Msg: "has a member the gateway does not know" + tail}
}

// safeField returns key when it is a short identifier, else "": arbitrary
// client-chosen text is never echoed in an error.
func safeField(key string) string {
	if key == "" || len(key) > 64 {
		return ""
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return ""
		}
	}
	return key
}
