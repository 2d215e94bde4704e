package mcp

import (
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// Methods the gateway treats apart from the bracketed ones.
const (
	MethodToolsCall  = "tools/call"
	MethodToolsList  = "tools/list"
	MethodInitialize = "initialize"
	MethodDiscover   = "server/discover"
	MethodPing       = "ping"
)

// The _meta keys of the 2026-07-28 revision the gateway reads.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaProgressToken      = "progressToken"
)

// VerdictMetaKey names the _meta member of a result the gateway made for
// a denied call: the verdict's reason and where it was taken, for programs
// that tell a policy deny from a tool's own error.
const VerdictMetaKey = "hooks-gateway/verdict"

// Call is a request projected as a tool call.
type Call struct {
	// Name is the tool_call name: prefix + the tool's name for tools/call,
	// prefix + "/" + the method for any other method (no tool name holds a
	// '/', so the two never meet).
	Name string
	// Args is the tool_call args: a tools/call's arguments ({} when
	// absent), any other method's params less _meta ({} when absent).
	Args map[string]any
	// Rest are a tools/call's params besides name and arguments (its
	// _meta, less what the gateway strips), forwarded as they were shown
	// to the verdict.
	Rest map[string]any
	tool string
}

// Tool is a tools/call's tool name as the server knows it ("" for other
// methods).
func (c *Call) Tool() string { return c.tool }

// ProjectCall projects request m as a tool call whose name is qualified
// by prefix.
func ProjectCall(m *Message, prefix string) (*Call, error) {
	params := m.Params
	if m.Method != MethodToolsCall {
		if foldCollision(params) || methodMembers.AmbiguousKeys(params) {
			return nil, Errorf(CodeInvalidParams, "params has a member whose name differs from another's only in letter case")
		}
		return &Call{Name: MethodName(prefix, m.Method), Args: withoutMeta(params), Rest: metaOnly(params)}, nil
	}
	name, ok := params["name"].(string)
	if !ok || name == "" {
		return nil, Errorf(CodeInvalidParams, "tools/call needs params.name, a non-empty string")
	}
	if strings.Contains(name, "/") {
		// MCP tool names hold letters, digits, '_', '-' and '.': a '/'
		// would pass the call off as one of the methods' names.
		return nil, Errorf(CodeInvalidParams, "tools/call params.name must not contain '/'")
	}
	c := &Call{Name: prefix + name, tool: name, Args: map[string]any{}}
	if a, present := params["arguments"]; present && a != nil {
		if c.Args, ok = a.(map[string]any); !ok {
			return nil, Errorf(CodeInvalidParams, "tools/call params.arguments must be an object")
		}
	}
	// Go's encoding/json, and servers built on it, match member names
	// case-insensitively: "Name" beside "name", or "PATH" beside "path" in
	// the arguments, could be read by the server as the member the
	// verdict did not judge. foldCollision(params) walks the arguments too.
	if foldCollision(params) || toolsCallMembers.AmbiguousKeys(params) {
		return nil, Errorf(CodeInvalidParams, "tools/call params has two members whose names differ only in letter case")
	}
	for k, v := range params {
		if k == "name" || k == "arguments" {
			continue
		}
		if c.Rest == nil {
			c.Rest = make(map[string]any, len(params))
		}
		c.Rest[k] = v
	}
	if meta, ok := c.Rest["_meta"].(map[string]any); ok {
		c.Rest["_meta"] = StripMeta(meta)
	}
	return c, nil
}

// foldCollision reports whether some object in v, at any depth, has two
// member names equal under Unicode case folding.
func foldCollision(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 1 {
			seen := make(map[string]struct{}, len(x))
			for k := range x {
				f := foldKey(k)
				if _, dup := seen[f]; dup {
					return true
				}
				seen[f] = struct{}{}
			}
		}
		for _, e := range x {
			if foldCollision(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if foldCollision(e) {
				return true
			}
		}
	}
	return false
}

// foldKey is k under case folding, as foldCollision compares names. An
// ASCII name folds to its lower case, which is k itself (no allocation)
// for the usual lower-case name.
func foldKey(k string) string {
	for i := 0; i < len(k); i++ {
		if k[i] >= utf8.RuneSelf {
			return strings.ToLower(strings.ToUpper(k))
		}
	}
	return strings.ToLower(k)
}

// The members of a request's params the gateway reads (tools/call's, and
// the other methods'): a lone member equal to one of them under case
// folding (a "_META" a server would read as the _meta the gateway strips)
// is refused as ambiguous.
var (
	toolsCallMembers = rawjson.NewMemberSet("name", "arguments", "_meta")
	methodMembers    = rawjson.NewMemberSet("_meta", "capabilities")
)

// MethodName is the tool_call name of a request of method other than
// tools/call to the server whose tools are qualified by prefix.
func MethodName(prefix, method string) string { return prefix + "/" + method }

