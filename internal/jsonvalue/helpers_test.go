package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func mustDecode(t testing.TB, s string) any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatalf("Decode(%q): %v", s, err)
	}
	return v
}

// stdCompact is the oracle for Marshal: encoding/json with HTML escaping
// off, trailing newline removed.
func stdCompact(t testing.TB, v any) string {
	t.Helper()
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func mustMarshal(t testing.TB, v any) string {
	t.Helper()
	b, err := Marshal(v)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return string(b)
}

// wantPathErr asserts err wraps sentinel, is a *PathError at path, and does
// not contain any of the forbidden substrings (values that must not leak).
func wantPathErr(t *testing.T, err, sentinel error, path string, forbidden ...string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v, want %v", err, sentinel)
	}
	var pe *PathError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T is not a *PathError", err)
	}
	if pe.Path != path {
		t.Fatalf("error path %q, want %q (%v)", pe.Path, path, err)
	}
	if !strings.Contains(err.Error(), path+":") {
		t.Fatalf("message %q does not name %q", err, path)
	}
	for _, f := range forbidden {
		if strings.Contains(err.Error(), f) {
			t.Fatalf("message %q leaks %q", err, f)
		}
	}
}

// mutateAll changes every container in v in place: maps gain a key and
// lose their values, slice elements become a marker.
func mutateAll(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			mutateAll(e)
			x[k] = "mutated"
		}
		x["__added"] = true
	case []any:
		for i, e := range x {
			mutateAll(e)
			x[i] = "mutated"
		}
	}
}
