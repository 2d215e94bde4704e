package rawjson

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkCorpus holds documents on every edge CheckDocument must agree with
// encoding/json.Valid and HasDuplicateKeys on.
var checkCorpus = []string{
	``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `1.5e+3`, `01`, `1.`, `.5`, `-`, `1e`, `true`, `tru`, `nul`, `null `, ` false`,
	`{"a":1}`, `{"a":1,"a":2}`, `{"a":1,"b":{"a":1}}`, `{"a":{"b":1,"b":2}}`, `[{"a":1},{"a":1}]`, `[{"a":1,"a":1}]`,
	`{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{"a":}`, `{a:1}`, `{"a":1}x`, `{"a":1} {}`, `{"a":1`, `["a`,
	`{"a":1,"\u0061":2}`, `{"\u00e9":1,"é":2}`, `{"\ud800":1,"\udbff":2}`, `{"\ud800":1}`, `"\ud800"`, `"\u12"`, `"\x"`,
	"\"\xff\"", "{\"\xff\":1,\"\xfe\":2}", "{\"\xff\":1,\"\\ufffd\":2}", "{\"a\\u00ff\xff\":1,\"a\\u00ff\\ufffd\":2}",
	"\"a\tb\"", "\"a\x01\"", "\"\x7f\"", `"\/\b\f\n\r\t\"\\"`, `{"":1,"":2}`, "\t{\r\n\"a\" : [ 1 , 2 ] }\n",
	`{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":1}}`,
}

// hasDuplicateKeysOld is the recursive HasDuplicateKeys that one
// CheckDocument pass replaced, kept as the reference the pass is checked
// against: whether any object in the value at s repeats a key.
func hasDuplicateKeysOld(b []byte, s Span) bool {
	switch s.Kind(b) {
	case '{':
		ms, err := ScanObject(b, s)
		if err != nil {
			return true
		}
		for _, m := range ms {
			if k := m.Val.Kind(b); (k == '{' || k == '[') && hasDuplicateKeysOld(b, m.Val) {
				return true
			}
		}
	case '[':
		for _, e := range ScanArray(b, s) {
			if k := e.Kind(b); (k == '{' || k == '[') && hasDuplicateKeysOld(b, e) {
				return true
			}
		}
	}
	return false
}

func oldCheck(b []byte) (Span, bool, bool) {
	if !json.Valid(b) {
		return Span{}, false, false
	}
	root := RootSpan(b)
	return root, true, hasDuplicateKeysOld(b, root)
}

func agree(t *testing.T, doc string) {
	t.Helper()
	root, valid, dup := CheckDocument([]byte(doc))
	oroot, ovalid, odup := oldCheck([]byte(doc))
	if valid != ovalid || dup != odup || root != oroot {
		t.Fatalf("CheckDocument(%q) = %v valid=%v dup=%v; old: %v %v %v", doc, root, valid, dup, oroot, ovalid, odup)
	}
}

func TestCheckDocumentCorpus(t *testing.T) {
	for _, doc := range checkCorpus {
		agree(t, doc)
	}
}

func TestCheckDocumentLargeObjects(t *testing.T) {
	for _, n := range []int{15, 16, 17, 40} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = `"k` + strings.Repeat("x", i) + `":1`
		}
		agree(t, "{"+strings.Join(keys, ",")+"}")
		for j := range n { // a repeat of each earlier key
			agree(t, "{"+strings.Join(keys, ",")+","+keys[j]+"}")
		}
	}
}

func TestCheckDocumentNesting(t *testing.T) {
	for _, d := range []int{9999, 10000, 10001} {
		agree(t, strings.Repeat("[", d)+strings.Repeat("]", d))
		agree(t, strings.Repeat(`{"a":`, d-1)+"{}"+strings.Repeat("}", d-1))
	}
}

// TestCheckDocumentRandom mutates the corpus at random: every result must
// match the two-pass check.
func TestCheckDocumentRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	alphabet := []byte("{}[]\",:\\u0aAe.-+ \t\n\x01\xff\xc3\xa9truefalsn")
	for range 50000 {
		b := []byte(checkCorpus[r.IntN(len(checkCorpus))])
		for range 1 + r.IntN(4) {
			switch op := r.IntN(3); {
			case op == 0 || len(b) == 0:
				at := r.IntN(len(b) + 1)
				b = append(b[:at], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[at:]...)...)
			case op == 1:
				at := r.IntN(len(b))
				b = append(b[:at], b[at+1:]...)
			default:
				b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
			}
		}
		agree(t, string(b))
	}
}

