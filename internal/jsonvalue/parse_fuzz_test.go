package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/safepath"
)

// parseSeeds are the tricky inputs of FuzzDecodeMatchesEncodingJSON; with
// the fuzzer off they run as an ordinary differential test.
var parseSeeds = []string{
	// Literals and their near misses.
	`null`, `true`, `false`, `nul`, `tru`, `fals`, `nulll`, `truex`, `True`, `NULL`, `n`, `t`, `f`, `nan`, `NaN`, `Infinity`, `-Infinity`,
	// Numbers.
	`0`, `-0`, `-0.0`, `0.0`, `1`, `-1`, `1.5`, `1E+2`, `1e-2`, `1E2`, `1e+0`, `-1.25e-7`, `0e0`, `0E-0`,
	`9007199254740993`, `18446744073709551615`, `18446744073709551616`, `-9223372036854775808`, `-9223372036854775809`,
	`123456789012345678901234567890`, `1e400`, `-1e400`, `1e-400`, `0.000000000000000000000000000001`,
	`01`, `-01`, `00`, `1.`, `.5`, `-.5`, `+1`, `-`, `1e`, `1e+`, `1E-`, `1.e5`, `1.5e`, `--1`, `0x10`, `1_000`, `1.5.5`, `1e5e5`, `-a`, `2.`, `[1.]`, `[-]`, `{"a":-}`,
	// Strings and escapes.
	`""`, `"x"`, `"\""`, `"\\"`, `"\/"`, `"/"`, `"\b\f\n\r\t"`, `"\u0000"`, `"\u001f"`, `"\u007f"`, `"\u00e9"`, `"\u20ac"`, `"\uFFFF"`, `"\uffff"`, `"\ufffd"`,
	`"\ud83d\ude00"`, `"\uD83D\uDE00"`, `"\udbff\udfff"`, `"\ud800\udc00"`, `"a\u0041b"`, `"\u0041\ud800\udc00\u00e9"`, `"\u2028\u2029"`,
	`"\ud800"`, `"\udc00"`, `"\udfff"`, `"\ud800x"`, `"\ud800\u0041"`, `"\ud800\ud800\udc00"`, `"\ud800\udc00\udc00"`, `"\ud800\\udc00"`, `"\\ud800"`, `"\\\ud800"`,
	`"\ud800\n"`, `"\ud800\"`, `"\ud800`, `"\ud800\u`, `"\ud800\udc0"`, `"\ud800\udcZZ"`,
	`"\x"`, `"\'"`, `"\U0041"`, `"\u"`, `"\u12"`, `"\u12345"`, `"\u00G0"`, `"\`, `"abc`, `"`, `"\u0`, `"a\`,
	"\"tab\there\"", "\"nl\nhere\"", "\"\x00\"", "\"\x1f\"", "\"\x7f\"", "\"ok\x01\"",
	"\"\xff\"", "\"ok\xc3\"", "\"\xc3\xa9\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xc0\xaf\"", "\"\xe2\x82\"", "\"\xe2\x82\xac\"", "\"\xf0\x9f\x98\x80\"",
	"\"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\\n\xc3\xa9\"", "\"0123456789abcdef\xc3\xa9\\u0041 long enough for the word loop\"",
	// Containers.
	`[]`, `{}`, `[[]]`, `[{}]`, `{"":{}}`, `{"a":[]}`, `[1,2,3]`, `[1,]`, `[,1]`, `[1,,2]`, `[`, `]`, `[1`, `[1 2]`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`,
	`{"a" 1}`, `{a:1}`, `{'a':1}`, `{"a":1 "b":2}`, `{"a":1`, `{"a"`, `{"a":`, `{1:2}`, `{"a":1}}`, `[1]]`, `[}`, `{]`, `{"a":[1,{"b":[2,{"c":null}]}]}`,
	`{"a":1,"a":2}`, `{"a":1,"b":{"c":1,"c":[true]},"a":3}`, `{"a":1,"\u0061":2}`, `[{"x":1},{"x":1,"x":2}]`,
	`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k1":11}`,
	`[1,2,3,4,5,6,7,8,[9,10,11,12,13,14,15,16,17,[18]],19,20]`,
	`{"a":{"b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7,"i":8,"j":{"k":1,"l":2,"m":3,"n":4,"o":5,"p":6,"q":7,"r":8,"s":9}},"t":[1,2,3,4,5,6,7,8,9,{"u":1}]}`,
	// Whitespace and framing.
	" \t\n\r1\r\n\t ", " {} ", "\n[\n1\n,\n2\n]\n", "[ ]", "{ }", "{ \"a\" : 1 , \"b\" : [ ] }", "", " ", "\n\t", "\f1", "\v1", "1\f", "\u00a01", "1 2", "{} {}", "{}x", "[]]", "1,",
	"\xef\xbb\xbf{}", "\xef\xbb\xbf", "\x00", "[\x00]", "{}\x00", "\xff", "[\xff]", "1\xff", "[1,\xff]", "[1,,\"\xff\"]", `["\ud800",]`, `["\ud800"] x`,
	// Realistic documents.
	sseChunk,
	`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":\""}}]}}]}`,
	`{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"f","arguments":{"url":"http://x","n":[1,2.5,-3e-7]}}}]}]}`,
}

// deepSeeds are generated seeds around the nesting limit.
func deepSeeds() []string {
	return []string{
		strings.Repeat("[", hardMaxDepth) + strings.Repeat("]", hardMaxDepth),
		strings.Repeat("[", hardMaxDepth+1) + strings.Repeat("]", hardMaxDepth+1),
		strings.Repeat(`{"a":`, hardMaxDepth) + "1" + strings.Repeat("}", hardMaxDepth),
		strings.Repeat(`{"a":`, hardMaxDepth+1) + "1" + strings.Repeat("}", hardMaxDepth+1),
		strings.Repeat(`[{"a":`, hardMaxDepth/2) + "[]" + strings.Repeat("}]", hardMaxDepth/2),
		strings.Repeat("[", 100),
		strings.Repeat("[", 50) + "1" + strings.Repeat("]", 49),
	}
}

// FuzzDecodeMatchesEncodingJSON is the differential test of the parser
// against decodeStd (encoding/json with UseNumber, plus the package's
// UTF-8 and lone-surrogate checks): the two accept exactly the same inputs,
// produce reflect.DeepEqual trees, and reject with the same sentinel (and,
// for ErrInvalidString, the same message and offset). There is no
// exception: Decode's only rules beyond encoding/json, invalid UTF-8 and
// lone surrogate escapes, are part of the oracle.
//
// DecodeStrict is checked alongside: it must fail exactly like Decode
// wherever Decode fails; on input Decode accepts it must reject precisely
// the documents in which an independent token-level walk finds a repeated
// key, naming the same member, and otherwise return the same tree. That is
// its one documented stricter rule.
//
// Each input is also tried wrapped in an array, an object member and
// whitespace, so that one mutation exercises top-level, element and member
// positions (a truncated number ends the input at the top level but meets
// a delimiter inside a container).
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, s := range deepSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
		checkDecode(t, wrap("[", data, "]"))
		checkDecode(t, wrap(`{"k":`, data, "}"))
		checkDecode(t, wrap(" \n", data, "\t\r"))
	})
}

