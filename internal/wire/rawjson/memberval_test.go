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
