package jsonvalue

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeValues(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{`null`, nil},
		{` true `, true},
		{"\n\t\r false \n", false},
		{`"s"`, "s"},
		{`0`, json.Number("0")},
		{`-0`, json.Number("-0")},
		{`1.50`, json.Number("1.50")},
		{`1E+2`, json.Number("1E+2")},
		{`9007199254740993`, json.Number("9007199254740993")},
		{`18446744073709551615`, json.Number("18446744073709551615")},
		{`18446744073709551616`, json.Number("18446744073709551616")},
		{`-9223372036854775809`, json.Number("-9223372036854775809")},
		{`123456789012345678901234567890`, json.Number("123456789012345678901234567890")},
		{`1e400`, json.Number("1e400")},
		{`[]`, []any{}},
		{`{}`, map[string]any{}},
		{`{"a":[1,"x",null,{"b":false}]}`, map[string]any{"a": []any{json.Number("1"), "x", nil, map[string]any{"b": false}}}},
		{`"\ud83d\ude00"`, "\U0001F600"},
		{`"\uD83D\uDE00"`, "\U0001F600"},
		{`"\\ud800"`, `\ud800`},    // escaped backslash, not an escape
		{`"\\\\ud800"`, `\\ud800`}, // two escaped backslashes
		{`"\u0041\ud800\udc00\u00e9"`, "A\U00010000é"},
		{`"\ufffd"`, "\ufffd"}, // an explicit U+FFFD is fine
		{"\"\uFFFD\"", "\uFFFD"},
		{`"\ud7ff\ue000"`, "\ud7ff\ue000"}, // just outside the surrogate range
		{`{"k\ud800\udc00":1}`, map[string]any{"k\U00010000": json.Number("1")}},
	}
	for _, tt := range tests {
		got, err := Decode([]byte(tt.in))
		if err != nil {
			t.Errorf("Decode(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Decode(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		in       string
		sentinel error
		offset   string // expected "byte offset N" in the message, if any
	}{
		{``, ErrSyntax, ""},
		{`   `, ErrSyntax, ""},
		{`{`, ErrSyntax, ""},
		{`[1,]`, ErrSyntax, ""},
		{`{"a":1}x`, ErrSyntax, "byte offset 7"},
		{`1 2`, ErrSyntax, "byte offset 2"},
		{`{} {}`, ErrSyntax, "byte offset 3"},
		{`nul`, ErrSyntax, ""},
		{`NaN`, ErrSyntax, ""},
		{`01`, ErrSyntax, ""},
		{`"a` + "\x01" + `"`, ErrSyntax, ""},
		{`"\ud800"`, ErrInvalidString, "byte offset 1"},
		{`"\udc00"`, ErrInvalidString, "byte offset 1"},
		{`"\uDBFF"`, ErrInvalidString, "byte offset 1"},
		{`"ab\ud800x"`, ErrInvalidString, "byte offset 3"},
		{`"\ud800\u0041"`, ErrInvalidString, "byte offset 1"},
		{`"\ud800\ud800\udc00"`, ErrInvalidString, "byte offset 1"},
		{`"\ud800\udc00\udc00"`, ErrInvalidString, "byte offset 13"},
		{`"\ud800\\udc00"`, ErrInvalidString, "byte offset 1"},
		{`"\\\ud800"`, ErrInvalidString, "byte offset 3"},
		{`["ok", {"\udfff": 1}]`, ErrInvalidString, "byte offset 9"},
		{`"\ud800`, ErrSyntax, ""}, // syntax error wins over the surrogate
		{"\"\xff\"", ErrInvalidString, "byte offset 1"},
		{"\"ok\xc3\"", ErrInvalidString, "byte offset 3"},
		{"\"\xed\xa0\x80\"", ErrInvalidString, "byte offset 1"}, // raw UTF-8 surrogate
	}
	for _, tt := range tests {
		_, err := Decode([]byte(tt.in))
		if !errors.Is(err, tt.sentinel) {
			t.Errorf("Decode(%q) = %v, want %v", tt.in, err, tt.sentinel)
			continue
		}
		if tt.offset != "" && !strings.Contains(err.Error(), tt.offset) {
			t.Errorf("Decode(%q) error %q does not mention %q", tt.in, err, tt.offset)
		}
	}
}

func TestMayHaveSurrogate(t *testing.T) {
	for in, want := range map[string]bool{
		`"abc"`:        false,
		`"\u0041"`:     false,
		`"\ud7ff"`:     false,
		`"\ud800"`:     true,
		`"\uDFFF"`:     true,
		`"\\ud800"`:    true, // the pre-filter is deliberately escape-blind
		`"\u"`:         false,
		`"x\u`:         false,
		`"\ud"`:        false,
		`{"\ue000":1}`: false,
	} {
		if got := mayHaveSurrogate([]byte(in)); got != want {
			t.Errorf("mayHaveSurrogate(%q) = %v", in, got)
		}
	}
}
