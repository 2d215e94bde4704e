package rawjson

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestKnownKeyReturnsItsInput pins that every interned key is the text it
// is matched against, so DecodeKey returns what the token holds.
func TestKnownKeyReturnsItsInput(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "keys.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		cc, ok := node.(*ast.CaseClause)
		if !ok {
			return true
		}
		for _, e := range cc.List {
			s, err := strconv.Unquote(e.(*ast.BasicLit).Value)
			if err != nil {
				t.Fatal(err)
			}
			n++
			if got := knownKey([]byte(s)); got != s {
				t.Errorf("knownKey(%q) = %q", s, got)
			}
			if got, err := DecodeKey([]byte(`"` + s + `"`)); err != nil || got != s {
				t.Errorf("DecodeKey(%q) = %q, %v", s, got, err)
			}
			if got := knownKey([]byte(s + "_")); got != "" {
				t.Errorf("knownKey(%q) = %q", s+"_", got)
			}
		}
		return true
	})
	if n < 10 {
		t.Fatalf("found only %d cases", n)
	}
}
