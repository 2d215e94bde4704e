package rawjson

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonmutate"
)

// validDoc is validValue over a whole document, as json.Valid judges one.
func validDoc(b []byte) bool {
	i := SkipSpace(b, 0)
	end, ok := validValue(b, i, 0)
	return ok && SkipSpace(b, end) == len(b)
}

var validSeeds = []string{
	``, ` `, `{}`, `[]`, `""`, `"\u00e9\ud800"`, "\"\xff\xfe\"", `"\x"`, `"\u12"`, `"a` + "\x01" + `"`,
	`0`, `-0`, `01`, `1.`, `1.5e+3`, `-`, `1e`, `tru`, `true`, `nul`, `null `, `false1`,
	`{"a":1,}`, `{"a" 1}`, `{"a":1 "b":2}`, `{1:2}`, `[1,,2]`, `[1 2]`, `[1,]`, `{"a":[{"b":null}],"c":"d"}`,
	` {"model":"m","messages":[{"role":"user","content":"hi"}]} `, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"":1,"b":[]}`, `{"a":1}x`, `{"a":1}}`, `[[[]]`,
}

// TestValidValueMatchesValid checks the validator against encoding/json
// on seeds and thousands of random mutations of them.
func TestValidValueMatchesValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 16))
	for _, s := range validSeeds {
		b := []byte(s)
		if got, want := validDoc(b), json.Valid(b); got != want {
			t.Errorf("validDoc(%q) = %v, json.Valid %v", b, got, want)
		}
		for range 2000 {
			m := jsonmutate.Bytes(rng, b)
			if got, want := validDoc(m), json.Valid(m); got != want {
				t.Fatalf("validDoc(%q) = %v, json.Valid %v", m, got, want)
			}
			checkScanRootValid(t, m)
		}
	}
}

func FuzzValidValueMatchesValid(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validDoc(b), json.Valid(b); got != want {
			t.Fatalf("validDoc(%q) = %v, json.Valid %v", b, got, want)
		}
		checkScanRootValid(t, b)
	})
}

// checkScanRootValid checks that ScanRootValid accepts exactly the valid
// objects without a repeated top-level key, with ScanObject's members.
func checkScanRootValid(t *testing.T, b []byte) {
	t.Helper()
	_, ms, ok := ScanRootValid(b)
	want := json.Valid(b) && b[SkipSpace(b, 0)] == '{'
	if want {
		_, err := ScanObject(b, RootSpan(b))
		want = err == nil
	}
	if ok != want {
		t.Fatalf("ScanRoot(%q) ok = %v, want %v", b, ok, want)
	}
	if ok {
		old, _ := ScanObject(b, RootSpan(b))
		if len(old) != len(ms) {
			t.Fatalf("ScanRoot(%q) members differ from ScanObject", b)
		}
		for i := range ms {
			if ms[i] != old[i] {
				t.Fatalf("ScanRoot(%q) member %d = %+v, ScanObject %+v", b, i, ms[i], old[i])
			}
		}
	}
}

// TestValidValueNesting pins encoding/json's nesting limit.
func TestValidValueNesting(t *testing.T) {
	for _, n := range []int{maxNesting, maxNesting + 1} {
		b := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		if got, want := validDoc(b), json.Valid(b); got != want {
			t.Errorf("depth %d: validDoc %v, json.Valid %v", n, got, want)
		}
		// The object and n-1 arrays: n levels, as b has.
		obj := []byte(`{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
		if !json.Valid(obj) != (n > maxNesting) {
			t.Fatalf("object, depth %d: json.Valid %v", n, json.Valid(obj))
		}
		if got, want := validDoc(obj), json.Valid(obj); got != want {
			t.Errorf("object, depth %d: validDoc %v, json.Valid %v", n, got, want)
		}
		// ScanRoot and ScanRootValid validate member values as nested in
		// the root object: the limit counts it.
		if _, _, got := ScanRootValid(obj); got != json.Valid(obj) {
			t.Errorf("object, depth %d: ScanRootValid %v, json.Valid %v", n, got, json.Valid(obj))
		}
		if _, _, got := ScanRoot(obj, "messages"); got != json.Valid(obj) {
			t.Errorf("object, depth %d: ScanRoot %v, json.Valid %v", n, got, json.Valid(obj))
		}
	}
}

// TestScanArrayChecked checks the array syntax around elements and that
// CountElements stays inside the span on invalid arrays.
func TestScanArrayChecked(t *testing.T) {
	for _, c := range []struct {
		in string
		n  int
		ok bool
	}{
		{`[]`, 0, true}, {`[ ]`, 0, true}, {`[1]`, 1, true}, {`[ {"a":"]"} , 2 ]`, 2, true},
		{`[1,]`, 0, false}, {`[,1]`, 2, true /* the empty element fails its decode */}, {`[1 2]`, 0, false}, {`[1`, 0, false}, {`{}`, 0, false},
	} {
		b := []byte(c.in)
		es, ok := ScanArrayChecked(b, Span{0, len(b)})
		if ok != c.ok || ok && len(es) != c.n {
			t.Errorf("ScanArrayChecked(%s) = %v, %v", c.in, es, ok)
		}
		_ = CountElements(b, Span{0, len(b)}, -1) // must not panic
	}
	b := []byte(`{"messages":[1 "x],"b":"]}`)
	_, ms, ok := ScanRoot(b, "messages")
	if !ok {
		t.Fatal("ScanRoot refused the lazy member's garbage")
	}
	_ = CountElements(b, ms[0].Val, -1)
	if _, ok := ScanArrayChecked(b, ms[0].Val); ok {
		t.Error("ScanArrayChecked accepted garbage")
	}
}

// TestValidElement: an element is valid exactly when encoding/json
// says its bytes are, spans out of range are not.
func TestValidElement(t *testing.T) {
	for _, v := range []string{`{"a":[1,2,{"b":null}]}`, `"x\u00e9"`, `nul`, `{"a":}`, `[1,]`, `tru`, `1e5`, `-`, `{"a":1}}`, `"\x01"`} {
		b := []byte(`[` + v + `]`)
		s := Span{Start: 1, End: 1 + len(v)}
		if got, want := ValidElement(b, s, 2), json.Valid([]byte(v)); got != want {
			t.Errorf("%s: ValidElement %v, json.Valid %v", v, got, want)
		}
	}
	if ValidElement([]byte(`[1]`), Span{Start: 1, End: 9}, 2) || ValidElement([]byte(`[1]`), Span{Start: 1, End: 1}, 2) {
		t.Error("a span out of range is valid")
	}
}
