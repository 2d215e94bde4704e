package jsonvalue

import (
	"encoding/json"
	"math"
	"testing"
)

func TestEqualJSON(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		// Numbers: CTK.md §5.2.
		{`1`, `1`, true},
		{`1`, `1.0`, false},
		{`100`, `1e2`, false},
		{`1.0`, `1.00`, true},
		{`1e2`, `100.0`, true},
		{`1E2`, `1e+2`, true},
		{`-0`, `0`, false},
		{`-0`, `0.0`, true},
		{`-0`, `-0.0`, true},
		{`-0`, `-0`, true},
		{`0`, `0`, true},
		{`-1`, `-1`, true},
		{`-1`, `-1.0`, false},
		{`18446744073709551615`, `18446744073709551615`, true},
		{`18446744073709551615`, `1.8446744073709551615e19`, false}, // u64 vs float
		{`18446744073709551616`, `18446744073709551617`, true},      // both round to 2^64
		{`18446744073709551616`, `1.8446744073709552e19`, true},
		{`-9223372036854775808`, `-9223372036854775808`, true},
		{`-9223372036854775809`, `-9223372036854775808.0`, true}, // float vs float
		{`-9223372036854775808`, `-9223372036854775808.0`, false},
		{`9007199254740993`, `9007199254740992`, false}, // integers compare exactly
		{`9007199254740993.0`, `9007199254740992.0`, true},
		{`1e400`, `1e401`, true}, // both overflow to +Inf
		{`2`, `3`, false},
		// Other kinds.
		{`"a"`, `"a"`, true},
		{`"a"`, `"A"`, false},
		{`true`, `true`, true},
		{`true`, `false`, false},
		{`null`, `null`, true},
		{`null`, `false`, false},
		{`null`, `0`, false},
		{`null`, `""`, false},
		{`null`, `{}`, false},
		{`""`, `0`, false},
		{`"1"`, `1`, false},
		{`[]`, `{}`, false},
		{`[]`, `[]`, true},
		{`[1,2]`, `[2,1]`, false},
		{`[1,2]`, `[1,2,3]`, false},
		{`[1,[2,{"a":null}]]`, `[1,[2,{"a":null}]]`, true},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`{"a":1,"b":2}`, `{"a":1}`, false},
		{`{"a":null}`, `{}`, false},
		{`{"a":null}`, `{"b":null}`, false},
		{`{"a":{"x":1}}`, `{"a":{"x":1.0}}`, false},
	}
	for _, tt := range tests {
		a, b := mustDecode(t, tt.a), mustDecode(t, tt.b)
		if got := Equal(a, b); got != tt.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := Equal(b, a); got != tt.want {
			t.Errorf("Equal(%s, %s) = %v, want %v (symmetry)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestEqualGoValues(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"float integral is integer", 200.0, n("200"), true},
		{"float integral not float token", 200.0, n("200.0"), false},
		{"float fraction", 1.5, n("1.5"), true},
		{"float vs float token", 0.1, n("0.10"), true},
		{"int", -3, n("-3"), true},
		{"int8 vs int64", int8(4), int64(4), true},
		{"uint64 max", uint64(math.MaxUint64), n("18446744073709551615"), true},
		{"neg zero float", math.Copysign(0, -1), n("-0"), true},
		{"neg zero float vs 0.0", math.Copysign(0, -1), n("0.0"), true},
		{"neg zero float vs 0", math.Copysign(0, -1), n("0"), false},
		{"float32", float32(3.14), n("3.14"), true},
		{"big float is float", 1e21, n("1e+21"), true},
		{"nan", math.NaN(), math.NaN(), false},
		{"inf", math.Inf(1), n("1e400"), false},
		{"invalid token", n("01"), n("01"), false},
		{"invalid vs valid", n("1"), n("+1"), false},
		{"number vs string", n("1"), "1", false},
		{"int vs nil", 0, nil, false},
		{"typed nil map", map[string]any(nil), nil, true},
		{"typed nil slice", []any(nil), map[string]any(nil), true},
		{"nil slice vs empty", []any(nil), []any{}, false},
		{"map[string]string", map[string]string{"a": "b"}, mustDecode(t, `{"a":"b"}`), true},
		{"[]string", []string{"a"}, []any{"a"}, true},
		{"nested go values", map[string]any{"x": []int{1, 2}, "y": 2.0}, mustDecode(t, `{"x":[1,2],"y":2}`), true},
		{"nested go values differ", map[string]any{"x": []int{1, 2}}, mustDecode(t, `{"x":[1,2.0]}`), false},
		{"struct", struct {
			A int `json:"a"`
		}{1}, mustDecode(t, `{"a":1}`), true},
		{"unsupported", make(chan int), nil, false},
		{"nil pointer is null", (*int)(nil), nil, true},
		{"pointer", &[]int{1}, []any{json.Number("1")}, true},
		{"named string", namedStr("s"), "s", true},
	}
	for _, tt := range tests {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: Equal(a, b) = %v, want %v", tt.name, got, tt.want)
		}
		if got := Equal(tt.b, tt.a); got != tt.want {
			t.Errorf("%s: Equal(b, a) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A slice compared with itself is equal without a walk; a view of it of
// another length, or a copy with one element changed, is not.
func TestEqualSameSlice(t *testing.T) {
	orig := []any{map[string]any{"role": "user", "content": "a"}, map[string]any{"role": "user", "content": "b"}}
	changed := append([]any(nil), orig...)
	changed[1] = map[string]any{"role": "user", "content": "c"}
	for _, c := range []struct {
		other any
		want  bool
	}{
		{orig, true},
		{orig[:2:2], true},
		{append([]any(nil), orig...), true},
		{changed, false},
		{orig[:1], false},
		{orig[1:], false},
		{[]any{}, false},
	} {
		if got := Equal(orig, c.other); got != c.want {
			t.Errorf("Equal(orig, %v) = %v, want %v", c.other, got, c.want)
		}
	}
	if !Equal([]any{}, []any{}) {
		t.Error("two empty arrays differ")
	}
}
