package jsonvalue

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// Every entry point names a member the payload chose by its rank among its
// object's names, never by the name, and they agree on the rank whatever
// the map's iteration order.
func TestPathsNeverNamePayloadMembers(t *testing.T) {
	const canary = "CANARYkey"
	tree := func(bad any) map[string]any {
		return map[string]any{"tool_calls": []any{map[string]any{"args": map[string]any{
			"b-" + canary: 1, "a-" + canary: 2, "c-" + canary: map[string]any{"z" + canary: 0, "y" + canary: bad},
		}}}}
	}
	const want = "$.tool_calls[0].args{member 2}{member 0}"
	for range 20 { // map order varies between runs
		wantPathErr(t, Check(tree(math.NaN()), Limits{}), ErrNonFinite, want, canary)
		_, err := FromGo(tree(math.Inf(1)))
		wantPathErr(t, err, ErrNonFinite, want, canary)
		_, err = Marshal(tree(json.Number("01")))
		wantPathErr(t, err, ErrInvalidNumber, want, canary)
	}
	doc := `{"tool_calls":[{"args":{"b-` + canary + `":1,"a-` + canary + `":2,"c-` + canary + `":{"z` + canary + `":0,"y` + canary + `":1,"y` + canary + `":2}}}]}`
	_, err := DecodeStrict([]byte(doc))
	wantPathErr(t, err, ErrDuplicateKey, want, canary)
	if strings.Contains(err.Error(), canary) {
		t.Fatal(err)
	}
}
