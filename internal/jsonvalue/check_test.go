package jsonvalue

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// nest wraps v in n single-element arrays.
func nest(v any, n int) any {
	for range n {
		v = []any{v}
	}
	return v
}

func TestCheckDepth(t *testing.T) {
	tests := []struct {
		v        any
		maxDepth int
		ok       bool
	}{
		{"x", 1, true},
		{[]any{}, 1, true},
		{map[string]any{}, 1, true},
		{[]any{1}, 1, false},
		{[]any{1}, 2, true},
		{map[string]any{"a": nil}, 1, false},
		{map[string]any{"a": nil}, 2, true},
		{nest("x", 127), 128, true}, // 127 arrays + the scalar = 128 levels
		{nest("x", 128), 128, false},
		{nest(map[string]any{}, 127), 128, true},
		{nest(map[string]any{"k": 1}, 127), 128, false},
		{nest("x", 5000), 0, true}, // 0 = no configured limit
	}
	for i, tt := range tests {
		err := Check(tt.v, Limits{MaxDepth: tt.maxDepth})
		if tt.ok != (err == nil) {
			t.Errorf("case %d: Check(depth %d) = %v", i, tt.maxDepth, err)
		}
		if err != nil && !errors.Is(err, ErrTooDeep) {
			t.Errorf("case %d: %v is not ErrTooDeep", i, err)
		}
	}
	err := Check(map[string]any{"a": map[string]any{"b": []any{0, 1, 2, []any{"secretvalue"}}}}, Limits{MaxDepth: 4})
	wantPathErr(t, err, ErrTooDeep, "${member 0}{member 0}[3][0]", "secretvalue")
	if !strings.Contains(err.Error(), "4") {
		t.Errorf("message %q does not name the limit", err)
	}
}

func TestCheckCyclicFailsClosed(t *testing.T) {
	m := map[string]any{}
	m["m"] = m
	if err := Check(m, Limits{}); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("cyclic map: %v", err)
	}
	s := []any{nil}
	s[0] = s
	if err := Check(s, Limits{MaxBytes: 1 << 30}); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("cyclic slice: %v", err)
	}
	if _, err := Marshal(m); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("Marshal cyclic map: %v", err)
	}
}

var sizeCases = []any{
	nil, true, false, "", "abc", "a\"b\\c", "\x00\x01\x1f\b\f\n\r\t", "\u2028\u2029", "\x7f<>&",
	"héllo wörld 😀", json.Number("0"), json.Number("-12.5e+30"),
	[]any{}, map[string]any{}, []any{nil}, []any{1, 2, 3},
	map[string]any{"a": 1}, map[string]any{"a": 1, "bb": []any{"x", map[string]any{}}},
	map[string]any{"k\n\"": "v\u2028"}, map[string]any(nil), []any(nil),
	1.5, 200.0, 1e21, 1e-7, math.Copysign(0, -1), float32(0.1), -1, int8(-128), int64(math.MinInt64),
	uint64(math.MaxUint64), uint8(0), 0, int16(10), int32(-100000), uint(99), uint16(1000), uint32(7),
}

// The size Check enforces is exactly the length of Marshal's output.
func TestCheckSizeIsExact(t *testing.T) {
	all := map[string]any{}
	for i, v := range sizeCases {
		all[string(rune('a'+i%26))+strings.Repeat("x", i)] = v
	}
	for _, v := range append(sizeCases, any(all), any(sizeCases)) {
		out := mustMarshal(t, v)
		if err := Check(v, Limits{MaxBytes: len(out)}); err != nil {
			t.Errorf("Check(%s) at exact size %d: %v", out, len(out), err)
		}
		err := Check(v, Limits{MaxBytes: len(out) - 1})
		if len(out) > 1 && !errors.Is(err, ErrTooLarge) {
			t.Errorf("Check(%s) at size %d: %v, want ErrTooLarge", out, len(out)-1, err)
		}
	}
}

