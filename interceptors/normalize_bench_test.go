package interceptors

import (
	"fmt"
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
	return benchMessagesOf(size, para, "Contact ann%d@example.com, carte 4111 1111 1111 1111.")
}

// BenchmarkScanUnicode measures regex (deny and redact) and redact over
// non-ASCII messages, on 1 KiB and 64 KiB message arrays.
func BenchmarkScanUnicode(b *testing.B) {
	for _, p := range scanPolicies[:3] { // regex (deny and redact) and redact
		reg, err := Build(specsOf(b, p.src)[0], Env{})
		if err != nil {
			b.Fatal(err)
		}
		ic := reg.Interceptor
		for _, size := range []int{1 << 10, 64 << 10} {
			msgs := benchUnicodeMessages(size)
			n := contentBytes(msgs)
			c := at(enforcement.PreModelCall, msgs)
			b.Run(fmt.Sprintf("%s/%dKiB", p.name, size>>10), func(b *testing.B) {
				benchIntercept(b, ic, c, n, p.want)
			})
		}
	}
}
