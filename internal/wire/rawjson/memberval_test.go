package rawjson

import "testing"

// TestMemberValueMatchesScanObject: MemberValue finds what ScanObject and
// Find find in objects without duplicate members, escaped names included.
func TestMemberValueMatchesScanObject(t *testing.T) {
	for _, doc := range []string{
		`{}`, ` { } `, `{"content":[1,2]}`, `{"role":"user","content":"hi"}`,
		`{ "a" : {"content":1} , "content" : [ {"x":"}"} ] }`, `{"cont\u0065nt":"esc"}`,
		`{"con\"tent":1,"content":2}`, `{"a\\b":1,"content":null}`, `{"x":"content","y":3}`,
		`{"input":{"cmd":"ls"},"id":"t1","name":"Bash"}`, `{"é":1,"content":true}`,
	} {
		b := []byte(doc)
		root := RootSpan(b)
		ms, err := ScanObject(b, root)
		if err != nil {
			t.Fatal(doc, err)
		}
		for _, key := range []string{"content", "input", "id", "a\\b", "con\"tent", "é", "missing"} {
			want, wantOK := Span{}, false
			if i := Find(ms, key); i >= 0 {
				want, wantOK = ms[i].Val, true
			}
			got, ok := MemberValue(b, root, key)
			if got != want || ok != wantOK {
				t.Errorf("%s %q: got %v %v, want %v %v", doc, key, got, ok, want, wantOK)
			}
		}
	}
}

// TestScanObjectIntoMatchesScanObject: the same members and errors, in
// the caller's storage while they fit.
func TestScanObjectIntoMatchesScanObject(t *testing.T) {
	var buf [2]Member
	for _, doc := range []string{`{}`, `{"a":1}`, `{"a":1,"b":[2]}`, `{"a":1,"b":2,"c":{"d":3}}`, `{"a":1,"a":2}`, `{"x\u0061":1,"xa":2}`} {
		b := []byte(doc)
		want, werr := ScanObject(b, RootSpan(b))
		got, err := ScanObjectInto(b, RootSpan(b), buf[:])
		if (err == nil) != (werr == nil) || len(got) != len(want) {
			t.Fatalf("%s: %v %v, want %v %v", doc, got, err, want, werr)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: member %d %v, want %v", doc, i, got[i], want[i])
			}
		}
		if len(got) > 0 && len(got) <= len(buf) && &got[0] != &buf[0] {
			t.Errorf("%s: members not in the caller's storage", doc)
		}
	}
}

// TestSpliceOwnedMatchesSplice: the same bytes, repl itself when the span
// is the whole source.
func TestSpliceOwnedMatchesSplice(t *testing.T) {
	src := []byte(` {"a":1} `)
	for _, s := range []Span{{0, len(src)}, {1, 8}, {0, 0}, {9, 9}} {
		repl := []byte(`{"b":2}`)
		want := Splice(src, s, repl)
		got := SpliceOwned(src, s, repl)
		if string(got) != string(want) {
			t.Errorf("%v: %q, want %q", s, got, want)
		}
		if (s == Span{0, len(src)}) && &got[0] != &repl[0] {
			t.Errorf("%v: repl copied", s)
		}
	}
}
