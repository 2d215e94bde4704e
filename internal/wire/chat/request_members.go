package chat

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// This file lists what the gateway knows of the chat-completions request:
// every top-level member, what it does with each, the shape it checks, and
// the members it knows inside the objects it interprets. A member that is
// not listed here is judged (projected where policies read it, then
// forwarded), or refused in strict mode; never passed blind.

// treatment is what the gateway does with one known top-level member.
type treatment int

const (
	// projectParam: verbatim into model.params once its shape is checked.
	projectParam treatment = iota
	// projectModel: routes the request; model.id.
	projectModel
	// projectTarget: the pre_model_call target.
	projectTarget
	// projectTools: the context's tools.
	projectTools
	// transportStream and transportStreamOptions: the gateway's own
	// transport, not projected (the stream is buffered and assembled).
	transportStream
	transportStreamOptions
	// refuseN: refused unless 1, since one post_model_call pairs with one
	// pre_model_call.
	refuseN
	// refuseLegacy: legacy function calling; its answers carry
	// message.function_call, which has no place in the post_model_call
	// target.
	refuseLegacy
	// refuseAudio: audio output; its transcript would bypass policy.
	refuseAudio
)

// shape is the JSON type a projected parameter must have. Only types are
// checked: ranges and enum values are the upstream's to judge.
type shape int

const (
	shapeNumber shape = iota
	shapeBoolean
	shapeString
	shapeObject
	shapeStringList
	shapeStringOrList
	shapeNumberMap
	shapeStringMap
	shapeStringOrObject
)

// Where a member is defined: the OpenAI API, or the compatible servers
// whose clients send it.
const (
	originOpenAI     = "OpenAI"
	originVLLMRouter = "vLLM, OpenRouter"
)

// requestMember is one known top-level request member.
type requestMember struct {
	name   string
	origin string
	treat  treatment
	shape  shape  // projectParam only
	note   string // projectParam only: what is refused beyond the shape
}

// requestMemberTable lists the known top-level members: the fields of
// openai-go's ChatCompletionNewParams (v3.98.0) plus stream, then the
// compatible-server extensions that widely used clients send.
var requestMemberTable = []requestMember{
	{name: "model", origin: originOpenAI, treat: projectModel},
	{name: "messages", origin: originOpenAI, treat: projectTarget},
	{name: "tools", origin: originOpenAI, treat: projectTools},
	{name: "stream", origin: originOpenAI, treat: transportStream},
	{name: "stream_options", origin: originOpenAI, treat: transportStreamOptions},
	{name: "n", origin: originOpenAI, treat: refuseN},
	{name: "functions", origin: originOpenAI, treat: refuseLegacy},
	{name: "function_call", origin: originOpenAI, treat: refuseLegacy},
	{name: "audio", origin: originOpenAI, treat: refuseAudio},
	{name: "modalities", origin: originOpenAI, shape: shapeStringList, note: `refused when it lists "audio"`},
	{name: "frequency_penalty", origin: originOpenAI, shape: shapeNumber},
	{name: "logit_bias", origin: originOpenAI, shape: shapeNumberMap},
	{name: "logprobs", origin: originOpenAI, shape: shapeBoolean},
	{name: "max_completion_tokens", origin: originOpenAI, shape: shapeNumber},
	{name: "max_tokens", origin: originOpenAI, shape: shapeNumber},
	{name: "metadata", origin: originOpenAI, shape: shapeStringMap},
	{name: "moderation", origin: originOpenAI, shape: shapeObject},
	{name: "parallel_tool_calls", origin: originOpenAI, shape: shapeBoolean},
	{name: "prediction", origin: originOpenAI, shape: shapeObject},
	{name: "presence_penalty", origin: originOpenAI, shape: shapeNumber},
	{name: "prompt_cache_key", origin: originOpenAI, shape: shapeString},
	{name: "prompt_cache_options", origin: originOpenAI, shape: shapeObject},
	{name: "prompt_cache_retention", origin: originOpenAI, shape: shapeString},
	{name: "reasoning_effort", origin: originOpenAI, shape: shapeString},
	{name: "response_format", origin: originOpenAI, shape: shapeObject, note: "a member differing from a known one only in letter case is refused, here and in json_schema"},
	{name: "safety_identifier", origin: originOpenAI, shape: shapeString},
	{name: "seed", origin: originOpenAI, shape: shapeNumber},
	{name: "service_tier", origin: originOpenAI, shape: shapeString},
	{name: "stop", origin: originOpenAI, shape: shapeStringOrList},
	{name: "store", origin: originOpenAI, shape: shapeBoolean},
	{name: "temperature", origin: originOpenAI, shape: shapeNumber},
	{name: "tool_choice", origin: originOpenAI, shape: shapeStringOrObject, note: "a member differing from a known one only in letter case is refused, here and in its function, custom and allowed_tools"},
	{name: "top_logprobs", origin: originOpenAI, shape: shapeNumber},
	{name: "top_p", origin: originOpenAI, shape: shapeNumber},
	{name: "user", origin: originOpenAI, shape: shapeString},
	{name: "verbosity", origin: originOpenAI, shape: shapeString},
	{name: "web_search_options", origin: originOpenAI, shape: shapeObject},
	// Sampling parameters of open-model servers.
	{name: "top_k", origin: originVLLMRouter, shape: shapeNumber},
	{name: "min_p", origin: originVLLMRouter, shape: shapeNumber},
	{name: "repetition_penalty", origin: originVLLMRouter, shape: shapeNumber},
	// Variables of the server's chat template (enable_thinking, ...).
	{name: "chat_template_kwargs", origin: "vLLM", shape: shapeObject},
	// Reasoning switches, which decide whether the answer carries
	// reasoning text.
	{name: "reasoning", origin: "OpenRouter", shape: shapeObject},
	{name: "include_reasoning", origin: "OpenRouter", shape: shapeBoolean},
	{name: "thinking", origin: "DeepSeek", shape: shapeObject},
}

