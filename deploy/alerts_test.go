package deploy_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// runbookBase is where the alerts' runbook links point: docs/operations.md
// on the repository's default branch.
const runbookBase = "https://github.com/hooks-gateway/hooks-gateway/blob/main/docs/operations.md#"

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

type ruleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		AlertRuleTest []struct {
			EvalTime  string `yaml:"eval_time"`
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func loadRules(t *testing.T) ruleFile {
	t.Helper()
	var rf ruleFile
	dec := yaml.NewDecoder(strings.NewReader(string(readFile(t, "deploy", "prometheus", "alerts.yml"))))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	return rf
}

// TestAlertRules checks every alert's metadata, metric names and runbook
// link, without promtool.
func TestAlertRules(t *testing.T) {
	rf := loadRules(t)
	anchors := headingAnchors(string(readFile(t, "docs", "operations.md")))
	seen := map[string]bool{}
	n := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Errorf("group %s: a rule without an alert name (recording rules belong elsewhere)", g.Name)
				continue
			}
			n++
			if seen[r.Alert] {
				t.Errorf("alert %s defined twice", r.Alert)
			}
			seen[r.Alert] = true
			if d, err := time.ParseDuration(r.For); err != nil || d <= 0 {
				t.Errorf("%s: for %q: want a positive duration, so one bad evaluation never pages", r.Alert, r.For)
			}
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("%s: severity %q, want critical or warning", r.Alert, s)
			}
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("%s: no %s annotation", r.Alert, a)
				}
			}
			anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], runbookBase)
			if !ok {
				t.Errorf("%s: runbook_url %q is not under %s", r.Alert, r.Annotations["runbook_url"], runbookBase)
			} else if !anchors[anchor] {
				t.Errorf("%s: runbook_url anchor #%s is no heading of docs/operations.md", r.Alert, anchor)
			}
			if r.Alert != "HooksGatewayDown" && len(checkMetricUses(t, r.Alert, r.Expr)) == 0 {
				t.Errorf("%s: expression uses no gateway metric: %s", r.Alert, r.Expr)
			}
		}
	}
	// The alerts the operations guide promises.
	for _, want := range []string{
		"AgentHooksHostErrorSpike", "AgentHooksInterceptorTimeouts", "AgentHooksRecordsDropped",
		"AgentHooksRecordSinkFailures", "AgentHooksPolicyReloadFailed",
		"AgentHooksApprovalIdentityMismatch", "HooksGatewaySessionStoreErrors",
	} {
		if !seen[want] {
			t.Errorf("no alert %s", want)
		}
	}
	if n == 0 {
		t.Fatal("no alerts")
	}

	// alerts_test.yml: each alert fires in some case and stays quiet in
	// another.
	var rt ruleTests
	if err := yaml.Unmarshal(readFile(t, "deploy", "prometheus", "alerts_test.yml"), &rt); err != nil {
		t.Fatalf("alerts_test.yml: %v", err)
	}
	if len(rt.RuleFiles) != 1 || filepath.Base(rt.RuleFiles[0]) != "alerts.yml" {
		t.Errorf("alerts_test.yml tests %v, want alerts.yml", rt.RuleFiles)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range rt.Tests {
		for _, a := range tc.AlertRuleTest {
			if !seen[a.Alertname] {
				t.Errorf("alerts_test.yml tests unknown alert %s", a.Alertname)
			}
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	for a := range seen {
		if !fires[a] {
			t.Errorf("alerts_test.yml: no case where %s fires", a)
		}
		if !quiet[a] {
			t.Errorf("alerts_test.yml: no case where %s stays quiet", a)
		}
	}
}

// TestPromtoolRules runs promtool's own checks and the unit tests in
// alerts_test.yml.
func TestPromtoolRules(t *testing.T) {
	promtool := tool(t, "promtool")
	dir := repoPath("deploy", "prometheus")
	t.Log(run(t, dir, promtool, "check", "rules", "alerts.yml"))
	t.Log(run(t, dir, promtool, "test", "rules", "alerts_test.yml"))
}
