package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	chatwire "github.com/hooks-gateway/hooks-gateway/internal/wire/chat"
	messageswire "github.com/hooks-gateway/hooks-gateway/internal/wire/messages"
	responseswire "github.com/hooks-gateway/hooks-gateway/internal/wire/responses"
)

// Wire configures how the gateway reads each API surface's wire format.
type Wire struct {
	Chat      ChatWire
	Responses ResponsesWire
	Messages  MessagesWire
}

// ResponsesWire widens the closed world of the OpenAI Responses API
// (docs/responses-wire.md).
type ResponsesWire struct {
	// AllowRequestMembers are extra top-level request members, projected
	// into model.params and forwarded.
	AllowRequestMembers []string
	// AllowResponseMembers are extra top-level response members released
	// when they carry no text (numbers, booleans, null).
	AllowResponseMembers []string
	// AllowServerState lets requests refer to state kept at the provider
	// (previous_response_id, conversation, stored prompts, background, mcp
	// tools); their contexts then say partial_context: true.
	AllowServerState bool
	// UnknownMembers is UnknownJudge (default) or UnknownRefuse.
	UnknownMembers string
}

// MessagesWire widens the closed world of the Anthropic Messages API
// (docs/messages-wire.md).
type MessagesWire struct {
	// AllowRequestMembers are extra top-level request members, projected
	// into model.params and forwarded.
	AllowRequestMembers []string
	// AllowResponseMembers are extra members of the upstream's message.
	AllowResponseMembers []string
	// AllowServerTools lets requests declare provider-executed tools
	// (server tools, mcp_servers); their contexts then say
	// partial_context: true.
	AllowServerTools bool
	// UnknownMembers is UnknownJudge (default) or UnknownRefuse.
	UnknownMembers string
}

// ChatWire widens the closed world of OpenAI chat completions
// (docs/chat-completions-wire.md) by members the deployment trusts.
type ChatWire struct {
	// AllowRequestMembers are extra top-level request members: projected
	// verbatim into the pre_model_call context's model.params and
	// forwarded. Plain identifiers that are not known members.
	AllowRequestMembers []string
	// AllowResponseMembers are extra members of the upstream's response,
	// for the response parser. Plain identifiers.
	AllowResponseMembers []string
	// UnknownMembers is UnknownJudge (default) or UnknownRefuse.
	UnknownMembers string
}

// What a surface does with members it does not know
// (wire.<surface>.unknown_members).
const (
	// UnknownJudge projects them where policies see them and forwards
	// them as judged.
	UnknownJudge = "judge"
	// UnknownRefuse refuses them in requests (400) and removes them from
	// answers: the strict closed world.
	UnknownRefuse = "refuse"
)

// StrictMembers reports whether unknown is UnknownRefuse.
func StrictMembers(unknown string) bool { return unknown == UnknownRefuse }

// summary counts the allowances for the startup log ("" for none); the
// names are the operator's own, but a count is all the log needs.
func (w Wire) summary() string {
	var out strings.Builder
	add := func(api string, req, resp int, state string) {
		if req == 0 && resp == 0 && state == "" {
			return
		}
		fmt.Fprintf(&out, "; wire %s allows %d extra request and %d extra response members%s", api, req, resp, state)
	}
	c, r, m := w.Chat, w.Responses, w.Messages
	add("chat", len(c.AllowRequestMembers), len(c.AllowResponseMembers), "")
	add("responses", len(r.AllowRequestMembers), len(r.AllowResponseMembers), flagNote(r.AllowServerState, " and server-side state"))
	add("messages", len(m.AllowRequestMembers), len(m.AllowResponseMembers), flagNote(m.AllowServerTools, " and server tools"))
	for _, s := range []struct{ api, unknown string }{{"chat", c.UnknownMembers}, {"responses", r.UnknownMembers}, {"messages", m.UnknownMembers}} {
		if StrictMembers(s.unknown) {
			fmt.Fprintf(&out, "; wire %s refuses unknown members", s.api)
		}
	}
	return out.String()
}

