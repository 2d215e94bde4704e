package wire

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The hand-written shape checks accept exactly what the expressions they
// replaced accept, over edge cases and random strings drawn from every
// character class the expressions name and their neighbours.
func TestMetaShapesMatchExpressions(t *testing.T) {
	checks := []struct {
		name  string
		check func(string) bool
		re    *regexp.Regexp
	}{
		{"IsID", IsID, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)},
		{"IsModelName", IsModelName, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$`)},
		{"IsFingerprint", IsFingerprint, regexp.MustCompile(`^[A-Za-z0-9._:-]{0,64}$`)},
		{"IsServiceTier", IsServiceTier, regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)},
		{"IsEnum", IsEnum, regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)},
		{"IsOpaqueToken", IsOpaqueToken, regexp.MustCompile(`^[A-Za-z0-9+/=_-]*$`)},
	}
	edges := []string{"", "a", "A", "0", ".", "-a", "a\n", "\na", "é", "a b", "fp_44709d6fcb", "gpt-4o-2024-08-06",
		"claude-3-5-sonnet@20240620", "models/gemini-1.5-pro", "default", "flex_1", "Default",
		strings.Repeat("a", 32), strings.Repeat("a", 33), strings.Repeat("a", 64), strings.Repeat("a", 65),
		strings.Repeat("a", 128), strings.Repeat("a", 129), "a" + strings.Repeat(".", 127), "a\x00"}
	alphabet := []byte("aZz09_.:-/@+= \n\t\x00\x7f\xc3\xa9$^[]`{~")
	r := rand.New(rand.NewPCG(1, 2))
	var random []string
	for range 20000 {
		n := r.IntN(140)
		if r.IntN(4) > 0 {
			n = r.IntN(12)
		}
		b := make([]byte, n)
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = "abcxyzABCXYZ0189"[r.IntN(16)]
			}
		}
		random = append(random, string(b))
	}
	for _, c := range checks {
		accepted := 0
		for _, s := range append(edges, random...) {
			got, want := c.check(s), c.re.MatchString(s)
			if got != want {
				t.Fatalf("%s(%q) = %v, the expression says %v", c.name, s, got, want)
			}
			if got {
				accepted++
			}
		}
		if accepted < 100 {
			t.Errorf("%s accepted only %d strings: the corpus does not exercise it", c.name, accepted)
		}
	}
}

func BenchmarkMetaShapes(b *testing.B) {
	for b.Loop() {
		IsID("chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT")
		IsModelName("gpt-4o-2024-08-06")
		IsFingerprint("fp_44709d6fcb")
		IsServiceTier("default")
	}
}
