package jcs

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"
)

func mustCanon(t *testing.T, v any) string {
	t.Helper()
	out, err := Canonicalize(v)
	if err != nil {
		t.Fatalf("Canonicalize(%#v): %v", v, err)
	}
	return string(out)
}

// decodeString decodes JSON text with UseNumber.
func decodeString(t testing.TB, s string) any {
	t.Helper()
	var v any
	decodeUseNumber(t, []byte(s), &v)
	return v
}

func TestKeyOrder(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"ascii", `{"b":1,"a":2,"aa":3,"A":4,"":5}`, `{"":5,"A":4,"a":2,"aa":3,"b":1}`},
		// CTK.md §6.3 / G-11: "" < z < é < U+10000 < U+E000.
		{"utf16 surrogates before U+E000",
			`{"\ue000":2,"\ud800\udc00":3,"z":4,"":1,"é":5}`,
			"{\"\":1,\"z\":4,\"é\":5,\"\U00010000\":3,\"\uE000\":2}"},
		// RFC 8785 §3.2.3 sorting example.
		{"rfc8785 example",
			`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\uFB33\":\"Hebrew Letter Dalet With Dagesh\"}"},
		{"prefix sorts first", `{"ab":1,"a":2,"abc":3}`, `{"a":2,"ab":1,"abc":3}`},
		{"nested", `{"z":{"y":[{"b":1,"a":2}],"x":null},"a":[]}`, `{"a":[],"z":{"x":null,"y":[{"a":2,"b":1}]}}`},
		{"U+FFFF after U+10FFFF", "{\"\uFFFF\":1,\"\U0010FFFF\":2,\"\uD7FF\":3}", "{\"\uD7FF\":3,\"\U0010FFFF\":2,\"\uFFFF\":1}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustCanon(t, decodeString(t, tt.in)); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// utf16Compare is the obvious, slow reference for compareKeys.
func utf16Compare(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

func TestCompareKeysReference(t *testing.T) {
	samples := []string{
		"", "a", "b", "ab", "z", "\x7f", "\u0080", "é", "ö", "\u07ff", "\u0800",
		"\uD7FF", "\uE000", "\uE000a", "\uEFFF", "\uF000", "\uFB33", "\uFFFD", "\uFFFF",
		"\U00010000", "\U00010000a", "\U0001F600", "\U0010FFFF", "a\uE000", "a\U00010000",
		"€", "中文", "émoji🎯",
	}
	for _, a := range samples {
		for _, b := range samples {
			got, want := compareKeys(a, b), utf16Compare(a, b)
			if sign(got) != sign(want) {
				t.Errorf("compareKeys(%+q, %+q) = %d, want sign %d", a, b, got, want)
			}
		}
	}
}

func sign(x int) int { return max(-1, min(1, x)) }

func TestStringEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain ascii text", `"plain ascii text"`},
		{`"`, `"\""`},
		{`\`, `"\\"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x01\x0b\x0e\x1f", `"\u0000\u0001\u000b\u000e\u001f"`},
		{"\x7f", "\"\x7f\""}, // DEL is not a control in JSON
		{"/ <>& '", `"/ <>& '"`},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"héllo 🌍 中文", `"héllo 🌍 中文"`},
		{"\uFFFD", "\"\uFFFD\""}, // a real U+FFFD is valid
		{"0123456789abcdef\"0123456789abcde\n", `"0123456789abcdef\"0123456789abcde\n"`},
		{"longer run of plain ASCII crossing several eight-byte words\x1f!", `"longer run of plain ASCII crossing several eight-byte words\u001f!"`},
	}
	for _, tt := range tests {
		got, ok := appendString(nil, tt.in)
		if !ok || string(got) != tt.want {
			t.Errorf("appendString(%+q) = %s, %v; want %s", tt.in, got, ok, tt.want)
		}
	}
	// Every single byte below 0x80 in every position of a 17-byte string,
	// against a byte-wise reference: exercises the 8-byte fast path.
	for c := range 0x80 {
		for pos := range 17 {
			b := []byte("abcdefghijklmnopq")
			b[pos] = byte(c)
			got, _ := appendString(nil, string(b))
			if want := refEscape(string(b)); string(got) != want {
				t.Fatalf("byte %#x at %d: got %s want %s", c, pos, got, want)
			}
		}
	}
}