// requestMembersByName indexes requestMemberTable; requestKnown is the
// same names as a memberSet, for case-collision checks.
var (
	requestMembersByName = func() map[string]*requestMember {
		m := make(map[string]*requestMember, len(requestMemberTable))
		for i := range requestMemberTable {
			m[requestMemberTable[i].name] = &requestMemberTable[i]
		}
		return m
	}()
	requestKnown = func() rawjson.MemberSet {
		s := make(rawjson.MemberSet, len(requestMemberTable))
		for _, m := range requestMemberTable {
			s[m.name] = struct{}{}
		}
		return s
	}()
)

// Members the gateway knows inside the objects it interprets. A member
// whose name equals one of them only under case folding is refused there.
var (
	messageMembers        = rawjson.NewMemberSet("role", "content", "name", "tool_calls", "tool_call_id", "refusal", "audio", "function_call")
	partMembers           = rawjson.NewMemberSet("type", "text", "image_url", "input_audio", "file", "refusal", "prompt_cache_breakpoint")
	toolCallMembers       = rawjson.NewMemberSet("id", "type", "function", "custom")
	callFunctionMembers   = rawjson.NewMemberSet("name", "arguments")
	toolMembers           = rawjson.NewMemberSet("type", "function")
	toolFunctionMembers   = rawjson.NewMemberSet("name", "description", "parameters", "strict")
	streamOptionsMembers  = rawjson.NewMemberSet("include_usage", "include_obfuscation", "continuous_usage_stats")
	responseFormatMembers = rawjson.NewMemberSet("type", "json_schema")
	jsonSchemaMembers     = rawjson.NewMemberSet("name", "description", "schema", "strict")
	toolChoiceMembers     = rawjson.NewMemberSet("type", "function", "custom", "allowed_tools")
	namedToolMembers      = rawjson.NewMemberSet("name")
	allowedToolsMembers   = rawjson.NewMemberSet("mode", "tools")
)

// AllowRequestMembersKey is the configuration key that lets extra
// top-level request members through in strict mode; refusals of unknown
// top-level members name it.
const AllowRequestMembersKey = "wire.chat.allow_request_members"

// UnknownMembersKey is the configuration key that chooses between judging
// unknown members (judge, the default) and refusing them (refuse);
// refusals of unknown members name it.
const UnknownMembersKey = "wire.chat.unknown_members"

// MemberDoc documents one known member: its name, who defines it, and
// what the gateway does with it.
type MemberDoc struct {
	Name      string
	Origin    string
	Treatment string
}

// RequestMembers lists every top-level chat-completions request member the
// gateway knows, in a stable order, with what it does with each. Members
// not listed are projected into model.params and forwarded; in strict
// mode they are refused unless the deployment allows them
// (wire.chat.allow_request_members).
func RequestMembers() []MemberDoc {
	out := make([]MemberDoc, len(requestMemberTable))
	for i, m := range requestMemberTable {
		out[i] = MemberDoc{Name: m.name, Origin: m.origin, Treatment: m.treatment()}
	}
	return out
}