func TestCheckErrors(t *testing.T) {
	tests := []struct {
		name     string
		v        any
		lim      Limits
		sentinel error
		path     string
	}{
		{"nan", map[string]any{"args": map[string]any{"x": math.NaN()}}, Limits{}, ErrNonFinite, "$.args{member 0}"},
		{"inf32", []any{float32(math.Inf(1))}, Limits{}, ErrNonFinite, "$[0]"},
		{"bad string", map[string]any{"a": []any{"fine", "secret\xff"}}, Limits{}, ErrInvalidString, "${member 0}[1]"},
		{"bad key", map[string]any{"a": map[string]any{"secret\xff": 1}}, Limits{}, ErrInvalidString, "${member 0}"},
		{"bad number", map[string]any{"n": json.Number("1.")}, Limits{}, ErrInvalidNumber, "$.n"},
		{"empty number", []any{json.Number("")}, Limits{}, ErrInvalidNumber, "$[0]"},
		{"unsupported", map[string]any{"m": map[string]string{"secret": "x"}}, Limits{}, ErrUnsupportedType, "${member 0}"},
		{"unsupported []string", []any{[]string{"secret"}}, Limits{}, ErrUnsupportedType, "$[0]"},
		{"too large", map[string]any{"big": strings.Repeat("s", 100)}, Limits{MaxBytes: 50}, ErrTooLarge, "${member 0}"},
		{"too large root", "secret-string", Limits{MaxBytes: 5}, ErrTooLarge, "$"},
		// Members the payload named are ranked among their object's
		// names in byte order; the gateway's own names are spelled out.
		{"ranked members", map[string]any{"zeta": 1, "b c": map[string]any{"aa": 1, "secret": math.Inf(-1)}, "alpha": 2}, Limits{}, ErrNonFinite, "${member 1}{member 1}"},
		{"known names", map[string]any{"tool_calls": []any{map[string]any{"id": "1", "args": map[string]any{"k": math.NaN()}}}}, Limits{}, ErrNonFinite, "$.tool_calls[0].args{member 0}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.v, tt.lim)
			wantPathErr(t, err, tt.sentinel, tt.path, "secret")
			// Marshal reports the same problems (size aside).
			if tt.sentinel != ErrTooLarge {
				_, merr := Marshal(tt.v)
				wantPathErr(t, merr, tt.sentinel, tt.path, "secret")
			}
		})
	}
	err := Check(strings.Repeat("x", 10), Limits{MaxBytes: 8})
	if !strings.Contains(err.Error(), "8 bytes") {
		t.Errorf("message %q does not name the limit", err)
	}
}

// CheckWithout measures exactly what Check measures over the object less
// the member: the same verdict at the byte where the bound bites.
func TestCheckWithoutMatchesCheckOfTheSmallerObject(t *testing.T) {
	m := map[string]any{"a": "x", "big": []any{"yyyy", json.Number("12")}, "target": strings.Repeat("z", 50)}
	rest := map[string]any{"a": "x", "big": []any{"yyyy", json.Number("12")}}
	b, _ := Marshal(rest)
	for _, max := range []int{len(b) - 1, len(b), len(b) + 1} {
		want := Check(rest, Limits{MaxBytes: max})
		got := CheckWithout(m, "target", Limits{MaxBytes: max})
		if (want == nil) != (got == nil) {
			t.Errorf("max %d: CheckWithout = %v, Check of the rest = %v", max, got, want)
		}
	}
	if err := CheckWithout(m, "absent", Limits{MaxBytes: 10}); err == nil {
		t.Error("an absent member was subtracted")
	}
	if n := testing.AllocsPerRun(50, func() { CheckWithout(m, "target", Limits{MaxBytes: 1 << 20}) }); n != 0 {
		t.Errorf("CheckWithout allocates %v times", n)
	}
}

// TestIsValueTreeImpliesCheck: whatever IsValueTree accepts passes Check
// without limits, so a caller may skip Check on it; it refuses what a
// value tree cannot hold, which Check then judges.
func TestIsValueTreeImpliesCheck(t *testing.T) {
	// A string under n arrays is at level n+1.
	nested := func(n int) any {
		v := any("x")
		for range n {
			v = []any{v}
		}
		return v
	}
	cases := []struct {
		name string
		v    any
		tree bool
	}{
		{"scalars", []any{nil, true, "é", json.Number("-1.5e3")}, true},
		{"objects", map[string]any{"a": map[string]any{"b": []any{}}, "": "x"}, true},
		{"at the depth ceiling", nested(hardMaxDepth - 1), true},
		{"beyond the depth ceiling", nested(hardMaxDepth), false},
		{"invalid UTF-8 value", []any{"\xff"}, false},
		{"invalid UTF-8 key", map[string]any{"\xff": 1}, false},
		{"invalid number", json.Number("01"), false},
		{"float64", 1.5, false},
		{"int", map[string]any{"n": 3}, false},
		{"nil map", map[string]any(nil), false},
		{"nil slice", []any(nil), false},
		{"foreign type", struct{}{}, false},
	}
	for _, c := range cases {
		if got := IsValueTree(c.v); got != c.tree {
			t.Errorf("%s: IsValueTree %v, want %v", c.name, got, c.tree)
		}
		if c.tree {
			if err := Check(c.v, Limits{}); err != nil {
				t.Errorf("%s: a value tree fails Check: %v", c.name, err)
			}
		}
	}
}