func refEscape(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xF])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func TestInvalidStrings(t *testing.T) {
	bad := []string{
		"\xff",
		"abc\x80",
		"\xed\xa0\x80",         // encoded lone high surrogate
		"\xed\xbf\xbf",         // encoded lone low surrogate
		"\xe2\x82",             // truncated sequence
		"\xc0\xaf",             // overlong
		"\xf4\x90\x80\x80",     // beyond U+10FFFF
		"12345678\xff12345678", // after the fast path
	}
	for _, s := range bad {
		_, err := Canonicalize(map[string]any{"a": []any{s}})
		var e *Error
		if !errors.Is(err, ErrInvalidString) || !errors.As(err, &e) || e.Path() != "${member 0}[0]" {
			t.Errorf("value %+q: err = %v", s, err)
		}
		_, err = Canonicalize(map[string]any{"a": map[string]any{s: 1}})
		if !errors.Is(err, ErrInvalidString) || !strings.Contains(err.Error(), "object key of the value at ${member 0} ") {
			t.Errorf("key %+q: err = %v", s, err)
		}
	}
}

func TestNumberTokens(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"-0", "0"},
		{"1", "1"},
		{"-1", "-1"},
		{"42", "42"},
		{"9007199254740991", "9007199254740991"},
		{"-9007199254740991", "-9007199254740991"},
		{"1.0", "1"},
		{"56.0", "56"},
		{"-0.0", "0"},
		{"0e10", "0"},
		{"1e21", "1e+21"},
		{"1E21", "1e+21"},
		{"1e20", "100000000000000000000"},
		{"123e18", "123000000000000000000"},
		{"1e-6", "0.000001"},
		{"1e-7", "1e-7"},
		{"1.5e-7", "1.5e-7"},
		{"0.000001234", "0.000001234"},
		{"333333333.3333333", "333333333.3333333"},
		{"0.1", "0.1"},
		{"3.141592653589793", "3.141592653589793"},
		{"123e-2", "1.23"},
		{"-12.5", "-12.5"},
		{"1.5e300", "1.5e+300"},
		{"1e+300", "1e+300"},
		{"5e-324", "5e-324"},
		{"1e-400", "0"},  // underflows to 0, not an error
		{"-1e-400", "0"}, // -0
		{"-1.7976931348623157e308", "-1.7976931348623157e+308"},
		{"9.999999999999997e+22", "9.999999999999997e+22"}, // G-15, correctly rounded
		// Canonicalize does not range-check: integers beyond 2^53 print as
		// the double they round to.
		{"9007199254740992", "9007199254740992"},
		{"9007199254740993", "9007199254740992"},
		{"-9007199254740993", "-9007199254740992"},
		{"18446744073709551616", "18446744073709552000"},
		{"100000000000000000000000", "1e+23"},
		{"123456789012345678901", "123456789012345680000"},
	}
	for _, tt := range tests {
		if got := mustCanon(t, json.Number(tt.in)); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestFloatLayout covers every branch of the ECMAScript layout with the
// RFC 8785 Appendix B values (IEEE-754 bit patterns).
func TestFloatLayout(t *testing.T) {
	tests := []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	}
	for _, tt := range tests {
		f := math.Float64frombits(tt.bits)
		if got := mustCanon(t, f); got != tt.want {
			t.Errorf("%#016x: got %s, want %s", tt.bits, got, tt.want)
		}
		// The same double written as a token canonicalizes identically.
		tok := json.Number(strings.Replace(formatG(f), "+", "", 1))
		if got := mustCanon(t, tok); got != tt.want {
			t.Errorf("token %s: got %s, want %s", tok, got, tt.want)
		}
	}
	for _, f := range []float64{1, 56, -3, 1e15, 1e20, 0.5, 1e21, 1e-6, 1e-7, 1.25e-5} {
		got := mustCanon(t, f)
		if want := mustCanon(t, json.Number(formatG(f))); got != want {
			t.Errorf("%v: float64 %s vs token %s", f, got, want)
		}
	}
}

