package config

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Problem is one configuration error, located as precisely as the source
// allows. Line is 0 when the value did not come from the file (an
// environment override, a hand-built Config) or the file is empty.
type Problem struct {
	File  string
	Line  int
	Field string // dotted path such as upstreams[0].type; "" for the document
	Msg   string
}

// String renders the problem as "file:line: field: msg", dropping the parts
// that are unknown.
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(p.Line))
		}
		b.WriteString(": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error collects every problem found in one configuration, so a caller can
// refuse to start and list them all at once.
type Error struct {
	Problems []Problem
}

// Error lists the problems, one per line, in source order.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// problems accumulates Problems for one source file.
type problems struct {
	file string
	list []Problem
}

func (ps *problems) add(line int, field, msg string) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Field: field, Msg: msg})
}

// covers reports whether a problem already found concerns field, its
// parent or one of its subfields: a value that failed to decode was left at
// its default, and validating that default would only add noise.
func (ps *problems) covers(field string) bool {
	for _, p := range ps.list {
		if p.Field == "" {
			continue
		}
		if within(field, p.Field) || within(p.Field, field) {
			return true
		}
	}
	return false
}

// within reports whether field is inner or lies below it.
func within(field, inner string) bool {
	if !strings.HasPrefix(field, inner) {
		return false
	}
	rest := field[len(inner):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

// err returns the collected problems as an *Error, or nil when there are
// none. Problems are ordered by line (decoding and validation find them in
// separate passes); those without a line, such as bad environment
// overrides, come last.
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	list := slices.Clone(ps.list)
	slices.SortStableFunc(list, func(a, b Problem) int {
		switch {
		case a.Line == b.Line:
			return 0
		case a.Line == 0:
			return 1
		case b.Line == 0:
			return -1
		}
		return cmp.Compare(a.Line, b.Line)
	})
	return &Error{Problems: list}
}
