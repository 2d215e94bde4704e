package messages

import (
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// providerToolDescription describes a provider-executed tool in the
// context's tools; its work is not mediated, hence partial_context.
const providerToolDescription = "provider-executed tool"

// parseTools projects the tools member: custom tools as {name,
// description?, schema?}, Anthropic-defined client tools as {name} (their
// configuration members are forwarded verbatim), provider-executed tools
// as {name, description: "provider-executed tool"} when allowed.
func (r *Request) parseTools(v any) error {
	list, ok := v.([]any)
	if !ok {
		return &wire.RequestError{Field: "tools", Msg: "must be an array, got " + rawjson.TypeName(v)}
	}
	for i, e := range list {
		field := "tools[" + strconv.Itoa(i) + "]"
		t, ok := e.(map[string]any)
		if !ok {
			return &wire.RequestError{Field: field, Msg: "must be an object, got " + rawjson.TypeName(e)}
		}
		typ, hasType := t["type"].(string)
		if _, present := t["type"]; present && !hasType {
			return &wire.RequestError{Field: field + ".type", Msg: "must be a string"}
		}
		if k := customToolMembers.CollisionIn(t); k != "" {
			return &wire.RequestError{Field: field, Msg: collisionMessage(k)}
		}
		switch classifyTool(typ, hasType) {
		case toolCustom:
			if err := r.customTool(field, t); err != nil {
				return err
			}
		case toolClient:
			name, ok := t["name"].(string)
			if !ok || name == "" {
				return &wire.RequestError{Field: field + ".name", Msg: "must be a non-empty string"}
			}
			r.tools = append(r.tools, map[string]any{"name": name})
			r.toolNames = append(r.toolNames, name)
		case toolServer:
			if !r.s.serverTools {
				return &wire.RequestError{Field: field, Msg: "is a provider-executed tool; allow them with " + AllowServerToolsKey + ": true"}
			}
			name, ok := t["name"].(string)
			if !ok || name == "" {
				name = typ
			}
			r.addProviderTool(name)
		default:
			return &wire.RequestError{Field: field + ".type", Msg: "is not a tool type the gateway knows"}
		}
	}
	return nil
}

func (r *Request) customTool(field string, t map[string]any) error {
	if customToolMembers.UnknownIn(t) {
		return &wire.RequestError{Field: field, Msg: "has a member the gateway does not know for a custom tool (it knows " + joinNames(customToolMembers) + ")"}
	}
	name, ok := t["name"].(string)
	if !ok || name == "" {
		return &wire.RequestError{Field: field + ".name", Msg: "must be a non-empty string"}
	}
	tool := map[string]any{"name": name}
	if d, present := t["description"]; present {
		s, ok := d.(string)
		if !ok {
			return &wire.RequestError{Field: field + ".description", Msg: "must be a string"}
		}
		tool["description"] = s
	}
	schema, ok := t["input_schema"].(map[string]any)
	if !ok {
		return &wire.RequestError{Field: field + ".input_schema", Msg: "must be an object"}
	}
	// The schema was decoded for this request alone and nothing writes
	// into it (Tools hands it out read-only): no copy.
	tool["schema"] = schema
	for _, k := range []string{"defer_loading", "strict", "eager_input_streaming"} {
		if v, present := t[k]; present {
			if _, ok := v.(bool); !ok {
				return &wire.RequestError{Field: field + "." + k, Msg: "must be a boolean"}
			}
		}
	}
	r.tools = append(r.tools, tool)
	r.toolNames = append(r.toolNames, name)
	return nil
}

func (r *Request) addProviderTool(name string) {
	r.tools = append(r.tools, map[string]any{"name": name, "description": providerToolDescription})
	r.setParam("partial_context", true)
}

// parseMCPServers admits provider-executed MCP servers when allowed; each
// becomes a provider tool named after the server. The member is not put in
// model.params: its entries carry authorization tokens.
func (r *Request) parseMCPServers(v any) error {
	if !r.s.serverTools {
		return &wire.RequestError{Field: "mcp_servers", Msg: "names provider-executed MCP servers; allow them with " + AllowServerToolsKey + ": true"}
	}
	list, ok := v.([]any)
	if !ok {
		return &wire.RequestError{Field: "mcp_servers", Msg: "must be an array, got " + rawjson.TypeName(v)}
	}
	for i, e := range list {
		m, ok := e.(map[string]any)
		name, ok2 := m["name"].(string)
		if !ok || !ok2 || name == "" {
			return &wire.RequestError{Field: "mcp_servers[" + strconv.Itoa(i) + "].name", Msg: "must be a non-empty string"}
		}
		r.addProviderTool(name)
	}
	if len(list) == 0 {
		r.setParam("partial_context", true)
	}
	return nil
}
