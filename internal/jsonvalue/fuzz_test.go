package jsonvalue

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	`null`, `true`, `0`, `-0`, `1.0`, `1e400`, `"x"`, `[]`, `{}`,
	`{"a":[1,"x",null,{"b":false}],"c":18446744073709551616}`,
	`{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"f","arguments":{"url":"http://x","n":[1,2.5,-3e-7]}}}]}]}`,
	`"\ud83d\ude00"`, `"\ud800"`, `"\udc00"`, `"\\ud800"`, `"\\\ud800"`, `"\ud800\udc00\udc00"`,
	`"\u2028\u2029\u0000\u001f<>&"`, "\"\xff\"", `{"a":1} x`, `[1,]`, ` {"k" : [ ] } `,
	`{"":{"":{"":[[[[]]]]}}}`, `-9223372036854775809`, `123456789012345678901234567890e-5`,
}

// FuzzDecodeEqual: whatever Decode accepts is valid JSON that Marshal
// reproduces exactly like encoding/json, that round-trips to an Equal tree,
// whose size Check computes exactly, and whose DeepCopy is equal and
// independent.
func FuzzDecodeEqual(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrInvalidString) {
				t.Fatalf("Decode error %v wraps no expected sentinel", err)
			}
			if errors.Is(err, ErrSyntax) && json.Valid(data) {
				t.Fatalf("Decode rejected valid JSON %q as syntax: %v", data, err)
			}
			if errors.Is(err, ErrInvalidString) && utf8.Valid(data) && !mayHaveSurrogate(data) {
				t.Fatalf("Decode rejected %q as invalid string without cause: %v", data, err)
			}
			return
		}
		if !json.Valid(data) || !utf8.Valid(data) {
			t.Fatalf("Decode accepted invalid input %q", data)
		}
		out, err := Marshal(v)
		if err != nil {
			t.Fatalf("Marshal of decoded value: %v", err)
		}
		if want := stdCompact(t, v); string(out) != want {
			t.Fatalf("Marshal = %s, encoding/json = %s", out, want)
		}
		v2, err := Decode(out)
		if err != nil {
			t.Fatalf("Decode(Marshal) = %v for %s", err, out)
		}
		if !Equal(v, v2) || !reflect.DeepEqual(v, v2) {
			t.Fatalf("round trip changed value: %q -> %s", data, out)
		}
		if err := Check(v, Limits{MaxBytes: len(out)}); err != nil {
			t.Fatalf("Check at exact size: %v", err)
		}
		if err := Check(v, Limits{MaxBytes: len(out) - 1}); len(out) > 1 && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("Check below size = %v", err)
		}
		c := DeepCopy(v)
		if !Equal(c, v) {
			t.Fatal("DeepCopy not Equal")
		}
		mutateAll(c)
		if after, _ := Marshal(v); string(after) != string(out) {
			t.Fatal("mutating DeepCopy changed the original")
		}
		fromGo, err := FromGo(v)
		if err != nil || !reflect.DeepEqual(fromGo, v) {
			t.Fatalf("FromGo(tree) = %v, %v", fromGo, err)
		}
	})
}

// refLoneSurrogate is an independent oracle for loneSurrogate: it tokenizes
// sequentially, tracking string state, instead of judging each "\u" by the
// backslash run before it.
func refLoneSurrogate(data []byte) int {
	inStr := false
	pendingHigh := -1
	for i := 0; i < len(data); i++ {
		c := data[i]
		if !inStr {
			if c == '"' {
				inStr = true
			}
			continue
		}
		switch c {
		case '"':
			if pendingHigh >= 0 {
				return pendingHigh
			}
			inStr = false
		case '\\':
			if i+1 >= len(data) {
				return -1
			}
			if data[i+1] != 'u' {
				if pendingHigh >= 0 {
					return pendingHigh
				}
				i++
				continue
			}
			r, ok := Hex4(data, i+2)
			if !ok {
				return -1
			}
			switch {
			case r >= 0xD800 && r <= 0xDBFF:
				if pendingHigh >= 0 {
					return pendingHigh
				}
				pendingHigh = i
			case r >= 0xDC00 && r <= 0xDFFF:
				if pendingHigh < 0 {
					return i
				}
				pendingHigh = -1
			default:
				if pendingHigh >= 0 {
					return pendingHigh
				}
			}
			i += 5
		default:
			if pendingHigh >= 0 {
				return pendingHigh
			}
		}
	}
	return pendingHigh
}

