package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// UnspecifiedPart labels the report group of vectors without a part.
const UnspecifiedPart = "unspecified"

// Report is a conformance report (§13.1): the declared surface, every
// vector's result in run order, pass/fail/skip counts per part and totals.
type Report struct {
	Declaration Declaration   `json:"declaration"`
	Results     []Result      `json:"results"`
	Parts       []PartSummary `json:"parts"`
	Totals      Totals        `json:"totals"`
}

// PartSummary counts one part's results.
type PartSummary struct {
	// Part is the part tag, or UnspecifiedPart.
	Part    string `json:"part"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
}

// Totals counts all results.
type Totals struct {
	Vectors int `json:"vectors"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// NewReport groups results by part (sorted by label) and totals them.
func NewReport(decl Declaration, results []Result) Report {
	r := Report{Declaration: decl, Results: make([]Result, len(results)), Parts: []PartSummary{}}
	byPart := map[string]*PartSummary{}
	for i, res := range results {
		if res.Failures == nil {
			res.Failures = []string{}
		}
		r.Results[i] = res
		label := PartLabel(res.Part)
		ps, ok := byPart[label]
		if !ok {
			ps = &PartSummary{Part: label}
			byPart[label] = ps
		}
		r.Totals.Vectors++
		switch res.Status {
		case StatusPass:
			ps.Passed++
			r.Totals.Passed++
		case StatusSkip:
			ps.Skipped++
			r.Totals.Skipped++
		default:
			ps.Failed++
			r.Totals.Failed++
		}
	}
	for _, ps := range byPart {
		r.Parts = append(r.Parts, *ps)
	}
	sort.Slice(r.Parts, func(i, j int) bool { return r.Parts[i].Part < r.Parts[j].Part })
	return r
}

// PartLabel is the report label of a part tag: the tag, or
// UnspecifiedPart for "".
func PartLabel(part string) string {
	if part == "" {
		return UnspecifiedPart
	}
	return part
}

// Failed returns the number of failed vectors.
func (r Report) Failed() int {
	n := 0
	for _, res := range r.Results {
		if res.Status != StatusPass && res.Status != StatusSkip {
			n++
		}
	}
	return n
}

// JSON renders the report as indented JSON.
func (r Report) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // failure strings quote JSON and <missing> markers
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("conformance: encode report: %w", err)
	}
	return buf.Bytes(), nil
}

// Markdown renders the report in the shape of the upstream claim reports
// (conformance/claims/maf/REPORT.md): declared surface, a per-part
// table, totals, every skip with its reason and every failure with its
// failure strings.
func (r Report) Markdown() string {
	var b strings.Builder
	d := r.Declaration
	name := d.Name
	if name == "" {
		name = "unnamed host"
	}
	fmt.Fprintf(&b, "# AGENT-HOOKS-0.1 conformance report — %s\n\n", name)

	b.WriteString("## Declared surface (§13.1)\n\n")
	fmt.Fprintf(&b, "- **Harness:** %s\n", codeOr(d.Name, "not named"))
	fmt.Fprintf(&b, "- **Capabilities (§3.2):** %s\n", codeList(d.Capabilities, "none (lifecycle baseline only)"))
	posture := declaredPostures(d)[PostureToolSeamHostError]
	note := "spec default"
	if posture != PostureContinue {
		note = "non-default posture; must be disclosed in the claim"
	}
	fmt.Fprintf(&b, "- **Posture:** `%s: %s` (%s)\n", PostureToolSeamHostError, posture, note)
	for _, k := range sortedStringKeys(d.Postures) {
		if k != PostureToolSeamHostError {
			fmt.Fprintf(&b, "- **Posture:** `%s: %s`\n", k, d.Postures[k])
		}
	}
	fmt.Fprintf(&b, "- **buffered_output (§12.1a):** `%t`", d.BufferedOutput)
	if !d.BufferedOutput {
		b.WriteString(" (a deny at `output` cannot retract content already streamed)")
	}
	b.WriteString("\n")
	if d.ExposureBound != "" {
		fmt.Fprintf(&b, "- **Exposure bound (§12.1 exception, §12.1a):** %s\n", d.ExposureBound)
	}
	fmt.Fprintf(&b, "- **Composition profiles (§7.2):** %s\n", codeList(d.Profiles, "not declared"))
	fmt.Fprintf(&b, "- **Identity provider (§10.1):** %s\n\n", codeOr(d.IdentityProvider, "not declared"))

	b.WriteString("## Results (per part)\n\n")
	b.WriteString("| Part | Passed | Failed | Skipped |\n| --- | --- | --- | --- |\n")
	for _, p := range r.Parts {
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", cell(p.Part), p.Passed, p.Failed, p.Skipped)
	}
	t := r.Totals
	fmt.Fprintf(&b, "\nTotal: **%d passed, %d failed, %d skipped** of %d.\n\n", t.Passed, t.Failed, t.Skipped, t.Vectors)
	switch {
	case t.Failed > 0:
		fmt.Fprintf(&b, "Not conformant: %d applicable vector(s) fail.\n\n", t.Failed)
	case t.Passed > 0:
		b.WriteString("Conformant for the declared surface: every applicable vector passes and every skip is a capability gate.\n\n")
	default:
		b.WriteString("No vector was applicable to the declared surface.\n\n")
	}

	b.WriteString("## Skips\n\n")
	skips := 0
	for _, res := range r.Results {
		if res.Status != StatusSkip {
			continue
		}
		if skips == 0 {
			b.WriteString("| Vector | Part | Reason |\n| --- | --- | --- |\n")
		}
		skips++
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", res.ID, cell(PartLabel(res.Part)), cell(res.Detail))
	}
	if skips == 0 {
		b.WriteString("None.\n")
	}

	b.WriteString("\n## Failures\n\n")
	fails := 0
	for _, res := range r.Results {
		if res.Status == StatusPass || res.Status == StatusSkip {
			continue
		}
		fails++
		fmt.Fprintf(&b, "### `%s` — %s\n\nPart: %s\n\n", res.ID, oneLine(res.Title), PartLabel(res.Part))
		fence := codeFence(res.Failures)
		fmt.Fprintf(&b, "%stext\n", fence)
		for _, f := range res.Failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
		fmt.Fprintf(&b, "%s\n\n", fence)
	}
	if fails == 0 {
		b.WriteString("None.\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func codeOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return "`" + s + "`"
}

func codeList(items []string, fallback string) string {
	if len(items) == 0 {
		return fallback
	}
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = "`" + s + "`"
	}
	return strings.Join(out, ", ")
}

// cell makes s safe inside a markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// codeFence returns a backtick fence longer than any backtick run in lines.
func codeFence(lines []string) string {
	longest := 0
	for _, l := range lines {
		run := 0
		for _, c := range l {
			if c == '`' {
				run++
				longest = max(longest, run)
			} else {
				run = 0
			}
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

func sortedStringKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
