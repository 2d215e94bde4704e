package responses

import (
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// hostedToolDescription is the description a provider-executed tool gets
// in the projection.
const hostedToolDescription = "provider-executed tool"

// providerTools are the tool types the provider executes itself: they are
// projected as {name: <type>, description} so a pre_model_call policy can
// deny a request offering them; no pre_tool_call ever sees their calls.
var providerTools = map[string]bool{
	"web_search": true, "web_search_preview": true, "web_search_2025_08_26": true,
	"web_search_preview_2025_03_11": true, "file_search": true,
	"code_interpreter": true, "image_generation": true,
}

var (
	functionToolMembers  = rawjson.NewMemberSet("type", "name", "description", "parameters", "strict")
	namespaceToolMembers = rawjson.NewMemberSet("type", "name", "description", "tools")
	toolTypeMembers      = rawjson.NewMemberSet("type")
)

// ToolTypes documents the treatment of each tool type.
func ToolTypes() []MemberDoc {
	return []MemberDoc{
		{"function", "projected: {name, description?, schema?}; strict is a boolean; other members under unknown_members"},
		{"namespace", "projected: each child function tool as {name: \"<namespace>.<name>\", ..., namespace: the namespace's own members but type and tools (description included)}"},
		{"web_search, web_search_preview, web_search_2025_08_26, web_search_preview_2025_03_11, file_search, code_interpreter, image_generation", "projected: {name: <type>, description: \"provider-executed tool\", config: every other member (user_location, vector_store_ids, filters, container, ...)}"},
		{"mcp", "server state: refused unless allow_server_state, then projected like a provider-executed tool"},
		{"any other (custom, tool_search, computer_use_preview, local_shell, shell, apply_patch, ...)", "projected: {name: its name (else its type), description?: its description, config: every member}; refused when the surface is strict"},
	}
}

// parseTools projects the tools member. It reports whether a tool uses
// provider-side state (remote MCP).
func (r *Request) parseTools(list []any, allowState bool) (bool, error) {
	state := false
	for i, t := range list {
		field := fieldIndex("tools", i)
		tool, ok := t.(map[string]any)
		if !ok {
			return false, &wire.RequestError{Field: field, Msg: "must be an object, got " + rawjson.TypeName(t)}
		}
		if k := toolTypeMembers.CollisionIn(tool); k != "" {
			return false, &wire.RequestError{Field: field, Msg: collisionMessage(k)}
		}
		typ, _ := tool["type"].(string)
		switch {
		case typ == "function":
			if err := r.addFunctionTool(tool, nil, field); err != nil {
				return false, err
			}
		case typ == "namespace":
			if err := r.addNamespace(tool, field); err != nil {
				return false, err
			}
		case providerTools[typ]:
			r.tools = append(r.tools, providerToolDecl(typ, tool))
		case typ == "mcp":
			if !allowState {
				return false, &wire.RequestError{Field: field + ".type", Msg: "remote MCP tools run on servers the gateway cannot mediate; a deployment can allow them with wire.responses.allow_server_state: true"}
			}
			state = true
			r.tools = append(r.tools, providerToolDecl(typ, tool))
		case !r.surf.strict && typ != "":
			r.tools = append(r.tools, otherToolDecl(typ, tool))
		default:
			return false, &wire.RequestError{Field: field + ".type", Msg: "is not a tool type the gateway can mediate (function, namespace and provider-executed search, file search, code interpreter and image generation tools); a deployment can judge others with " + unknownMembersSwitch + ": judge"}
		}
	}
	return state, nil
}

// providerToolDecl projects a provider-executed tool: its type names it,
// and every other member (the provider's configuration of it: locations,
// vector stores, filters, containers, servers) is projected under config.
func providerToolDecl(typ string, tool map[string]any) map[string]any {
	decl := map[string]any{"name": typ, "description": hostedToolDescription}
	if len(tool) > 1 {
		config := make(map[string]any, len(tool)-1)
		for k, v := range tool {
			if k != "type" {
				config[k] = v
			}
		}
		decl["config"] = config
	}
	return decl
}

// otherToolDecl projects a tool of a type the gateway does not know
// (a freeform custom tool, a client-run tool search, ...): named by its
// name when it has one, else by its type, its description when a string,
// and every member, type included, under config.
func otherToolDecl(typ string, tool map[string]any) map[string]any {
	name, _ := tool["name"].(string)
	if name == "" {
		name = typ
	}
	decl := map[string]any{"name": name, "config": tool}
	if d, ok := tool["description"].(string); ok {
		decl["description"] = d
	}
	return decl
}

// addFunctionTool projects one flat function tool; ns, for a child of a
// namespace, is the namespace's projection, which qualifies its name.
func (r *Request) addFunctionTool(tool map[string]any, ns map[string]any, field string) error {
	unknown, err := r.unknownIn(tool, functionToolMembers, field)
	if err != nil {
		return err
	}
	name, ok := tool["name"].(string)
	if !ok || name == "" {
		return &wire.RequestError{Field: field + ".name", Msg: "must be a non-empty string"}
	}
	if ns != nil {
		name = ns["name"].(string) + "." + name
	}
	decl := map[string]any{"name": name}
	switch d := tool["description"].(type) {
	case nil:
	case string:
		decl["description"] = d
	default:
		return &wire.RequestError{Field: field + ".description", Msg: "must be a string"}
	}
	switch p := tool["parameters"].(type) {
	case nil:
	case map[string]any:
		decl["schema"] = p
	default:
		return &wire.RequestError{Field: field + ".parameters", Msg: "must be an object"}
	}
	switch tool["strict"].(type) {
	case nil, bool:
	default:
		return &wire.RequestError{Field: field + ".strict", Msg: "must be a boolean"}
	}
	if ns != nil {
		decl["namespace"] = ns
	}
	r.tools = append(r.tools, withUnknown(decl, unknown))
	r.toolNames = append(r.toolNames, name)
	return nil
}

// addNamespace projects a namespace's function tools under qualified
// names, each carrying the namespace's own members (its description, and
// any the gateway does not know) under namespace. A namespace without
// tools is projected as {name, namespace} so its description is judged
// too.
func (r *Request) addNamespace(tool map[string]any, field string) error {
	if _, err := r.unknownIn(tool, namespaceToolMembers, field); err != nil {
		return err
	}
	nsName, ok := tool["name"].(string)
	if !ok || nsName == "" {
		return &wire.RequestError{Field: field + ".name", Msg: "must be a non-empty string"}
	}
	if d, ok := tool["description"]; ok && d != nil {
		if _, ok := d.(string); !ok {
			return &wire.RequestError{Field: field + ".description", Msg: "must be a string"}
		}
	}
	children, ok := tool["tools"].([]any)
	if !ok {
		return &wire.RequestError{Field: field + ".tools", Msg: "must be an array"}
	}
	ns := make(map[string]any, len(tool))
	for k, v := range tool {
		if k != "type" && k != "tools" {
			ns[k] = v
		}
	}
	if len(children) == 0 {
		r.tools = append(r.tools, map[string]any{"name": nsName, "namespace": ns})
	}
	for j, c := range children {
		cf := fieldIndex(field+".tools", j)
		child, ok := c.(map[string]any)
		if !ok || child["type"] != "function" {
			return &wire.RequestError{Field: cf, Msg: "must be a function tool: only function tools inside a namespace can be mediated"}
		}
		if err := r.addFunctionTool(child, ns, cf); err != nil {
			return err
		}
	}
	return nil
}
