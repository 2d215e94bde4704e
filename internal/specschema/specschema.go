// Package specschema validates contexts and records against the
// AGENT-HOOKS-0.1 JSON schemas (draft 2020-12) vendored under
// conformance/spec, compiled once by Load. Violations name the JSON path of
// the offending member and never quote the instance's values.
package specschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/hooks-gateway/hooks-gateway/conformance/spec"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// baseURL is the $id prefix the schemas share; they are registered under
// their own ids so their relative $refs resolve without a network.
const baseURL = "https://responsibleai.github.io/agent-hooks/schema/v0.1/"

// RecordSchema is the file name of the interception record schema.
const RecordSchema = "interception-record.schema.json"

// Points are the interception points with a per-point context schema.
var points = [...]string{
	"agent_startup", "input", "pre_model_call", "post_model_call",
	"pre_tool_call", "post_tool_call", "output", "agent_shutdown",
}

// Set is the compiled record schema and per-point context schemas. It is
// immutable and safe for concurrent use.
type Set struct {
	record   *jsonschema.Schema
	contexts map[string]*jsonschema.Schema
}

// Load compiles the embedded schemas.
func Load() (*Set, error) {
	return LoadFS(spec.Schemas())
}

// LoadFS compiles the schemas of fsys, laid out as the spec's schema
// folder (tests use it to check a changed schema is picked up).
func LoadFS(fsys fs.FS) (*Set, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat() // timestamps must be RFC 3339 date-times, not just strings
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".schema.json") {
			return err
		}
		f, err := fsys.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return c.AddResource(baseURL+path, doc)
	})
	if err != nil {
		return nil, fmt.Errorf("specschema: %w", err)
	}
	s := &Set{contexts: make(map[string]*jsonschema.Schema, len(points))}
	if s.record, err = c.Compile(baseURL + RecordSchema); err != nil {
		return nil, fmt.Errorf("specschema: %w", err)
	}
	for _, p := range points {
		if s.contexts[p], err = c.Compile(baseURL + "agent-context/" + p + ".schema.json"); err != nil {
			return nil, fmt.Errorf("specschema: %w", err)
		}
	}
	return s, nil
}

// Violation is the first member of an instance a schema rejected.
type Violation struct {
	// Path is the member's JSON path from the instance's root, as
	// "tool_result.is_error" or "response.tool_calls[0].args"; "" is the
	// root itself.
	Path string
	// Keyword is the schema keyword that failed ("type", "enum", …).
	Keyword string
	// Msg says what the schema wants, without the instance's value.
	Msg string
}

func (v *Violation) Error() string {
	if v.Path == "" {
		return v.Msg
	}
	return v.Path + ": " + v.Msg
}

// ValidateContext checks ctx, a decoded JSON object (numbers as
// json.Number or Go numbers), against point's context schema. It returns
// a *Violation, or an error for an unknown point.
func (s *Set) ValidateContext(point string, ctx any) error {
	sch, ok := s.contexts[point]
	if !ok {
		return fmt.Errorf("specschema: no context schema for interception point %q", point)
	}
	return violation(sch.Validate(ctx), ctx)
}

// ValidateRecord checks rec, a decoded interception record, against
// interception-record.schema.json. It returns a *Violation.
func (s *Set) ValidateRecord(rec any) error {
	return violation(s.record.Validate(rec), rec)
}

// ValidateJSON decodes b and validates it as a context of point, or as a
// record when point is "". A decoding error names an offset, never the
// input.
func (s *Set) ValidateJSON(point string, b []byte) error {
	v, err := jsonvalue.Decode(b)
	if err != nil {
		return fmt.Errorf("specschema: %w", err)
	}
	if point == "" {
		return s.ValidateRecord(v)
	}
	return s.ValidateContext(point, v)
}

// violation turns a validation error into the Violation of its first leaf.
func violation(err error, inst any) error {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("specschema: %w", err)
	}
	for len(ve.Causes) > 0 {
		if _, ok := ve.ErrorKind.(*kind.PropertyNames); ok {
			break // its causes are about the name, located nowhere in the instance
		}
		ve = ve.Causes[0]
	}
	v := &Violation{Path: jsonPath(ve.InstanceLocation, inst)}
	if kp := ve.ErrorKind.KeywordPath(); len(kp) > 0 {
		v.Keyword = kp[len(kp)-1]
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Type:
		v.Msg = "must be of type " + strings.Join(k.Want, " or ")
	case *kind.Enum:
		v.Msg = "must be one of " + list(k.Want)
	case *kind.Const:
		v.Msg = "must be " + list([]any{k.Want})
	case *kind.Required:
		v.Path = join(v.Path, k.Missing[0])
		v.Msg = "is required"
	case *kind.AdditionalProperties:
		v.Msg = "has members the schema does not define"
	case *kind.PropertyNames:
		// jsonschema v6.0.3 shares the slice behind a propertyNames
		// error's InstanceLocation with later siblings; the schema
		// location names the member reliably.
		v.Path = propertiesPath(ve.SchemaURL)
		v.Msg = "has a member whose name the schema does not allow"
	case *kind.Pattern:
		v.Msg = "must match " + k.Want
	case *kind.MinLength:
		v.Msg = "must have at least " + strconv.Itoa(k.Want) + " characters"
	case *kind.Minimum:
		v.Msg = "must be at least " + k.Want.RatString()
	case *kind.Format:
		v.Msg = "must be a " + k.Want
	default:
		v.Msg = "violates the schema's " + v.Keyword + " keyword"
	}
	return v
}

// list writes schema values (never instance values) for a message.
func list(vals []any) string {
	parts := make([]string, len(vals))
	for i, x := range vals {
		b, _ := json.Marshal(x)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

// jsonPath writes loc as a dotted path, indexing arrays with [i]: it walks
// inst so that a numeric object key stays a member name.
func jsonPath(loc []string, inst any) string {
	var b strings.Builder
	cur := inst
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
		case map[string]any:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
			cur = c[tok]
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
			cur = nil
		}
	}
	return b.String()
}

// propertiesPath is the member path a schema location's "properties"
// keywords spell ("…#/properties/extensions/propertyNames" → "extensions").
func propertiesPath(schemaURL string) string {
	_, frag, _ := strings.Cut(schemaURL, "#")
	toks := strings.Split(strings.Trim(frag, "/"), "/")
	var names []string
	for i := 0; i+1 < len(toks); i++ {
		if toks[i] == "properties" {
			names = append(names, toks[i+1])
			i++
		}
	}
	return strings.Join(names, ".")
}

func join(path, member string) string {
	if path == "" {
		return member
	}
	return path + "." + member
}
