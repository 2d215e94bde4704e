package rawjson

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonmutate"
)

// walkDoc walks a whole document with ObjectEach or ArrayEach, each value
// checked by validValue, and reports whether the walk accepted it.
func walkDoc(b []byte) bool {
	i := SkipSpace(b, 0)
	if i >= len(b) {
		return false
	}
	var end int
	var ok bool
	switch b[i] {
	case '{':
		end, ok = ObjectEach(b, i, func(_ []byte, at int) (int, bool) { return validValue(b, at, 1) })
	case '[':
		end, ok = ArrayEach(b, i, func(at int) (int, bool) { return validValue(b, at, 1) })
	default:
		return false
	}
	return ok && SkipSpace(b, end) == len(b)
}

// ObjectEach and ArrayEach accept exactly the objects and arrays
// encoding/json accepts, less those with an escaped name or invalid UTF-8
// (left to a full decoder): over seeds and random edits of them.
func TestEachMatchesValid(t *testing.T) {
	seeds := []string{`{}`, `[]`, ` { "a" : 1 , "b" : [true,null] } `, `[1, "x", {"y": [2]}, -0.5e3]`,
		`{"a":1,}`, `[1,]`, `[,1]`, `{"a" 1}`, `{"a":1 "b":2}`, `[1 2]`, `{"\u0061":1}`, `["\u0061"]`, `{"a":{"b":{"c":[[]]}}}`}
	rng := rand.New(rand.NewPCG(3, 5))
	check := func(b []byte) {
		got := walkDoc(b)
		want := json.Valid(b)
		if i := SkipSpace(b, 0); want && (i >= len(b) || (b[i] != '{' && b[i] != '[')) {
			want = false // a scalar document is neither
		}
		// Strict tokens refuse what encoding/json lets through: escaped
		// names and invalid UTF-8.
		lenient := bytes.IndexByte(b, '\\') >= 0 || !utf8.Valid(b)
		if got != want && !(want && !got && lenient) {
			t.Fatalf("walk(%q) = %v, encoding/json %v", b, got, want)
		}
		if got && !json.Valid(b) {
			t.Fatalf("walk(%q) accepted invalid JSON", b)
		}
	}
	for _, s := range seeds {
		check([]byte(s))
		for range 2000 {
			check(jsonmutate.Bytes(rng, []byte(s)))
		}
	}
}
