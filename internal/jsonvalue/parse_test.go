package jsonvalue

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeStrictDuplicates(t *testing.T) {
	tests := []struct {
		in   string
		path string // "" when the input has no duplicate
	}{
		{`{"a":1,"b":2}`, ""},
		{`{"a":{"x":1},"b":{"x":1}}`, ""}, // same key in sibling objects
		{`[{"a":1},{"a":1}]`, ""},
		{`{"a":1,"a":1}`, "${member 0}"},
		{`{"a":1,"a":2}`, "${member 0}"},
		{`{"a":1,"\u0061":2}`, "${member 0}"}, // equal after unescaping
		{`{"":1,"":2}`, "${member 0}"},
		{`{"a b":1,"a b":2}`, "${member 0}"},
		{`{"choices":[{"delta":{"content":"x","content":"y"}}]}`, "$.choices[0].delta.content"},
		{`[1,[2,{"k":{"z":0,"z":0}}]]`, "$[1][1]{member 0}{member 0}"},
		// The inner object closes first, so its duplicate is reported.
		{`{"a":1,"a":2,"b":{"c":1,"c":2}}`, "${member 1}{member 0}"},
		// Past smallContainer members the object's members spill to the
		// shared stack; detection and paths must not change.
		{`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k3":11}`, "${member 3}"},
		{`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"i":0}}`, "${member 8}{member 8}"},
		{`[0,1,2,3,4,5,6,7,8,9,10,{"x":[{"y":1,"y":2}]}]`, "$[11]{member 0}[0]{member 0}"},
	}
	for _, tt := range tests {
		v, err := DecodeStrict([]byte(tt.in))
		if tt.path == "" {
			want, werr := Decode([]byte(tt.in))
			if err != nil || werr != nil || !reflect.DeepEqual(v, want) {
				t.Errorf("DecodeStrict(%s) = %#v, %v; want %#v", tt.in, v, err, want)
			}
			continue
		}
		var pe *PathError
		if !errors.Is(err, ErrDuplicateKey) || !errors.As(err, &pe) || pe.Path != tt.path {
			t.Errorf("DecodeStrict(%s) = %v; want a duplicate at %s", tt.in, err, tt.path)
		}
		if v != nil {
			t.Errorf("DecodeStrict(%s) returned a value with its error", tt.in)
		}
		// Decode keeps the last duplicate, like encoding/json.
		if _, err := Decode([]byte(tt.in)); err != nil {
			t.Errorf("Decode(%s) = %v", tt.in, err)
		}
	}
}

func TestDecodeLastDuplicateWins(t *testing.T) {
	v, err := Decode([]byte(`{"a":1,"b":{"c":"x","c":"y"},"a":[true]}`))
	want := map[string]any{"a": []any{true}, "b": map[string]any{"c": "y"}}
	if err != nil || !reflect.DeepEqual(v, want) {
		t.Fatalf("Decode = %#v, %v; want %#v", v, err, want)
	}
}

func TestDecodeStrictErrorOmitsValue(t *testing.T) {
	_, err := DecodeStrict([]byte(`{"tool":{"secret":"hunter2-value","secret":"other-value"}}`))
	if err == nil {
		t.Fatal("duplicate accepted")
	}
	msg := err.Error()
	if strings.Contains(msg, "hunter2") || strings.Contains(msg, "other-value") {
		t.Errorf("error quotes the value: %s", msg)
	}
	if strings.Contains(msg, "tool") || strings.Contains(msg, "secret") {
		t.Errorf("error names a member the payload chose: %s", msg)
	}
	if !strings.Contains(msg, "${member 0}{member 0}") {
		t.Errorf("error does not name the path: %s", msg)
	}
}

// Any other problem outranks a duplicate key, so DecodeStrict fails like
// Decode whenever Decode fails, wherever the problem sits relative to the
// duplicate.
func TestDecodeStrictPrecedence(t *testing.T) {
	tests := []struct {
		in       string
		sentinel error
	}{
		{`{"a":1,"a":2} x`, ErrSyntax},
		{`[{"a":1,"a":2},]`, ErrSyntax},
		{`[{"a":1,"a":2},"\ud800"]`, ErrInvalidString},
		{`["\ud800",{"a":1,"a":2}]`, ErrInvalidString},
		{"[{\"a\":1,\"a\":2},\"\xff\"]", ErrInvalidString},
		{`[{"a":1,"a":2},` + strings.Repeat("[", hardMaxDepth) + strings.Repeat("]", hardMaxDepth) + `]`, ErrSyntax},
	}
	for _, tt := range tests {
		_, err := DecodeStrict([]byte(tt.in))
		_, derr := Decode([]byte(tt.in))
		if !errors.Is(err, tt.sentinel) || errors.Is(err, ErrDuplicateKey) || derr == nil || err.Error() != derr.Error() {
			t.Errorf("DecodeStrict(%.40q) = %v; Decode = %v; want %v", tt.in, err, derr, tt.sentinel)
		}
	}
}