func formatG(f float64) string { return strings.ReplaceAll(jsonFloat(f), "E", "e") }

// jsonFloat spells f as a valid JSON number token via encoding/json.
func jsonFloat(f float64) string {
	b, err := json.Marshal(f)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestNonFinite(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), math.Inf(-1), json.Number("1e400"), json.Number("-1e309"),
		json.Number("1" + strings.Repeat("0", 400))} {
		_, err := Canonicalize(map[string]any{"x": v})
		if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "${member 0}") {
			t.Errorf("%v: err = %v", v, err)
		}
	}
}

func TestInvalidNumberTokens(t *testing.T) {
	for _, tok := range []string{"", "-", "+1", "01", "-01", "00", "1.", ".5", "1e", "1e+", "1.e5",
		"0x10", "Infinity", "NaN", "1_000", " 1", "1 ", "--1", "1.5.5", "1e5e5", "١"} {
		_, err := Canonicalize([]any{json.Number(tok)})
		if !errors.Is(err, ErrInvalidNumber) {
			t.Errorf("%q: Canonicalize err = %v", tok, err)
		}
		if err := CheckIntegerDomain([]any{json.Number(tok)}); !errors.Is(err, ErrInvalidNumber) {
			t.Errorf("%q: CheckIntegerDomain err = %v", tok, err)
		}
	}
}

func TestGoTypes(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{map[string]any{"i": 5, "i64": int64(-9007199254740991), "u8": uint8(255), "b": true, "f": false, "n": nil},
			`{"b":true,"f":false,"i":5,"i64":-9007199254740991,"n":null,"u8":255}`},
		{[]any{int64(1 << 53), uint64(math.MaxUint64), int64(math.MinInt64)},
			`[9007199254740992,18446744073709552000,-9223372036854776000]`},
		{[]any{}, `[]`},
		{map[string]any{"a": []any(nil), "m": map[string]any(nil)}, `{"a":[],"m":{}}`},
		{map[string]any{}, `{}`},
		{"top", `"top"`},
		{nil, `null`},
	}
	for _, tt := range tests {
		if got := mustCanon(t, tt.in); got != tt.want {
			t.Errorf("%#v: got %s, want %s", tt.in, got, tt.want)
		}
	}
	for _, v := range []any{int64(1 << 53), int64(-(1 << 53)), uint64(1 << 53), uint(math.MaxUint)} {
		if err := CheckIntegerDomain([]any{v}); !errors.Is(err, ErrIntegerRange) {
			t.Errorf("CheckIntegerDomain(%T %v) = %v", v, v, err)
		}
		if _, err := SHA256Identity([]any{v}, 0); !errors.Is(err, ErrIntegerRange) {
			t.Errorf("SHA256Identity(%T %v) = %v", v, v, err)
		}
	}
}

func TestUnsupportedType(t *testing.T) {
	for _, v := range []any{map[string]string{}, []string{"a"}, struct{}{}, float32(1), new(int), json.RawMessage(`1`)} {
		_, err := Canonicalize(map[string]any{"k": []any{v}})
		var e *Error
		if !errors.Is(err, ErrUnsupportedType) || !errors.As(err, &e) || e.Path() != "${member 0}[0]" {
			t.Errorf("%T: err = %v", v, err)
		}
	}
}

