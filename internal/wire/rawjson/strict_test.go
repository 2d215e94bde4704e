package rawjson

import (
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// FuzzStrictTokens: StrictString and StrictNumber accept a token exactly
// when jsonvalue.DecodeStrict does, and AppendUnescaped yields its value.
func FuzzStrictTokens(f *testing.F) {
	for _, s := range []string{`"a"`, `"\u00e9\ud83d\ude00\n\"\\\/"`, `"\ud83d"`, `"\ude00"`, `"\ud83d\u0041"`,
		"\"\xff\"", "\"\x01\"", `"\x"`, `"a`, `0`, `-0.5e+10`, `01`, `1.`, `-`, `1e`, `12345678901234567890`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, tok []byte) {
		if len(tok) == 0 || IsSpace(tok[len(tok)-1]) {
			return // one token, no surrounding space
		}
		v, err := jsonvalue.DecodeStrict(tok)
		switch c := tok[0]; {
		case c == '"':
			end, _, ok := StrictString(tok, 0)
			ok = ok && end == len(tok)
			s, isString := v.(string)
			if ok != (err == nil && isString) {
				t.Fatalf("StrictString(%q) = %v, DecodeStrict error %v", tok, ok, err)
			}
			if ok && string(AppendUnescaped(nil, tok)) != s {
				t.Fatalf("AppendUnescaped(%q) = %q, want %q", tok, AppendUnescaped(nil, tok), s)
			}
		case c == '-' || c >= '0' && c <= '9':
			end, ok := StrictNumber(tok, 0)
			ok = ok && end == len(tok)
			if ok != (err == nil) {
				t.Fatalf("StrictNumber(%q) = %v, DecodeStrict error %v", tok, ok, err)
			}
		}
	})
}
