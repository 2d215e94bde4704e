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

func TestCodeBlock(t *testing.T) {
	page := "# T\n\n## A\n\n```go\nnot this\n```\n\n### B\n\ntext\n\n```python\nprint(1)\n\nprint(2)\n```\n\n```python\nsecond\n```\n\n## C\n\n```python\nlater\n```\n"
	got, err := CodeBlock(page, "B", "python")
	if err != nil || got != "print(1)\n\nprint(2)\n" {
		t.Fatalf("CodeBlock = %q, %v", got, err)
	}
	if _, err := CodeBlock(page, "B", "go"); err == nil {
		t.Error("a block before the section was taken for B's")
	}
	if got, err := CodeBlock(page, "A", "python"); err != nil || got != "print(1)\n\nprint(2)\n" {
		t.Errorf("A's subsection B holds its python block: %q, %v", got, err)
	}
	if _, err := CodeBlock(page, "A", "rust"); err == nil {
		t.Error("a block of a later section C was taken for A's")
	}
	if _, err := CodeBlock(page, "Z", "python"); err == nil {
		t.Error("no error for a missing section")
	}
	if _, err := CodeBlock("### B\n```python\nopen\n", "B", "python"); err == nil {
		t.Error("no error for an unterminated block")
	}
}
