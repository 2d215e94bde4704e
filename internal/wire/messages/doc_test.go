package messages

import (
	"os"
	"strings"
	"testing"
)

const wireDoc = "../../../docs/messages-wire.md"

// docRows returns the rows of the first table under the level-two heading
// named heading, header and separator left out.
func docRows(t *testing.T, heading string) [][]string {
	t.Helper()
	data, err := os.ReadFile(wireDoc)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	in, inTable := false, false
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "## ") {
			if in {
				break
			}
			in = strings.TrimSpace(line[3:]) == heading
			continue
		}
		if !in {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	if len(rows) < 2 {
		t.Fatalf("%s: section %q has no table", wireDoc, heading)
	}
	return rows[2:]
}

// Each table lists exactly what the code knows, in order, with the
// treatment the code states.
func TestWireDocumented(t *testing.T) {
	for _, tc := range []struct {
		heading string
		want    []MemberDoc
	}{
		{"Request members", RequestMembers()},
		{"Request content blocks", RequestBlocks()},
		{"Response members", ResponseMembers()},
		{"Stream events", StreamEvents()},
	} {
		t.Run(tc.heading, func(t *testing.T) {
			rows := docRows(t, tc.heading)
			if len(rows) != len(tc.want) {
				t.Errorf("the table has %d rows, the code lists %d", len(rows), len(tc.want))
			}
			for i := range min(len(rows), len(tc.want)) {
				row, w := rows[i], tc.want[i]
				if len(row) != 2 || row[0] != "`"+w.Name+"`" || row[1] != w.Treatment {
					t.Errorf("row %d = %q, want `%s` | %s", i, row, w.Name, w.Treatment)
				}
			}
		})
	}
}
