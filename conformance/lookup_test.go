package conformance

import (
	"bytes"
	"encoding/json"
	"testing"
)

func tree(t *testing.T, src string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(src)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", src, err)
	}
	return v
}

func TestLookup(t *testing.T) {
	root := tree(t, `{
		"a": {"b": [10, {"c": "x"}], "n": null},
		"response": {"tool_calls": [{"name": "calc"}]},
		"m": [[1, 2], [3, 4]],
		"arr": [{"k": "v"}]
	}`)
	cases := []struct {
		path string
		want string // JSON of the resolved value; "" means must not resolve
	}{
		{"a.b[1].c", `"x"`},
		{"a.b[0]", `10`},
		{"a..b[0]", `10`},
		{".a.b[0].", `10`},
		{"response.tool_calls[0].name", `"calc"`},
		{"m[1][0]", `3`},
		{"arr[0]k", `"v"`},
		{"arr[0].k", `"v"`},
		{"a.n", `null`},
		{"a.b[+1].c", `"x"`}, // the oracle's integer parse accepts a leading '+'
		{"a.missing", ""},
		{"a.n.deeper", ""},
		{"a.b[2]", ""},
		{"a.b[ 0]", ""},
		{"a.b[-1]", ""},
		{`a.b["x"]`, ""},
		{"a.b[]", ""},
		{"a.b[0", ""},
		{"a.b.0", ""},     // a member lookup on an array fails
		{"a[0]", ""},      // an index on an object fails
		{"a.b[1][0]", ""}, // an index on an object fails
		{"a.b[99999999999999999999]", ""},
	}
	for _, c := range cases {
		got, ok := Lookup(root, c.path)
		if c.want == "" {
			if ok {
				t.Errorf("Lookup(%q) = %s, want unresolved", c.path, compact(got))
			}
			continue
		}
		if !ok {
			t.Errorf("Lookup(%q) did not resolve, want %s", c.path, c.want)
			continue
		}
		if !JSONEqual(got, tree(t, c.want)) {
			t.Errorf("Lookup(%q) = %s, want %s", c.path, compact(got), c.want)
		}
	}
	if got, ok := Lookup(root, ""); !ok || !JSONEqual(got, root) {
		t.Error("the empty path must return the root")
	}
}

func TestLookupTypedValues(t *testing.T) {
	type call struct {
		Name string         `json:"name"`
		Args map[string]int `json:"args"`
	}
	ctx := map[string]any{
		"tool_call": call{Name: "calc", Args: map[string]int{"n": 2}},
		"list":      []string{"a", "b"},
	}
	if got, ok := Lookup(ctx, "tool_call.args.n"); !ok || !JSONEqual(got, json.Number("2")) {
		t.Errorf("typed struct lookup = %v, %v", got, ok)
	}
	if got, ok := Lookup(ctx, "list[1]"); !ok || got != "b" {
		t.Errorf("typed slice lookup = %v, %v", got, ok)
	}
}

func TestMatchAll(t *testing.T) {
	ctx := tree(t, `{"tool_call": {"name": "wire", "args": {"amount": 100}}, "target": null}`)
	cases := []struct {
		match string
		want  bool
	}{
		{`{}`, true},
		{`{"tool_call.name": "wire"}`, true},
		{`{"tool_call.name": "wire", "tool_call.args.amount": 100}`, true},
		{`{"tool_call.name": "wire", "tool_call.args.amount": 100.0}`, false},
		{`{"tool_call.name": "other"}`, false},
		{`{"tool_call.missing": null}`, false},
		{`{"target": null}`, true},
		{`{"tool_call.args": {"amount": 100}}`, true},
		{`{"tool_call.args": {}}`, false},
	}
	for _, c := range cases {
		m := tree(t, c.match).(map[string]any)
		if got := MatchAll(ctx, m); got != c.want {
			t.Errorf("MatchAll(%s) = %v, want %v", c.match, got, c.want)
		}
	}
	if !MatchAll(ctx, nil) {
		t.Error("a nil match always holds")
	}
}

func TestCloneValue(t *testing.T) {
	orig := tree(t, `{"a": [1, {"b": 9007199254740993}], "c": null}`)
	c := CloneValue(orig)
	if !JSONEqual(c, orig) {
		t.Fatal("clone differs")
	}
	c.(map[string]any)["a"].([]any)[1].(map[string]any)["b"] = "changed"
	if got, _ := Lookup(orig, "a[1].b"); got != json.Number("9007199254740993") {
		t.Errorf("clone shares structure or lost the token: %v", got)
	}
	if got := CloneValue(map[string]float64{"x": 1.5}); !JSONEqual(got, tree(t, `{"x": 1.5}`)) {
		t.Errorf("typed clone = %v", got)
	}
}