func TestDecodeDepthLimit(t *testing.T) {
	nest := func(n int, open, leaf, closing string) []byte {
		return []byte(strings.Repeat(open, n) + leaf + strings.Repeat(closing, n))
	}
	tests := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"arrays at the limit", nest(hardMaxDepth, "[", "", "]"), true},
		{"arrays past the limit", nest(hardMaxDepth+1, "[", "", "]"), false},
		{"objects at the limit", nest(hardMaxDepth, `{"a":`, "0", "}"), true},
		{"objects past the limit", nest(hardMaxDepth+1, `{"a":`, "0", "}"), false},
		{"mixed at the limit", nest(hardMaxDepth/2, `[{"":`, "0", "}]"), true},
		{"mixed past the limit", nest(hardMaxDepth/2, `[{"":`, "[]", "}]"), false},
		{"million unclosed arrays", []byte(strings.Repeat("[", 1_000_000)), false},
		{"million unclosed objects", []byte(strings.Repeat(`{"":`, 1_000_000)), false},
	}
	for _, tt := range tests {
		_, err := Decode(tt.in)
		_, stdErr := decodeStd(tt.in)
		if (err == nil) != tt.ok || (stdErr == nil) != tt.ok {
			t.Errorf("%s: Decode = %v, encoding/json = %v; want ok=%v", tt.name, err, stdErr, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: %v does not wrap ErrSyntax", tt.name, err)
		}
	}
	_, err := Decode(nest(hardMaxDepth+1, "[", "", "]"))
	if want := "byte offset " + strconv.Itoa(hardMaxDepth); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("past the limit: %v; want the offset of the innermost '['", err)
	}
}

func TestDecodeErrorOffsets(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{``, "jsonvalue: invalid JSON: empty input"},
		{" \n", "jsonvalue: invalid JSON: empty input"},
		{`[1,]`, "jsonvalue: invalid JSON at byte offset 3: expected a JSON value"},
		{`{"a" 1}`, "jsonvalue: invalid JSON at byte offset 5: expected ':' after an object key"},
		{`{"a":1,}`, "jsonvalue: invalid JSON at byte offset 7: expected a string object key"},
		{`[1 2]`, "jsonvalue: invalid JSON at byte offset 3: expected ',' or ']' after an array element"},
		{`{"a":1 "b":2}`, "jsonvalue: invalid JSON at byte offset 7: expected ',' or '}' after an object member"},
		{`tru`, "jsonvalue: invalid JSON at byte offset 3: unexpected end of input"},
		{`trUe`, "jsonvalue: invalid JSON at byte offset 2: invalid literal (expected true, false or null)"},
		{`01`, "jsonvalue: invalid JSON at byte offset 1: trailing data after the value"},
		{`1.`, "jsonvalue: invalid JSON at byte offset 2: unexpected end of input"},
		{`[1.]`, "jsonvalue: invalid JSON at byte offset 3: invalid number: expected a digit after the decimal point"},
		{`[1e]`, "jsonvalue: invalid JSON at byte offset 3: invalid number: expected a digit in the exponent"},
		{`-x`, "jsonvalue: invalid JSON at byte offset 1: invalid number: expected a digit"},
		{`+1`, "jsonvalue: invalid JSON at byte offset 0: expected a JSON value"},
		{"\"a\x01\"", "jsonvalue: invalid JSON at byte offset 2: control character in string"},
		{`"a\qb"`, "jsonvalue: invalid JSON at byte offset 3: invalid escape in string"},
		{`"\u12x4"`, "jsonvalue: invalid JSON at byte offset 5: invalid \\u escape: expected a hex digit"},
		{`"abc`, "jsonvalue: invalid JSON at byte offset 4: unexpected end of input"},
		{"\xef\xbb\xbf{}", "jsonvalue: invalid JSON at byte offset 0: expected a JSON value"},
		{`{} {}`, "jsonvalue: invalid JSON at byte offset 3: trailing data after the value"},
		{`["\ud800"]`, "jsonvalue: invalid string: lone UTF-16 surrogate escape at byte offset 2"},
		{"[1,,\"\xff\"]", "jsonvalue: invalid string: invalid UTF-8 at byte offset 5"},
		{"\"\xe2\x82\"", "jsonvalue: invalid string: invalid UTF-8 at byte offset 1"},
	}
	for _, tt := range tests {
		_, err := Decode([]byte(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Decode(%q) = %v\n\twant %s", tt.in, err, tt.want)
		}
	}
}

