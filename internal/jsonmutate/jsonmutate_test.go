package jsonmutate

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// Bytes edits a copy, never its argument, and its edits change the
// document (length or content) in most draws; an empty one takes edits.
func TestBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	orig := []byte(`{"a":[1,"x"]}`)
	keep := bytes.Clone(orig)
	changed, grown := 0, 0
	for range 1000 {
		if m := Bytes(rng, orig); !bytes.Equal(m, orig) {
			changed++
		}
		if len(Bytes(rng, nil)) > 0 {
			grown++
		}
	}
	if !bytes.Equal(orig, keep) {
		t.Fatal("Bytes changed its argument")
	}
	if changed < 900 {
		t.Errorf("only %d of 1000 mutations changed the document", changed)
	}
	if grown < 500 {
		t.Errorf("only %d of 1000 mutations of an empty document left bytes in it", grown)
	}
}
