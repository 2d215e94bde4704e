package rawjson

import "testing"

func TestMemberSetCollides(t *testing.T) {
	s := NewMemberSet("content", "role", "tool_calls")
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
		if got := s.Collides(c.name); got != c.want {
			t.Errorf("collides(%q) = %v, want %v", c.name, got, c.want)
		}
	}
	ms := []Member{{Key: "role"}, {Key: "ROLE"}, {Key: "x"}}
	if got := s.Ambiguous(ms); got != 1 {
		t.Errorf("ambiguous = %d, want 1", got)
	}
	if got := NewMemberSet("kind").Ambiguous([]Member{{Key: "\u212Aind"}}); got != 0 {
		t.Errorf("Kelvin-sign K must fold onto k as encoding/json folds it; ambiguous = %d", got)
	}
}

func TestPlainName(t *testing.T) {
	for name, want := range map[string]bool{
		"max_tokens": true, "x-y_Z9": true, "": false, "a b": false, "é": false, "a.b": false,
		"0123456789012345678901234567890123456789012345678901234567890123":  true,
		"01234567890123456789012345678901234567890123456789012345678901234": false,
	} {
		if got := PlainName(name); got != want {
			t.Errorf("PlainName(%q) = %v, want %v", name, got, want)
		}
	}
}
