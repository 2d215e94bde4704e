package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// dashboard is the part of a Grafana dashboard JSON model the tests read.
type dashboard struct {
	Title         string  `json:"title"`
	UID           string  `json:"uid"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []struct {
			Name    string          `json:"name"`
			Type    string          `json:"type"`
			Query   json.RawMessage `json:"query"`
			Current struct {
				Value any `json:"value"`
			} `json:"current"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // collapsed rows
}

func loadDashboard(t *testing.T) *dashboard {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal(readFile(t, "deploy", "grafana", "hooks-gateway.json"), &d); err != nil {
		t.Fatalf("hooks-gateway.json: %v", err)
	}
	return &d
}

// panels returns every panel, rows' nested panels included.
func (d *dashboard) allPanels() []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// datasourceDefault is the default value of the dashboard's datasource
// variable.
func (d *dashboard) datasourceDefault() string {
	for _, v := range d.Templating.List {
		if v.Type == "datasource" {
			s, _ := v.Current.Value.(string)
			return s
		}
	}
	return ""
}

// exprs returns every PromQL expression of the dashboard, by where it is.
func (d *dashboard) exprs() map[string]string {
	out := map[string]string{}
	for _, p := range d.allPanels() {
		for _, tg := range p.Targets {
			out[fmt.Sprintf("panel %d %q target %s", p.ID, p.Title, tg.RefID)] = tg.Expr
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &q) != nil {
			json.Unmarshal(v.Query, &q.Query)
		}
		out["variable "+v.Name] = q.Query
	}
	return out
}

// grafanaVariables stand-ins, so a dashboard expression becomes plain
// PromQL.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "1m", "$__range", "1h", "$__interval", "15s", "$instance", ".*")

// panelExpr returns the first expression of the panel with the given title.
func (d *dashboard) panelExpr(t *testing.T, title string) string {
	t.Helper()
	for _, p := range d.allPanels() {
		if p.Title == title && len(p.Targets) > 0 {
			return p.Targets[0].Expr
		}
	}
	t.Fatalf("no panel %q in the dashboard", title)
	return ""
}

// TestDashboard checks the dashboard's structure and that every metric it
// queries is one the gateway exports.
func TestDashboard(t *testing.T) {
	d := loadDashboard(t)
	if d.Title == "" || d.UID == "" || d.SchemaVersion == 0 {
		t.Errorf("title %q, uid %q, schemaVersion %d: all required", d.Title, d.UID, d.SchemaVersion)
	}
	ds := d.datasourceDefault()
	if ds == "" {
		t.Errorf("no datasource variable with a default")
	}
	ids := map[int]string{}
	used := map[string]bool{}
	for _, p := range d.allPanels() {
		if p.ID <= 0 {
			t.Errorf("panel %q: id %d", p.Title, p.ID)
		}
		if prev, dup := ids[p.ID]; dup {
			t.Errorf("panel id %d used by %q and %q", p.ID, prev, p.Title)
		}
		ids[p.ID] = p.Title
		if p.Title == "" {
			t.Errorf("panel %d has no title", p.ID)
		}
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %d %q: gridPos %+v outside the 24-column grid", p.ID, p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %d %q has no targets", p.ID, p.Title)
		}
		if p.Datasource == nil || p.Datasource.Type != "prometheus" || (p.Datasource.UID != "${datasource}" && p.Datasource.UID != ds) {
			t.Errorf("panel %d %q: datasource %+v, want the prometheus datasource variable", p.ID, p.Title, p.Datasource)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %d %q: target %s has no expr", p.ID, p.Title, tg.RefID)
			}
			if tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("panel %d %q: refId %q missing or repeated", p.ID, p.Title, tg.RefID)
			}
			refs[tg.RefID] = true
		}
	}
	for where, expr := range d.exprs() {
		uses := checkMetricUses(t, where, expr)
		if len(uses) == 0 {
			t.Errorf("%s: %q queries no gateway metric", where, expr)
		}
		for _, u := range uses {
			used[u.name] = true
		}
	}
	// What the dashboard is for: each of these has a panel.
	for _, m := range []string{
		"agent_hooks_emissions_total",              // deny rate by point and reason class, host errors
		"agent_hooks_interceptor_verdicts_total",   // top denying interceptors
		"agent_hooks_interceptor_duration_seconds", // interceptor latency
		"hooks_gateway_overhead_seconds",           // gateway overhead
		"hooks_gateway_upstream_duration_seconds",  // upstream latency
		"hooks_gateway_upstream_requests_total",    // upstream errors
		"hooks_gateway_stream_buffer_bytes",        // stream buffer sizes
		"agent_hooks_sessions_active",              // active sessions
		"agent_hooks_policy_info",                  // policy version
		"agent_hooks_policy_reloads_total",         // reloads
		"hooks_gateway_mcp_requests_total",         // MCP deny rate by server
	} {
		if !used[m] {
			t.Errorf("no panel queries %s", m)
		}
	}
}

// TestDashboardPromQL has promtool parse every dashboard expression (with
// Grafana's variables replaced), by wrapping them as recording rules.
func TestDashboardPromQL(t *testing.T) {
	d := loadDashboard(t)
	promtool := tool(t, "promtool")
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for _, where := range sortedKeys(d.exprs()) {
		expr := d.exprs()[where]
		if strings.HasPrefix(expr, "label_values(") {
			continue // a Grafana function, not PromQL
		}
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:expr_%d", len(rules)), Expr: grafanaVariables.Replace(expr)})
		t.Logf("%s: %s", where, expr)
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log(run(t, ".", promtool, "check", "rules", file))
}