// treatment describes what the gateway does with the member, as the
// documentation's table states it.
func (m *requestMember) treatment() string {
	switch m.treat {
	case projectModel:
		return "routes the request; projected as `model.id`; must be a non-empty string"
	case projectTarget:
		return "projected as the pre_model_call target; a transform is written back"
	case projectTools:
		return "projected as `tools` (`{name, description?, schema?, members?, function_members?}`); function tools only; the known members are type and function, and function's name, description, parameters and strict (a boolean); others are projected under members and function_members"
	case transportStream:
		return "transport, not projected; must be a boolean; the stream is buffered and assembled before release"
	case transportStreamOptions:
		return "transport; known members include_usage, include_obfuscation, continuous_usage_stats, each a boolean, not projected; include_usage is forced on upstream; others are projected into `model.params.stream_options`"
	case refuseN:
		return "not projected; refused unless 1 (absent or null): one post_model_call pairs with each pre_model_call"
	case refuseLegacy:
		return "refused: legacy function calling (use tools)"
	case refuseAudio:
		return "refused unless null: audio output cannot be mediated"
	}
	s := "projected into `model.params`; must be " + m.shape.describe()
	if m.note != "" {
		s += "; " + m.note
	}
	if strictSets[m.name] != nil {
		s += "; strict mode refuses members it does not know"
	}
	return s
}

// describe names the shape with its article, for messages and docs.
func (s shape) describe() string {
	switch s {
	case shapeNumber:
		return "a number"
	case shapeBoolean:
		return "a boolean"
	case shapeString:
		return "a string"
	case shapeObject:
		return "an object"
	case shapeStringList:
		return "an array of strings"
	case shapeStringOrList:
		return "a string or an array of strings"
	case shapeNumberMap:
		return "an object of numbers"
	case shapeStringMap:
		return "an object of strings"
	default:
		return "a string or an object"
	}
}

// problem checks a non-null value against the shape. It returns a sub-path
// ("[2]") and a message, or "" when the value fits. Object keys are never
// named: they are the client's.
func (s shape) problem(v any) (sub, msg string) {
	fits := false
	switch s {
	case shapeNumber:
		_, fits = v.(json.Number)
	case shapeBoolean:
		_, fits = v.(bool)
	case shapeString:
		_, fits = v.(string)
	case shapeObject:
		_, fits = v.(map[string]any)
	case shapeStringList:
		return stringListProblem(v, s)
	case shapeStringOrList:
		if _, ok := v.(string); ok {
			return "", ""
		}
		return stringListProblem(v, s)
	case shapeNumberMap:
		return mapValuesProblem(v, s, "number")
	case shapeStringMap:
		return mapValuesProblem(v, s, "string")
	case shapeStringOrObject:
		switch v.(type) {
		case string, map[string]any:
			fits = true
		}
	}
	if fits {
		return "", ""
	}
	return "", "must be " + s.describe() + ", got " + rawjson.TypeName(v)
}

func stringListProblem(v any, s shape) (sub, msg string) {
	list, ok := v.([]any)
	if !ok {
		return "", "must be " + s.describe() + ", got " + rawjson.TypeName(v)
	}
	for i, e := range list {
		if _, ok := e.(string); !ok {
			return "[" + strconv.Itoa(i) + "]", "must be a string, got " + rawjson.TypeName(e)
		}
	}
	return "", ""
}

func mapValuesProblem(v any, s shape, want string) (sub, msg string) {
	obj, ok := v.(map[string]any)
	if !ok {
		return "", "must be " + s.describe() + ", got " + rawjson.TypeName(v)
	}
	for _, e := range obj {
		if got := rawjson.TypeName(e); got != want {
			return "", "must be " + s.describe() + ", got a value of type " + got
		}
	}
	return "", ""
}

// collisionMessage is the refusal of an object holding a member that
// differs from the known member named known only in letter case: Go's
// encoding/json (and receivers built on it) would read it as that member.
func collisionMessage(known string) string {
	return "has a member whose name differs from " + strconv.Quote(known) + " only in letter case"
}

