package interceptors

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// benchUnicodeMessages is benchMessages in mixed scripts: accented Latin
// (precomposed, already NFKC), Japanese, an emoji with a variation
// selector and a fullwidth word, so every string takes the normalizing
// path instead of the ASCII fast path.
func benchUnicodeMessages(size int) []any {
	const para = "Version 1.26.3 publiée le 2024-01-15 avec 42 corrections; 注文番号 112-4578123 の" +
		"お支払いは完了しました ✔\ufe0f. Veuillez vérifier le ｃｏｍｍｉｔ 80508e3cec5f22b3 avant vendredi. "
	var msgs []any
	for total := 0; total < size; {
		var b strings.Builder
		for b.Len() < 1024-120 {
			b.WriteString(para)
		}
		fmt.Fprintf(&b, "Contact ann%d@example.com, carte 4111 1111 1111 1111.", len(msgs))
		msgs = append(msgs, map[string]any{"role": "user", "content": b.String()})
		total += b.Len()
	}
	return msgs
}

// BenchmarkScanUnicode measures regex (deny and redact) and redact over
// non-ASCII messages, on 1 KiB and 64 KiB message arrays.
func BenchmarkScanUnicode(b *testing.B) {
	policies := []struct {
		name, src string
		want      enforcement.Decision
	}{
		{"regex-deny", "  - name: r\n    type: regex\n    action: deny\n    patterns: ['sk-[A-Za-z0-9_-]{20,}', 'AKIA[0-9A-Z]{16}']\n", enforcement.DecisionAllow},
		{"regex-redact", "  - name: r\n    type: regex\n    action: redact\n    patterns: ['[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}']\n", enforcement.DecisionTransform},
		{"redact", "  - name: r\n    type: redact\n", enforcement.DecisionTransform},
	}
	for _, p := range policies {
		reg, err := Build(specsOf(b, p.src)[0], Env{})
		if err != nil {
			b.Fatal(err)
		}
		ic := reg.Interceptor
		for _, size := range []int{1 << 10, 64 << 10} {
			msgs := benchUnicodeMessages(size)
			n := 0
			for _, m := range msgs {
				n += len(m.(map[string]any)["content"].(string))
			}
			c := at(enforcement.PreModelCall, msgs)
			b.Run(fmt.Sprintf("%s/%dKiB", p.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(n))
				b.ReportAllocs()
				for b.Loop() {
					v, err := ic.Intercept(context.Background(), c)
					if err != nil || v.Decision != p.want {
						b.Fatalf("%+v, %v", v, err)
					}
				}
			})
		}
	}
}
