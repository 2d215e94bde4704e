package deploy_test

import (
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/interceptors"
)

// composeFile is the subset of the Compose specification that
// deploy/docker-compose.yml uses. Decoding is strict (KnownFields), so a
// misspelt key fails here rather than being ignored by docker compose.
type composeFile struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image string `yaml:"image"`
	Build *struct {
		Context    string `yaml:"context"`
		Dockerfile string `yaml:"dockerfile"`
	} `yaml:"build"`
	Command     []string          `yaml:"command"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	Environment map[string]string `yaml:"environment"`
	ReadOnly    bool              `yaml:"read_only"`
	DependsOn   yaml.Node         `yaml:"depends_on"`
	Restart     string            `yaml:"restart"`
	Healthcheck *struct {
		Test     []string `yaml:"test"`
		Interval string   `yaml:"interval"`
		Timeout  string   `yaml:"timeout"`
		Retries  int      `yaml:"retries"`
	} `yaml:"healthcheck"`
}

// mount is one short-syntax volume entry.
type mount struct {
	source, target string // source: a host path (relative to deploy/) or a named volume
	bind           bool
}

func (s composeService) mounts(t *testing.T, svc string) []mount {
	t.Helper()
	var out []mount
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || len(parts) > 3 {
			t.Errorf("service %s: volume %q: want source:target[:mode]", svc, v)
			continue
		}
		if len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw" {
			t.Errorf("service %s: volume %q: mode %q", svc, v, parts[2])
		}
		bind := strings.HasPrefix(parts[0], ".") || strings.HasPrefix(parts[0], "/")
		out = append(out, mount{source: parts[0], target: parts[1], bind: bind})
	}
	return out
}

// hostFile maps a container path to the repository file bind-mounted
// there (or into a mounted directory).
func (s composeService) hostFile(t *testing.T, svc, target string) (string, bool) {
	for _, m := range s.mounts(t, svc) {
		if !m.bind {
			continue
		}
		if m.target == target {
			return filepath.Join(root, "deploy", m.source), true
		}
	}
	return "", false
}

func dependsOn(s composeService) map[string]string {
	out := map[string]string{}
	switch s.DependsOn.Kind {
	case yaml.SequenceNode:
		for _, n := range s.DependsOn.Content {
			out[n.Value] = "service_started"
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(s.DependsOn.Content); i += 2 {
			cond := "service_started"
			var v struct {
				Condition string `yaml:"condition"`
			}
			if s.DependsOn.Content[i+1].Decode(&v) == nil && v.Condition != "" {
				cond = v.Condition
			}
			out[s.DependsOn.Content[i].Value] = cond
		}
	}
	return out
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(string(readFile(t, "deploy", "docker-compose.yml"))))
	dec.KnownFields(true)
	var c composeFile
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// TestCompose checks deploy/docker-compose.yml: the four services, that
// every mounted file exists, and that the files agree with each other
// (ports, service names, mount paths).
func TestCompose(t *testing.T) {
	c := loadCompose(t)
	for _, want := range []string{"gateway", "redis", "prometheus", "grafana"} {
		if _, ok := c.Services[want]; !ok {
			t.Errorf("no service %q", want)
		}
	}
	for name, s := range c.Services {
		if s.Image == "" && s.Build == nil {
			t.Errorf("service %s: neither image nor build", name)
		}
		for _, m := range s.mounts(t, name) {
			if m.bind {
				p := filepath.Join(root, "deploy", m.source)
				if fi, err := os.Stat(p); err != nil {
					t.Errorf("service %s: mounts %s, which does not exist: %v", name, m.source, err)
				} else if fi.IsDir() {
					t.Errorf("service %s: mounts directory %s; mount the files, so each is checked", name, m.source)
				}
			} else if _, ok := c.Volumes[m.source]; !ok {
				t.Errorf("service %s: named volume %q is not declared under volumes", name, m.source)
			}
		}
		for dep, cond := range dependsOn(s) {
			d, ok := c.Services[dep]
			if !ok {
				t.Errorf("service %s depends on unknown service %s", name, dep)
			}
			if cond == "service_healthy" && (d.Healthcheck == nil || len(d.Healthcheck.Test) == 0) {
				t.Errorf("service %s waits for %s to be healthy, which has no healthcheck", name, dep)
			}
		}
	}
	gw := c.Services["gateway"]
	if gw.Build == nil {
		t.Fatal("gateway: not built from the repository")
	}
	if _, err := os.Stat(filepath.Join(root, "deploy", gw.Build.Context, gw.Build.Dockerfile)); err != nil {
		t.Errorf("gateway build: %v", err)
	}
	if !gw.ReadOnly {
		t.Errorf("gateway: read_only should be true, as in Kubernetes")
	}
	if gw.Healthcheck != nil {
		t.Errorf("gateway: the image's own HEALTHCHECK (hooks-gateway healthcheck) applies; a compose healthcheck would need a shell or curl, which the distroless image lacks")
	}
	if dependsOn(gw)["redis"] != "service_healthy" {
		t.Errorf("gateway: should wait for redis to be healthy")
	}
}

// TestComposeGatewayConfig loads the configuration the compose gateway
// runs with, as the gateway would.
func TestComposeGatewayConfig(t *testing.T) {
	c := loadCompose(t)
	gw := c.Services["gateway"]
	var cfgPath string
	for i, a := range gw.Command {
		if a == "--config" && i+1 < len(gw.Command) {
			cfgPath = gw.Command[i+1]
		}
	}
	if cfgPath == "" {
		t.Fatalf("gateway command %q: no --config", gw.Command)
	}
	host, ok := gw.hostFile(t, "gateway", cfgPath)
	if !ok {
		t.Fatalf("gateway: --config %s is not a mounted file", cfgPath)
	}
	for _, name := range []string{config.EnvListen, config.EnvRedisURL, config.EnvOpenAIKey, config.EnvOpenAIBaseURL} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	for k, v := range gw.Environment {
		t.Setenv(k, v)
	}
	cfg, err := config.Load(host)
	if err != nil {
		t.Fatalf("%s:\n%v", host, err)
	}
	for _, w := range cfg.Warnings() {
		t.Errorf("warning: %s", w)
	}
	if _, err := interceptors.BuildAll(cfg.Interceptors, interceptors.Env{}); err != nil {
		t.Fatal(err)
	}
	if cfg.Sessions.Store != config.StoreRedis {
		t.Errorf("sessions.store %q: the compose stack demonstrates Redis sessions", cfg.Sessions.Store)
	}
	u, err := url.Parse(cfg.Sessions.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Services[u.Hostname()]; !ok {
		t.Errorf("sessions.redis_url host %q is not a compose service", u.Hostname())
	}
	if len(cfg.Upstreams) != 1 || cfg.Upstreams[0].Type != config.TypeMock {
		t.Errorf("the compose stack runs offline: want the mock upstream only")
	}
	_, port, err := net.SplitHostPort(cfg.Listeners.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	published := false
	for _, p := range gw.Ports {
		parts := strings.Split(p, ":")
		published = published || parts[len(parts)-1] == port
	}
	if !published {
		t.Errorf("gateway: listener port %s is not published (ports %v)", port, gw.Ports)
	}
}

// promConfig is the part of a Prometheus configuration the tests read.
type promConfig struct {
	RuleFiles     []string `yaml:"rule_files"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

