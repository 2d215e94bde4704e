package rawjson

import (
	"bytes"
	"testing"
)

// TestReplaceSpans: each span replaced, the bytes between kept, and the
// result allocated at its final size.
func TestReplaceSpans(t *testing.T) {
	src := []byte(`{"a":[ 1 , "two",{"x":3} ],"b":4}`)
	arr := Span{5, 26}
	orig := ScanArray(src, arr)
	if len(orig) != 3 {
		t.Fatalf("spans %v", orig)
	}
	elems := [][]byte{[]byte(`10`), []byte(`"2"`), []byte(`{"x":"a much longer value"}`)}
	want := `{"a":[ 10 , "2",{"x":"a much longer value"} ],"b":4}`
	got := ReplaceSpans(src, orig, elems)
	if string(got) != want || cap(got) != len(got) {
		t.Fatalf("%s (cap %d), want %s", got, cap(got), want)
	}
	arrOut := RenderArray(src, arr, orig, elems)
	if string(arrOut) != `[ 10 , "2",{"x":"a much longer value"} ]` || cap(arrOut) != len(arrOut) {
		t.Fatalf("RenderArray %s (cap %d)", arrOut, cap(arrOut))
	}
	if !bytes.Equal(ReplaceSpans(src, nil, nil), src) {
		t.Fatal("no replacement changed the bytes")
	}
}
