package mdtable

import (
	"reflect"
	"testing"
)

func TestSection(t *testing.T) {
	page := "# T\n\n## A\n\ntext\n\n| k | v |\n| --- | --- |\n| `x` | one \\| two |\n| y |  z  |\n\n| other | table |\n|---|---|\n| no | no |\n\n## B\n\nnone\n"
	rows, err := Section(page, "A")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"`x`", "one \\", "two"}, {"y", "z"}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %q, want %q", rows, want)
	}
	if _, err := Section(page, "B"); err == nil {
		t.Error("a section without a table is accepted")
	}
	if _, err := Section(page, "C"); err == nil {
		t.Error("a missing section is accepted")
	}
}
