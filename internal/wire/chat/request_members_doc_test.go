package chat

import (
	"os"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/mdtable"
)

// wireDoc is the page documenting the wire, relative to this package.
const wireDoc = "../../../docs/chat-completions-wire.md"

// docTable returns the rows of the first table under the level-two
// heading named heading (see mdtable.Section).
func docTable(t *testing.T, path, heading string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := mdtable.Section(string(data), heading)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// The Request members table lists exactly RequestMembers, with their
// origins and treatments.
func TestRequestMembersDocumented(t *testing.T) {
	rows := docTable(t, wireDoc, "Request members")
	documented := map[string]MemberDoc{}
	for i, row := range rows {
		if len(row) != 3 {
			t.Errorf("row %d has %d cells, want 3 (member, defined by, what the gateway does)", i+1, len(row))
			continue
		}
		name := strings.Trim(row[0], "`")
		if _, dup := documented[name]; dup {
			t.Errorf("%s is documented twice", name)
		}
		documented[name] = MemberDoc{Name: name, Origin: row[1], Treatment: row[2]}
	}
	for _, want := range RequestMembers() {
		got, ok := documented[want.Name]
		switch {
		case !ok:
			t.Errorf("%s is a known request member but is not documented", want.Name)
		case got != want:
			t.Errorf("%s is documented as\n  %s | %s\nwant\n  %s | %s", want.Name, got.Origin, got.Treatment, want.Origin, want.Treatment)
		}
		delete(documented, want.Name)
	}
	for name := range documented {
		t.Errorf("%s is documented but is not a known request member", name)
	}
}

// The Response members and Chunk members tables list exactly
// ResponseMembers and ChunkMembers, with their treatments.
func TestResponseMembersDocumented(t *testing.T) {
	for _, tc := range []struct {
		heading string
		want    []MemberDoc
	}{{"Response members", ResponseMembers()}, {"Chunk members", ChunkMembers()}} {
		t.Run(tc.heading, func(t *testing.T) {
			rows := docTable(t, wireDoc, tc.heading)
			if len(rows) != len(tc.want) {
				t.Errorf("the table has %d rows, the code lists %d members", len(rows), len(tc.want))
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
