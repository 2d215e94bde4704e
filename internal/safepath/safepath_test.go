package safepath

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestMember(t *testing.T) {
	for _, tc := range []struct {
		name string
		rank int
		want string
	}{
		{"messages", 4, ".messages"},
		{"tool_calls", 0, ".tool_calls"},
		{"Cn4ryQ7z", 3, "{member 3}"},
		{"", 0, "{member 0}"},
		{"a\nb", 1, "{member 1}"},
		{"Messages", 2, "{member 2}"}, // the vocabulary is case-sensitive
	} {
		if got := Member(tc.name, tc.rank); got != tc.want {
			t.Errorf("Member(%q, %d) = %q, want %q", tc.name, tc.rank, got, tc.want)
		}
	}
	var b strings.Builder
	b.WriteString("$")
	WriteMember(&b, "tool_calls", 0)
	WriteIndex(&b, 2)
	WriteMember(&b, "args", 0)
	WriteMember(&b, "secret", 1)
	if b.String() != "$.tool_calls[2].args{member 1}" {
		t.Errorf("path %q", b.String())
	}
}

// Rank is the position in byte order, whatever order the names come in.
func TestRank(t *testing.T) {
	m := map[string]int{"zeta": 0, "Alpha": 0, "beta": 0, "é": 0, "": 0}
	sorted := slices.Sorted(maps.Keys(m))
	for i, k := range sorted {
		if got := Rank(maps.Keys(m), k); got != i {
			t.Errorf("Rank(%q) = %d, want %d", k, got, i)
		}
	}
}
