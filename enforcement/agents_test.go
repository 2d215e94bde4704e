package enforcement

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
)

// Builders sharing an AgentMembers give every context the agent member a
// builder of its own gives, across more agents than it keeps and under
// concurrent use; builders of one agent share one member.
func TestSharedAgentMembers(t *testing.T) {
	var agents AgentMembers
	build := func(a Agent, shared bool) Context {
		b := &Builder{Agent: a, SessionID: "s", Sequence: &Counter{}, Now: fixedNow, AdoptFields: true}
		if shared {
			b.Agents = &agents
		}
		c, err := b.Build(context.Background(), AgentStartup, pointFields(AgentStartup))
		if err != nil {
			t.Error(err)
			return nil
		}
		return c
	}
	agentOf := func(i int) Agent {
		a := Agent{ID: fmt.Sprintf("agent-%d", i%7), Framework: "f"}
		if i%3 == 0 {
			a.Name = "n"
		}
		if i%2 == 0 {
			a.Version = "1"
		}
		return a
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				a := agentOf(i + w)
				got, want := build(a, true), build(a, false)
				if got == nil || want == nil || !reflect.DeepEqual(got["agent"], want["agent"]) {
					t.Errorf("agent %+v: member %v, want %v", a, got["agent"], want["agent"])
					return
				}
			}
		})
	}
	wg.Wait()
	a := agentOf(1)
	first, second := build(a, true)["agent"], build(a, true)["agent"]
	if !sameValue(first, second) {
		t.Fatal("two builders of one agent built two members")
	}
}