func FuzzLoneSurrogate(f *testing.F) {
	for _, s := range []string{
		`\ud800`, `\udc00`, `\ud800\udc00`, `\\ud800`, `\\\ud800`, `\ud800\\udc00`, `a\uD83D\uDE00b`,
		`\ud800\ud800\udc00`, `\udbff\udfff\udc00`, `\u0041`, `x`, `\ud800x`, `\"\ud800`,
	} {
		f.Add(s, "")
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, s1, s2 string) {
		data := []byte(`["` + s1 + `",{"` + s2 + `":"` + s1 + s2 + `"}]`)
		if !json.Valid(data) {
			return // loneSurrogate's contract requires valid JSON
		}
		got, want := loneSurrogate(data), refLoneSurrogate(data)
		if got != want {
			t.Fatalf("loneSurrogate(%s) = %d, reference %d", data, got, want)
		}
		if want >= 0 && !mayHaveSurrogate(data) {
			t.Fatalf("pre-filter missed %s", data)
		}
		_, err := Decode(data)
		if (want >= 0) != errors.Is(err, ErrInvalidString) && utf8.Valid(data) {
			t.Fatalf("Decode(%s) = %v, reference offset %d", data, err, want)
		}
	})
}

// refNumberEqual is an independent oracle for the CTK number rule using
// math/big.
func refNumberEqual(a, b string) bool {
	kind := func(s string) (int, *big.Int, float64) {
		if !strings.ContainsAny(s, ".eE") && s != "-0" {
			n, _ := new(big.Int).SetString(s, 10)
			if n.Sign() >= 0 && n.Cmp(new(big.Int).SetUint64(math.MaxUint64)) <= 0 {
				return 0, n, 0
			}
			if n.Sign() < 0 && n.Cmp(big.NewInt(math.MinInt64)) >= 0 {
				return 1, n, 0
			}
		}
		f, _, err := big.ParseFloat(s, 10, 4096, big.ToNearestEven)
		if err != nil {
			return 2, nil, math.NaN()
		}
		x, _ := f.Float64()
		if s[0] == '-' && x == 0 {
			x = math.Copysign(0, -1)
		}
		return 2, nil, x
	}
	ka, ia, fa := kind(a)
	kb, ib, fb := kind(b)
	if ka != kb {
		return false
	}
	if ka < 2 {
		return ia.Cmp(ib) == 0
	}
	return fa == fb
}

func FuzzNumberEqual(f *testing.F) {
	pairs := [][2]string{
		{"1", "1.0"}, {"1.0", "1.00"}, {"-0", "0"}, {"-0", "0.0"}, {"100", "1e2"},
		{"18446744073709551616", "18446744073709551617"}, {"18446744073709551615", "18446744073709551616"},
		{"-9223372036854775808", "-9223372036854775809"}, {"0.1", "1e-1"}, {"5e-324", "4.9e-324"},
	}
	for _, p := range pairs {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !validNumber(a) || !validNumber(b) || len(a) > 400 || len(b) > 400 {
			return
		}
		// big.ParseFloat rejects huge exponents that strconv saturates;
		// those are outside the oracle's domain.
		if _, _, err := big.ParseFloat(a, 10, 4096, big.ToNearestEven); err != nil {
			return
		}
		if _, _, err := big.ParseFloat(b, 10, 4096, big.ToNearestEven); err != nil {
			return
		}
		na, nb := json.Number(a), json.Number(b)
		got := Equal(na, nb)
		if got != Equal(nb, na) {
			t.Fatalf("Equal(%s, %s) not symmetric", a, b)
		}
		if !Equal(na, na) {
			t.Fatalf("Equal(%s, %s) not reflexive", a, a)
		}
		if want := refNumberEqual(a, b); got != want {
			t.Fatalf("Equal(%s, %s) = %v, reference %v", a, b, got, want)
		}
	})
}

func FuzzFromGoFloat(f *testing.F) {
	for _, x := range []float64{0, 1, 200, 0.1, 1e21, 1e-7, math.MaxFloat64, 5e-324, -1.5} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		v, err := FromGo(x)
		if nonFinite(x) {
			if !errors.Is(err, ErrNonFinite) {
				t.Fatalf("FromGo(%v) = %v", x, err)
			}
			return
		}
		want, _ := json.Marshal(x)
		if err != nil || string(v.(json.Number)) != string(want) {
			t.Fatalf("FromGo(%v) = %v, %v; encoding/json %s", x, v, err, want)
		}
		if !Equal(x, v) {
			t.Fatalf("Equal(%v, FromGo) = false", x)
		}
	})
}

// FuzzMarshalString checks string escaping and its exact size against
// encoding/json, and that invalid UTF-8 is refused rather than replaced.
func FuzzMarshalString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text", "\"\\\b\f\n\r\t\x00\x1f\x7f", "é€😀\u2028\u2029", "\xff", "ok\xc3", "12345678\"1234567\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Marshal(map[string]any{s: s})
		n, ok := quotedLen(s)
		if !utf8.ValidString(s) {
			if !errors.Is(err, ErrInvalidString) || ok {
				t.Fatalf("invalid UTF-8 %q: Marshal err %v, quotedLen ok %v", s, err, ok)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := stdCompact(t, map[string]any{s: s}); string(out) != want {
			t.Fatalf("Marshal = %s, encoding/json = %s", out, want)
		}
		if len(out) != 2*n+3 {
			t.Fatalf("quotedLen(%q) = %d, encoded object is %d bytes", s, n, len(out))
		}
	})
}