// unknownMemberError refuses, in strict mode, a top-level member that is
// neither known nor allowed, naming it only when it is a plain
// identifier.
func unknownMemberError(key string) *wire.RequestError {
	if !rawjson.PlainName(key) {
		return &wire.RequestError{Msg: "body has a member whose name is not a plain identifier; unknown members are refused (" +
			UnknownMembersKey + ": refuse), and " + AllowRequestMembersKey + " allows plain identifiers only"}
	}
	return &wire.RequestError{Field: key, Msg: "is not a request member the gateway knows, and unknown members are refused (" + UnknownMembersKey +
		": refuse); allow it with " + AllowRequestMembersKey + ", or set " + UnknownMembersKey + ": judge, to have it projected into model.params and forwarded"}
}

// strictMemberError refuses, in strict mode, the member key of the object
// at path, naming the member's path when its name is a plain identifier.
func strictMemberError(path, key string) *wire.RequestError {
	const why = "unknown members are refused (" + UnknownMembersKey + ": refuse); set " + UnknownMembersKey +
		": judge to have them projected where policies read them and forwarded"
	if !rawjson.PlainName(key) {
		return &wire.RequestError{Field: path, Msg: "has a member whose name is not a plain identifier and the gateway does not know it; " + why}
	}
	return &wire.RequestError{Field: memberPath(path, key), Msg: "is not a member the gateway knows; " + why}
}

// memberPath is path.key, or key at the top level; key is named only when
// it is a plain identifier.
func memberPath(path, key string) string {
	switch {
	case !rawjson.PlainName(key):
		return path
	case path == "":
		return key
	}
	return path + "." + key
}

// strictSets are the member sets strict mode holds each object parameter
// to: the object itself, then its object members by name.
var strictSets = map[string]*strictSet{
	"response_format": {known: responseFormatMembers, nested: map[string]rawjson.MemberSet{"json_schema": jsonSchemaMembers}},
	"tool_choice": {known: toolChoiceMembers, nested: map[string]rawjson.MemberSet{
		"function": namedToolMembers, "custom": namedToolMembers, "allowed_tools": allowedToolsMembers}},
}

// strictSet is the known members of an object and of its object members.
type strictSet struct {
	known  rawjson.MemberSet
	nested map[string]rawjson.MemberSet
}

// strictParam refuses the first member (in name order) of an object
// parameter that strictSets does not know.
func strictParam(name string, v any) error {
	set, obj := strictSets[name], asObject(v)
	if set == nil || obj == nil {
		return nil
	}
	if _, err := unknownMembers(obj, set.known, name, true); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(set.nested)) {
		if inner := asObject(obj[k]); inner != nil {
			if _, err := unknownMembers(inner, set.nested[k], name+"."+k, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// strictMessage refuses the first member, in a message at path, that the
// gateway does not know inside its content parts and its tool_calls
// entries and their function. The members of the message itself are the
// pre_model_call target's, judged in both modes.
func strictMessage(m map[string]any, path string) error {
	if parts, ok := m["content"].([]any); ok {
		for i, p := range parts {
			if _, err := unknownMembers(asObject(p), partMembers, path+".content["+strconv.Itoa(i)+"]", true); err != nil {
				return err
			}
		}
	}
	calls, _ := m["tool_calls"].([]any)
	for i, c := range calls {
		call, field := asObject(c), path+".tool_calls["+strconv.Itoa(i)+"]"
		if _, err := unknownMembers(call, toolCallMembers, field, true); err != nil {
			return err
		}
		if fn := asObject(call["function"]); fn != nil {
			if _, err := unknownMembers(fn, callFunctionMembers, field+".function", true); err != nil {
				return err
			}
		}
	}
	return nil
}

// asObject returns v as an object, or nil.
func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// CheckPlainMemberName reports whether name can be listed in a wire
// allowance: a plain identifier (ASCII letters, digits, _ and -, at most
// 64 characters), so that errors may name it.
func CheckPlainMemberName(name string) error {
	if !rawjson.PlainName(name) {
		return errors.New("must be a plain identifier (ASCII letters, digits, _ and -, at most 64 characters)")
	}
	return nil
}

// CheckAllowedRequestMember reports whether name may be allowed as an
// extra top-level request member: a plain identifier that is not a known
// member (whose treatment is fixed) and does not differ from one only in
// letter case (such members are refused as ambiguous).
func CheckAllowedRequestMember(name string) error {
	return requestKnown.CheckExtra(name, "request")
}
