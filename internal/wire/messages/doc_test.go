package messages

import (
	"os"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/mdtable"
)

const wireDoc = "../../../docs/messages-wire.md"

// docRows returns the rows of the first table under the level-two heading
// named heading (see mdtable.Section).
func docRows(t *testing.T, heading string) [][]string {
	t.Helper()
	data, err := os.ReadFile(wireDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := mdtable.Section(string(data), heading)
	if err != nil {
		t.Fatalf("%s: %v", wireDoc, err)
	}
	return rows
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
