package messages

import "maps"

// turn groups the projected blocks of one wire message into its projected
// messages: an assistant turn is one message, its tool_use blocks its
// tool_calls; a user turn splits into tool messages (its tool results) and
// user messages (runs of other blocks), in block order. The tree and raw
// projections both build through it, so they group alike.
type turn struct {
	roleV     any // the decoded role
	assistant bool
	extra     map[string]any // the wire message's judged members
	lead      bool           // the message carrying extra is still to be emitted
	pending   bool           // a user message is open
	parts     []any
	calls     []any
	out       []any
}

// newTurn starts the turn of a message of role (decoded as roleV) whose
// own judged members are extra: they ride on its first projected message,
// which for a user turn is a user message even when the turn opens with a
// tool result (it then has no parts).
func newTurn(role string, roleV any, extra map[string]any) turn {
	return turn{roleV: roleV, assistant: role == "assistant", extra: extra, lead: extra != nil, pending: true, parts: []any{}}
}

// flush emits the open user message, if any.
func (t *turn) flush() {
	if t.pending {
		msg := map[string]any{"role": t.roleV, "content": t.parts}
		if t.lead {
			maps.Copy(msg, t.extra)
			t.lead = false
		}
		t.out = append(t.out, msg)
	}
	t.parts, t.pending = nil, false
}

// part adds a content part.
func (t *turn) part(p any) {
	if !t.pending {
		t.pending, t.parts = true, []any{}
	}
	t.parts = append(t.parts, p)
}

// result adds a tool result's tool message.
func (t *turn) result(tm map[string]any) {
	if len(t.parts) > 0 || t.lead {
		t.flush()
	} else {
		t.pending = false
	}
	t.out = append(t.out, tm)
}

// call adds a tool_use block's tool call.
func (t *turn) call(c any) { t.calls = append(t.calls, c) }

// done returns the turn's projected messages.
func (t *turn) done() []any {
	if t.assistant {
		msg := map[string]any{"role": t.roleV, "content": t.parts}
		if len(t.calls) > 0 {
			msg["tool_calls"] = t.calls
		}
		maps.Copy(msg, t.extra)
		return []any{msg}
	}
	t.flush()
	return t.out
}
