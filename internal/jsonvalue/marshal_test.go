package jsonvalue

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/swar"
)

func TestMarshalMatchesEncodingJSON(t *testing.T) {
	cases := append([]any{}, sizeCases...)
	cases = append(cases,
		mustDecode(t, `{"z":1,"a":[true,null,{"y":"\u003c\u003e\u0026","b":"\u2028"}],"m":{"\u00e9":1,"e":2,"E":3,"":4}}`),
		map[string]any{"big": json.Number("123456789012345678901234567890"), "f": json.Number("1.000")},
		strings.Repeat("long string with \"quotes\" and \\ and \n ", 50),
	)
	for _, v := range cases {
		if got, want := mustMarshal(t, v), stdCompact(t, v); got != want {
			t.Errorf("Marshal = %s\n  encoding/json = %s", got, want)
		}
	}
}

func TestMarshalEveryByte(t *testing.T) {
	var b strings.Builder
	for c := range 0x80 {
		b.WriteByte(byte(c))
	}
	b.WriteString("é€😀\u2028\u2029\ufffd")
	s := b.String()
	if got, want := mustMarshal(t, s), stdCompact(t, s); got != want {
		t.Fatalf("Marshal = %s\n  encoding/json = %s", got, want)
	}
}

func TestMarshalNumbersVerbatim(t *testing.T) {
	for _, tok := range []string{"18446744073709551616", "-9223372036854775809", "1.0", "1E+2", "-0", "0.000000000000000000001"} {
		if got := mustMarshal(t, json.Number(tok)); got != tok {
			t.Errorf("Marshal(%s) = %s", tok, got)
		}
	}
}

func TestAppendCompact(t *testing.T) {
	dst := []byte("prefix:")
	out, err := AppendCompact(dst, map[string]any{"a": 1})
	if err != nil || string(out) != `prefix:{"a":1}` {
		t.Fatalf("AppendCompact = %q, %v", out, err)
	}
	out, err = AppendCompact([]byte("keep"), []any{1, math.NaN()})
	if !errors.Is(err, ErrNonFinite) || string(out) != "keep" {
		t.Fatalf("AppendCompact on error = %q, %v", out, err)
	}
}

// The scratch key stack must survive nested objects that grow it.
func TestMarshalNestedKeyScratch(t *testing.T) {
	inner := map[string]any{}
	for i := range 200 {
		inner[strings.Repeat("k", i+1)] = i
	}
	v := map[string]any{"b": inner, "a": map[string]any{"y": inner, "x": 1}, "c": []any{inner, inner}}
	if got, want := mustMarshal(t, v), stdCompact(t, v); got != want {
		t.Fatal("nested objects marshal differently from encoding/json")
	}
}

func TestMarshalDecodeRoundTrip(t *testing.T) {
	in := `{"messages":[{"role":"user","content":"hi \"there\"\n","n":18446744073709551616}],"x":-0,"y":1.50}`
	v := mustDecode(t, in)
	out := mustMarshal(t, v)
	if !Equal(v, mustDecode(t, out)) {
		t.Fatalf("round trip changed value: %s", out)
	}
	var std any
	if err := json.Unmarshal([]byte(out), &std); err != nil {
		t.Fatal(err)
	}
}

// swar.IndexStopOrHighString's word-at-a-time test must flag exactly what the byte loop does,
// for every byte value at every position and for adjacent pairs (borrows
// between bytes are where such tricks go wrong).
func TestPlainRun(t *testing.T) {
	ref := func(b []byte) int {
		for i, x := range b {
			if x >= 0x80 || x < 0x20 || x == '"' || x == '\\' {
				return i
			}
		}
		return len(b)
	}
	base := []byte("abcdefghijklmnopq")
	b := make([]byte, len(base))
	for c := range 256 {
		for pos := range base {
			copy(b, base)
			b[pos] = byte(c)
			if got, want := swar.IndexStopOrHighString(string(b), 0), ref(b); got != want {
				t.Fatalf("IndexStopOrHighString(%q) = %d, want %d", b, got, want)
			}
		}
		for c2 := range 256 {
			copy(b, base)
			b[3], b[4] = byte(c), byte(c2)
			if got, want := swar.IndexStopOrHighString(string(b), 0), ref(b); got != want {
				t.Fatalf("IndexStopOrHighString(%q) = %d, want %d", b, got, want)
			}
		}
	}
	if got := swar.IndexStopOrHighString("abcdefghij", 9); got != 10 {
		t.Fatalf("IndexStopOrHighString from offset = %d", got)
	}
}
