package messages

import (
	"errors"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// This file lists every top-level request member, content block type, tool
// type, answer member and stream event the gateway knows, with what it
// does with each. A member not listed is judged: projected beside the
// known ones and forwarded (or released) as the verdict leaves it; under
// wire.messages.unknown_members: refuse it is refused (requests) or
// removed (answers). An unknown block type or stop reason is refused.

// Configuration keys named by refusals.
const (
	// AllowRequestMembersKey lets extra top-level request members through.
	AllowRequestMembersKey = "wire.messages.allow_request_members"
	// AllowResponseMembersKey keeps extra top-level answer members.
	AllowResponseMembersKey = "wire.messages.allow_response_members"
	// AllowServerToolsKey admits provider-executed tools and mcp_servers.
	AllowServerToolsKey = "wire.messages.allow_server_tools"
	// UnknownMembersKey chooses what happens to members the gateway does
	// not know: judge (the default) or refuse (Options.StrictMembers).
	UnknownMembersKey = "wire.messages.unknown_members"
)

// Names the gateway itself puts in model.params: a request member of the
// same name would be confused with them, so it is refused.
const (
	// paramPartial marks a context whose provider-executed work the
	// gateway does not see.
	paramPartial = "partial_context"
	// paramBeta is the anthropic-beta header's list of betas.
	paramBeta = "anthropic_beta"
	// paramVersion is the anthropic-version header's value.
	paramVersion = "anthropic_version"
)

var reservedParams = rawjson.NewMemberSet(paramPartial, paramBeta, paramVersion)

// treatment is what the gateway does with one known top-level member.
type treatment int

const (
	projectParam     treatment = iota // verbatim into model.params once its shape is checked
	projectModel                      // model.id
	projectTarget                     // the pre_model_call target
	projectSystem                     // a leading system message of the target
	projectTools                      // the context's tools
	transportStream                   // the gateway's own transport
	serverMCP                         // provider-executed MCP servers: refused unless allowed
	projectContainer                  // model.params, its id opened from the gateway's seal
)

// shape is the JSON type a projected parameter must have.
type shape int

const (
	shapeAny shape = iota
	shapeNumber
	shapeBoolean
	shapeString
	shapeObject
	shapeStringList
)

type requestMember struct {
	name  string
	treat treatment
	shape shape
	note  string
}

// requestMemberTable lists the known top-level members: the fields of
// anthropic-sdk-go's MessageNewParams (v2.17.0) and the members Claude
// Code sends on the beta endpoint.
var requestMemberTable = []requestMember{
	{name: "model", treat: projectModel},
	{name: "messages", treat: projectTarget},
	{name: "system", treat: projectSystem},
	{name: "tools", treat: projectTools},
	{name: "stream", treat: transportStream},
	{name: "mcp_servers", treat: serverMCP},
	{name: "container", treat: projectContainer},
	{name: "max_tokens", shape: shapeNumber, note: "required on messages, optional on count_tokens"},
	{name: "metadata", shape: shapeObject, note: "user_id a string or null; other members judged with it (refused under " + UnknownMembersKey + ": refuse)"},
	{name: "stop_sequences", shape: shapeStringList},
	{name: "temperature", shape: shapeNumber},
	{name: "top_p", shape: shapeNumber},
	{name: "top_k", shape: shapeNumber},
	{name: "tool_choice", shape: shapeObject},
	{name: "thinking", shape: shapeObject, note: "type enabled (with budget_tokens), disabled or adaptive; other members judged with it (refused under " + UnknownMembersKey + ": refuse)"},
	{name: "context_management", shape: shapeObject},
	{name: "output_config", shape: shapeObject},
	{name: "service_tier", shape: shapeString},
	{name: "inference_geo", shape: shapeString},
	{name: "speed", shape: shapeString},
	{name: "cache_control", shape: shapeObject},
	{name: "diagnostics", shape: shapeObject},
}

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

// blockKind classifies a request content block type.
type blockKind int

const (
	kindText blockKind = iota
	kindImage
	kindNative // projected as a native part, written back as the part
	kindToolUse
	kindToolResult
	kindThinking
	kindRedacted
	kindServer // provider-executed tool blocks: refused unless allowed
)

// blockSpec is one known content block type: its members and treatment.
type blockSpec struct {
	typ     string
	kind    blockKind
	members rawjson.MemberSet
	doc     string
}

// blockTable lists every content block a request message may hold
// (anthropic-sdk-go ContentBlockParamUnion, v2.17.0).
var blockTable = []blockSpec{
	{"text", kindText, rawjson.NewMemberSet("type", "text", "citations", "cache_control"), "`{\"type\":\"text\",\"text\"}` part (a string content stays a string), its citations as `annotations` (web search citations as `url_citation`, others native; `encrypted_index` opened from the gateway's seal, not projected), `cache_control` kept in the part"},
	{"image", kindImage, rawjson.NewMemberSet("type", "source", "cache_control"), "url source: `{\"type\":\"image_url\",\"image_url\":{\"url\"}}` (`cache_control` kept in the part; a source with other members: the native block); base64 and file sources: the native block as a part"},
	{"document", kindNative, rawjson.NewMemberSet("type", "source", "title", "context", "citations", "cache_control"), "the native block as a part"},
	{"search_result", kindNative, rawjson.NewMemberSet("type", "source", "title", "content", "citations", "cache_control"), "the native block as a part"},
	{"tool_reference", kindNative, rawjson.NewMemberSet("type", "tool_name", "cache_control"), "the native block as a part (tool_result content only)"},
	{"tool_use", kindToolUse, rawjson.NewMemberSet("type", "id", "name", "input", "cache_control", "caller", "toolset_name"), "assistant `tool_calls` entry `{id, type:\"function\", function:{name, arguments}}`, arguments the JSON text of input (an object); caller, cache_control and toolset_name kept in the entry"},
	{"tool_result", kindToolResult, rawjson.NewMemberSet("type", "tool_use_id", "content", "is_error", "cache_control", "toolset_name"), "a `{role:\"tool\", tool_call_id, content}` message (is_error: true, cache_control and toolset_name kept as members) at its position in the user turn"},
	{"thinking", kindThinking, rawjson.NewMemberSet("type", "thinking", "signature"), "`{\"type\":\"reasoning\",\"text\"}` part; the signature must be the gateway's seal, opened and forwarded as the provider issued it (else 400); signed, so a transform may remove it but not change it"},
	{"redacted_thinking", kindRedacted, rawjson.NewMemberSet("type", "data"), "`{\"type\":\"redacted_thinking\"}` part; data must be the gateway's seal, opened and forwarded as the provider issued it (else 400); may be removed, not changed"},
	{"server_tool_use", kindServer, rawjson.NewMemberSet("type", "id", "name", "input", "cache_control", "caller"), serverBlockDoc},
	{"mcp_tool_use", kindServer, rawjson.NewMemberSet("type", "id", "name", "server_name", "input", "cache_control"), serverBlockDoc},
	{"mcp_tool_result", kindServer, rawjson.NewMemberSet("type", "tool_use_id", "content", "is_error", "cache_control"), serverBlockDoc},
	{"web_search_tool_result", kindServer, serverResultMembers, serverBlockDoc},
	{"web_fetch_tool_result", kindServer, serverResultMembers, serverBlockDoc},
	{"code_execution_tool_result", kindServer, serverResultMembers, serverBlockDoc},
	{"bash_code_execution_tool_result", kindServer, serverResultMembers, serverBlockDoc},
	{"text_editor_code_execution_tool_result", kindServer, serverResultMembers, serverBlockDoc},
	{"tool_search_tool_result", kindServer, serverResultMembers, serverBlockDoc},
	{"container_upload", kindServer, rawjson.NewMemberSet("type", "file_id", "cache_control"), serverBlockDoc},
}

const serverBlockDoc = "provider-executed: refused unless " + AllowServerToolsKey + "; then the native block as a part"

var serverResultMembers = rawjson.NewMemberSet("type", "tool_use_id", "content", "cache_control", "caller")

var blocksByType = func() map[string]*blockSpec {
	m := make(map[string]*blockSpec, len(blockTable))
	for i := range blockTable {
		m[blockTable[i].typ] = &blockTable[i]
	}
	return m
}()

// Members known inside other objects the gateway interprets.
var (
	messageMembers    = rawjson.NewMemberSet("role", "content")
	imageURLMembers   = rawjson.NewMemberSet("type", "url")
	containerMembers  = rawjson.NewMemberSet("id", "skills")
	metadataMembers   = rawjson.NewMemberSet("user_id")
	thinkingMembers   = rawjson.NewMemberSet("type", "budget_tokens", "display")
	customToolMembers = rawjson.NewMemberSet("type", "name", "description", "input_schema", "cache_control", "defer_loading", "strict", "input_examples", "eager_input_streaming", "allowed_callers")
	imageSourceKinds  = rawjson.NewMemberSet("base64", "url", "file")
)

// Tool type prefixes. Anthropic-defined client tools (bash, text editor,
// computer use, memory) run on the client: they are ordinary tools.
// Provider-executed tools run at Anthropic and their results come back
// inside the answer without a tool call the gateway mediates.
var (
	clientToolPrefixes = []string{"bash_", "text_editor_", "computer_", "memory_"}
	serverToolPrefixes = []string{"web_search_", "web_fetch_", "code_execution_", "tool_search_tool_", "mcp_toolset", "browser_toolset_", "computer_toolset_"}
)

// toolClass tells a tool declaration's class from its type.
type toolClass int

const (
	toolUnknown toolClass = iota
	toolCustom
	toolClient
	toolServer
)

func classifyTool(typ string, hasType bool) toolClass {
	if !hasType || typ == "custom" {
		return toolCustom
	}
	for _, p := range serverToolPrefixes {
		if strings.HasPrefix(typ, p) {
			return toolServer
		}
	}
	for _, p := range clientToolPrefixes {
		if strings.HasPrefix(typ, p) {
			return toolClient
		}
	}
	return toolUnknown
}

// MemberDoc documents one known member, block type or event.
type MemberDoc struct {
	Name      string
	Treatment string
}

// RequestMembers lists every top-level request member the gateway knows
// with its treatment.
func RequestMembers() []MemberDoc {
	out := make([]MemberDoc, len(requestMemberTable))
	for i := range requestMemberTable {
		m := &requestMemberTable[i]
		out[i] = MemberDoc{Name: m.name, Treatment: m.treatment()}
	}
	return out
}

// RequestBlocks lists every request content block type with its
// projection.
func RequestBlocks() []MemberDoc {
	out := make([]MemberDoc, len(blockTable))
	for i, b := range blockTable {
		out[i] = MemberDoc{Name: b.typ, Treatment: b.doc}
	}
	return out
}

func (m *requestMember) treatment() string {
	switch m.treat {
	case projectModel:
		return "routes the request (also through a route matching `*`); projected as `model.id`, the name sent upstream and released as an answer's model; a non-empty string"
	case projectTarget:
		return "projected as the pre_model_call target; a transform is written back"
	case projectSystem:
		return "projected as the leading system message (string content, or text parts for text blocks, projected as a message's text blocks are)"
	case projectTools:
		return "projected as `tools`: `{name, description?, schema}` for custom tools, `{name}` for Anthropic-defined client tools (bash_*, text_editor_*, computer_*, memory_*), `{name, description: \"provider-executed tool\"}` for provider-executed ones (refused unless " + AllowServerToolsKey + "), each with every other member of its declaration beside it (cache_control, strict, input_examples, display_width_px, max_characters, ...); a tool type the gateway does not know is judged likewise and makes the context partial (refused under " + UnknownMembersKey + ": refuse)"
	case transportStream:
		return "transport, not projected; a boolean; the stream is buffered and assembled before release"
	case serverMCP:
		return "provider-executed: refused unless " + AllowServerToolsKey + "; then each server is a tool `{name, description}`, the member is projected verbatim into `model.params` (its authorization tokens too: they cross to the provider) and `model.params.partial_context` is true"
	case projectContainer:
		return "projected into `model.params`; a string or an object; the container id (the string, or the object's `id`) must be the gateway's seal of an id an answer carried, opened and forwarded as the provider issued it (else 400)"
	}
	s := "projected into `model.params`; must be " + m.shape.describe()
	if m.note != "" {
		s += "; " + m.note
	}
	return s
}

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
	}
	return "any JSON value"
}

