package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jcs"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// EmbeddedGoldenFile is the vendored golden identity file inside SpecFS.
const EmbeddedGoldenFile = "spec/golden/identity.json"

// Golden fixture statuses. GoldenDiverges marks a fixture whose expected
// bytes differ from RFC 8785 only by number tokens one ULP apart: the
// upstream generator parsed a float literal without correct rounding, and
// this host canonicalizes the literal as RFC 8785 requires.
const (
	GoldenPass     = "pass"
	GoldenFail     = "fail"
	GoldenDiverges = "diverges"
)

// GoldenResult is one golden identity fixture's outcome.
type GoldenResult struct {
	ID     string `json:"id"`
	Note   string `json:"note"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// GoldenReport is the outcome of the golden identity fixtures (§10.2).
type GoldenReport struct {
	Results []GoldenResult `json:"results"`
	Passed  int            `json:"passed"`
	Failed  int            `json:"failed"`
	Diverge int            `json:"diverges"`
}

type goldenFile struct {
	Fixtures []struct {
		ID     string          `json:"id"`
		Note   string          `json:"note"`
		Ctx    json.RawMessage `json:"ctx"`
		Expect struct {
			CanonicalJSON   *string `json:"canonical_json"`
			ContextIdentity string  `json:"context_identity"`
			Error           string  `json:"error"`
		} `json:"expect"`
	} `json:"fixtures"`
}

// CheckGolden runs every fixture of a golden identity file through the
// jcs-sha256 provider: positives must reproduce the canonical bytes of the
// whole ctx and its context_identity; negatives must be rejected.
func CheckGolden(fsys fs.FS, file string) (*GoldenReport, error) {
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, fmt.Errorf("golden identity file: %w", err)
	}
	var gf goldenFile
	if err := json.Unmarshal(data, &gf); err != nil {
		return nil, fmt.Errorf("golden identity file %s: %w", file, err)
	}
	if len(gf.Fixtures) == 0 {
		return nil, fmt.Errorf("golden identity file %s has no fixtures", file)
	}
	rep := &GoldenReport{}
	for _, f := range gf.Fixtures {
		res := GoldenResult{ID: f.ID, Note: f.Note}
		res.Status, res.Detail = checkFixture(f.Ctx, f.Expect.CanonicalJSON, f.Expect.ContextIdentity, f.Expect.Error)
		switch res.Status {
		case GoldenPass:
			rep.Passed++
		case GoldenDiverges:
			rep.Diverge++
		default:
			rep.Failed++
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

func checkFixture(raw json.RawMessage, canonical *string, identity, wantErr string) (string, string) {
	tree, err := jsonvalue.Decode(raw)
	if err != nil {
		return GoldenFail, "ctx does not decode: " + err.Error()
	}
	obj, _ := tree.(map[string]any)
	id, idErr := enforcement.ContextIdentity(enforcement.Context(obj), 0)
	if wantErr != "" {
		if idErr == nil {
			return GoldenFail, "expected rejection (" + wantErr + "), got identity " + id
		}
		return GoldenPass, "rejected: " + idErr.Error()
	}
	if idErr != nil {
		return GoldenFail, "identity failed: " + idErr.Error()
	}
	if canonical == nil {
		return GoldenFail, "fixture has neither canonical_json nor error"
	}
	got, err := jcs.Canonicalize(tree)
	if err != nil {
		return GoldenFail, "canonicalization failed: " + err.Error()
	}
	if string(got) == *canonical {
		if id != identity {
			return GoldenFail, fmt.Sprintf("context_identity %s, want %s", id, identity)
		}
		return GoldenPass, ""
	}
	pairs, ok := adjacentNumberDiffs(string(got), *canonical)
	if !ok {
		return GoldenFail, fmt.Sprintf("canonical bytes differ:\n got %s\nwant %s", got, *canonical)
	}
	// The identity must then be the SHA-256 of our own canonical projection.
	proj, err := jcs.Canonicalize(enforcement.IdentityProjection(enforcement.Context(obj)))
	if err != nil {
		return GoldenFail, "projection canonicalization failed: " + err.Error()
	}
	sum := sha256.Sum256(proj)
	if id != "sha256:"+hex.EncodeToString(sum[:]) {
		return GoldenFail, "context_identity is not the SHA-256 of the canonical projection"
	}
	return GoldenDiverges, "upstream expects " + strings.Join(pairs, ", ") +
		": the neighbouring double of the literal, an artefact of a float parse that is not correctly rounded; RFC 8785 (followed here) canonicalizes the correctly rounded value"
}

// adjacentNumberDiffs reports whether two canonical JSON texts differ only
// in number tokens whose doubles are one ULP apart, and lists them.
func adjacentNumberDiffs(got, want string) ([]string, bool) {
	a, errA := jsonvalue.Decode([]byte(got))
	b, errB := jsonvalue.Decode([]byte(want))
	if errA != nil || errB != nil {
		return nil, false
	}
	var diffs []string
	if !walkAdjacent(a, b, &diffs) || len(diffs) == 0 {
		return nil, false
	}
	return diffs, true
}

func walkAdjacent(a, b any, diffs *[]string) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !walkAdjacent(v, w, diffs) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !walkAdjacent(x[i], y[i], diffs) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, errX := strconv.ParseFloat(string(x), 64)
		fy, errY := strconv.ParseFloat(string(y), 64)
		if errX != nil || errY != nil || math.Nextafter(fx, fy) != fy {
			return false
		}
		d := fmt.Sprintf("%s instead of %s", y, x)
		for _, seen := range *diffs {
			if seen == d {
				return true
			}
		}
		*diffs = append(*diffs, d)
		return true
	}
	return jsonvalue.Equal(a, b)
}

// Markdown renders the golden identity results as a report section.
func (g *GoldenReport) Markdown() string {
	var b strings.Builder
	b.WriteString("## Golden identity vectors (§10.2, jcs-sha256)\n\n")
	fmt.Fprintf(&b, "%d passed, %d failed, %d diverge by design.\n\n", g.Passed, g.Failed, g.Diverge)
	b.WriteString("| Fixture | Result | Detail |\n| --- | --- | --- |\n")
	for _, r := range g.Results {
		detail := strings.ReplaceAll(r.Detail, "\n", " ")
		detail = strings.ReplaceAll(detail, "|", "\\|")
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.ID, r.Status, detail)
	}
	return b.String()
}
