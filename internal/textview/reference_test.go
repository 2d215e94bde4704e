package textview

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// The fast paths of Of (ASCII skipped eight bytes at a time, ignorables
// found without decoding ASCII, no copy when nothing is stripped, the
// first QuickSpan shared between the check and build) must give views
// identical to the code they replaced, kept here as the reference: the
// same Text, the same Same and the same segments, so every redaction
// maps to the same original bytes.

// referenceOf is Of as it was: every code point decoded, the text always
// stripped into a copy, QuickSpan run afresh by build.
func referenceOf(s string) View {
	i := 0
	for i < len(s) && s[i] < 0x80 {
		i++
	}
	if i == len(s) || referenceReadable(s[max(i-1, 0):]) {
		return View{Text: s, same: true}
	}
	stripped, chunks := referenceStrip(s)
	b := builder{stripped: stripped, chunks: chunks}
	var it norm.Iter
	for p := 0; p < len(stripped); {
		if q := p + norm.NFKC.QuickSpanString(stripped[p:]); q > p {
			b.text.WriteString(stripped[p:q])
			b.identity(p, q)
			p = q
			continue
		}
		it.InitString(norm.NFKC, stripped[p:])
		out := it.Next()
		if it.Pos() == 0 {
			out = append([]byte(nil), out...)
			for it.Pos() == 0 {
				out = append(out, it.Next()...)
			}
		}
		b.add(p, p+it.Pos(), out)
		p += it.Pos()
	}
	return View{Text: b.text.String(), segs: b.segs}
}

func referenceReadable(s string) bool {
	for _, r := range s {
		if isIgnorable(r) {
			return false
		}
	}
	return norm.NFKC.QuickSpanString(s) == len(s)
}

func referenceStrip(s string) (string, []chunk) {
	var b strings.Builder
	var chunks []chunk
	run := -1
	for i, r := range s {
		switch ign := isIgnorable(r); {
		case ign && run >= 0:
			b.WriteString(s[run:i])
			run = -1
		case !ign && run < 0:
			chunks = append(chunks, chunk{s: b.Len(), o: i})
			run = i
		}
	}
	if run >= 0 {
		b.WriteString(s[run:])
	}
	return b.String(), chunks
}

// sameView reports whether two views are identical, segments included
// (a nil and an empty segment list are the same).
func sameView(a, b View) bool {
	return a.Text == b.Text && a.same == b.same && slices.Equal(a.segs, b.segs)
}

// mostlyASCII is randomText with long ASCII stretches between the
// alphabet's pieces, so the word-at-a-time scans run and stop at every
// offset within a word.
func mostlyASCII(r *rand.Rand) string {
	const prose = "The quick brown fox jumps over the lazy dog.\n"
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteString(prose[:r.IntN(len(prose))])
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	b.WriteString(prose[:r.IntN(len(prose))])
	return b.String()
}

func TestOfMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	check := func(s string) {
		t.Helper()
		if got, want := Of(s), referenceOf(s); !sameView(got, want) {
			t.Fatalf("Of(%+q) = %+v, reference %+v", s, got, want)
		}
	}
	for _, s := range []string{"", "a", "…", "a…", "Don’t…", "\u200b", "a\u200b", "\u200ba", "a\u200b\u200bb", "\xff…", "…\xff", "ｓｋ\xff"} {
		check(s)
	}
	for range 20000 {
		check(randomText(r))
		check(mostlyASCII(r))
	}
}

func FuzzOfMatchesReference(f *testing.F) {
	for _, s := range []string{"Don’t… run", "s\u200dk\u00ad-a\u200bb", "e\u0301 ﬁ", "\xffｓ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Of(s), referenceOf(s); !sameView(got, want) {
			t.Fatalf("Of(%+q) = %+v, reference %+v", s, got, want)
		}
	})
}