func TestIntegerDomain(t *testing.T) {
	accept := []string{
		"0", "-0", "1", "9007199254740991", "-9007199254740991",
		// Float syntax is never range-checked.
		"1e+300", "1e21", "9007199254740993.0", "9.007199254740993e15", "18446744073709551616.5",
	}
	for _, tok := range accept {
		v := map[string]any{"tool_call": map[string]any{"args": map[string]any{"id": json.Number(tok)}}}
		if err := CheckIntegerDomain(v); err != nil {
			t.Errorf("%s rejected: %v", tok, err)
		}
		if _, err := SHA256Identity(v, DefaultMaxDepth); err != nil {
			t.Errorf("%s: SHA256Identity: %v", tok, err)
		}
	}
	reject := []string{
		"9007199254740992", "-9007199254740992", "9007199254740993", "9999999999999999",
		"10000000000000000", "18446744073709551615", "18446744073709551616",
		"-18446744073709551616", "1" + strings.Repeat("0", 400),
	}
	for _, tok := range reject {
		for _, tc := range []struct {
			v    any
			path string
		}{
			{map[string]any{"tool_call": map[string]any{"args": map[string]any{"id": json.Number(tok)}}}, "$.tool_call.args.id"},
			{map[string]any{"messages": []any{"a", map[string]any{}, map[string]any{"content": json.Number(tok)}}}, "$.messages[2].content"},
			{json.Number(tok), "$"},
			{map[string]any{"a.b": map[string]any{"x y": []any{json.Number(tok)}}}, "${member 0}{member 0}[0]"},
		} {
			for name, err := range map[string]error{
				"CheckIntegerDomain": CheckIntegerDomain(tc.v),
				"SHA256Identity":     func() error { _, err := SHA256Identity(tc.v, 0); return err }(),
			} {
				var e *Error
				if !errors.Is(err, ErrIntegerRange) || !errors.As(err, &e) {
					t.Fatalf("%s(%s): err = %v", name, tok, err)
				}
				msg := err.Error()
				if e.Path() != tc.path || !strings.Contains(msg, " "+tc.path+" ") {
					t.Errorf("%s(%s): path %q, message %q, want %s", name, tok, e.Path(), msg, tc.path)
				}
				if strings.Contains(msg, strings.TrimPrefix(tok, "-")) {
					t.Errorf("%s: message leaks the value: %s", name, msg)
				}
				if !strings.Contains(msg, "string-encode 64-bit identifiers") || !strings.Contains(msg, "§4.4") {
					t.Errorf("%s: message lacks remediation: %s", name, msg)
				}
			}
		}
	}
}

// TestErrorDeterminism: with several violations the first in canonical
// order is reported, whatever the map iteration order.
func TestErrorDeterminism(t *testing.T) {
	big := json.Number("9007199254740992")
	v := map[string]any{
		"\uE000": big, "\U00010000": big, "b": map[string]any{"y": big, "x": big},
		"c": big, "d": big, "e": big, "f": big, "g": big, "h": big,
	}
	for range 50 {
		if err := CheckIntegerDomain(v); err.(*Error).Path() != "${member 0}{member 0}" {
			t.Fatalf("CheckIntegerDomain path = %s", err.(*Error).Path())
		}
		if _, err := SHA256Identity(v, 0); err.(*Error).Path() != "${member 0}{member 0}" {
			t.Fatalf("SHA256Identity path = %s", err.(*Error).Path())
		}
	}
	w := map[string]any{"\uE000": big, "\U00010000": big}
	// Canonical (UTF-16) order picks U+10000, which ranks second in byte order.
	if err := CheckIntegerDomain(w); err.(*Error).Path() != "${member 1}" {
		t.Fatalf("UTF-16 order not used: %v", err)
	}
	// An invalid key and a bad value: the first in canonical order wins,
	// and byte 0xff sorts after ASCII.
	for range 50 {
		_, err := SHA256Identity(map[string]any{"\xff": 1, "a": big}, 0)
		if !errors.Is(err, ErrIntegerRange) {
			t.Fatalf("err = %v", err)
		}
	}
}

