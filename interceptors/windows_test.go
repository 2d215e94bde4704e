package interceptors

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// windowPatterns are alternations as newRegex builds them, from the
// embedded default's patterns to classes with non-ASCII members, case
// folding, negated classes and repeats of groups.
var windowPatterns = [][]string{
	{`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`},
	{`sk-[A-Za-z0-9_-]{20,}`, `AKIA[0-9A-Z]{16}`, `-----BEGIN [A-Z ]*PRIVATE KEY-----`},
	{`sk-[A-Za-z0-9_-]{4,}`, `AKIA[0-9A-Z]{4}`},
	{`[a-zé]+@(?i:x)+`},
	{`[^ ]+@[^ .]+`},
	{`q(?:rs)+t`, `(ab){2}c`},
	{`[A-Z]+-[0-9]{2,}`},
	{`a.*@.*z`},
}

// alternation joins patterns as newRegex does.
func alternation(patterns []string) string {
	alts := make([]string, len(patterns))
	for i, p := range patterns {
		alts[i] = "(?:" + p + ")"
	}
	return strings.Join(alts, "|")
}

// windowedFindAll is FindAllStringIndex through the windows.
func windowedFindAll(w *matchWindows, re *regexp.Regexp, s string) [][]int {
	var out [][]int
	w.each(s, func(win string, off int) bool {
		for _, loc := range re.FindAllStringIndex(win, -1) {
			out = append(out, []int{off + loc[0], off + loc[1]})
		}
		return false
	})
	return out
}

// TestWindowsFindWhatTheWholeStringGives: over random strings built from
// fragments of the patterns, the characters around them and invalid
// bytes, the matches found window by window are exactly the matches of the
// whole string, and a string matches exactly when one of its windows does.
func TestWindowsFindWhatTheWholeStringGives(t *testing.T) {
	fragments := []string{"ab", "@", "x", "X", ".", "sk-", "AKIA", "0", "Z9", "q", "rs", "t", "c", "de", "com",
		" ", "\n", "\t", "-", "_", "é", "É", "日", "\xff", "\xc3", "abcdefghijklmnopqrstu", "-----BEGIN ", "RSA ",
		"PRIVATE KEY-----", "ann", "\u200b", "ｘ", ",", "\"", "z", "<", ">", "example", ".com", "ABC", "12", "-3", "Q-1"}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, ps := range windowPatterns {
		src := alternation(ps)
		re := regexp.MustCompile(src)
		w := newMatchWindows(src, newLiteralFilter(ps).literals)
		if !w.enabled() {
			t.Fatalf("%s: windows disabled", src)
		}
		matched := 0
		for range 30000 {
			var b strings.Builder
			for range rng.IntN(30) {
				b.WriteString(fragments[rng.IntN(len(fragments))])
			}
			s := b.String()
			want := re.FindAllStringIndex(s, -1)
			if got := windowedFindAll(&w, re, s); !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("%s on %+q: windows find %v, the whole string %v", src, s, got, want)
			}
			if got := w.each(s, func(win string, _ int) bool { return re.MatchString(win) }); got != (want != nil) {
				t.Fatalf("%s on %+q: windows match %v, the whole string %v", src, s, got, want != nil)
			}
			if want != nil {
				matched++
			}
		}
		if matched < 100 {
			t.Errorf("%s: only %d random strings matched, so the check proved little", src, matched)
		}
	}
}

// TestWindowsDisabled: a pattern with an empty-width assertion (which
// looks past a window's edge), without a required literal, or with too
// many literals searches whole strings.
func TestWindowsDisabled(t *testing.T) {
	for _, ps := range [][]string{
		{`\bkey-[0-9]+`},
		{`^sk-[a-z]+`},
		{`sk-[a-z]+$`},
		{`(?m)^sk-[a-z]+`},
		{`sk-[a-z]+`, `[0-9]+`},
		{`(?i)secret`},
		{"a1x", "a2x", "a3x", "a4x", "a5x", "a6x", "a7x", "a8x", "a9x"},
	} {
		src := alternation(ps)
		if w := newMatchWindows(src, newLiteralFilter(ps).literals); w.enabled() {
			t.Errorf("%s: windows enabled", src)
		}
	}
}

func FuzzWindows(f *testing.F) {
	for _, s := range []string{"mail ann@example.com now", "sk-aaaaaaaaaaaaaaaaaaaaaaaa", "é@xX x@y", "ab@\xffcd.com"} {
		f.Add(s)
	}
	type compiled struct {
		re *regexp.Regexp
		w  matchWindows
	}
	var cs []compiled
	for _, ps := range windowPatterns {
		src := alternation(ps)
		cs = append(cs, compiled{regexp.MustCompile(src), newMatchWindows(src, newLiteralFilter(ps).literals)})
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range cs {
			want := c.re.FindAllStringIndex(s, -1)
			if got := windowedFindAll(&c.w, c.re, s); !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("%s on %+q: windows find %v, the whole string %v", c.re, s, got, want)
			}
		}
	})
}
