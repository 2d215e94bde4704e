package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	chatwire "github.com/hooks-gateway/hooks-gateway/internal/wire/chat"
)

// Wire configures how the gateway reads each API surface's wire format.
type Wire struct {
	Chat ChatWire
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
}

// summary counts the allowances for the startup log ("" for none); the
// names are the operator's own, but a count is all the log needs.
func (w Wire) summary() string {
	c := w.Chat
	if len(c.AllowRequestMembers) == 0 && len(c.AllowResponseMembers) == 0 {
		return ""
	}
	return fmt.Sprintf("; wire chat allows %d extra request and %d extra response members", len(c.AllowRequestMembers), len(c.AllowResponseMembers))
}

func (d *decoder) wire(n *yaml.Node, field string, w *Wire) {
	d.mapping(n, field, map[string]handler{
		"chat": func(f string, v *yaml.Node) {
			c := &w.Chat
			d.mapping(v, f, map[string]handler{
				"allow_request_members":  func(f string, v *yaml.Node) { c.AllowRequestMembers = d.strings(v, f) },
				"allow_response_members": func(f string, v *yaml.Node) { c.AllowResponseMembers = d.strings(v, f) },
			})
		},
	})
}

func (v *validator) wire() {
	c := v.c.Wire.Chat
	v.memberNames("wire.chat.allow_request_members", c.AllowRequestMembers, chatwire.CheckAllowedRequestMember)
	v.memberNames("wire.chat.allow_response_members", c.AllowResponseMembers, chatwire.CheckPlainMemberName)
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
