package textview

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestViewText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"sk-abc", "sk-abc"},
		{"ｓｋ－ａｂｃ", "sk-abc"},
		{"s\u200dk\u00ad-a\u200bb\u2060c\ufeff", "sk-abc"},
		{"\U000E0073\U000E006Bsk", "sk"}, // tag characters
		{"ﬁle", "file"},
		{"e\u0301", "\u00e9"},
		{"e\u200d\u0301", "\u00e9"}, // composes across a removed joiner
		{"Ⓐ①", "A1"},
		{"日本語", "日本語"},
		{"\u200b\u200b", ""},
		{"", ""},
	}
	for _, c := range cases {
		v := Of(c.in)
		if v.Text != c.want {
			t.Errorf("Of(%+q).Text = %+q, want %+q", c.in, v.Text, c.want)
		}
		if v.Same() != (c.in == c.want) {
			t.Errorf("Of(%+q).Same() = %v", c.in, v.Same())
		}
	}
}

func TestViewOriginal(t *testing.T) {
	cases := []struct {
		in, match, want string
	}{
		// Ignorables inside the match go with it; those around it stay.
		{"x \u200bs\u200dk-1\u00ad2\u200b y", "sk-12", "s\u200dk-1\u00ad2"},
		{"pre ｓｋ－１２ post", "sk-12", "ｓｋ－１２"},
		// A ligature maps whole even when the match takes half of it.
		{"oﬁx", "ix", "ﬁx"},
		// A composed letter maps to its base and its mark.
		{"ab e\u0301 cd", "\u00e9", "e\u0301"},
		{"日本\u200b語 key", "語 key", "語 key"},
	}
	for _, c := range cases {
		v := Of(c.in)
		i := strings.Index(v.Text, c.match)
		if i < 0 {
			t.Fatalf("Of(%+q).Text = %+q, no %+q in it", c.in, v.Text, c.match)
		}
		o, e := v.Original(i, i+len(c.match))
		if got := c.in[o:e]; got != c.want {
			t.Errorf("Of(%+q): %+q maps to %+q, want %+q", c.in, c.match, got, c.want)
		}
	}
}

// TestViewFastPathAllocatesNothing pins the fast path: ASCII text and
// text already in NFKC without ignorables are their own view.
func TestViewFastPathAllocatesNothing(t *testing.T) {
	for _, s := range []string{strings.Repeat("plain ascii text ", 20), "déjà vu 日本語 ✔"} {
		if n := testing.AllocsPerRun(100, func() { _ = Of(s) }); n != 0 {
			t.Errorf("Of(%+q) allocates %v times", s, n)
		}
		if v := Of(s); !v.Same() || v.Text != s {
			t.Errorf("Of(%+q) is not its own view", s)
		}
	}
}

// alphabet mixes what a reader sees and what a reader does not: ASCII,
// fullwidth forms, ligatures, compatibility characters, combining marks
// (randomText adds runs beyond the stream-safe limit), Hangul jamo, a multi-segment
// decomposition and default-ignorable code points.
var alphabet = []string{
	"a", "b", "s", "k", "-", "1", " ", "é",
	"ａ", "ｓ", "ｋ", "－", "１", "ﬁ", "ﬃ", "Ⓐ", "①", "㎏", "ｶﾞ",
	"\u0301", "\u0327", "\u0323\u0301",
	"\u1100", "\u1161", "\u11a8", "가",
	"\ufdfa",
	"\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\ufeff", "\ufe0f",
	"\U000E0041", "\u034f", "\u3164", "\u202e",
	"日", "\xff",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(40) {
		if r.IntN(200) == 0 {
			b.WriteString(strings.Repeat("\u0301", 33))
		}
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// removeIgnorables is the reference for ignorable removal.
func removeIgnorables(s string) string {
	return strings.Map(func(r rune) rune {
		if isIgnorable(r) {
			return -1
		}
		return r
	}, s)
}

// TestViewProperties checks, over random mixtures, that Text is the NFKC
// of the text without ignorables, and that every range of Text maps to an
// original range that reproduces it, is not padded with ignorables, and
// splits the original into pieces whose views concatenate to Text.
func TestViewProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		s := randomText(r)
		v := Of(s)
		// Invalid bytes pass through as they are; the reference, via
		// strings.Map, would turn them into U+FFFD.
		if want := removeIgnorables(norm.NFKC.String(removeIgnorables(s))); utf8.ValidString(s) && v.Text != want {
			t.Fatalf("Of(%+q).Text = %+q, want %+q", s, v.Text, want)
		}
		bounds := runeBounds(v.Text)
		for range 20 {
			i, j := bounds[r.IntN(len(bounds))], bounds[r.IntN(len(bounds))]
			if i > j {
				i, j = j, i
			}
			checkRange(t, s, &v, i, j)
		}
	}
}

