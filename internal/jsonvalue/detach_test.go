package jsonvalue

import (
	"encoding/json"
	"testing"
	"unsafe"
)

// TestDetach: the copy equals the original and shares none of its
// string bytes, so it keeps no decoded text alive.
func TestDetach(t *testing.T) {
	text := NewText([]byte(`{"role":"tool","content":[{"type":"text","text":"a long tool output"}],"n":12.5,"ok":true,"none":null,"empty":{},"list":[]}`))
	v, err := text.Decode(0, len(text.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	d := Detach(v)
	if !Equal(v, d) {
		t.Fatal("the detached copy differs")
	}
	whole := text.s // the string decoded strings slice
	lo := uintptr(unsafe.Pointer(unsafe.StringData(whole)))
	hi := lo + uintptr(len(whole))
	inBody := func(s string) bool {
		if s == "" {
			return false
		}
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return p >= lo && p < hi
	}
	if s := v.(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string); !inBody(s) {
		t.Fatal("the decoded string does not slice the text: the check below proves nothing")
	}
	var walk func(x any)
	walk = func(x any) {
		switch y := x.(type) {
		case string:
			if inBody(y) {
				t.Fatalf("%q still points into the body", y)
			}
		case json.Number:
			walk(string(y))
		case map[string]any:
			for k, e := range y {
				walk(k)
				walk(e)
			}
		case []any:
			for _, e := range y {
				walk(e)
			}
		}
	}
	walk(d)
}
