package responses

import (
	"os"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/mdtable"
)

// docRows returns the first table under the level-two heading as
// name → treatment.
func docRows(t *testing.T, heading string) map[string]string {
	t.Helper()
	const page = "../../../docs/responses-wire.md"
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	table, err := mdtable.Section(string(data), heading)
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	rows := make(map[string]string, len(table))
	for _, cells := range table {
		rows[strings.Trim(cells[0], "`")] = strings.Join(cells[1:], "|")
	}
	return rows
}

// The doc's tables list exactly what the code does.
func TestDocTablesMatchCode(t *testing.T) {
	for heading, list := range map[string][]MemberDoc{
		"Request members":  RequestMembers(),
		"Tools":            ToolTypes(),
		"Output items":     OutputItems(),
		"Response members": ResponseMembers(),
		"Stream events":    StreamEvents(),
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