// TestPathRendering: member names the value chose are never rendered,
// however they are spelled; the gateway's own names are.
func TestPathRendering(t *testing.T) {
	long := strings.Repeat("k", 100)
	tests := []struct {
		v    any
		want string
	}{
		{map[string]any{"": json.Number("1e999")}, `${member 0}`},
		{map[string]any{"a\nb": json.Number("1e999")}, `${member 0}`},
		{map[string]any{"q\"": json.Number("1e999")}, `${member 0}`},
		{map[string]any{"snake_case-1": json.Number("1e999")}, `${member 0}`},
		{map[string]any{long: json.Number("1e999"), "a": 1}, `${member 1}`},
		{map[string]any{"tool_calls": []any{map[string]any{"args": map[string]any{"z": 1, "secret": json.Number("1e999")}}}}, `$.tool_calls[0].args{member 0}`},
	}
	for _, tt := range tests {
		_, err := Canonicalize(tt.v)
		if e, ok := err.(*Error); !ok || e.Path() != tt.want {
			t.Errorf("path = %v, want %s", err, tt.want)
		}
	}
}

// nest wraps leaf in n single-element arrays (or objects when obj).
func nest(n int, obj bool, leaf any) any {
	v := leaf
	for range n {
		if obj {
			v = map[string]any{"k": v}
		} else {
			v = []any{v}
		}
	}
	return v
}

func TestDepth(t *testing.T) {
	for _, obj := range []bool{false, true} {
		// The root is level 1 and scalars count: 127 containers put the
		// leaf at level 128.
		if _, err := SHA256Identity(nest(DefaultMaxDepth-1, obj, json.Number("1")), DefaultMaxDepth); err != nil {
			t.Errorf("obj=%v: depth 128 rejected: %v", obj, err)
		}
		if _, err := SHA256Identity(nest(DefaultMaxDepth-1, obj, []any{}), DefaultMaxDepth); err != nil {
			t.Errorf("obj=%v: empty container at level 128 rejected: %v", obj, err)
		}
		_, err := SHA256Identity(nest(DefaultMaxDepth, obj, "leaf"), DefaultMaxDepth)
		if !errors.Is(err, ErrDepth) || !strings.Contains(err.Error(), "deeper than 128 levels") {
			t.Errorf("obj=%v: depth 129: err = %v", obj, err)
		}
		// maxDepth <= 0 selects the default.
		if _, err := SHA256Identity(nest(DefaultMaxDepth, obj, "leaf"), 0); !errors.Is(err, ErrDepth) {
			t.Errorf("obj=%v: default depth not applied: %v", obj, err)
		}
	}
	if _, err := SHA256Identity("scalar", 1); err != nil {
		t.Error(err)
	}
	if _, err := SHA256Identity([]any{1}, 1); !errors.Is(err, ErrDepth) {
		t.Error("level 2 accepted with maxDepth 1")
	}
	if _, err := SHA256Identity(nest(300, false, 1), 1000); err != nil {
		t.Errorf("custom maxDepth not honoured: %v", err)
	}
	// Canonicalize itself has only the cycle guard.
	if _, err := Canonicalize(nest(maxNesting-1, false, 1)); err != nil {
		t.Errorf("deep but finite value rejected: %v", err)
	}
}

func TestCycleGuard(t *testing.T) {
	m := map[string]any{}
	m["self"] = m
	a := []any{nil}
	a[0] = a
	for _, v := range []any{m, a} {
		_, err := Canonicalize(v)
		if !errors.Is(err, ErrDepth) {
			t.Fatalf("Canonicalize of a cycle: %v", err)
		}
		if len(err.Error()) > 400 {
			t.Errorf("message not bounded: %d bytes", len(err.Error()))
		}
		if err := CheckIntegerDomain(v); !errors.Is(err, ErrDepth) {
			t.Fatalf("CheckIntegerDomain of a cycle: %v", err)
		}
		if _, err := SHA256Identity(v, maxNesting*2); !errors.Is(err, ErrDepth) {
			t.Fatalf("SHA256Identity of a cycle: %v", err)
		}
	}
}

