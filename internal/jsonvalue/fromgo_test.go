package jsonvalue

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

type textID string

func (t textID) MarshalText() ([]byte, error) { return []byte("id-" + string(t)), nil }

type custom struct{ v string }

func (c custom) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]string{"custom": c.v}) }

type failing struct{}

var errBoom = errors.New("boom: secret detail")

func (failing) MarshalJSON() ([]byte, error) { return nil, errBoom }

type rawFFFD struct{}

func (rawFFFD) MarshalJSON() ([]byte, error) { return []byte(`"\ufffd"`), nil }

type loneSurr struct{}

func (loneSurr) MarshalJSON() ([]byte, error) { return []byte(`"\ud800"`), nil }

type tagged struct {
	URL     string            `json:"url"`
	Count   int               `json:"count,omitempty"`
	Skip    string            `json:"-"`
	Headers map[string]string `json:"headers"`
	F       float64           `json:"f"`
	Inner   *tagged           `json:"inner,omitempty"`
}

type (
	namedMap   map[string]any
	namedStr   string
	namedInt   int16
	namedFloat float64
	namedSlice []namedStr
)

func TestFromGo(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	x := 5
	var nilPtr *int
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"string", "héllo", "héllo"},
		{"bool", true, true},
		{"number", n("1.50"), n("1.50")},
		{"int", 42, n("42")},
		{"int8", int8(-128), n("-128")},
		{"int16", int16(-32768), n("-32768")},
		{"int32", int32(math.MinInt32), n("-2147483648")},
		{"int64 min", int64(math.MinInt64), n("-9223372036854775808")},
		{"uint8", uint8(255), n("255")},
		{"uint16", uint16(65535), n("65535")},
		{"uint32", uint32(math.MaxUint32), n("4294967295")},
		{"uint", uint(7), n("7")},
		{"uint64 max", uint64(math.MaxUint64), n("18446744073709551615")},
		{"uintptr", uintptr(9), n("9")},
		{"float integral", 200.0, n("200")},
		{"float", 0.1, n("0.1")},
		{"float neg zero", math.Copysign(0, -1), n("-0")},
		{"float 1e21", 1e21, n("1e+21")},
		{"float 1e20", 1e20, n("100000000000000000000")},
		{"float 1e-7", 1e-7, n("1e-7")},
		{"float 1e-6", 1e-6, n("0.000001")},
		{"float max", math.MaxFloat64, n("1.7976931348623157e+308")},
		{"float min subnormal", 5e-324, n("5e-324")},
		{"float 2^53+2", 9007199254740994.0, n("9007199254740994")},
		{"float32", float32(3.14), n("3.14")},
		{"float32 small", float32(1e-7), n("1e-7")},
		{"map", map[string]any{"a": 1, "b": []any{2.5, "x"}}, map[string]any{"a": n("1"), "b": []any{n("2.5"), "x"}}},
		{"nil map", map[string]any(nil), nil},
		{"nil slice", []any(nil), nil},
		{"[]string", []string{"a", "b"}, []any{"a", "b"}},
		{"nil []string", []string(nil), nil},
		{"map[string]string", map[string]string{"k": "v"}, map[string]any{"k": "v"}},
		{"[]int", []int{1, 2}, []any{n("1"), n("2")}},
		{"[2]int", [2]int{3, 4}, []any{n("3"), n("4")}},
		{"[]map", []map[string]any{{"a": nil}}, []any{map[string]any{"a": nil}}},
		{"named map", namedMap{"a": namedStr("s"), "b": namedInt(-3), "c": namedFloat(2)}, map[string]any{"a": "s", "b": n("-3"), "c": n("2")}},
		{"named slice", namedSlice{"x"}, []any{"x"}},
		{"pointer", &x, n("5")},
		{"nil pointer", nilPtr, nil},
		{"bytes", []byte("hi"), "aGk="},
		{"raw", json.RawMessage(`{"a":[1,2.0]}`), map[string]any{"a": []any{n("1"), n("2.0")}}},
		{"raw empty", json.RawMessage(nil), nil},
		{"map[int]string", map[int]string{2: "b", 1: "a"}, map[string]any{"1": "a", "2": "b"}},
		{"text marshaler", textID("7"), "id-7"},
		// encoding/json uses string-kind keys directly, ignoring MarshalText.
		{"text marshaler key", map[textID]int{"k": 1}, map[string]any{"k": n("1")}},
		{"marshaler", custom{"z"}, map[string]any{"custom": "z"}},
		{"marshaler in map", map[string]any{"c": custom{"q"}}, map[string]any{"c": map[string]any{"custom": "q"}}},
		{"time", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02T03:04:05Z"},
		{"struct", tagged{URL: "u", Skip: "s", F: 200, Inner: &tagged{URL: "v"}}, map[string]any{
			"url": "u", "headers": nil, "f": n("200"),
			"inner": map[string]any{"url": "v", "headers": nil, "f": n("0")},
		}},
		{"big int token", n("123456789012345678901234567890"), n("123456789012345678901234567890")},
	}
	for _, tt := range tests {
		got, err := FromGo(tt.in)
		if err != nil {
			t.Errorf("%s: FromGo: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: FromGo = %#v, want %#v", tt.name, got, tt.want)
		}
	}
}