// WithoutUncallable is a tools/list result less the tools whose names a
// call could not use (a '/' in the name, see ProjectCall), and whether any
// was removed.
func WithoutUncallable(result map[string]any) (map[string]any, bool) {
	tools, ok := result["tools"].([]any)
	if !ok {
		return result, false
	}
	kept := make([]any, 0, len(tools))
	for _, e := range tools {
		t, _ := e.(map[string]any)
		if name, ok := t["name"].(string); ok && !strings.Contains(name, "/") {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(tools) {
		return result, false
	}
	out := maps.Clone(result)
	out["tools"] = kept
	return out, true
}

// metaOnly is params' _meta, stripped, as the only member of a map (nil
// without one).
func metaOnly(params map[string]any) map[string]any {
	meta, ok := params["_meta"].(map[string]any)
	if !ok {
		return nil
	}
	return map[string]any{"_meta": StripMeta(meta)}
}

// StripMeta is a request's _meta as the gateway forwards it: without a
// progress token (the gateway relays no progress: a notification's text
// would reach the client unjudged) and with the client's capabilities
// emptied (the gateway answers no server request, see StripCapabilities).
func StripMeta(meta map[string]any) map[string]any {
	out := make(map[string]any, len(meta))
	for k, v := range meta {
		switch k {
		case metaProgressToken:
		case MetaClientCapabilities:
			out[k] = map[string]any{}
		default:
			out[k] = v
		}
	}
	return out
}

// Params renders the verdicted call back into the params the server
// receives: for tools/call, the tool's name, the verdicted arguments and
// the rest; for any other method, the verdicted args and the _meta.
func (c *Call) Params(method string, args map[string]any) map[string]any {
	out := make(map[string]any, len(args)+len(c.Rest)+2)
	if method == MethodToolsCall {
		out["name"] = c.tool
		out["arguments"] = args
	} else {
		maps.Copy(out, args)
	}
	maps.Copy(out, c.Rest)
	if method == MethodInitialize {
		out["capabilities"] = map[string]any{}
	}
	return out
}

// ToolResult projects a tools/call result as a tool result: its
// structuredContent when it has one; else the text of its one plain text
// block; else its content blocks as they are. isError is the result's.
func ToolResult(result map[string]any) (value any, isError bool, err error) {
	if v, ok := result["isError"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return nil, false, fmt.Errorf("result.isError must be a boolean")
		}
		isError = b
	}
	if sc, ok := result["structuredContent"]; ok && sc != nil {
		obj, ok := sc.(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("result.structuredContent must be an object")
		}
		return obj, isError, nil
	}
	content, ok := result["content"].([]any)
	if !ok {
		return nil, false, fmt.Errorf("result.content must be an array of content blocks")
	}
	for i, b := range content {
		obj, ok := b.(map[string]any)
		if _, typed := obj["type"].(string); !ok || !typed {
			return nil, false, fmt.Errorf("result.content[%d] must be a content block with a type", i)
		}
	}
	if s, ok := plainText(content); ok {
		return s, isError, nil
	}
	return content, isError, nil
}

// plainText is the text of content when it is exactly one text block
// with no member besides type and text.
func plainText(content []any) (string, bool) {
	if len(content) != 1 {
		return "", false
	}
	b := content[0].(map[string]any)
	s, ok := b["text"].(string)
	if !ok || b["type"] != "text" || len(b) != 2 {
		return "", false
	}
	return s, true
}

// WriteToolResult builds the result the client receives from a verdicted
// tool result: a string is one text block; an array is the content
// blocks; an object is structuredContent with its JSON as the text block
// (the form the MCP specification recommends for structured results);
// anything else is its JSON as text. A result with structuredContent
// always has its text rebuilt from it, so no unjudged text rides along.
func WriteToolResult(value any, isError bool) (map[string]any, error) {
	out := map[string]any{}
	switch v := value.(type) {
	case string:
		out["content"] = []any{textBlock(v)}
	case []any:
		for i, b := range v {
			obj, ok := b.(map[string]any)
			if _, typed := obj["type"].(string); !ok || !typed {
				return nil, fmt.Errorf("tool_result.value[%d] is not a content block with a type", i)
			}
		}
		out["content"] = v
	case map[string]any:
		text, err := jsonvalue.Marshal(v)
		if err != nil {
			return nil, err
		}
		out["structuredContent"] = v
		out["content"] = []any{textBlock(string(text))}
	default:
		text, err := jsonvalue.Marshal(v)
		if err != nil {
			return nil, err
		}
		out["content"] = []any{textBlock(string(text))}
	}
	if isError {
		out["isError"] = true
	}
	return out, nil
}

// CheckToolResult is WriteToolResult's check alone, for the emitter's
// target validator.
func CheckToolResult(value any) error {
	_, err := WriteToolResult(value, false)
	return err
}

func textBlock(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

// MethodResult projects any other method's result as a tool result: the
// result less its _meta (server metadata that no verdict needs to pass).
func MethodResult(result map[string]any) map[string]any { return withoutMeta(result) }

// withoutMeta is a new map of obj's members less _meta ({} for nil).
func withoutMeta(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "_meta" {
			out[k] = v
		}
	}
	return out
}

// DeniedResult is the tools/call result a denied call answers with: an
// error result whose text is the verdict's message, so the agent's loop
// goes on and the model learns why; _meta carries the verdict for
// programs.
func DeniedResult(message string, verdict map[string]any) map[string]any {
	return map[string]any{
		"content": []any{textBlock(message)},
		"isError": true,
		"_meta":   map[string]any{VerdictMetaKey: verdict},
	}
}
