package enforcement

import (
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jcs"
)

// The identity hashes identityObject; it must canonicalize to the same
// bytes as the exported IdentityProjection at every point.
func TestIdentityObjectMatchesProjection(t *testing.T) {
	for _, p := range []Point{AgentStartup, Input, PreModelCall, PostModelCall, PreToolCall, PostToolCall, Output, AgentShutdown} {
		c := buildAt(t, nil, p)
		want, err := jcs.Canonicalize(IdentityProjection(c))
		if err != nil {
			t.Fatal(err)
		}
		got, err := jcs.Canonicalize(identityObject(c))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", p, got, want)
		}
	}
}