func TestFromGoErrors(t *testing.T) {
	type withChan struct{ C chan int }
	type withNaN struct{ F float64 }
	type withBad struct{ S string }
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	cyclicSlice := []any{nil}
	cyclicSlice[0] = cyclicSlice
	p := new(any)
	*p = p

	tests := []struct {
		name     string
		in       any
		sentinel error
		path     string
	}{
		{"nan", map[string]any{"args": map[string]any{"x": math.NaN()}}, ErrNonFinite, "$.args{member 0}"},
		{"inf", []any{1, math.Inf(1)}, ErrNonFinite, "$[1]"},
		{"-inf float32", map[string]any{"f": float32(math.Inf(-1))}, ErrNonFinite, "${member 0}"},
		{"nan named", map[string]any{"f": namedFloat(math.NaN())}, ErrNonFinite, "${member 0}"},
		{"nan in struct", map[string]any{"s": withNaN{math.NaN()}}, ErrNonFinite, "${member 0}"},
		{"bad utf8", map[string]any{"a": []any{"ok", "bad\xff-secret"}}, ErrInvalidString, "${member 0}[1]"},
		{"bad utf8 key", map[string]any{"a": map[string]any{"k\xff": 1}}, ErrInvalidString, "${member 0}"},
		{"bad []string", map[string]any{"l": []string{"a", "\xfe"}}, ErrInvalidString, "${member 0}[1]"},
		{"bad map[string]string", map[string]string{"k": "\xfe"}, ErrInvalidString, "${member 0}"},
		{"bad map[string]string key", map[string]string{"\xfe": ""}, ErrInvalidString, "$"},
		{"bad named string", []namedStr{"\xff"}, ErrInvalidString, "$[0]"},
		{"bad string in struct", withBad{"x\xffy"}, ErrInvalidString, "$"},
		{"bad number", map[string]any{"n": json.Number("01")}, ErrInvalidNumber, "$.n"},
		{"empty number", json.Number(""), ErrInvalidNumber, "$"},
		{"NaN number", json.Number("NaN"), ErrInvalidNumber, "$"},
		{"raw syntax", map[string]any{"r": json.RawMessage(`{`)}, ErrSyntax, "${member 0}"},
		{"raw surrogate", map[string]any{"r": json.RawMessage(`"\udc00"`)}, ErrInvalidString, "${member 0}"},
		{"marshaler surrogate", []any{loneSurr{}}, ErrInvalidString, "$[0]"},
		{"marshaler fffd", []any{rawFFFD{}}, ErrInvalidString, "$[0]"},
		{"chan", map[string]any{"c": make(chan int)}, ErrUnsupportedType, "${member 0}"},
		{"func", []any{func() {}}, ErrUnsupportedType, "$[0]"},
		{"complex", complex(1, 2), ErrUnsupportedType, "$"},
		{"struct with chan", withChan{}, ErrUnsupportedType, "$"},
		{"failing marshaler", map[string]any{"m": failing{}}, ErrUnsupportedType, "${member 0}"},
		{"cyclic map", cyclic, ErrTooDeep, ""},
		{"cyclic slice", cyclicSlice, ErrTooDeep, ""},
		{"pointer cycle", p, ErrTooDeep, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromGo(tt.in)
			if tt.path == "" {
				if !errors.Is(err, tt.sentinel) {
					t.Fatalf("error %v, want %v", err, tt.sentinel)
				}
				return
			}
			wantPathErr(t, err, tt.sentinel, tt.path, "secret")
		})
	}
	// The user's error stays reachable, but out of the message.
	_, err := FromGo(failing{})
	if !errors.Is(err, errBoom) {
		t.Errorf("MarshalJSON error not wrapped: %v", err)
	}
}