func wrap(pre string, data []byte, post string) []byte {
	out := make([]byte, 0, len(pre)+len(data)+len(post))
	out = append(out, pre...)
	out = append(out, data...)
	return append(out, post...)
}

// checkDecode compares Decode and DecodeStrict with the oracles on data.
func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := decodeStd(data)
	got, err := Decode(data)
	switch {
	case wantErr == nil && err != nil:
		t.Fatalf("Decode(%q) = %v; encoding/json accepts it", data, err)
	case wantErr == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("Decode(%q) = %#v; encoding/json = %#v", data, got, want)
	case wantErr != nil && err == nil:
		t.Fatalf("Decode(%q) accepted it; encoding/json: %v", data, wantErr)
	case wantErr != nil:
		for _, sentinel := range []error{ErrSyntax, ErrInvalidString} {
			if errors.Is(err, sentinel) != errors.Is(wantErr, sentinel) {
				t.Fatalf("Decode(%q) = %v; encoding/json: %v", data, err, wantErr)
			}
		}
		if errors.Is(wantErr, ErrInvalidString) && err.Error() != wantErr.Error() {
			t.Fatalf("Decode(%q) = %v; want %v", data, err, wantErr)
		}
	}

	strictGot, strictErr := DecodeStrict(data)
	checkText(t, data, got, err, strictGot, strictErr)
	if err != nil {
		if strictErr == nil || strictErr.Error() != err.Error() {
			t.Fatalf("DecodeStrict(%q) = %v; Decode: %v", data, strictErr, err)
		}
		return
	}
	dup, ok := firstDuplicate(data, got)
	if !ok {
		t.Fatalf("token walk failed on %q, which Decode accepts", data)
	}
	if dup == "" {
		if strictErr != nil || !reflect.DeepEqual(strictGot, got) {
			t.Fatalf("DecodeStrict(%q) = %#v, %v; Decode = %#v", data, strictGot, strictErr, got)
		}
		return
	}
	var pe *PathError
	if !errors.Is(strictErr, ErrDuplicateKey) || !errors.As(strictErr, &pe) || pe.Path != dup {
		t.Fatalf("DecodeStrict(%q) = %v; want a duplicate key at %s", data, strictErr, dup)
	}
}

