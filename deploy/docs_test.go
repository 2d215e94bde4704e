package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestOperationsRunbooks: docs/operations.md has a runbook section for
// every reserved host_error:* reason of the vendored spec, each with a
// cause, what to check and a remediation.
func TestOperationsRunbooks(t *testing.T) {
	ops := string(readFile(t, "docs", "operations.md"))
	var reserved struct {
		Reasons []struct {
			ID string `json:"id"`
		} `json:"reasons"`
	}
	if err := json.Unmarshal(readFile(t, "conformance", "spec", "reserved-reasons.json"), &reserved); err != nil {
		t.Fatal(err)
	}
	if len(reserved.Reasons) < 14 {
		t.Fatalf("reserved-reasons.json lists %d reasons", len(reserved.Reasons))
	}
	for _, r := range reserved.Reasons {
		sec := section(ops, "### "+r.ID)
		if sec == "" {
			t.Errorf("docs/operations.md: no section \"### %s\"", r.ID)
			continue
		}
		for _, part := range []string{"**Cause**", "**What to check**", "**Remediation**"} {
			if !strings.Contains(sec, part) {
				t.Errorf("docs/operations.md ### %s: no %s", r.ID, part)
			}
		}
	}
}

var metricsTableRow = regexp.MustCompile("(?m)^\\| `((?:agent_hooks|hooks_gateway)_[a-z_]+)` \\| ([a-z]+) \\|")

// TestOperationsMetricsTable: the metrics table in docs/operations.md lists
// exactly the metric contract, with the right types.
func TestOperationsMetricsTable(t *testing.T) {
	ops := string(readFile(t, "docs", "operations.md"))
	listed := map[string]bool{}
	for _, m := range metricsTableRow.FindAllStringSubmatch(section(ops, "## Metrics"), -1) {
		listed[m[1]] = true
		spec, ok := specMetrics[m[1]]
		if !ok {
			t.Errorf("docs/operations.md lists %s, which is not in the metric contract", m[1])
		} else if spec.typ != m[2] {
			t.Errorf("docs/operations.md: %s is a %s, not a %s", m[1], spec.typ, m[2])
		}
	}
	for name := range specMetrics {
		if !listed[name] {
			t.Errorf("docs/operations.md's metrics table lacks %s", name)
		}
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// checkLinks checks the relative links of a Markdown text: the files exist,
// and anchors are headings of the target (for Markdown targets).
func checkLinks(t *testing.T, name, dir, text string) {
	t.Helper()
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		link := m[1]
		if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(link, "#")
		target := filepath.Join(dir, filepath.FromSlash(file))
		if file == "" {
			target = filepath.Join(dir, name)
		}
		if _, err := os.Stat(target); err != nil {
			t.Errorf("%s: link %s: %v", name, link, err)
			continue
		}
		if anchor != "" && strings.HasSuffix(target, ".md") {
			data, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if !headingAnchors(string(data))[anchor] {
				t.Errorf("%s: link %s: no heading with anchor #%s", name, link, anchor)
			}
		}
	}
}

// TestDocLinks checks the links of docs/operations.md and of the README's
// Deployment section.
func TestDocLinks(t *testing.T) {
	checkLinks(t, "operations.md", repoPath("docs"), string(readFile(t, "docs", "operations.md")))
	deployment := section(string(readFile(t, "README.md")), "## Deployment")
	if deployment == "" {
		t.Fatal("README.md has no ## Deployment section")
	}
	checkLinks(t, "README.md", root, deployment)
	// Paths the README's Deployment section names exist.
	for _, m := range regexp.MustCompile("`((?:deploy|docs)/[A-Za-z0-9_./-]+)`").FindAllStringSubmatch(deployment, -1) {
		if _, err := os.Stat(repoPath(filepath.FromSlash(strings.TrimSuffix(m[1], "/")))); err != nil {
			t.Errorf("README.md Deployment: %s: %v", m[1], err)
		}
	}
}

// TestDocPromQL: every ```promql block of docs/operations.md and the
// README uses only contract metrics and parses (promtool, as recording
// rules).
func TestDocPromQL(t *testing.T) {
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for _, doc := range []string{"README.md", filepath.Join("docs", "operations.md")} {
		blocks := codeBlocks(string(readFile(t, doc)), "promql")
		if len(blocks) == 0 {
			t.Errorf("%s: no promql blocks", doc)
		}
		for i, b := range blocks {
			where := fmt.Sprintf("%s promql block %d", doc, i+1)
			if len(checkMetricUses(t, where, b)) == 0 {
				t.Errorf("%s queries no gateway metric", where)
			}
			rules = append(rules, rule{Record: fmt.Sprintf("doc:expr_%d", len(rules)), Expr: strings.TrimSpace(b)})
		}
	}
	promtool := tool(t, "promtool")
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "docs", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "doc-rules.yml")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log(run(t, ".", promtool, "check", "rules", file))
}
