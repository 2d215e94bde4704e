package chatwire

import "testing"

func TestMemberSetCollides(t *testing.T) {
	s := newMemberSet("content", "role", "tool_calls")
	cases := []struct {
		name string
		want bool
	}{
		{"content", false},
		{"Content", true},
		{"CONTENT", true},
		{"Tool_Calls", true},
		{"contents", false},
		{"other", false},
		{"\u212Aey", false}, // Kelvin sign folds to k, but no known name starts with k
	}
	for _, c := range cases {
		if got := s.collides(c.name); got != c.want {
			t.Errorf("collides(%q) = %v, want %v", c.name, got, c.want)
		}
	}
	ms := []member{{key: "role"}, {key: "ROLE"}, {key: "x"}}
	if got := s.ambiguous(ms); got != 1 {
		t.Errorf("ambiguous = %d, want 1", got)
	}
	if got := newMemberSet("kind").ambiguous([]member{{key: "\u212Aind"}}); got != 0 {
		t.Errorf("Kelvin-sign K must fold onto k as encoding/json folds it; ambiguous = %d", got)
	}
}