// firstDuplicate is the oracle for DecodeStrict: it walks data with
// encoding/json's tokenizer and returns the path of the first repeated key
// of the first object to close that has one ("" when no object repeats a
// key), rendered like PathError paths, with member ranks taken from tree
// (the value Decode reads from data). ok is false when data does not
// tokenize.
func firstDuplicate(data []byte, tree any) (path string, ok bool) {
	type frame struct {
		obj     bool
		keys    map[string]bool
		dup     string // first repeated key, if any
		hasDup  bool
		wantKey bool
		seg     pathSeg // the current member or element
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*frame
	render := func(last pathSeg) string {
		segs := make([]pathSeg, 0, len(stack))
		for _, f := range stack[:len(stack)-1] {
			segs = append(segs, f.seg)
		}
		return oraclePath(tree, append(segs, last))
	}
	// done marks the current value of the innermost container complete.
	done := func() {
		if len(stack) == 0 {
			return
		}
		if top := stack[len(stack)-1]; top.obj {
			top.wantKey = true
		} else {
			top.seg.index++
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", len(stack) == 0 && errors.Is(err, io.EOF)
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			top := stack[n-1]
			if tok == json.Delim('}') {
				if top.hasDup {
					return render(pathSeg{key: top.dup}), true
				}
				stack = stack[:n-1]
				done()
				continue
			}
			k := tok.(string)
			if top.keys[k] && !top.hasDup {
				top.dup, top.hasDup = k, true
			}
			top.keys[k] = true
			top.seg = pathSeg{key: k}
			top.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{seg: pathSeg{isIdx: true}})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			done()
		default:
			done()
		}
	}
}

// oraclePath renders segs (outermost first) as safepath does, ranking each
// member among the sorted names of its object in tree.
func oraclePath(tree any, segs []pathSeg) string {
	var b strings.Builder
	b.WriteString("$")
	v := tree
	for _, s := range segs {
		if s.isIdx {
			fmt.Fprintf(&b, "[%d]", s.index)
			a, _ := v.([]any)
			v = nil
			if s.index < len(a) {
				v = a[s.index]
			}
			continue
		}
		m, _ := v.(map[string]any)
		if safepath.Known(s.key) {
			b.WriteString("." + s.key)
		} else {
			fmt.Fprintf(&b, "{member %d}", slices.Index(slices.Sorted(maps.Keys(m)), s.key))
		}
		v = m[s.key]
	}
	return b.String()
}
