package proxy

import (
	"net/http"
	"testing"
)

// TestDirectHeaderKeysCanonical: the headers set by map assignment (one
// value array per response, see oneValue) use the keys Header.Set would.
func TestDirectHeaderKeysCanonical(t *testing.T) {
	for _, k := range []string{HeaderSession, HeaderDecision, HeaderMode, "Content-Type", "Content-Length", "Cache-Control", "X-Accel-Buffering"} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("header key %q is set directly but its canonical form is %q", k, c)
		}
	}
}

// TestOneValueSlicesIndependent: values sharing one array stay apart: an
// Add to one header does not overwrite the next header's value.
func TestOneValueSlicesIndependent(t *testing.T) {
	h := http.Header{}
	vals := make([]string, 0, 3)
	h["A"] = oneValue(&vals, "a")
	h["B"] = oneValue(&vals, "b")
	h.Add("A", "a2")
	h["C"] = oneValue(&vals, "c")
	if got := h.Values("A"); len(got) != 2 || got[0] != "a" || got[1] != "a2" {
		t.Errorf("A = %q", got)
	}
	if h.Get("B") != "b" || h.Get("C") != "c" || len(h["B"]) != 1 || len(h["C"]) != 1 {
		t.Errorf("B = %q, C = %q", h["B"], h["C"])
	}
}
