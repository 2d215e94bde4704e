package enforcement

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// The patterns the hand-written matchers replace (§4.1).
var (
	specOracle      = regexp.MustCompile(`^agent-hooks/[0-9]+\.[0-9]+$`)
	frameworkOracle = regexp.MustCompile(`^[a-z0-9_-]+$`)
)

// matcherCorpus is edge cases plus random strings over an alphabet that
// hits every branch: digits, dots, the framework set, its neighbours in
// ASCII, newlines (which $ must not accept before), non-ASCII and
// invalid UTF-8.
func matcherCorpus(t *testing.T) []string {
	t.Helper()
	corpus := []string{
		"", "agent-hooks/", "agent-hooks/0.1", "agent-hooks/0.1\n", "agent-hooks/1.", "agent-hooks/.1",
		"agent-hooks/10.20", "agent-hooks/0.1.2", "agent-hooks/0..1", "agent-hooks/a.1", "agent-hooks/1.a",
		"Agent-hooks/0.1", "agent-hooks0.1", " agent-hooks/0.1", "agent-hooks/0.1 ", "agent-hooks/0١.1",
		"agent-hooks/00000000000000000000000000.0", "\nagent-hooks/0.1", "agent-hooks/0\n.1",
		"a", "-", "_", "0", "a-b_c9", "A", "a b", "a\n", "\na", "é", "a\xff", "\xff", "a.b", "a/b", "`", "{", "@", "[",
	}
	rng := rand.New(rand.NewPCG(16, 1))
	alphabet := []string{"a", "z", "0", "9", ".", "-", "_", "/", "A", "Z", "`", "{", "@", "[", ":", "\n", " ", "é", "\xff", "\x00", "agent-hooks/", "agent-hooks"}
	for range 200000 {
		n := rng.IntN(8)
		s := ""
		if rng.IntN(2) == 0 {
			s = "agent-hooks/"
		}
		for range n {
			s += alphabet[rng.IntN(len(alphabet))]
		}
		corpus = append(corpus, s)
	}
	// Near-misses of valid specs: digits and dots, one character sometimes
	// swapped for anything in the alphabet.
	for range 50000 {
		s := "agent-hooks/"
		for range 1 + rng.IntN(6) {
			switch r := rng.IntN(10); {
			case r < 6:
				s += string(rune('0' + rng.IntN(10)))
			case r < 9:
				s += "."
			default:
				s += alphabet[rng.IntN(len(alphabet))]
			}
		}
		corpus = append(corpus, s)
	}
	return corpus
}

func TestEnvelopeMatchersAgreeWithPatterns(t *testing.T) {
	specHits, fwHits := 0, 0
	for _, s := range matcherCorpus(t) {
		if got, want := validSpec(s), specOracle.MatchString(s); got != want {
			t.Fatalf("validSpec(%q) = %v, the pattern says %v", s, got, want)
		} else if want {
			specHits++
		}
		if got, want := validFramework(s), frameworkOracle.MatchString(s); got != want {
			t.Fatalf("validFramework(%q) = %v, the pattern says %v", s, got, want)
		} else if want {
			fwHits++
		}
	}
	// The corpus must exercise both answers of both matchers.
	if specHits < 100 || fwHits < 100 {
		t.Fatalf("corpus too thin: %d spec and %d framework matches", specHits, fwHits)
	}
}

func FuzzEnvelopeMatchers(f *testing.F) {
	for _, s := range []string{"agent-hooks/0.1", "a-b_c", "", "agent-hooks/1.\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if validSpec(s) != specOracle.MatchString(s) {
			t.Fatalf("validSpec(%q) disagrees with the pattern", s)
		}
		if validFramework(s) != frameworkOracle.MatchString(s) {
			t.Fatalf("validFramework(%q) disagrees with the pattern", s)
		}
	})
}
