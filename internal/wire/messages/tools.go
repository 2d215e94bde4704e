package messages

import (
	"maps"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// providerToolDescription describes a provider-executed tool in the
// context's tools; its work is not mediated, hence partial_context.
const providerToolDescription = "provider-executed tool"

// parseTools projects the tools member: custom tools as {name,
// description?, schema} with their other members beside them (strict,
// cache_control, input_examples, ...), Anthropic-defined client tools as
// {name} with their configuration members beside it (type,
// display_width_px, max_characters, ...), provider-executed tools as
// {name, description: "provider-executed tool"} with their configuration
// beside it, when allowed. Every member a tool is sent with is judged.
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
			r.tools = append(r.tools, t) // decoded for this request alone; read-only
			r.toolNames = append(r.toolNames, name)
		case toolServer:
			if !r.s.serverTools {
				return &wire.RequestError{Field: field, Msg: "is a provider-executed tool; allow them with " + AllowServerToolsKey + ": true"}
			}
			name, ok := t["name"].(string)
			if !ok || name == "" {
				name = typ
			}
			tool := map[string]any{"name": name, "description": providerToolDescription}
			for k, v := range t {
				if k != "name" {
					tool[k] = v
				}
			}
			if _, own := t["description"]; own {
				return &wire.RequestError{Field: field + ".description", Msg: "has a name the gateway's projection of provider-executed tools uses, so it cannot be judged beside it"}
			}
			r.tools = append(r.tools, tool)
			r.setParam(paramPartial, true)
		default:
			// A tool type the gateway does not know: judged as declared
			// (its whole declaration beside its name). Who runs it is
			// unknown, so the context is partial; an answer block the
			// gateway does not know is refused all the same.
			if r.s.strict {
				return &wire.RequestError{Field: field + ".type", Msg: "is not a tool type the gateway knows; set " + UnknownMembersKey + ": judge to have such tools judged and forwarded"}
			}
			tool := maps.Clone(t)
			if name, ok := t["name"].(string); !ok || name == "" {
				tool["name"] = typ
			}
			r.tools = append(r.tools, tool)
			r.setParam(paramPartial, true)
		}
	}
	return nil
}

func (r *Request) customTool(field string, t map[string]any) error {
	extra, err := r.unknownMembers(field, t, customToolMembers)
	if err != nil {
		return err
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
	for _, k := range []string{"type", "cache_control", "defer_loading", "strict", "input_examples", "eager_input_streaming", "allowed_callers"} {
		if v, present := t[k]; present {
			tool[k] = v
		}
	}
	if err := addMembers(field, tool, extra, toolDeclProjected); err != nil {
		return err
	}
	r.tools = append(r.tools, tool)
	r.toolNames = append(r.toolNames, name)
	return nil
}

// toolDeclProjected are the names a custom tool's projection holds
// besides its own members.
var toolDeclProjected = rawjson.NewMemberSet("schema")

func (r *Request) addProviderTool(name string) {
	r.tools = append(r.tools, map[string]any{"name": name, "description": providerToolDescription})
	r.setParam(paramPartial, true)
}

// parseMCPServers admits provider-executed MCP servers when allowed; each
// becomes a provider tool named after the server, and the member goes
// verbatim into model.params: its URLs, tool configuration and
// authorization tokens all cross to the provider, so they are judged.
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
		r.setParam(paramPartial, true)
	}
	r.setParam("mcp_servers", v)
	return nil
}
