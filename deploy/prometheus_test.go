package deploy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExporterMatchesSpec scrapes a running gateway (the embedded default,
// after some traffic) and holds its /metrics to specMetrics: every
// agent_hooks_* and hooks_gateway_* family it exports is in the contract
// with the same type and labels, and every metric the dashboard and the
// alert rules query is exported (or is a labelled family that has no
// series until its first event).
func TestExporterMatchesSpec(t *testing.T) {
	gw := startGateway(t)
	for _, tc := range []struct {
		prompt string
		stream bool
		want   int
	}{
		{promptAllowed, false, http.StatusOK},
		{promptRedact, false, http.StatusOK},
		{promptAllowed, true, http.StatusOK},
		{promptLeak, false, http.StatusForbidden},
	} {
		if status, body := chat(t, gw.URL, tc.prompt, tc.stream); status != tc.want {
			t.Fatalf("%q stream=%v: status %d, want %d: %s", tc.prompt, tc.stream, status, tc.want, body)
		}
	}
	fams := scrape(t, gw.URL)

	for name, f := range fams {
		if !metricRef.MatchString(name) || metricRef.FindString(name) != name {
			continue
		}
		spec, ok := specMetrics[name]
		if !ok {
			t.Errorf("the gateway exports %s (%s), which is not in the metric contract: add it to specMetrics and the docs, or rename it", name, f.typ)
			continue
		}
		if f.typ != spec.typ {
			t.Errorf("%s is a %s, the contract says %s", name, f.typ, spec.typ)
		}
		for _, l := range spec.labels {
			if f.series > 0 && !f.labels[l] {
				t.Errorf("%s has no %q label (labels %v)", name, l, sortedKeys(f.labels))
			}
		}
	}

	// Families without series are not exported at all (client_golang drops
	// them); these are the ones this traffic cannot produce.
	eventOnly := map[string]bool{
		"agent_hooks_interceptor_failures_total": true, // needs a failing interceptor
		"agent_hooks_approvals_total":            true, // needs an approval resolver
		// One series per sink that can drop (asynchronous sinks); the
		// embedded default's stdout sink writes synchronously.
		"agent_hooks_records_dropped_total": true,
		// Needs streaming.mode: incremental, which the embedded default
		// leaves off.
		"hooks_gateway_stream_segments_total": true,
		// Needs a gateway bug: an error no part of the pipeline maps.
		"hooks_gateway_internal_errors_total": true,
		// Needs an MCP server, which the embedded default configures none of.
		"hooks_gateway_mcp_requests_total": true,
	}
	d := loadDashboard(t)
	queried := map[string]string{}
	for where, expr := range d.exprs() {
		for _, u := range metricsIn(expr) {
			queried[u.name] = "dashboard " + where
		}
	}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			for _, u := range metricsIn(r.Expr) {
				queried[u.name] = "alert " + r.Alert
			}
		}
	}
	for _, name := range sortedKeys(queried) {
		if _, ok := fams[name]; !ok && !eventOnly[name] {
			t.Errorf("%s queries %s, which the gateway does not export after traffic", queried[name], name)
		}
	}
	for name := range specMetrics {
		if _, ok := fams[name]; !ok && !eventOnly[name] {
			t.Errorf("contract metric %s is not exported after traffic", name)
		}
	}

	// The traffic is visible: one credential deny at post_model_call.
	resp, err := http.Get(gw.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `agent_hooks_emissions_total{decision="deny",mode="enforce",point="post_model_call",reason_class="policy"} 1`
	if !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// prometheus is a real Prometheus server scraping the test's gateway.
type prometheus struct {
	base string
}

// startPrometheus runs the prometheus binary on a free loopback port with a
// temporary TSDB, scraping target every second as job hooks-gateway and
// evaluating deploy/prometheus/alerts.yml every second.
func startPrometheus(t *testing.T, target string) *prometheus {
	t.Helper()
	bin := tool(t, "prometheus")
	dir := t.TempDir()
	rules, err := filepath.Abs(repoPath("deploy", "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - %q
scrape_configs:
  - job_name: hooks-gateway
    metrics_path: /metrics
    static_configs:
      - targets: [%q]
`, rules, target)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	cmd := exec.Command(bin,
		"--config.file="+cfgFile,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(port),
		"--log.level=warn",
	)
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logs.String())
		}
	})
	p := &prometheus{base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	waitFor(t, 20*time.Second, "prometheus ready", func() (bool, string) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("prometheus exited: %v\n%s", err, logs.String())
		default:
		}
		resp, err := http.Get(p.base + "/-/ready")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return p
}

// waitFor polls cond every 200ms until it holds or the bound passes.
func waitFor(t *testing.T, bound time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v (last: %s)", what, bound, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// api GETs a Prometheus HTTP API path and decodes its data member.
func (p *prometheus) api(t *testing.T, path string, q url.Values, data any) {
	t.Helper()
	resp, err := http.Get(p.base + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if env.Status != "success" {
		t.Fatalf("%s %v: %s", path, q, env.Error)
	}
	if err := json.Unmarshal(env.Data, data); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s sample) float(t *testing.T) float64 {
	t.Helper()
	str, _ := s.Value[1].(string)
	f, err := strconv.ParseFloat(str, 64)
	if err != nil {
		t.Fatalf("sample value %v: %v", s.Value, err)
	}
	return f
}

// query runs an instant query and returns its vector.
func (p *prometheus) query(t *testing.T, expr string) []sample {
	t.Helper()
	var data struct {
		ResultType string   `json:"resultType"`
		Result     []sample `json:"result"`
	}
	p.api(t, "/api/v1/query", url.Values{"query": {expr}}, &data)
	if data.ResultType != "vector" {
		t.Fatalf("%s: result type %s", expr, data.ResultType)
	}
	return data.Result
}

// scalar waits until expr yields a one-sample vector equal to want.
func (p *prometheus) waitValue(t *testing.T, expr string, want float64) {
	t.Helper()
	waitFor(t, 20*time.Second, expr+" == "+strconv.FormatFloat(want, 'g', -1, 64), func() (bool, string) {
		r := p.query(t, expr)
		if len(r) != 1 {
			return false, fmt.Sprintf("%d samples", len(r))
		}
		v := r[0].float(t)
		return v == want, strconv.FormatFloat(v, 'g', -1, 64)
	})
}

// TestPrometheusScrapesGateway runs a real Prometheus against a gateway on
// the embedded default: scripted traffic, then the deny counts and the
// dashboard's deny-rate expression through Prometheus' HTTP API, and the
// alert rules evaluated against the gateway's real series.
func TestPrometheusScrapesGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("runs prometheus")
	}
	gw := startGateway(t)
	target := strings.TrimPrefix(gw.URL, "http://")

	// Before Prometheus: 3 allowed (one redacted), 1 denied.
	for _, p := range []string{promptAllowed, promptRedact, promptAllowed, promptLeak} {
		chat(t, gw.URL, p, false)
	}
	prom := startPrometheus(t, target)
	waitFor(t, 20*time.Second, "target up", func() (bool, string) {
		var data struct {
			ActiveTargets []struct {
				ScrapeURL string `json:"scrapeUrl"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"activeTargets"`
		}
		prom.api(t, "/api/v1/targets", url.Values{"state": {"active"}}, &data)
		if len(data.ActiveTargets) != 1 {
			return false, fmt.Sprintf("%d targets", len(data.ActiveTargets))
		}
		tg := data.ActiveTargets[0]
		return tg.Health == "up", tg.Health + " " + tg.LastError
	})
	const denies = `sum(agent_hooks_emissions_total{decision="deny"})`
	prom.waitValue(t, denies, 1)

	// After the first scrape: 2 more denied (one streamed), 1 allowed, so
	// the deny counter rises inside Prometheus' window.
	for _, tc := range []struct {
		prompt string
		stream bool
		want   int
	}{
		{promptLeak, false, http.StatusForbidden},
		{promptAllowed, false, http.StatusOK},
		{promptLeak, true, http.StatusForbidden},
	} {
		if status, body := chat(t, gw.URL, tc.prompt, tc.stream); status != tc.want {
			t.Fatalf("%q stream=%v: %d, want %d: %s", tc.prompt, tc.stream, status, tc.want, body)
		}
	}
	prom.waitValue(t, denies, 3)
	prom.waitValue(t, `sum(hooks_gateway_requests_total{route="/v1/chat/completions",code="403"})`, 3)
	prom.waitValue(t, `sum(hooks_gateway_requests_total{route="/v1/chat/completions",code="200"})`, 4)
	prom.waitValue(t, `sum(agent_hooks_emissions_total{point="pre_model_call",decision="transform"})`, 1)

	// The dashboard's own deny-rate query: one series, the credential
	// policy at post_model_call, with a positive rate.
	expr := grafanaVariables.Replace(loadDashboard(t).panelExpr(t, "Deny rate by point and reason class (enforce)"))
	waitFor(t, 20*time.Second, "dashboard deny rate > 0", func() (bool, string) {
		r := prom.query(t, expr)
		if len(r) != 1 {
			return false, fmt.Sprintf("%d series: %v", len(r), r)
		}
		m := r[0].Metric
		if m["point"] != "post_model_call" || m["reason_class"] != "policy" {
			t.Fatalf("%s: series %v, want point=post_model_call reason_class=policy", expr, m)
		}
		v := r[0].float(t)
		return v > 0, strconv.FormatFloat(v, 'g', -1, 64)
	})

	// Every alert rule evaluates without error against the real series,
	// and none fires on healthy traffic.
	waitFor(t, 20*time.Second, "alert rules evaluated", func() (bool, string) {
		var data struct {
			Groups []struct {
				Rules []struct {
					Name      string `json:"name"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		}
		prom.api(t, "/api/v1/rules", nil, &data)
		var pending []string
		n := 0
		for _, g := range data.Groups {
			for _, r := range g.Rules {
				n++
				switch r.Health {
				case "ok":
				case "unknown":
					pending = append(pending, r.Name)
				default:
					t.Fatalf("rule %s: %s: %s", r.Name, r.Health, r.LastError)
				}
			}
		}
		return n > 0 && len(pending) == 0, fmt.Sprintf("%d rules, not yet evaluated: %v", n, pending)
	})
	var alerts struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	}
	prom.api(t, "/api/v1/alerts", nil, &alerts)
	for _, a := range alerts.Alerts {
		t.Errorf("alert %s is %s on healthy traffic (%v)", a.Labels["alertname"], a.State, a.Labels)
	}

	// A query naming a metric the gateway does not export finds nothing:
	// the checks above are not vacuous.
	if r := prom.query(t, `agent_hooks_emissions_totl`); len(r) != 0 {
		t.Errorf("a misspelt metric returned %v", r)
	}
}
