package jsonvalue

import (
	"strings"
	"testing"
)

// A deep path is elided in the middle so the error stays short and still
// names both ends of the path and the problem.
func TestDeepPathIsElided(t *testing.T) {
	v, err := Decode([]byte(`{"messages":` + strings.Repeat("[", 300) + `{"inner":1}` + strings.Repeat("]", 300) + `}`))
	if err != nil {
		t.Fatal(err)
	}
	err = Check(v, Limits{MaxDepth: 128})
	if err == nil {
		t.Fatal("a 300-deep value passed a 128-level bound")
	}
	msg := err.Error()
	if len(msg) > 200 || !strings.HasPrefix(msg, "jsonvalue: $.messages[0]") || !strings.Contains(msg, "…") ||
		!strings.HasSuffix(msg, "exceeds 128 levels") {
		t.Fatalf("error = %q (%d bytes)", msg, len(msg))
	}
	// A shallow path is rendered whole.
	v, _ = Decode([]byte(`{"a":[[{"b":[[1]]}]]}`))
	err = Check(v, Limits{MaxDepth: 5})
	if err == nil || !strings.Contains(err.Error(), "${member 0}[0][0]{member 0}[0]") || strings.Contains(err.Error(), "…") {
		t.Fatalf("error = %v", err)
	}
}
