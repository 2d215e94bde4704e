package targetpath

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		in        string
		canonical string
		alias     bool
		segs      []Segment
	}{
		{"$target", "$target", false, nil},
		{"$policy_target", "$policy_target", true, nil},
		{"$target.url", "$target.url", false, []Segment{{Name: "url"}}},
		{"$policy_target.url", "$policy_target.url", true, []Segment{{Name: "url"}}},
		{`$target["url"]`, "$target.url", false, []Segment{{Name: "url"}}},
		{"$target[0]", "$target[0]", false, []Segment{{Index: 0, IsIndex: true}}},
		{"$target[01]", "$target[1]", false, []Segment{{Index: 1, IsIndex: true}}},
		{"$target[000]", "$target[0]", false, []Segment{{Index: 0, IsIndex: true}}},
		{"$target.a-b_C9", "$target.a-b_C9", false, []Segment{{Name: "a-b_C9"}}},
		{"$target.0", "$target.0", false, []Segment{{Name: "0"}}},
		{`$target.messages[2]["content"].x[10][3]`, "$target.messages[2].content.x[10][3]", false, []Segment{
			{Name: "messages"}, {Index: 2, IsIndex: true}, {Name: "content"}, {Name: "x"},
			{Index: 10, IsIndex: true}, {Index: 3, IsIndex: true},
		}},
		{`$target["-"]`, "$target.-", false, []Segment{{Name: "-"}}},
	}
	for _, tt := range tests {
		p, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := p.String(); got != tt.canonical {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.canonical)
		}
		if p.Alias() != tt.alias {
			t.Errorf("Parse(%q).Alias() = %v", tt.in, p.Alias())
		}
		if p.IsRoot() != (len(tt.segs) == 0) {
			t.Errorf("Parse(%q).IsRoot() = %v", tt.in, p.IsRoot())
		}
		if got := p.Segments(); !reflect.DeepEqual(got, tt.segs) && !(len(got) == 0 && len(tt.segs) == 0) {
			t.Errorf("Parse(%q).Segments() = %+v, want %+v", tt.in, got, tt.segs)
		}
	}
}

func TestParseErrors(t *testing.T) {
	forbidden := []string{
		"", "x", "$", "$.x", "$[0]", "target.x", "$input.x", "$tool_call.args",
		"$Target.x", "$TARGET", "$targe", "$policy", "$policy_targe.x", " $target",
		"@target", "$$target", "$context.target", "\x00",
	}
	invalid := []string{
		"$targetfoo", "$targets.x", "$target.", "$target..a", "$target[", "$target[]",
		"$target[01x]", "$target[-1]", "$target[ 0]", "$target[0 ]", `$target["a`,
		`$target["a"`, `$target[""]`, `$target["a b"]`, `$target["a.b"]`, `$target['a']`,
		"$target.a.", "$target.a b", "$target a", "$target ", "$target.a[0", "$target.a]",
		"$target.é", "$target[99999999999999999999999]", "$policy_targetx", "$policy_target[",
		"$target/a", "$target.a*", "$target.*", "$target[*]", "$target..", "$target.a\n",
	}
	for _, s := range forbidden {
		_, err := Parse(s)
		if !errors.Is(err, ErrTargetForbidden) || errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) = %v, want ErrTargetForbidden", s, err)
		}
	}
	for _, s := range invalid {
		_, err := Parse(s)
		if !errors.Is(err, ErrInvalid) || errors.Is(err, ErrTargetForbidden) {
			t.Errorf("Parse(%q) = %v, want ErrInvalid", s, err)
		}
	}
}

func TestSegmentsIsCopy(t *testing.T) {
	p, err := Parse("$target.a")
	if err != nil {
		t.Fatal(err)
	}
	p.Segments()[0].Name = "zzz"
	if p.String() != "$target.a" {
		t.Fatalf("Segments aliases internal state: %s", p)
	}
}

func TestZeroPathIsRoot(t *testing.T) {
	var p Path
	if !p.IsRoot() || p.String() != "$target" || p.Alias() {
		t.Fatalf("zero Path = %q root=%v alias=%v", p, p.IsRoot(), p.Alias())
	}
}

// tree decodes JSON the way the project does (UseNumber).
func tree(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func compact(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReplace(t *testing.T) {
	const doc = `{"url":"http://a","list":[1,{"k":null}],"nested":{"deep":{"x":1}},"n":null}`
	tests := []struct {
		path  string
		value any
		want  string
	}{
		{"$target", "whole", `"whole"`},
		{"$policy_target", nil, `null`},
		{"$target.url", "http://b", `{"list":[1,{"k":null}],"n":null,"nested":{"deep":{"x":1}},"url":"http://b"}`},
		{`$target["url"]`, json.Number("7"), `{"list":[1,{"k":null}],"n":null,"nested":{"deep":{"x":1}},"url":7}`},
		{"$target.list[0]", "z", `{"list":["z",{"k":null}],"n":null,"nested":{"deep":{"x":1}},"url":"http://a"}`},
		{"$target.list[1].k", true, `{"list":[1,{"k":true}],"n":null,"nested":{"deep":{"x":1}},"url":"http://a"}`},
		{"$target.nested.deep", map[string]any{}, `{"list":[1,{"k":null}],"n":null,"nested":{"deep":{}},"url":"http://a"}`},
		// A member whose value is null exists and may be replaced.
		{"$target.n", "set", `{"list":[1,{"k":null}],"n":"set","nested":{"deep":{"x":1}},"url":"http://a"}`},
		{"$policy_target.nested.deep.x", []any{}, `{"list":[1,{"k":null}],"n":null,"nested":{"deep":{"x":[]}},"url":"http://a"}`},
	}
	for _, tt := range tests {
		p, err := Parse(tt.path)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.path, err)
		}
		got, err := p.Replace(tree(t, doc), tt.value)
		if err != nil {
			t.Errorf("Replace(%q): %v", tt.path, err)
			continue
		}
		if s := compact(t, got); s != tt.want {
			t.Errorf("Replace(%q) = %s, want %s", tt.path, s, tt.want)
		}
	}
}