// TestDecodeAllocs pins the allocation discipline: a string without escapes
// is one conversion plus the interface box, and small containers collect
// their members without heap stacks.
func TestDecodeAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumentation changes allocation counts")
	}
	tests := []struct {
		in   string
		max  float64
		what string
	}{
		{`"` + strings.Repeat("plain text ", 50) + `"`, 2, "string bytes and box"},
		{`"` + strings.Repeat("ünïcödé ", 50) + `"`, 2, "string bytes and box"},
		{`"line\nbreak"`, 3, "scratch buffer, string bytes and box"},
		{`123456789`, 2, "number bytes and box"},
		{`[true,false,null]`, 2, "slice and box"},
		{`{"a":true,"b":null}`, 4, "map, its group and two keys"},
		{sseChunk, 36, "values only"},
	}
	for _, tt := range tests {
		data := []byte(tt.in)
		got := testing.AllocsPerRun(100, func() {
			if _, err := Decode(data); err != nil {
				t.Fatal(err)
			}
		})
		if got > tt.max {
			t.Errorf("Decode(%.30q) makes %v allocations; want at most %v (%s)", tt.in, got, tt.max, tt.what)
		}
	}
}

// TestDecodeRandomDocuments complements the byte-level fuzzer with
// structurally valid documents: random trees written with random
// whitespace and random escaping (including \u escapes and surrogate
// pairs for the same characters), decoded by both implementations.
func TestDecodeRandomDocuments(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	dups := 0
	for i := range 3000 {
		var b strings.Builder
		writeRandomValue(r, &b, 0)
		data := []byte(b.String())
		want, err := decodeStd(data)
		if err != nil {
			t.Fatalf("doc %d: generator produced input encoding/json rejects: %v\n%s", i, err, data)
		}
		got, err := Decode(data)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("doc %d: Decode = %v\n%s", i, err, data)
		}
		dup, _ := firstDuplicate(data, got)
		if dup != "" {
			dups++
		}
		_, err = DecodeStrict(data)
		var pe *PathError
		switch {
		case dup == "" && err != nil:
			t.Fatalf("doc %d: DecodeStrict = %v without a duplicate\n%s", i, err, data)
		case dup != "" && (!errors.As(err, &pe) || pe.Path != dup):
			t.Fatalf("doc %d: DecodeStrict = %v; want duplicate at %s\n%s", i, err, dup, data)
		}
	}
	if dups < 50 {
		t.Errorf("only %d of the documents have a duplicate key", dups)
	}
}

var randomKeys = []string{"a", "b", "id", "role", "content", "", "k é", "x\ny", "tool_calls", "日本", "\U0001F600", "q\"uote"}

var randomStrings = []string{"", "x", "hello world", "tab\there", "quote\"back\\slash", "\x00\x1f\x7f", "é→日本語😀", "\u2028\u2029", "<>&", strings.Repeat("long plain text ", 8), "\ufffd"}