// TestComposePrometheus: Prometheus scrapes the gateway service's /metrics
// as job hooks-gateway (the alert rules' job) and loads the mounted alert
// rules; promtool accepts the configuration.
func TestComposePrometheus(t *testing.T) {
	c := loadCompose(t)
	prom := c.Services["prometheus"]
	var cfgFile string
	for _, a := range prom.Command {
		if v, ok := strings.CutPrefix(a, "--config.file="); ok {
			cfgFile = v
		}
	}
	host, ok := prom.hostFile(t, "prometheus", cfgFile)
	if !ok {
		t.Fatalf("prometheus: --config.file=%q is not a mounted file", cfgFile)
	}
	data, err := os.ReadFile(host)
	if err != nil {
		t.Fatal(err)
	}
	var pc promConfig
	if err := yaml.Unmarshal(data, &pc); err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{} // container path -> host path
	for _, rf := range pc.RuleFiles {
		h, ok := prom.hostFile(t, "prometheus", rf)
		if !ok {
			t.Errorf("rule_files %s is not mounted into the prometheus service", rf)
			continue
		}
		rules[rf] = h
	}
	if len(rules) == 0 || !strings.HasSuffix(filepath.ToSlash(rules[pc.RuleFiles[0]]), "deploy/prometheus/alerts.yml") {
		t.Errorf("prometheus does not load deploy/prometheus/alerts.yml (rule_files %v)", pc.RuleFiles)
	}
	gwCfg := c.Services["gateway"]
	var gwPort string
	for _, p := range gwCfg.Ports {
		parts := strings.Split(p, ":")
		gwPort = parts[len(parts)-1]
	}
	found := false
	for _, sc := range pc.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, tg := range st.Targets {
				if tg == "gateway:"+gwPort {
					found = true
					if sc.JobName != "hooks-gateway" {
						t.Errorf("job_name %q: alerts.yml's HooksGatewayDown expects job=\"hooks-gateway\"", sc.JobName)
					}
					if sc.MetricsPath != "" && sc.MetricsPath != "/metrics" {
						t.Errorf("metrics_path %q", sc.MetricsPath)
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("prometheus does not scrape gateway:%s", gwPort)
	}

	// promtool resolves rule_files itself: point them at the repository.
	promtool := tool(t, "promtool")
	text := string(data)
	for container, h := range rules {
		abs, _ := filepath.Abs(h)
		text = strings.ReplaceAll(text, container, abs)
	}
	tmp := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log(run(t, ".", promtool, "check", "config", tmp))
}

// grafanaProvisioning is the part of Grafana's provisioning files in use.
type grafanaProvisioning struct {
	APIVersion  int `yaml:"apiVersion"`
	Datasources []struct {
		Name, UID, Type, URL, Access string
		IsDefault                    bool `yaml:"isDefault"`
	} `yaml:"datasources"`
	Providers []struct {
		Name, Type string
		Options    struct {
			Path string `yaml:"path"`
		} `yaml:"options"`
	} `yaml:"providers"`
}

// TestComposeGrafana: the datasource points at the prometheus service and
// is the dashboard's default; the dashboard provider's folder holds the
// mounted dashboard.
func TestComposeGrafana(t *testing.T) {
	c := loadCompose(t)
	g := c.Services["grafana"]
	var dashboards, datasources []string // container paths
	var ds, dash *grafanaProvisioning
	var dashboardFile string
	for _, m := range g.mounts(t, "grafana") {
		switch {
		case strings.HasPrefix(m.target, "/etc/grafana/provisioning/datasources/"):
			datasources = append(datasources, m.target)
			ds = readProvisioning(t, filepath.Join(root, "deploy", m.source))
		case strings.HasPrefix(m.target, "/etc/grafana/provisioning/dashboards/"):
			dash = readProvisioning(t, filepath.Join(root, "deploy", m.source))
		case strings.HasSuffix(m.target, ".json"):
			dashboards = append(dashboards, m.target)
			dashboardFile = filepath.Join(root, "deploy", m.source)
		}
	}
	if ds == nil || len(ds.Datasources) != 1 || dash == nil || len(dash.Providers) != 1 || len(dashboards) != 1 {
		t.Fatalf("grafana: want one datasource file, one dashboard provider and one dashboard mounted (got %v, %v)", datasources, dashboards)
	}
	d := ds.Datasources[0]
	u, err := url.Parse(d.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Services[u.Hostname()]; !ok || d.Type != "prometheus" {
		t.Errorf("datasource %s (%s) does not point at the prometheus service", d.URL, d.Type)
	}
	if p := dash.Providers[0].Options.Path; path.Dir(dashboards[0]) != p {
		t.Errorf("dashboard provider reads %s, the dashboard is mounted at %s", p, dashboards[0])
	}
	if filepath.Base(dashboardFile) != "hooks-gateway.json" {
		t.Errorf("mounted dashboard %s, want deploy/grafana/hooks-gateway.json", dashboardFile)
	}
	db := loadDashboard(t)
	if v := db.datasourceDefault(); v != d.UID {
		t.Errorf("the dashboard's datasource variable defaults to %q, the provisioned datasource uid is %q", v, d.UID)
	}
	if home := g.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]; home != "" && home != dashboards[0] {
		t.Errorf("home dashboard %s is not the mounted dashboard %s", home, dashboards[0])
	}
}

func readProvisioning(t *testing.T, p string) *grafanaProvisioning {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var g grafanaProvisioning
	if err := yaml.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if g.APIVersion != 1 {
		t.Errorf("%s: apiVersion %d, want 1", p, g.APIVersion)
	}
	return &g
}

var imageTag = regexp.MustCompile(`^[a-z0-9./_-]+:[A-Za-z0-9._-]+$`)

// TestComposeImagesPinned: third-party images carry an explicit tag, so the
// stack does not change under its users.
func TestComposeImagesPinned(t *testing.T) {
	c := loadCompose(t)
	for name, s := range c.Services {
		if s.Build != nil {
			continue
		}
		if !imageTag.MatchString(s.Image) || strings.HasSuffix(s.Image, ":latest") {
			t.Errorf("service %s: image %q: pin a tag", name, s.Image)
		}
	}
}