func TestReplaceErrors(t *testing.T) {
	const doc = `{"url":"http://a","list":[1,{"k":null}],"nested":{"deep":{"x":1}},"s":"secret-value"}`
	tests := []struct {
		path, wantPrefix string
	}{
		{"$target.missing", "$target.missing"},           // final member must exist
		{"$target.missing.deep.x", "$target.missing"},    // CTK 102/103 shape
		{"$target.nested.nope", "$target.nested.nope"},   // nested add
		{"$target.list[2]", "$target.list[2]"},           // index out of range
		{"$target.list[1].k.z", "$target.list[1].k.z"},   // member step on null
		{"$target.url[0]", "$target.url[0]"},             // index step on string
		{"$target[0]", "$target[0]"},                     // index step on object
		{"$target.list.a", "$target.list.a"},             // member step on array
		{"$target.s.x", "$target.s.x"},                   // member step on string
		{"$target.list[0][0]", "$target.list[0][0]"},     // index step on number
		{"$target.list[99999].x", "$target.list[99999]"}, // intermediate out of range
		{`$target["nested"]["deep"].y`, "$target.nested.deep.y"},
	}
	for _, tt := range tests {
		p, err := Parse(tt.path)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.path, err)
		}
		root := tree(t, doc)
		before := compact(t, root)
		got, err := p.Replace(root, "NEWVALUE")
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Replace(%q) error = %v, want ErrInvalid", tt.path, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tt.wantPrefix+":") {
			t.Errorf("Replace(%q) error %q does not name %q", tt.path, msg, tt.wantPrefix)
		}
		for _, leak := range []string{"NEWVALUE", "secret-value", "http://a"} {
			if strings.Contains(msg, leak) {
				t.Errorf("Replace(%q) error %q leaks a value", tt.path, msg)
			}
		}
		if after := compact(t, got); after != before {
			t.Errorf("Replace(%q) modified root on failure: %s", tt.path, after)
		}
	}
}

func TestReplaceScalarRoot(t *testing.T) {
	p, _ := Parse("$target.a")
	for _, root := range []any{nil, "s", json.Number("1"), true, []any{}, map[string]any(nil)} {
		if _, err := p.Replace(root, 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("Replace on %#v: %v", root, err)
		}
	}
	p, _ = Parse("$target[0]")
	if _, err := p.Replace([]any(nil), 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("Replace on nil slice: %v", err)
	}
}

func TestReplaceInPlace(t *testing.T) {
	root := map[string]any{"a": map[string]any{"b": "x"}}
	inner := root["a"].(map[string]any)
	p, _ := Parse("$target.a.b")
	got, err := p.Replace(root, "y")
	if err != nil {
		t.Fatal(err)
	}
	if inner["b"] != "y" || got.(map[string]any)["a"].(map[string]any)["b"] != "y" {
		t.Fatal("Replace did not modify containers in place")
	}
}

func TestLookup(t *testing.T) {
	root := tree(t, `{"a":[{"b":null},2],"c":{"d":"e"}}`)
	tests := []struct {
		path string
		want any
		ok   bool
	}{
		{"$target", root, true},
		{"$target.a[0].b", nil, true},
		{"$target.a[1]", json.Number("2"), true},
		{`$target["c"]["d"]`, "e", true},
		{"$target.a[2]", nil, false},
		{"$target.a.b", nil, false},
		{"$target.c[0]", nil, false},
		{"$target.x", nil, false},
		{"$target.a[0].b.c", nil, false},
	}
	for _, tt := range tests {
		p, err := Parse(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := p.Lookup(root)
		if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Lookup(%q) = %#v, %v; want %#v, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"$target", "$policy_target", "$target.a", `$target["a"]`, "$target[0]", "$target[01]",
		"$target.a[1].b", "$targetfoo", "$targets.x", "$target.", `$target["a`, "$.x", "",
		"$target[99999999999999999999]", "$policy_target[3][\"x-y\"].z_", "$target..a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			inv, forb := errors.Is(err, ErrInvalid), errors.Is(err, ErrTargetForbidden)
			if inv == forb {
				t.Fatalf("Parse(%q) error %v: want exactly one class", s, err)
			}
			hasRoot := strings.HasPrefix(s, rootTarget) || strings.HasPrefix(s, rootAlias)
			if forb == hasRoot {
				t.Fatalf("Parse(%q) class forbidden=%v but root prefix=%v", s, forb, hasRoot)
			}
			return
		}
		c := p.String()
		q, err := Parse(c)
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not reparse: %v", s, c, err)
		}
		if q.String() != c || q.Alias() != p.Alias() || !reflect.DeepEqual(q.Segments(), p.Segments()) {
			t.Fatalf("round trip of %q: %q -> %q", s, c, q.String())
		}
		// Lookup and Replace must not panic on arbitrary trees.
		root := map[string]any{"a": []any{"x"}, "0": nil}
		p.Lookup(root)
		p.Replace(root, 1)
	})
}
