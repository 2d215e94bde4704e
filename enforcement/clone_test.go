package enforcement

import (
	"context"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

func TestCloneSharesTargetWithItsMirrorOnly(t *testing.T) {
	b := &Builder{Agent: Agent{ID: "a", Framework: "f"}, SessionID: "s", Sequence: &Counter{}}
	c, err := b.Build(context.Background(), PreToolCall, PreToolFields(ToolCall{ID: "1", Name: "t", Args: map[string]any{"k": "v"}}))
	if err != nil {
		t.Fatal(err)
	}
	cp := c.Clone()
	if !jsonvalue.Equal(map[string]any(cp), map[string]any(c)) {
		t.Fatal("clone differs from the original")
	}
	args := cp["tool_call"].(map[string]any)["args"].(map[string]any)
	args["k"] = "changed"
	if cp["target"].(map[string]any)["k"] != "changed" {
		t.Error("the clone's target does not mirror its tool_call.args")
	}
	if c["target"].(map[string]any)["k"] != "v" || c["tool_call"].(map[string]any)["args"].(map[string]any)["k"] != "v" {
		t.Error("mutating the clone changed the original")
	}

	// A context whose target is a separate (equal) value keeps them separate.
	c["target"] = map[string]any{"k": "v"}
	cp = c.Clone()
	cp["target"].(map[string]any)["k"] = "x"
	if cp["tool_call"].(map[string]any)["args"].(map[string]any)["k"] != "v" {
		t.Error("Clone aliased values that were not aliased in the original")
	}
}