func TestFromGoDoesNotAlias(t *testing.T) {
	in := map[string]any{"a": map[string]any{"b": []any{1, "x"}}, "s": []string{"q"}}
	out, err := FromGo(in)
	if err != nil {
		t.Fatal(err)
	}
	mutateAll(out)
	if _, ok := in["__added"]; ok {
		t.Fatal("top-level map aliased")
	}
	inner := in["a"].(map[string]any)
	if _, ok := inner["__added"]; ok || inner["b"].([]any)[1] != "x" {
		t.Fatal("nested containers aliased")
	}
	if in["s"].([]string)[0] != "q" {
		t.Fatal("[]string aliased")
	}
}

// FromGo's float tokens must be exactly what encoding/json writes.
func TestFromGoFloatMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(f float64) {
		got, err := FromGo(f)
		if err != nil {
			t.Fatalf("FromGo(%v): %v", f, err)
		}
		want, _ := json.Marshal(f)
		if string(got.(json.Number)) != string(want) {
			t.Fatalf("FromGo(%v) = %s, want %s", f, got, want)
		}
		got32, _ := FromGo(float32(f))
		want32, _ := json.Marshal(float32(f))
		if !math.IsInf(float64(float32(f)), 0) && string(got32.(json.Number)) != string(want32) {
			t.Fatalf("FromGo(float32(%v)) = %s, want %s", f, got32, want32)
		}
	}
	for _, f := range []float64{0, 1, -1, 0.5, 1e-6, 9.99999e-7, 1e21, 9.99999e20, 1e-300, 123456.789, -1e-10, 1.5e300} {
		check(f)
	}
	for range 20000 {
		f := math.Float64frombits(r.Uint64())
		if nonFinite(f) {
			continue
		}
		check(f)
		check(math.Trunc(r.NormFloat64() * 1e6))
	}
}

func TestAdoptKeepsAValueTree(t *testing.T) {
	tree := map[string]any{"a": []any{"x", json.Number("1"), true, nil, map[string]any{"b": "c"}}}
	got, err := Adopt(tree)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := got.(map[string]any)
	if !ok {
		t.Fatalf("Adopt = %T", got)
	}
	m["marker"] = true
	if tree["marker"] != true {
		t.Fatal("Adopt copied a value tree instead of returning it")
	}
	if n := testing.AllocsPerRun(100, func() { Adopt(tree) }); n != 0 {
		t.Errorf("Adopt of a value tree allocates %v times", n)
	}
}

func TestAdoptConvertsWhatIsNotATree(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"strings slice", map[string]any{"t": []string{"a"}}, `{"t":["a"]}`},
		{"int", []any{1}, `[1]`},
		{"nil map", map[string]any{"m": map[string]any(nil)}, `{"m":null}`},
	} {
		got, err := Adopt(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, _ := Marshal(got)
		if string(b) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, b, tc.want)
		}
	}
	if _, err := Adopt(map[string]any{"s": "\xff"}); !errors.Is(err, ErrInvalidString) {
		t.Errorf("invalid UTF-8: err = %v", err)
	}
	if _, err := Adopt([]any{json.Number("01")}); !errors.Is(err, ErrInvalidNumber) {
		t.Errorf("invalid number: err = %v", err)
	}
}
