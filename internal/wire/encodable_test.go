package wire

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// TestCheckEncodable: value trees and Go values Marshal writes pass; what
// Marshal refuses is a WriteBackError naming its path in the target.
func TestCheckEncodable(t *testing.T) {
	for _, ok := range []any{
		[]any{map[string]any{"role": "user", "content": "hi"}, json.Number("1"), nil, true},
		[]any{map[string]any{"n": 3, "f": 1.5}}, // a host's Go numbers
	} {
		if err := CheckEncodable(ok); err != nil {
			t.Errorf("CheckEncodable(%v) = %v, want nil", ok, err)
		}
	}
	for _, c := range []struct {
		v     any
		field string
	}{
		{[]any{"a", map[string]any{"x": "\xff"}}, "$target[1]{member 0}"}, // member names are not quoted
		{[]any{map[string]any{"n": json.Number("01")}}, "$target[0].n"},
		{[]any{math.Inf(1)}, "$target[0]"},
	} {
		err := CheckEncodable(c.v)
		var wb *WriteBackError
		if !errors.As(err, &wb) || wb.Field != c.field {
			t.Errorf("CheckEncodable(%#v) = %v, want a WriteBackError at %s", c.v, err, c.field)
		}
	}
}
