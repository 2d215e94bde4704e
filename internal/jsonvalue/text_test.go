package jsonvalue

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// checkText pins Text's decodes to the copying ones on data: the same
// tree (reflect.DeepEqual) or the same error text, with data decoded alone
// and as a span in the middle of a larger document, and nested (outer
// counts toward the depth limit exactly as DecodeStrictNested counts it).
func checkText(t *testing.T, data []byte, want any, wantErr error, strictWant any, strictErr error) {
	t.Helper()
	same := func(name string, got any, err error, want any, wantErr error) {
		t.Helper()
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() || err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s(%q) = %#v, %v; copying decode = %#v, %v", name, data, got, err, want, wantErr)
		}
	}
	alone := NewText(data)
	got, err := alone.Decode(0, len(data))
	same("Text.Decode", got, err, want, wantErr)
	got, err = alone.DecodeStrictNested(0, len(data), 0)
	same("Text.DecodeStrictNested", got, err, strictWant, strictErr)

	// A span of a larger document: offsets in errors stay relative to it.
	doc := wrap(`{"pad":"xyz","v":`, data, `}`)
	inner := NewText(doc)
	start, end := len(`{"pad":"xyz","v":`), len(doc)-1
	got, err = inner.Decode(start, end)
	same("Text.Decode(span)", got, err, want, wantErr)
	got, err = inner.DecodeStrictNested(start, end, 1)
	nestWant, nestErr := DecodeStrictNested(data, 1)
	same("Text.DecodeStrictNested(span, 1)", got, err, nestWant, nestErr)
}

// TestTextSharesStrings pins what Text is for: plain strings, keys and
// numbers come out of the one string conversion (no allocation each),
// while escaped strings are still unescaped copies.
func TestTextSharesStrings(t *testing.T) {
	doc := []byte(`{"alpha-key":"plain value here","num":12345,"esc":"a\nb","list":["x1","x2"]}`)
	txt := NewText(doc)
	var v any
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if v, err = txt.Decode(0, len(doc)); err != nil {
			t.Fatal(err)
		}
	})
	want, err := Decode(doc)
	if err != nil || !reflect.DeepEqual(v, want) {
		t.Fatalf("Text.Decode = %#v, %v; Decode = %#v", v, err, want)
	}
	copyAllocs := testing.AllocsPerRun(100, func() { _, _ = Decode(doc) })
	// Decode: the map (2), "alpha-key", "plain value here", "12345", "num",
	// "esc", "a\nb", "list", "x1", "x2" and the boxes of the values. Text
	// saves the conversions of the eight plain strings and numbers.
	if copyAllocs-allocs != 8 {
		t.Errorf("Text.Decode: %v allocs, Decode: %v; want 8 fewer", allocs, copyAllocs)
	}
	m := v.(map[string]any)
	if m["num"] != json.Number("12345") || m["esc"] != "a\nb" || !strings.HasPrefix(m["alpha-key"].(string), "plain") {
		t.Fatalf("tree = %#v", m)
	}
}

// TestDecodeStringMatchesDecode: DecodeString answers as Decode does,
// strings or not.
func TestDecodeStringMatchesDecode(t *testing.T) {
	for _, in := range []string{
		`"plain"`, `"role"`, `"esc\"aped\n"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"bad ` + "\xff" + `"`,
		`"ctl` + "\x01" + `"`, `"unterminated`, `"a" `, ` "a"`, `"a""b"`, `12`, `null`, `{"a":1}`, `""`,
		`"` + strings.Repeat(`x\\`, 300) + `"`, `"short\t"`,
	} {
		text := NewText([]byte("[" + in + "]"))
		want, wantErr := text.Decode(1, len(in)+1)
		got, err := text.DecodeString(1, len(in)+1)
		if !reflect.DeepEqual(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("%q: got %#v, %v; Decode %#v, %v", in, got, err, want, wantErr)
		}
	}
}

// TestUnescapeSizesItsString: an escaped string is built at its final
// size (its bytes and its interface box, nothing regrown), and
// rawStringLen bounds its unescaped length.
func TestUnescapeSizesItsString(t *testing.T) {
	for _, in := range []string{
		`"` + strings.Repeat(`line \"x\"\n`, 2000) + `"`,
		`"\u00e9` + strings.Repeat(`\ud83d\ude00\t`, 500) + `"`,
		`"a\\"`, `"\/"`, `"\ud800"`,
	} {
		text := NewText([]byte(in))
		want, err := text.DecodeString(0, len(in))
		if err != nil {
			if strings.Contains(in, `\ud800"`) {
				continue
			}
			t.Fatal(err)
		}
		if n := rawStringLen([]byte(in), 1, strings.IndexByte(in, '\\')); n < len(want.(string)) || n != len(in)-2 {
			t.Errorf("%.20q: rawStringLen %d, unescaped %d, raw %d", in, n, len(want.(string)), len(in)-2)
		}
		if raceEnabled || testing.CoverMode() != "" {
			continue // allocation counts differ
		}
		if allocs := testing.AllocsPerRun(20, func() { text.DecodeString(0, len(in)) }); allocs > 2 {
			t.Errorf("%.20q: %v allocations, want the string and its box", in, allocs)
		}
	}
}
