package responses

import (
	"os"
	"strings"
	"testing"
)

// docRows returns the first table under the level-two heading as
// name → treatment.
func docRows(t *testing.T, heading string) map[string]string {
	t.Helper()
	data, err := os.ReadFile("../../../docs/responses-wire.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	in, seen := false, 0
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "## ") {
			if in {
				break
			}
			in = line[3:] == heading
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			if seen > 0 && in {
				break
			}
			continue
		}
		seen++
		if seen <= 2 {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		rows[strings.Trim(strings.TrimSpace(cells[0]), "`")] = strings.TrimSpace(strings.Join(cells[1:], "|"))
	}
	return rows
}

// The doc's tables list exactly what the code does.
func TestDocTablesMatchCode(t *testing.T) {
	for heading, list := range map[string][]MemberDoc{
		"Request members": RequestMembers(),
		"Tools":           ToolTypes(),
		"Output items":    OutputItems(),
		"Stream events":   StreamEvents(),
	} {
		rows := docRows(t, heading)
		if len(rows) != len(list) {
			t.Errorf("%s: %d rows documented, %d in code", heading, len(rows), len(list))
		}
		for _, d := range list {
			if got, ok := rows[d.Name]; !ok || got != d.Treatment {
				t.Errorf("%s: %s documented as %q, code says %q", heading, d.Name, got, d.Treatment)
			}
		}
	}
}
