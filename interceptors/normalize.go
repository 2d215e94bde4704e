package interceptors

import (
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/textview"
)

// rewriteView returns s with the original range of each of n matches in
// v.Text, the view of s, replaced by repl(i). Matches come in order and do
// not overlap in the view; two whose original ranges overlap (both inside
// one ligature or composed letter) become one range, replaced once with
// the first's replacement. Bytes outside the ranges stay as they are.
func rewriteView(s string, v *textview.View, n int, match func(i int) (int, int), repl func(i int) string) string {
	var b strings.Builder
	b.Grow(len(s))
	last := 0 // s[:last] is written or replaced
	for i := range n {
		o, e := v.Original(match(i))
		if o < last {
			last = max(last, e)
			continue
		}
		b.WriteString(s[last:o])
		b.WriteString(repl(i))
		last = e
	}
	b.WriteString(s[last:])
	return b.String()
}
