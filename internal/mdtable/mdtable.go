// Package mdtable reads the tables of the project's Markdown pages, so
// tests can hold a documented table to the code that it describes.
package mdtable

import (
	"fmt"
	"strings"
)

// Section returns the rows of the first table under the level-two
// heading named heading: one slice of trimmed cells per row, the header
// and separator rows left out. It fails when the page has no such
// section or the section no table.
func Section(page, heading string) ([][]string, error) {
	var rows [][]string
	in, found, inTable := false, false, false
	for line := range strings.Lines(page) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "## ") {
			if in {
				break
			}
			in = strings.TrimSpace(line[3:]) == heading
			found = found || in
			continue
		}
		if !in {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break // the first table ended
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
	switch {
	case !found:
		return nil, fmt.Errorf("no section %q", heading)
	case len(rows) < 2:
		return nil, fmt.Errorf("section %q has no table", heading)
	}
	return rows[2:], nil
}