func FuzzCheckDocument(f *testing.F) {
	for _, doc := range checkCorpus {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) { agree(t, doc) })
}

// sameScan checks ScanObjectInterned against ScanObject on every object of
// a valid document.
func sameScan(t *testing.T, b []byte, s Span, keys KeyTable) {
	t.Helper()
	switch s.Kind(b) {
	case '{':
		want, werr := ScanObject(b, s)
		got, err := ScanObjectInterned(b, s, keys)
		if werr != err || len(got) != len(want) {
			t.Fatalf("ScanObjectInterned(%q) = %v, %v; ScanObject: %v, %v", b[s.Start:s.End], got, err, want, werr)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("ScanObjectInterned(%q) = %v; ScanObject: %v", b[s.Start:s.End], got, want)
			}
		}
		for _, m := range want {
			sameScan(t, b, m.Val, keys)
		}
	case '[':
		for _, e := range ScanArray(b, s) {
			sameScan(t, b, e, keys)
		}
	}
}

func TestScanObjectInterned(t *testing.T) {
	keys := NewKeyTable(NewMemberSet("a", "b", "choices", "é", ""), NewMemberSet("usage"))
	r := rand.New(rand.NewPCG(16, 2))
	alphabet := []byte("{}[]\",:\\u0aAbe.-+ \t\n\xff\xc3\xa9")
	docs := append(checkCorpus, `{"a":1,"b":2,"c":{"a":[{"b":1}]},"\u0061b":3,"choices":[]}`)
	for n := 15; n <= 18; n++ {
		var sb strings.Builder
		sb.WriteString("{")
		for i := range n {
			if i > 0 {
				sb.WriteString(",")
			}
			sb.WriteString(`"k` + strings.Repeat("a", i) + `":1`)
		}
		docs = append(docs, sb.String()+"}", sb.String()+`,"k":2}`)
	}
	for _, d := range docs {
		if root, valid, _ := CheckDocument([]byte(d)); valid {
			sameScan(t, []byte(d), root, keys)
		}
	}
	for range 50000 {
		b := []byte(docs[r.IntN(len(docs))])
		for range 1 + r.IntN(3) {
			at := r.IntN(len(b) + 1)
			if r.IntN(2) == 0 || at == len(b) {
				b = append(b[:at:at], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[at:]...)...)
			} else {
				b = append(b[:at:at], b[at+1:]...)
			}
		}
		if root, valid, _ := CheckDocument(b); valid {
			sameScan(t, b, root, keys)
		}
	}
}

// TestHasDuplicateKeysSpans: on every value inside a valid document (the
// spans callers pass) HasDuplicateKeys answers as the recursive check did;
// a span that is not a value counts as a duplicate.
func TestHasDuplicateKeysSpans(t *testing.T) {
	var walk func(b []byte, s Span)
	walk = func(b []byte, s Span) {
		if got, want := HasDuplicateKeys(b, s), hasDuplicateKeysOld(b, s); got != want {
			t.Fatalf("HasDuplicateKeys(%q) = %v, recursive check %v", b[s.Start:s.End], got, want)
		}
		switch s.Kind(b) {
		case '{':
			if ms, err := ScanObject(b, s); err == nil {
				for _, m := range ms {
					walk(b, m.Val)
				}
			}
		case '[':
			for _, e := range ScanArray(b, s) {
				walk(b, e)
			}
		}
	}
	docs := append(checkCorpus, `{"a":[{"b":1,"c":{"b":2,"b":3}}],"d":{"\u0065":1,"e":2},"f":"x"}`, `[1,{"a":{"a":{"a":1}}},[[{"x":1,"x":1}]]]`)
	for _, d := range docs {
		if json.Valid([]byte(d)) {
			walk([]byte(d), RootSpan([]byte(d)))
		}
	}
	if b := []byte(`{"a":{"b":1}}`); !HasDuplicateKeys(b, Span{0, 8}) {
		t.Fatal("a span that is not a value passed as free of duplicates")
	}
}
