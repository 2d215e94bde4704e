package jsonvalue

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"strconv"
	"testing"
)

// caseLiterals returns the string literals of every case clause in file.
func caseLiterals(t *testing.T, file string) []string {
	t.Helper()
	f, err := goparser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var lits []string
	ast.Inspect(f, func(n ast.Node) bool {
		if cc, ok := n.(*ast.CaseClause); ok {
			for _, e := range cc.List {
				if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
					s, err := strconv.Unquote(bl.Value)
					if err != nil {
						t.Fatal(err)
					}
					lits = append(lits, s)
				}
			}
		}
		return true
	})
	return lits
}

// TestWellKnownReturnsItsInput pins that every interned string is the
// text it is matched against (a typo in a case's constant would change
// decoded values), and that near misses are not interned.
func TestWellKnownReturnsItsInput(t *testing.T) {
	lits := caseLiterals(t, "intern.go")
	if len(lits) < 20 {
		t.Fatalf("found only %d cases", len(lits))
	}
	for _, s := range lits {
		v := wellKnown([]byte(s))
		if v == nil || v.(string) != s {
			t.Errorf("wellKnown(%q) = %#v", s, v)
		}
		for _, miss := range []string{s + "x", s[1:], "X" + s} {
			if v := wellKnown([]byte(miss)); v != nil && v.(string) != miss {
				t.Errorf("wellKnown(%q) = %#v", miss, v)
			}
		}
		doc := `{"` + s + `":"` + s + `"}`
		got, err := DecodeStrict([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if m := got.(map[string]any); len(m) != 1 || m[s] != s {
			t.Errorf("Decode(%s) = %#v", doc, got)
		}
	}
	if wellKnown([]byte("Role")) != nil || wellKnown(nil) != nil {
		t.Error("a near miss is interned")
	}
}

// TestDecodeInternedAllocations pins the point of interning: a message
// made of well-known keys and values allocates only its map.
func TestDecodeInternedAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	doc := []byte(`{"role":"user","type":"text"}`)
	plain := []byte(`{"rolf":"usex","typf":"texu"}`)
	interned := testing.AllocsPerRun(100, func() { _, _ = DecodeStrict(doc) })
	converted := testing.AllocsPerRun(100, func() { _, _ = DecodeStrict(plain) })
	if interned+6 > converted {
		t.Errorf("interned document: %v allocations, plain one %v: want 6 fewer (4 strings, 2 boxes)", interned, converted)
	}
}