func flagNote(on bool, note string) string {
	if on {
		return note
	}
	return ""
}

func (d *decoder) wire(n *yaml.Node, field string, w *Wire) {
	d.mapping(n, field, map[string]handler{
		"chat": func(f string, v *yaml.Node) {
			c := &w.Chat
			d.mapping(v, f, map[string]handler{
				"allow_request_members":  func(f string, v *yaml.Node) { c.AllowRequestMembers = d.strings(v, f) },
				"allow_response_members": func(f string, v *yaml.Node) { c.AllowResponseMembers = d.strings(v, f) },
				"unknown_members":        func(f string, v *yaml.Node) { c.UnknownMembers = d.str(v, f) },
			})
		},
		"responses": func(f string, v *yaml.Node) {
			c := &w.Responses
			d.mapping(v, f, map[string]handler{
				"allow_request_members":  func(f string, v *yaml.Node) { c.AllowRequestMembers = d.strings(v, f) },
				"allow_response_members": func(f string, v *yaml.Node) { c.AllowResponseMembers = d.strings(v, f) },
				"unknown_members":        func(f string, v *yaml.Node) { c.UnknownMembers = d.str(v, f) },
				"allow_server_state":     func(f string, v *yaml.Node) { c.AllowServerState = d.bool(v, f) },
			})
		},
		"messages": func(f string, v *yaml.Node) {
			c := &w.Messages
			d.mapping(v, f, map[string]handler{
				"allow_request_members":  func(f string, v *yaml.Node) { c.AllowRequestMembers = d.strings(v, f) },
				"allow_response_members": func(f string, v *yaml.Node) { c.AllowResponseMembers = d.strings(v, f) },
				"unknown_members":        func(f string, v *yaml.Node) { c.UnknownMembers = d.str(v, f) },
				"allow_server_tools":     func(f string, v *yaml.Node) { c.AllowServerTools = d.bool(v, f) },
			})
		},
	})
}

func (v *validator) wire() {
	for _, u := range []struct{ field, value string }{
		{"wire.chat.unknown_members", v.c.Wire.Chat.UnknownMembers},
		{"wire.responses.unknown_members", v.c.Wire.Responses.UnknownMembers},
		{"wire.messages.unknown_members", v.c.Wire.Messages.UnknownMembers},
	} {
		if u.value != "" && u.value != UnknownJudge && u.value != UnknownRefuse {
			v.problem(u.field, "must be %s or %s (got %q)", UnknownJudge, UnknownRefuse, u.value)
		}
	}
	c := v.c.Wire.Chat
	v.memberNames("wire.chat.allow_request_members", c.AllowRequestMembers, chatwire.CheckAllowedRequestMember)
	v.memberNames("wire.chat.allow_response_members", c.AllowResponseMembers, chatwire.CheckPlainMemberName)
	r := v.c.Wire.Responses
	v.memberNames("wire.responses.allow_request_members", r.AllowRequestMembers, responseswire.CheckAllowedRequestMember)
	v.memberNames("wire.responses.allow_response_members", r.AllowResponseMembers, chatwire.CheckPlainMemberName)
	m := v.c.Wire.Messages
	v.memberNames("wire.messages.allow_request_members", m.AllowRequestMembers, messageswire.CheckAllowedRequestMember)
	v.memberNames("wire.messages.allow_response_members", m.AllowResponseMembers, messageswire.CheckAllowedResponseMember)
}

// memberNames checks each listed member name with check, and refuses a
// name listed twice, or twice but for letter case (the gateway refuses
// such pairs in a body as ambiguous).
func (v *validator) memberNames(field string, names []string, check func(string) error) {
	seen := make(map[string]int, len(names))
	for i, name := range names {
		f := index(field, i)
		if err := check(name); err != nil {
			v.problem(f, "%s (got %q)", err, name)
			continue
		}
		folded := strings.ToLower(name)
		if j, dup := seen[folded]; dup {
			v.problem(f, "repeats %s (names are compared regardless of letter case)", index(field, j))
			continue
		}
		seen[folded] = i
	}
}
