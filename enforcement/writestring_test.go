package enforcement

import (
	"bytes"
	"encoding/json"
	"testing"
)

// writeString's plain-ASCII shortcut must write what encoding/json writes.
func TestWriteStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{"", "policy:credential_leak", "2026-01-02T03:04:05.006Z", "a<b>&c", "say \"hi\"", `back\\slash`,
		"tab\there", "nl\n", "é", "\u2028\u2029", "\xff\xfe", "del\x7f", "nul\x00"}
	for b := 0; b < 0x80; b++ {
		cases = append(cases, "x"+string(rune(b))+"y")
	}
	for _, s := range cases {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		got.WriteString("prefix")
		writeString(&got, s)
		if g, w := got.String(), "prefix"+string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))); g != w {
			t.Errorf("writeString(%q) = %s, want %s", s, g, w)
		}
	}
}

func BenchmarkWriteString(b *testing.B) {
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		writeString(&buf, "req-0123456789abcdef01234567")
		writeString(&buf, "policy:credential_leak")
	}
}
