package interceptors

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// corpusLine is one non-comment line of a corpus file.
type corpusLine struct {
	no   int
	text string
}

// readCorpus returns the lines of testdata/redact/name that are neither
// blank nor comments, with each literal \n turned into a newline.
func readCorpus(t *testing.T, name string) []corpusLine {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "redact", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for no := 1; sc.Scan(); no++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, corpusLine{no: no, text: strings.ReplaceAll(line, `\n`, "\n")})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRedactCorpus runs every built-in detector over both corpora: each
// positive line must come back with exactly its marked secret replaced by
// the expected detector's placeholder, and no negative line may match.
func TestRedactCorpus(t *testing.T) {
	ic := build(t, "  - name: all\n    type: redact\n")
	covered := map[string]bool{}
	for _, l := range readCorpus(t, "positives.txt") {
		det, marked, ok := strings.Cut(l.text, "\t")
		before, rest, ok1 := strings.Cut(marked, "⟦")
		secret, after, ok2 := strings.Cut(rest, "⟧")
		if !ok || !ok1 || !ok2 || secret == "" {
			t.Fatalf("positives.txt:%d: want detector<TAB>text with one ⟦secret⟧", l.no)
		}
		covered[det] = true
		want := before + "[" + det + "]" + after
		v := intercept(t, ic, at(enforcement.Output, before+secret+after))
		if v.Decision != enforcement.DecisionTransform {
			t.Errorf("positives.txt:%d (%s): not found, verdict %+v", l.no, det, v)
			continue
		}
		if got := v.Transform.Value; got != want {
			t.Errorf("positives.txt:%d (%s):\n got %q\nwant %q", l.no, det, got, want)
		}
	}
	for _, d := range builtinDetectors() {
		if !covered[d.name] {
			t.Errorf("positives.txt has no line for detector %s", d.name)
		}
	}

	negatives := readCorpus(t, "negatives.txt")
	if len(negatives) < 30 {
		t.Fatalf("negatives.txt has %d lines, want a real corpus", len(negatives))
	}
	for _, l := range negatives {
		if v := intercept(t, ic, at(enforcement.Output, l.text)); v.Decision != enforcement.DecisionAllow {
			t.Errorf("negatives.txt:%d matched: %s\n  %q", l.no, v.Message, v.Transform.Value)
		}
	}
}
