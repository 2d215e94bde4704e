package enforcement

import "sync"

// AgentMembers keeps the agent members of the last few agents it served,
// for AdoptFields builders that share it: a gateway's requests come from
// few agents, and each request's builder would otherwise build the same
// member again. A member is shared read-only by every context built with
// it, as an AdoptFields builder's contexts share their agent member
// anyway. It is safe for concurrent use; the zero value is ready.
type AgentMembers struct {
	mu      sync.Mutex
	next    int // the slot the next new agent takes
	entries [agentMemberSlots]struct {
		agent  Agent
		member map[string]any
	}
}

// agentMemberSlots is how many agents' members are kept: a miss only
// costs the member a builder would build anyway.
const agentMemberSlots = 4

// member returns b's agent member, from m when it holds it.
func (m *AgentMembers) member(b *Builder) map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.entries {
		if e := &m.entries[i]; e.member != nil && e.agent == b.Agent {
			return e.member
		}
	}
	e := &m.entries[m.next]
	m.next = (m.next + 1) % len(m.entries)
	e.agent, e.member = b.Agent, b.agentMember()
	return e.member
}