func TestAppendOnError(t *testing.T) {
	dst := []byte("keep")
	out, err := Append(dst, map[string]any{"a": 1, "b": math.NaN()})
	if err == nil || string(out) != "keep" {
		t.Fatalf("Append on error = %q, %v", out, err)
	}
}

// TestEncoderReuse: a failed walk leaves a pooled encoder clean.
func TestEncoderReuse(t *testing.T) {
	e := getEncoder(maxNesting, false)
	bad := map[string]any{"a": map[string]any{"b": map[string]any{"c": math.Inf(1), "d": 1}}, "z": 1}
	if err := e.encode(bad, 1); err == nil {
		t.Fatal("expected error")
	}
	if len(e.members) != 0 {
		t.Fatalf("member stack not unwound: %d", len(e.members))
	}
	for _, m := range e.members[:cap(e.members)] {
		if m.val != nil || m.key != "" {
			t.Fatal("pooled member stack still references caller values")
		}
	}
	putEncoder(e)
	if got := mustCanon(t, map[string]any{"y": 1, "x": 2}); got != `{"x":2,"y":1}` {
		t.Fatal(got)
	}
}

func TestSHA256Identity(t *testing.T) {
	v := decodeString(t, `{"b":[1,2.50,"x"],"a":{"c":null}}`)
	canon := mustCanon(t, v)
	if canon != `{"a":{"c":null},"b":[1,2.5,"x"]}` {
		t.Fatal(canon)
	}
	sum := sha256.Sum256([]byte(canon))
	want := "sha256:" + hex.EncodeToString(sum[:])
	got, err := SHA256Identity(v, DefaultMaxDepth)
	if err != nil || got != want {
		t.Fatalf("got %s, %v; want %s", got, err, want)
	}
	// Large enough to flush into the hash several times.
	big := genContext(t, 300<<10)
	canonBig, err := Canonicalize(big)
	if err != nil {
		t.Fatal(err)
	}
	sum = sha256.Sum256(canonBig)
	if got, err := SHA256Identity(big, DefaultMaxDepth); err != nil || got != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("streamed identity differs: %s, %v", got, err)
	}
}

func TestHashCanonical(t *testing.T) {
	key := []byte("0123456789abcdef")
	v := genContext(t, 100<<10)
	canon, err := Canonicalize(v)
	if err != nil {
		t.Fatal(err)
	}
	want := hmac.New(sha256.New, key)
	want.Write(canon)
	got := hmac.New(sha256.New, key)
	if err := HashCanonical(got, v, 0); err != nil {
		t.Fatal(err)
	}
	if !hmac.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Fatal("HashCanonical bytes differ from Canonicalize")
	}
	bad := map[string]any{"a": v, "z": json.Number("-9007199254740992")}
	if err := HashCanonical(sha256.New(), bad, 0); !errors.Is(err, ErrIntegerRange) || err.(*Error).Path() != "${member 1}" {
		t.Fatalf("err = %v", err)
	}
	if err := HashCanonical(sha256.New(), nest(5, true, 1), 5); !errors.Is(err, ErrDepth) {
		t.Fatalf("depth: err = %v", err)
	}
}

// TestConcurrent exercises the encoder pool under the race detector.
func TestConcurrent(t *testing.T) {
	v := genContext(t, 8<<10)
	want, err := Canonicalize(v)
	if err != nil {
		t.Fatal(err)
	}
	wantID, _ := SHA256Identity(v, 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				switch (g + i) % 3 {
				case 0:
					if got, err := Canonicalize(v); err != nil || string(got) != string(want) {
						t.Error("Canonicalize differs under concurrency")
					}
				case 1:
					if id, err := SHA256Identity(v, 0); err != nil || id != wantID {
						t.Error("SHA256Identity differs under concurrency")
					}
				case 2:
					if _, err := SHA256Identity(map[string]any{"x": json.Number("9007199254740992")}, 0); err == nil {
						t.Error("domain check skipped")
					}
				}
			}
		})
	}
	wg.Wait()
}