func checkRange(t *testing.T, s string, v *View, i, j int) {
	t.Helper()
	o, e := v.Original(i, j)
	if o < 0 || o > e || e > len(s) {
		t.Fatalf("Of(%+q).Original(%d, %d) = %d, %d: out of bounds", s, i, j, o, e)
	}
	if i == j {
		return
	}
	// Beyond 30 combining marks in a row normalization breaks the run
	// (stream-safe format) where the text it sees makes it, so a piece on
	// its own may order its marks differently: only the other checks hold.
	long := overlong(s)
	if piece := Of(s[o:e]).Text; !strings.Contains(piece, v.Text[i:j]) && !long {
		t.Fatalf("Of(%+q): %+q maps to %+q, whose view %+q lacks it", s, v.Text[i:j], s[o:e], piece)
	}
	first, _ := utf8.DecodeRuneInString(s[o:e])
	last, _ := utf8.DecodeLastRuneInString(s[o:e])
	if isIgnorable(first) || isIgnorable(last) {
		t.Fatalf("Of(%+q): %+q maps to %+q, padded with an ignorable", s, v.Text[i:j], s[o:e])
	}
	if got := Of(s[:o]).Text + Of(s[o:e]).Text + Of(s[e:]).Text; got != v.Text && !long {
		t.Fatalf("Of(%+q): cutting at %d, %d gives views %+q, not %+q", s, o, e, got, v.Text)
	}
}

// overlong reports whether s, without ignorables, has a run of more than
// 30 non-starters.
func overlong(s string) bool {
	run := 0
	for _, r := range removeIgnorables(s) {
		if norm.NFKC.PropertiesString(string(r)).CCC() == 0 {
			run = 0
		} else if run++; run > 30 {
			return true
		}
	}
	return false
}

func runeBounds(s string) []int {
	b := []int{}
	for i := range s {
		b = append(b, i)
	}
	return append(b, len(s))
}

// TestRedactThroughMap disguises a credential among random text and
// redacts the pattern's matches on the view in the original: every code
// point of the credential goes, everything else stays byte for byte.
func TestRedactThroughMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	invisible := []string{"\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\ufeff", "\U000E0020"}
	noise := []string{"x", "Q", " ", "é", "ｘ", "Ｑ", "ﬁ", "\u0301", "\u200d", "\u00ad", "日", "①", "가"}
	for range 2000 {
		secret := "sk-" + strings.Repeat("a1b2c3d4", 1+r.IntN(3))
		var d strings.Builder
		for k, c := range secret {
			if k > 0 && r.IntN(3) == 0 {
				d.WriteString(invisible[r.IntN(len(invisible))])
			}
			if r.IntN(2) == 0 {
				c += 0xFF01 - '!' // its fullwidth form
			}
			d.WriteRune(c)
		}
		var pre, post strings.Builder
		for range r.IntN(12) {
			pre.WriteString(noise[r.IntN(len(noise))])
		}
		for range r.IntN(12) {
			post.WriteString(noise[r.IntN(len(noise))])
		}
		before, after := pre.String()+" ", " "+post.String()
		s := before + d.String() + after

		v := Of(s)
		i := strings.Index(v.Text, secret)
		if i < 0 {
			t.Fatalf("view %+q of %+q lacks the secret", v.Text, s)
		}
		o, e := v.Original(i, i+len(secret))
		if got, want := s[:o]+"[X]"+s[e:], before+"[X]"+after; got != want {
			t.Fatalf("redacting %+q gave %+q, want %+q", s, got, want)
		}
	}
}