func writeRandomValue(r *rand.Rand, b *strings.Builder, depth int) {
	space := func() {
		if r.IntN(4) == 0 {
			b.WriteString([]string{" ", "\n", "\t", "\r\n  "}[r.IntN(4)])
		}
	}
	space()
	kind := r.IntN(9)
	if depth > 6 && kind >= 7 {
		kind = r.IntN(7)
	}
	switch kind {
	case 0:
		b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
	case 1, 2:
		b.WriteString([]string{"0", "-0", "1", "-12", "3.25", "1e9", "-2E-3", "6.02e+23", "18446744073709551616", "0.5"}[r.IntN(10)])
	case 3, 4, 5, 6:
		writeRandomString(r, b, randomStrings[r.IntN(len(randomStrings))])
	case 7:
		n := r.IntN(20)
		if r.IntN(3) == 0 {
			n = 0
		}
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			writeRandomValue(r, b, depth+1)
		}
		space()
		b.WriteByte(']')
	default:
		n := r.IntN(20)
		if r.IntN(3) == 0 {
			n = r.IntN(3)
		}
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			space()
			// Unique keys mostly; a repeat now and then for DecodeStrict.
			key := strconv.Itoa(i)
			if r.IntN(3) == 0 {
				key = randomKeys[r.IntN(len(randomKeys))] + key
			}
			if r.IntN(40) == 0 {
				key = "0"
			}
			writeRandomString(r, b, key)
			space()
			b.WriteByte(':')
			writeRandomValue(r, b, depth+1)
		}
		space()
		b.WriteByte('}')
	}
	space()
}

// writeRandomString writes s as a JSON string, escaping each character in
// one of the ways JSON allows, chosen at random.
func writeRandomString(r *rand.Rand, b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, c := range s {
		mustEscape := c < 0x20 || c == '"' || c == '\\'
		switch {
		case !mustEscape && r.IntN(4) != 0:
			b.WriteRune(c)
		case c == '"' || c == '\\':
			if r.IntN(2) == 0 {
				b.WriteByte('\\')
				b.WriteRune(c)
			} else {
				fmt.Fprintf(b, `\u%04x`, c)
			}
		case c == '\n' && r.IntN(2) == 0:
			b.WriteString(`\n`)
		case c == '/' && r.IntN(2) == 0:
			b.WriteString(`\/`)
		case c > 0xFFFF:
			hi, lo := 0xD800+(c-0x10000)>>10, 0xDC00+(c-0x10000)&0x3FF
			fmt.Fprintf(b, `\u%04X\u%04x`, hi, lo)
		default:
			fmt.Fprintf(b, `\u%04x`, c)
		}
	}
	b.WriteByte('"')
}

func TestStringRun(t *testing.T) {
	for _, tt := range []struct {
		in   string
		end  int
		high bool
	}{
		{``, 0, false},
		{`abc`, 3, false},
		{`abc"`, 3, false},
		{`abcdefghijklmnop`, 16, false},
		{`abcdefghijklmno"`, 15, false},
		{`abcdefgh\ijklmno`, 8, false},
		{"abcdefghij\x1fklmno", 10, false},
		{"abcdefghij\x7fklmno", 16, false},
		{"ab\xc3\xa9defghijklmno\"", 16, true},
		{"abcdefghijklm\xffo\"", 15, true},
		{"\xff\"", 1, true},
		{"\x20\x21\x23\x5b\x5d\x7e\x80\xfe", 8, true},
	} {
		end, high := stringRun([]byte(tt.in), 0)
		if end != tt.end || high != tt.high {
			t.Errorf("stringRun(%q) = %d, %v; want %d, %v", tt.in, end, high, tt.end, tt.high)
		}
	}
	// Every byte value, at every position of a word, stops the run
	// exactly when JSON requires it.
	for c := range 256 {
		for pos := range 16 {
			buf := []byte(strings.Repeat("a", 16))
			buf[pos] = byte(c)
			end, high := stringRun(buf, 0)
			stops := c < 0x20 || c == '"' || c == '\\'
			if want := map[bool]int{true: pos, false: 16}[stops]; end != want {
				t.Fatalf("byte %#x at %d: run ends at %d, want %d", c, pos, end, want)
			}
			if high != (!stops && c >= utf8.RuneSelf) {
				t.Fatalf("byte %#x at %d: high = %v", c, pos, high)
			}
		}
	}
}

// The parser must agree with encoding/json on what a JSON number is; the
// package's own validNumber is a third, independent opinion.
func TestDecodeNumbersAgreeWithValidNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "10", "1.0", "1e5", "1E+5", "-1.5e-5", "01", "1.", ".1", "+1", "-", "1e", "1e+", "0x1", "00", "-01", "1.5.5", "1ee5"} {
		v, err := Decode([]byte(s))
		if got, want := err == nil, validNumber(s); got != want {
			t.Errorf("Decode(%q) = %v; validNumber = %v", s, err, want)
		}
		if err == nil && v != json.Number(s) {
			t.Errorf("Decode(%q) = %#v", s, v)
		}
	}
}
