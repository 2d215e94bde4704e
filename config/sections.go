package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Decoder decodes YAML documents that hold configuration sections outside
// the main file (the policy files) by the main file's rules: unknown keys
// and values of the wrong shape are problems placed at file:line, and all
// problems of a document come back together in one *Error.
type Decoder struct {
	d *decoder
}

// NewDecoder returns a decoder whose problems name file.
func NewDecoder(file string) *Decoder {
	return &Decoder{d: &decoder{ps: &problems{file: file}, lines: make(map[string]int)}}
}

// DefaultEnforcement returns the enforcement section's defaults, those of a
// main file that leaves the section out.
func DefaultEnforcement() Enforcement { return newConfig("").Enforcement }

// Root parses data as exactly one YAML document and returns its root
// mapping; nil when the document is empty or unreadable (a problem is then
// recorded unless it is merely empty).
func (d *Decoder) Root(data []byte) *yaml.Node {
	doc, err := readDocument(data)
	if err != nil {
		syntaxProblem(d.d.ps, err)
		return nil
	}
	if doc == nil || len(doc.Content) == 0 {
		return nil
	}
	root := resolve(doc.Content[0])
	if isNull(root) {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		d.d.ps.add(root.Line, "", "the document must be a YAML mapping")
		return nil
	}
	return root
}

// Mapping decodes a mapping with fixed keys: each key present goes to its
// handler (with its full field path); an unknown key is a problem.
func (d *Decoder) Mapping(n *yaml.Node, field string, keys map[string]func(field string, v *yaml.Node)) {
	hs := make(map[string]handler, len(keys))
	for k, h := range keys {
		hs[k] = h
	}
	d.d.mapping(n, field, hs)
}

// Sequence calls each for every element of a list; null is an empty list.
func (d *Decoder) Sequence(n *yaml.Node, field string, each func(field string, i int, v *yaml.Node)) {
	d.d.sequence(n, field, each)
}

// String decodes a scalar as its text.
func (d *Decoder) String(n *yaml.Node, field string) string { return d.d.str(n, field) }

// Bool decodes a boolean.
func (d *Decoder) Bool(n *yaml.Node, field string) bool { return d.d.bool(n, field) }

// Strings decodes a list of strings.
func (d *Decoder) Strings(n *yaml.Node, field string) []string { return d.d.strings(n, field) }

// StringMap decodes a mapping of free-form keys to strings.
func (d *Decoder) StringMap(n *yaml.Node, field string) map[string]string {
	return d.d.stringMap(n, field)
}

// Interceptors decodes an interceptors list exactly as the main file's
// (common keys read, each whole mapping kept for its type) and checks the
// rules the main file's are held to: names required, payload-free and
// unique within the document, types present, points valid.
func (d *Decoder) Interceptors(n *yaml.Node, field string) []Interceptor {
	ics := d.d.interceptors(n, field)
	v := &validator{c: &Config{Source: d.d.ps.file, Interceptors: ics, lines: d.d.lines}, ps: d.d.ps}
	v.interceptors()
	return ics
}

// Enforcement decodes the policy's part of an enforcement section (mode,
// point_modes, composition) over e, which holds the values it overrides,
// and checks the result.
func (d *Decoder) Enforcement(n *yaml.Node, field string, e *Enforcement) {
	d.Mapping(n, field, map[string]func(string, *yaml.Node){
		"mode":        func(f string, v *yaml.Node) { e.Mode = d.d.str(v, f) },
		"point_modes": func(f string, v *yaml.Node) { e.PointModes = d.d.stringMap(v, f) },
		"composition": func(f string, v *yaml.Node) {
			c := &e.Composition
			d.d.mapping(v, f, map[string]handler{
				"profile":               func(f string, v *yaml.Node) { c.Profile = d.d.str(v, f) },
				"on_approval":           func(f string, v *yaml.Node) { c.OnApproval = d.d.str(v, f) },
				"on_disagreement":       func(f string, v *yaml.Node) { c.OnDisagreement = d.d.str(v, f) },
				"on_transform_conflict": func(f string, v *yaml.Node) { c.OnTransformConflict = d.d.str(v, f) },
			})
		},
	})
	checkModes(d.problemAt, field, e.Mode, e.PointModes)
	checkComposition(d.problemAt, join(field, "composition"), e.Composition)
}

// CheckModes checks an optional mode ("" passes) and per-point modes found
// at field.mode and field.point_modes.
func (d *Decoder) CheckModes(field, mode string, pointModes map[string]string) {
	if mode == "" {
		mode = "enforce"
	}
	checkModes(d.problemAt, field, mode, pointModes)
}

// Problemf records a problem at field, on the line the field (or its
// nearest enclosing field) was read from.
func (d *Decoder) Problemf(field, format string, args ...any) { d.problemAt(field, format, args...) }

func (d *Decoder) problemAt(field, format string, args ...any) {
	if d.d.ps.covers(field) {
		return // a shape problem already explains it
	}
	d.d.ps.add(d.Line(field), field, fmt.Sprintf(format, args...))
}

// Line returns the line field was read from, or that of its nearest
// enclosing field; 0 when none was read.
func (d *Decoder) Line(field string) int {
	for f := field; f != ""; f = parent(f) {
		if line, ok := d.d.lines[f]; ok {
			return line
		}
	}
	return 0
}

// Problems returns the problems found so far.
func (d *Decoder) Problems() []Problem { return d.d.ps.list }

// ValidName reports whether s is a payload-free name, as upstream,
// interceptor and route names must be (they appear on records and metric
// labels).
func ValidName(s string) bool { return namePattern.MatchString(s) }

// ValidEnvName reports whether s can name an environment variable.
func ValidEnvName(s string) bool { return envNamePattern.MatchString(s) }
