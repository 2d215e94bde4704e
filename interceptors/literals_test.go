package interceptors

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

func TestRequiredLiteral(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`, "@"},
		{`sk-[A-Za-z0-9_-]{20,}`, "sk-"},
		{`-----BEGIN [A-Z ]*PRIVATE KEY-----`, "PRIVATE KEY-----"},
		{`(?:foo)+bar`, "foo"},
		{`(ab){2,3}x`, "ab"},
		{`foo|bar`, ""},    // an alternation has no single required literal
		{`(?i)secret`, ""}, // case-folded
		{`x?y*`, ""},       // nothing mandatory
		{`[0-9]{3}-[0-9]{4}`, "-"},
		{`a\x{FFFD}b`, ""}, // U+FFFD also matches invalid bytes
	} {
		if _, err := regexp.Compile(tc.pattern); err != nil {
			t.Fatal(err)
		}
		f := newLiteralFilter([]string{tc.pattern})
		got := ""
		if f.literals != nil {
			got = f.literals[0]
		}
		if got != tc.want {
			t.Errorf("%s: required literal %q, want %q", tc.pattern, got, tc.want)
		}
	}
	if f := newLiteralFilter([]string{`sk-[a-z]+`, `x|y`}); f.literals != nil {
		t.Errorf("a pattern without a literal must disable the filter: %q", f.literals)
	}
}

// TestLiteralFilterNeverHidesAMatch: over random strings built from
// fragments of the patterns, every string the regexp matches is admitted.
func TestLiteralFilterNeverHidesAMatch(t *testing.T) {
	patterns := []string{
		`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`,
		`sk-[A-Za-z0-9_-]{4,}`,
		`AKIA[0-9A-Z]{4}`,
		`(ab){2}c|zz`,
		`q(?:rs)+t`,
	}
	fragments := []string{"ab", "@", "x.", "sk-", "AKIA", "0", "Z9", "q", "rs", "t", "c", "zz", "de", " ", "\xff", "é", "-_"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		f := newLiteralFilter([]string{p})
		matched := 0
		for range 20000 {
			var b strings.Builder
			for range rng.IntN(12) {
				b.WriteString(fragments[rng.IntN(len(fragments))])
			}
			s := b.String()
			if re.MatchString(s) {
				matched++
				if !f.admits(s) {
					t.Fatalf("%s: filter rejects %q, which matches", p, s)
				}
			}
		}
		if matched == 0 {
			t.Errorf("%s: no random string matched, so the check proved nothing", p)
		}
	}
}