// fits reports whether v has the shape.
func (s shape) fits(v any) bool {
	switch s {
	case shapeNumber:
		return rawjson.TypeName(v) == "number"
	case shapeBoolean:
		_, ok := v.(bool)
		return ok
	case shapeString:
		_, ok := v.(string)
		return ok
	case shapeObject:
		_, ok := v.(map[string]any)
		return ok
	case shapeStringList:
		l, ok := v.([]any)
		for _, e := range l {
			if _, isStr := e.(string); !isStr {
				return false
			}
		}
		return ok
	}
	return true
}

func collisionMessage(known string) string {
	return "has a member whose name differs from " + strconv.Quote(known) + " only in letter case"
}

// strictMemberError refuses a member the gateway does not know at field
// (a path; "" for the body), under wire.messages.unknown_members: refuse.
// The member is named only when its name is a plain identifier.
func strictMemberError(field, key string) *wire.RequestError {
	const remedy = "; set " + UnknownMembersKey + ": judge to have unknown members judged and forwarded"
	if !rawjson.PlainName(key) {
		where := field
		if where == "" {
			where = "body"
		}
		return &wire.RequestError{Field: field, Msg: where + " has a member whose name is not a plain identifier and that the gateway does not know" + remedy}
	}
	return &wire.RequestError{Field: joinPath(field, key), Msg: "is not a member the gateway knows" + remedy}
}

// joinPath appends member key to the path field.
func joinPath(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// CheckAllowedRequestMember reports whether name may be listed in
// wire.messages.allow_request_members: a plain identifier that is neither
// a known member nor differs from one only in letter case.
func CheckAllowedRequestMember(name string) error {
	if reservedParams.Has(name) || reservedParams.Collides(name) {
		return errors.New("is a name the gateway itself puts in model.params")
	}
	return requestKnown.CheckExtra(name, "request")
}

// CheckAllowedResponseMember is CheckAllowedRequestMember for
// wire.messages.allow_response_members.
func CheckAllowedResponseMember(name string) error {
	return responseKnown.CheckExtra(name, "response")
}
