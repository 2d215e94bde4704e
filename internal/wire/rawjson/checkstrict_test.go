package rawjson

import (
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// checkStrictCases are documents at the edges of what CheckStrict
// accepts, and whether it does.
var checkStrictCases = []struct {
	doc string
	ok  bool
}{
	{`{"a":1,"b":[true,false,null,"x"],"c":{"d":-1.5e3}}`, true},
	{` [ ] `, true},
	{`"\u00e9\n\"\\\/"`, true},
	{`"é"`, true},
	{`"\\ud800"`, true}, // an escaped backslash, then text
	{`{"a":1,"a":2}`, false},
	{`{"a":1,"\u0061":2}`, false},
	{`[{"a":{"b":1,"b":1}}]`, false},
	{`"\ud800"`, false},
	{`"\udc00"`, false},
	{`"\ud83d\ude00"`, false}, // a valid pair: left to the decoder
	{`"\uD800"`, false},
	{"\"\xff\"", false},
	{"\"\xc3\"", false},
	{`{"a":1`, false},
	{`{"a":01}`, false},
	{`[1,]`, false},
	{`1 2`, false},
	{``, false},
}

func TestCheckStrict(t *testing.T) {
	for _, c := range checkStrictCases {
		root, ok := CheckStrict([]byte(c.doc))
		if ok != c.ok {
			t.Errorf("%q: ok %v, want %v", c.doc, ok, c.ok)
		}
		if ok && c.doc[root.Start:root.End] != trimSpace(c.doc) {
			t.Errorf("%q: root %v", c.doc, root)
		}
	}
}

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && IsSpace(s[i]) {
		i++
	}
	for j > i && IsSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// FuzzCheckStrict: what CheckStrict accepts, DecodeStrict accepts.
func FuzzCheckStrict(f *testing.F) {
	for _, c := range checkStrictCases {
		f.Add(c.doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if _, ok := CheckStrict([]byte(doc)); ok {
			if _, err := jsonvalue.DecodeStrict([]byte(doc)); err != nil {
				t.Fatalf("%q: CheckStrict accepts, DecodeStrict refuses: %v", doc, err)
			}
		}
	})
}
