package enforcement

import (
	"sort"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// StartupFields and ShutdownFields give the members their plain
// construction gives (sorted []string names, the reason string as is),
// and StartupFields's names are a value tree an adopting builder keeps.
func TestFieldConstructors(t *testing.T) {
	for _, tools := range [][]string{nil, {}, {"b", "a", "c"}, {"x"}, {"é", "a", "a"}} {
		sorted := append([]string{}, tools...)
		sort.Strings(sorted)
		want, err := jsonvalue.FromGo(map[string]any{"agent_init": map[string]any{"tools_registered": sorted}})
		if err != nil {
			t.Fatal(err)
		}
		fields := StartupFields(tools)
		got, err := jsonvalue.FromGo(fields)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonvalue.Equal(got, want) {
			t.Errorf("StartupFields(%q) = %v, want %v", tools, got, want)
		}
		names := fields["agent_init"].(map[string]any)["tools_registered"]
		if adopted, err := jsonvalue.Adopt(names); err != nil || !sameValue(adopted, names) && len(tools) > 0 {
			t.Errorf("StartupFields(%q): names are not adopted as they are", tools)
		}
	}
	for _, reason := range []string{ShutdownCompleted, ShutdownError, ShutdownCancelled, "other"} {
		got := ShutdownFields(reason)["summary"].(map[string]any)["reason"]
		if s, ok := got.(string); !ok || s != reason {
			t.Errorf("ShutdownFields(%q) reason = %#v", reason, got)
		}
	}
}
