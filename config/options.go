package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Field is the interceptor's path in problems, such as interceptors[2].
func (i Interceptor) Field() string { return index("interceptors", i.Index) }

// DecodeOptions decodes the interceptor's type-specific keys (every key but
// name, type and points) into dst, a pointer to a struct whose fields carry
// yaml tags. Decoding is strict: an unknown key, a value of the wrong shape
// or a bad duration is a problem with file, line and field, and all of them
// come back in one *Error.
//
// Supported field types: string, bool, signed integers, float64,
// time.Duration (Go syntax, such as 30s), yaml.Node (kept raw), and
// pointers, slices, string-keyed maps and structs of those.
func (i Interceptor) DecodeOptions(dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("config: DecodeOptions needs a non-nil pointer to a struct, not %T", dst)
	}
	d := &decoder{ps: &problems{file: i.File}, lines: make(map[string]int)}
	spec := i.Spec
	if spec.Kind == 0 { // a hand-built Interceptor with no options
		spec = yaml.Node{Kind: yaml.MappingNode, Line: i.Line}
	}
	if err := d.structValue(&spec, i.Field(), rv.Elem(), true); err != nil {
		return err
	}
	return d.ps.err()
}

// Problemf returns a problem located at path inside the interceptor's
// mapping ("patterns[2]", "action"; "" for the interceptor itself). The line
// is that of the value at path, or of the nearest enclosing value that
// exists.
func (i Interceptor) Problemf(path, format string, args ...any) Problem {
	field := i.Field()
	if path != "" {
		if strings.HasPrefix(path, "[") {
			field += path
		} else {
			field += "." + path
		}
	}
	return Problem{File: i.File, Line: i.lineAt(path), Field: field, Msg: fmt.Sprintf(format, args...)}
}

// lineAt finds the line of the node at path (member names and [n] indexes).
func (i Interceptor) lineAt(path string) int {
	n := &i.Spec
	line := i.Line
	if n.Kind == 0 {
		return line
	}
	for _, seg := range splitPath(path) {
		n = resolve(n)
		var next *yaml.Node
		nextLine := 0
		if idx, err := strconv.Atoi(seg); err == nil && n.Kind == yaml.SequenceNode {
			if idx >= 0 && idx < len(n.Content) {
				next = n.Content[idx]
				nextLine = resolve(next).Line
			}
		} else if n.Kind == yaml.MappingNode {
			for k := 0; k+1 < len(n.Content); k += 2 {
				if n.Content[k].Value == seg {
					next = n.Content[k+1]
					nextLine = valueLine(n.Content[k], next)
					break
				}
			}
		}
		if next == nil {
			break
		}
		n, line = resolve(next), nextLine
	}
	return line
}

// splitPath splits "a.b[2].c" into a, b, 2, c.
func splitPath(path string) []string {
	return strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	nodeType     = reflect.TypeFor[yaml.Node]()
)

// errUnsupported reports an options struct the decoder cannot fill: a bug in
// the interceptor type, not in the file.
var errUnsupported = errors.New("config: unsupported option field type")

// value decodes n into v according to v's type.
func (d *decoder) value(n *yaml.Node, field string, v reflect.Value) error {
	switch v.Type() {
	case durationType:
		v.SetInt(int64(d.duration(n, field, time.Duration(v.Int()))))
		return nil
	case nodeType:
		v.Set(reflect.ValueOf(*resolve(n)))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(d.str(n, field))
	case reflect.Bool:
		v.SetBool(d.bool(n, field))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := d.int(n, field, v.Int())
		if v.OverflowInt(i) {
			d.ps.add(resolve(n).Line, field, fmt.Sprintf("%d is out of range", i))
			return nil
		}
		v.SetInt(i)
	case reflect.Float64:
		rn := resolve(n)
		var f float64
		if rn.Kind != yaml.ScalarNode || (rn.ShortTag() != "!!int" && rn.ShortTag() != "!!float") || rn.Decode(&f) != nil {
			d.ps.add(rn.Line, field, fmt.Sprintf("must be a number (got %s)", describe(rn)))
			return nil
		}
		v.SetFloat(f)
	case reflect.Pointer:
		if isNull(resolve(n)) {
			v.SetZero()
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := d.value(n, field, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
	case reflect.Slice:
		return d.sliceValue(n, field, v)
	case reflect.Map:
		return d.mapValue(n, field, v)
	case reflect.Struct:
		return d.structValue(n, field, v, false)
	default:
		return fmt.Errorf("%w: %s (%s)", errUnsupported, v.Type(), field)
	}
	return nil
}

func (d *decoder) sliceValue(n *yaml.Node, field string, v reflect.Value) error {
	n = resolve(n)
	if isNull(n) {
		v.SetZero()
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.ps.add(n.Line, field, "must be a list")
		return nil
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, e := range n.Content {
		if err := d.value(e, index(field, i), out.Index(i)); err != nil {
			return err
		}
	}
	v.Set(out)
	return nil
}

func (d *decoder) mapValue(n *yaml.Node, field string, v reflect.Value) error {
	if v.Type().Key().Kind() != reflect.String {
		return fmt.Errorf("%w: %s (%s)", errUnsupported, v.Type(), field)
	}
	n = resolve(n)
	if isNull(n) {
		v.SetZero()
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.ps.add(n.Line, field, "must be a mapping")
		return nil
	}
	out := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	var err error
	d.pairs(n, field, mapKey, "", func(key, kf string, e *yaml.Node) bool {
		ev := reflect.New(v.Type().Elem()).Elem()
		if err == nil {
			err = d.value(e, kf, ev)
		}
		out.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), ev)
		return true
	})
	v.Set(out)
	return err
}

// structValue decodes a mapping into a struct by yaml tag (a field without
// a tag uses its lower-cased name, as go-yaml does; "-" skips it). skipCommon
// passes over the keys every interceptor has.
func (d *decoder) structValue(n *yaml.Node, field string, v reflect.Value, skipCommon bool) error {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.ps.add(n.Line, field, "must be a mapping")
		return nil
	}
	t := v.Type()
	fields := make(map[string]int, t.NumField())
	var names []string
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = strings.ToLower(sf.Name)
		}
		fields[name] = i
		names = append(names, name)
	}
	var err error
	unknown := "unknown key (expected one of " + strings.Join(slices.Sorted(slices.Values(names)), ", ") + ")"
	if len(names) == 0 {
		unknown = "unknown key (this type takes no options)"
	}
	d.pairs(n, field, join, unknown, func(key, kf string, e *yaml.Node) bool {
		if skipCommon && isCommonInterceptorKey(key) {
			return true
		}
		i, ok := fields[key]
		if !ok {
			return false
		}
		if err == nil {
			err = d.value(e, kf, v.Field(i))
		}
		return true
	})
	return err
}
