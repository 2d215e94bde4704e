package validate

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/interceptors"
)

// manifestDir is deploy/kubernetes, seen from this package.
const manifestDir = ".."

// The gateway's objects, by name.
const (
	gatewayName      = "hooks-gateway"
	gatewayContainer = "gateway"
	gatewayConfigKey = "gateway.yaml"
	metricsPath      = "/metrics"
	readinessPath    = "/readyz"
	livenessPath     = "/healthz"
	// defaultDrain is the gateway's --drain-timeout default.
	defaultDrain = 30 * time.Second
)

func load(t *testing.T) *Manifests {
	t.Helper()
	m, err := Load(manifestDir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestManifestsDecodeStrictly decodes every document into its typed API
// object and checks names, labels and the kinds present.
func TestManifestsDecodeStrictly(t *testing.T) {
	m := load(t)
	if len(m.Objects) == 0 {
		t.Fatal("no manifests found")
	}
	kinds := map[string]int{}
	for _, o := range m.Objects {
		kinds[o.GVK]++
		meta := objectMeta(o.Obj)
		check := validation.IsDNS1123Subdomain
		if o.GVK == "v1/Service" {
			check = validation.IsDNS1035Label
		}
		for _, msg := range check(meta.Name) {
			t.Errorf("%s: metadata.name %q: %s", o, meta.Name, msg)
		}
		if meta.Namespace != "" {
			t.Errorf("%s: metadata.namespace is set; leave it to kubectl -n / kustomize so the manifests install anywhere", o)
		}
		checkLabels(t, o.String()+": metadata.labels", meta.Labels)
		if meta.Labels["app.kubernetes.io/name"] != gatewayName {
			t.Errorf("%s: want label app.kubernetes.io/name=%s on every object", o, gatewayName)
		}
		t.Logf("%s: %s", o, meta.Name)
	}
	for _, want := range []string{
		"apps/v1/Deployment", "v1/Service", "v1/ConfigMap", "v1/Secret",
		"policy/v1/PodDisruptionBudget", "autoscaling/v2/HorizontalPodAutoscaler",
		"monitoring.coreos.com/v1/ServiceMonitor",
	} {
		if kinds[want] == 0 {
			t.Errorf("no %s among the manifests", want)
		}
	}
}

// TestDecodeStrictRejects proves the decoder is strict: each of these would
// be accepted silently by a lenient decoder (and by kubectl apply with
// --validate=false).
func TestDecodeStrictRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field": `
apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  replica: 2
  selector: {matchLabels: {a: b}}
  template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}
`,
		"misspelt probe field": `
apiVersion: v1
kind: Service
metadata: {name: x}
spec:
  ports: [{port: 80, targetPrt: http}]
`,
		"wrong type": `
apiVersion: v1
kind: Service
metadata: {name: x}
spec:
  ports: [{port: "eighty"}]
`,
		"duplicate key": `
apiVersion: v1
kind: ConfigMap
metadata: {name: x}
data: {a: "1"}
data: {b: "2"}
`,
		"bad quantity": `
apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: c, image: i, resources: {limits: {memory: 1 gigabyte}}}]}
`,
		"unsupported kind": `
apiVersion: v1
kind: Pod
metadata: {name: x}
`,
		"unknown ServiceMonitor field": `
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: x}
spec:
  selector: {}
  endpoints: [{port: http, honorLabelz: true}]
`,
		"missing kind": `
apiVersion: v1
metadata: {name: x}
`,
	} {
		t.Run(name, func(t *testing.T) {
			if gvk, _, err := DecodeStrict([]byte(doc)); err == nil {
				t.Errorf("accepted (%s)", gvk)
			} else {
				t.Log(err)
			}
		})
	}
}

// TestDeploymentsSelectTheirPods: each Deployment's selector matches its own
// pod template, every container is bounded and locked down, and no two
// Deployments' selectors overlap.
func TestDeploymentsSelectTheirPods(t *testing.T) {
	m := load(t)
	for name, d := range m.Deployments {
		sel := selector(t, "deployment "+name, d.Spec.Selector)
		if sel.Empty() {
			t.Errorf("deployment %s: empty selector", name)
		}
		if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("deployment %s: selector %s does not match its pod template labels %v", name, sel, d.Spec.Template.Labels)
		}
		checkLabels(t, "deployment "+name+": template labels", d.Spec.Template.Labels)
		for other, o := range m.Deployments {
			if other != name && sel.Matches(labels.Set(o.Spec.Template.Labels)) {
				t.Errorf("deployment %s: selector also matches the pods of %s", name, other)
			}
		}
		ps := d.Spec.Template.Spec
		if ps.SecurityContext == nil || ps.SecurityContext.RunAsNonRoot == nil || !*ps.SecurityContext.RunAsNonRoot {
			t.Errorf("deployment %s: pod securityContext.runAsNonRoot must be true", name)
		}
		if ps.SecurityContext != nil && ps.SecurityContext.RunAsUser != nil && *ps.SecurityContext.RunAsUser == 0 {
			t.Errorf("deployment %s: runAsUser 0", name)
		}
		if len(ps.Containers) == 0 {
			t.Errorf("deployment %s: no containers", name)
		}
		for _, c := range ps.Containers {
			where := fmt.Sprintf("deployment %s container %s", name, c.Name)
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				t.Errorf("%s: name: %s", where, msg)
			}
			if c.Image == "" {
				t.Errorf("%s: no image", where)
			}
			checkContainerPorts(t, where, c)
			checkResources(t, where, c.Resources)
			checkContainerSecurity(t, where, c.SecurityContext)
			for _, e := range c.Env {
				for _, msg := range validation.IsEnvVarName(e.Name) {
					t.Errorf("%s: env %q: %s", where, e.Name, msg)
				}
			}
			for _, p := range []struct {
				kind  string
				probe *corev1.Probe
			}{{"readiness", c.ReadinessProbe}, {"liveness", c.LivenessProbe}} {
				if p.probe == nil {
					t.Errorf("%s: no %s probe", where, p.kind)
					continue
				}
				checkProbePort(t, where+" "+p.kind+" probe", c, p.probe)
			}
		}
		checkPodReferences(t, m, "deployment "+name, ps)
	}
}

// TestServicesRouteToContainerPorts: every Service selects the pods of
// exactly one Deployment, and each of its target ports is a port of that
// Deployment's containers.
func TestServicesRouteToContainerPorts(t *testing.T) {
	m := load(t)
	for name, s := range m.Services {
		if len(s.Spec.Selector) == 0 {
			t.Errorf("service %s: no selector", name)
			continue
		}
		sel := labels.SelectorFromSet(s.Spec.Selector)
		var matched []*appsv1.Deployment
		for _, d := range m.Deployments {
			if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				matched = append(matched, d)
			}
		}
		if len(matched) != 1 {
			t.Errorf("service %s: selector %s matches %d deployments, want 1", name, sel, len(matched))
			continue
		}
		d := matched[0]
		if len(s.Spec.Ports) == 0 {
			t.Errorf("service %s: no ports", name)
		}
		for _, p := range s.Spec.Ports {
			for _, msg := range validation.IsValidPortName(p.Name) {
				t.Errorf("service %s port %q: %s", name, p.Name, msg)
			}
			checkProtocol(t, "service "+name+" port "+p.Name, p.Protocol)
			target := p.TargetPort
			if target.Type == intstr.Int && target.IntVal == 0 {
				target = intstr.FromInt32(p.Port)
			}
			if _, ok := findContainerPort(d.Spec.Template.Spec.Containers, target); !ok {
				t.Errorf("service %s port %s: targetPort %s is no container port of deployment %s", name, p.Name, target.String(), d.Name)
			}
		}
	}
}

// TestGatewayDeployment checks what the gateway in particular needs.
func TestGatewayDeployment(t *testing.T) {
	m := load(t)
	d, ok := m.Deployments[gatewayName]
	if !ok {
		t.Fatalf("no deployment %s", gatewayName)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas: want at least 2 (sessions live in Redis, so replicas are interchangeable)")
	}
	ps := d.Spec.Template.Spec
	c := container(t, ps, gatewayContainer)
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != readinessPath {
		t.Errorf("readiness probe: want httpGet %s", readinessPath)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != livenessPath {
		t.Errorf("liveness probe: want httpGet %s (not /readyz: a Redis outage must not restart every replica)", livenessPath)
	}
	// The configuration file is a ConfigMap key, mounted where --config
	// points.
	cfgPath, ok := Flag(c.Args, "config")
	if !ok {
		t.Fatalf("args %q: no --config", c.Args)
	}
	cm, key := configMapAt(t, m, ps, c, cfgPath)
	if cm != nil && cm.Name != "" {
		if _, ok := cm.Data[key]; !ok {
			t.Errorf("--config %s: configmap %s has no key %q", cfgPath, cm.Name, key)
		}
	}
	// Shutdown: the grace period covers the preStop pause and the drain.
	drain := defaultDrain
	if v, ok := Flag(c.Args, "drain-timeout"); ok {
		var err error
		if drain, err = time.ParseDuration(v); err != nil {
			t.Errorf("--drain-timeout %q: %v", v, err)
		}
	}
	var pause time.Duration
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
		if s := c.Lifecycle.PreStop.Sleep; s != nil {
			pause = time.Duration(s.Seconds) * time.Second
		}
		if c.Lifecycle.PreStop.Exec != nil {
			t.Errorf("preStop exec: the distroless image has no shell; use the sleep action")
		}
	}
	grace := 30 * time.Second
	if ps.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*ps.TerminationGracePeriodSeconds) * time.Second
	}
	if grace <= pause+drain {
		t.Errorf("terminationGracePeriodSeconds %v must exceed preStop %v + drain %v, or in-flight requests are killed", grace, pause, drain)
	}
	if ps.SecurityContext == nil || ps.SecurityContext.RunAsUser == nil {
		t.Errorf("pod securityContext.runAsUser: set it to the image's user")
	}
}

// TestGatewayConfigLoads loads the ConfigMap's gateway.yaml with the
// gateway's own loader, in the environment the Deployment gives it, and
// checks it against the rest of the manifests.
func TestGatewayConfigLoads(t *testing.T) {
	m := load(t)
	d, ok := m.Deployments[gatewayName]
	if !ok {
		t.Fatalf("no deployment %s", gatewayName)
	}
	ps := d.Spec.Template.Spec
	c := container(t, ps, gatewayContainer)
	cfgPath, _ := Flag(c.Args, "config")
	cm, key := configMapAt(t, m, ps, c, cfgPath)
	if cm == nil {
		t.FailNow()
	}
	text, ok := cm.Data[key]
	if !ok {
		t.Fatalf("configmap %s has no key %q", cm.Name, key)
	}

	// The container's environment: literal values as written, Secret
	// references as placeholders, optional ones left unset (as in a
	// cluster whose Secret lacks them). Nothing from the test's own
	// environment leaks in.
	for _, name := range []string{config.EnvListen, config.EnvRedisURL, config.EnvOpenAIKey, config.EnvOpenAIBaseURL} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	provided := map[string]bool{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			t.Setenv(e.Name, e.Value)
			provided[e.Name] = e.Value != ""
		case e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Optional != nil && *e.ValueFrom.SecretKeyRef.Optional:
			t.Setenv(e.Name, "")
			os.Unsetenv(e.Name)
		default:
			t.Setenv(e.Name, "placeholder-secret-for-"+e.Name)
			provided[e.Name] = true
		}
	}
	file := filepath.Join(t.TempDir(), path.Base(cfgPath))
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatalf("configmap %s key %s does not load:\n%v", cm.Name, key, err)
	}
	for _, w := range cfg.Warnings() {
		t.Errorf("config warning: %s", w)
	}
	regs, err := interceptors.BuildAll(cfg.Interceptors, interceptors.Env{})
	if err != nil {
		t.Fatalf("interceptors:\n%v", err)
	}
	if len(regs) == 0 {
		t.Errorf("no interceptors: in enforce mode every request would be denied (host_error:no_interceptor)")
	}
	opts, err := cfg.Enforcement.EngineOptions()
	if err != nil {
		t.Fatal(err)
	}
	opts.Interceptors = regs
	if _, err := enforcement.NewEmitter(opts); err != nil {
		t.Fatalf("NewEmitter: %v", err)
	}

	// Every variable the file names comes from the container's env, and
	// not optionally: a missing one stops the gateway at start.
	var named []string
	for _, u := range cfg.Upstreams {
		named = append(named, u.APIKeyEnv)
	}
	for _, k := range cfg.Auth.APIKeys {
		named = append(named, k.KeyEnv)
	}
	named = append(named, cfg.Auth.AdminTokenEnv, cfg.Enforcement.IdentityKeyEnv)
	for _, n := range named {
		if n != "" && !provided[n] {
			t.Errorf("the configuration names $%s, which the container's env does not provide", n)
		}
	}

	// The listener is the container port the probes and Service use.
	_, port, err := net.SplitHostPort(cfg.Listeners.HTTP)
	if err != nil {
		t.Fatalf("listeners.http %q: %v", cfg.Listeners.HTTP, err)
	}
	want, _ := strconv.Atoi(port)
	if p, ok := findContainerPort([]corev1.Container{c}, intstr.FromString("http")); !ok || int(p.ContainerPort) != want {
		t.Errorf("listeners.http port %d is not the container's port named http (%+v)", want, p)
	}

	// Several replicas need a shared session store: Redis, at a Service
	// of these manifests.
	if cfg.Sessions.Store != config.StoreRedis {
		t.Fatalf("sessions.store %q: replicas > 1 need redis", cfg.Sessions.Store)
	}
	u, err := url.Parse(cfg.Sessions.RedisURL)
	if err != nil {
		t.Fatalf("sessions.redis_url: %v", err)
	}
	svc, ok := m.Services[u.Hostname()]
	if !ok {
		t.Fatalf("sessions.redis_url host %q is no Service in the manifests", u.Hostname())
	}
	rport := u.Port()
	if rport == "" {
		rport = "6379"
	}
	if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return strconv.Itoa(int(p.Port)) == rport }) {
		t.Errorf("service %s does not expose port %s of sessions.redis_url", svc.Name, rport)
	}
	t.Log(cfg.Summary())
}

// TestPodDisruptionBudgets: each selects one Deployment's pods and lets a
// drain proceed.
func TestPodDisruptionBudgets(t *testing.T) {
	m := load(t)
	if _, ok := m.PDBs[gatewayName]; !ok {
		t.Errorf("no PodDisruptionBudget %s", gatewayName)
	}
	for name, p := range m.PDBs {
		sel := selector(t, "pdb "+name, p.Spec.Selector)
		var d *appsv1.Deployment
		for _, dd := range m.Deployments {
			if sel.Matches(labels.Set(dd.Spec.Template.Labels)) {
				if d != nil {
					t.Errorf("pdb %s: selects pods of several deployments", name)
				}
				d = dd
			}
		}
		if d == nil {
			t.Errorf("pdb %s: selector %s matches no deployment's pods", name, sel)
			continue
		}
		if (p.Spec.MinAvailable == nil) == (p.Spec.MaxUnavailable == nil) {
			t.Errorf("pdb %s: set exactly one of minAvailable and maxUnavailable", name)
		}
		if mv := p.Spec.MinAvailable; mv != nil && mv.Type == intstr.Int {
			min := replicasFloor(m, d)
			if int(mv.IntVal) >= min {
				t.Errorf("pdb %s: minAvailable %d with as few as %d replicas blocks every node drain", name, mv.IntVal, min)
			}
		}
	}
}

// TestHorizontalPodAutoscalers: the target exists and the metric can be
// computed.
func TestHorizontalPodAutoscalers(t *testing.T) {
	m := load(t)
	if _, ok := m.HPAs[gatewayName]; !ok {
		t.Errorf("no HorizontalPodAutoscaler %s", gatewayName)
	}
	for name, h := range m.HPAs {
		ref := h.Spec.ScaleTargetRef
		if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" {
			t.Errorf("hpa %s: scaleTargetRef %s/%s, want apps/v1 Deployment", name, ref.APIVersion, ref.Kind)
			continue
		}
		d, ok := m.Deployments[ref.Name]
		if !ok {
			t.Errorf("hpa %s: no deployment %s", name, ref.Name)
			continue
		}
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 2 {
			t.Errorf("hpa %s: minReplicas must be at least 2", name)
		}
		if min := h.Spec.MinReplicas; min != nil && *min > h.Spec.MaxReplicas {
			t.Errorf("hpa %s: minReplicas %d > maxReplicas %d", name, *min, h.Spec.MaxReplicas)
		}
		if r := d.Spec.Replicas; r != nil && h.Spec.MinReplicas != nil && (*r < *h.Spec.MinReplicas || *r > h.Spec.MaxReplicas) {
			t.Errorf("hpa %s: deployment replicas %d outside [%d, %d]", name, *r, *h.Spec.MinReplicas, h.Spec.MaxReplicas)
		}
		if len(h.Spec.Metrics) == 0 {
			t.Errorf("hpa %s: no metrics", name)
		}
		for _, mt := range h.Spec.Metrics {
			if mt.Resource == nil {
				continue
			}
			res := mt.Resource.Name
			if mt.Resource.Target.Type == "Utilization" {
				for _, c := range d.Spec.Template.Spec.Containers {
					if _, ok := c.Resources.Requests[res]; !ok {
						t.Errorf("hpa %s: %s utilization needs a %s request on container %s", name, res, res, c.Name)
					}
				}
			}
		}
	}
}

// TestServiceMonitors: each selects the gateway Service and scrapes a named
// port at /metrics.
func TestServiceMonitors(t *testing.T) {
	m := load(t)
	if len(m.Monitors) == 0 {
		t.Fatal("no ServiceMonitor")
	}
	for name, sm := range m.Monitors {
		sel := selector(t, "servicemonitor "+name, &sm.Spec.Selector)
		var svcs []*corev1.Service
		for _, s := range m.Services {
			if sel.Matches(labels.Set(s.Labels)) {
				svcs = append(svcs, s)
			}
		}
		if len(svcs) != 1 || svcs[0].Name != gatewayName {
			var names []string
			for _, s := range svcs {
				names = append(names, s.Name)
			}
			t.Errorf("servicemonitor %s: selects services %v, want exactly [%s]", name, names, gatewayName)
			continue
		}
		if sm.Spec.JobLabel != "" {
			if v := svcs[0].Labels[sm.Spec.JobLabel]; v != gatewayName {
				t.Errorf("servicemonitor %s: jobLabel %s gives job %q; deploy/prometheus/alerts.yml expects job=%q", name, sm.Spec.JobLabel, v, gatewayName)
			}
		}
		if len(sm.Spec.Endpoints) == 0 {
			t.Errorf("servicemonitor %s: no endpoints", name)
		}
		for _, ep := range sm.Spec.Endpoints {
			if !slices.ContainsFunc(svcs[0].Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port }) {
				t.Errorf("servicemonitor %s: port %q is not a named port of service %s", name, ep.Port, svcs[0].Name)
			}
			if ep.Path != metricsPath {
				t.Errorf("servicemonitor %s: path %q, want %s", name, ep.Path, metricsPath)
			}
			iv, err1 := time.ParseDuration(ep.Interval)
			to, err2 := time.ParseDuration(ep.ScrapeTimeout)
			if err1 != nil || err2 != nil {
				t.Errorf("servicemonitor %s: interval %q / scrapeTimeout %q: %v %v", name, ep.Interval, ep.ScrapeTimeout, err1, err2)
			} else if to > iv {
				t.Errorf("servicemonitor %s: scrapeTimeout %v exceeds interval %v", name, to, iv)
			}
		}
	}
}

// TestKustomization lists exactly the manifest files, and its image
// override names the image the Deployment uses.
func TestKustomization(t *testing.T) {
	m := load(t)
	data, err := os.ReadFile(filepath.Join(manifestDir, KustomizationFile))
	if err != nil {
		t.Fatal(err)
	}
	var k Kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		t.Fatalf("%s: %v", KustomizationFile, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("%s: %s/%s", KustomizationFile, k.APIVersion, k.Kind)
	}
	got := slices.Clone(k.Resources)
	sort.Strings(got)
	if !slices.Equal(got, m.Files) {
		t.Errorf("%s resources %v, want the manifest files %v", KustomizationFile, got, m.Files)
	}
	images := map[string]bool{}
	for _, d := range m.Deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			name, _, _ := strings.Cut(c.Image, ":")
			images[name] = true
		}
	}
	for _, img := range k.Images {
		if !images[img.Name] {
			t.Errorf("%s: images entry %q matches no container image", KustomizationFile, img.Name)
		}
	}
}

// TestImageMatchesDockerfile: the gateway runs as the Dockerfile's user and
// on the port it exposes.
func TestImageMatchesDockerfile(t *testing.T) {
	m := load(t)
	d, ok := m.Deployments[gatewayName]
	if !ok {
		t.Fatalf("no deployment %s", gatewayName)
	}
	f, err := os.Open(filepath.Join(manifestDir, "..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var user, expose string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "USER":
			user = fields[1]
		case "EXPOSE":
			expose = fields[1]
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	ps := d.Spec.Template.Spec
	if ps.SecurityContext == nil || ps.SecurityContext.RunAsUser == nil || strconv.FormatInt(*ps.SecurityContext.RunAsUser, 10) != uid {
		t.Errorf("pod runAsUser must equal the Dockerfile's USER %q", user)
	}
	c := container(t, ps, gatewayContainer)
	if p, ok := findContainerPort([]corev1.Container{c}, intstr.FromString("http")); !ok || strconv.Itoa(int(p.ContainerPort)) != strings.TrimSuffix(expose, "/tcp") {
		t.Errorf("container port http must equal the Dockerfile's EXPOSE %q", expose)
	}
}

// --- helpers -------------------------------------------------------------

func objectMeta(obj any) metav1.ObjectMeta {
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		return *a.GetObjectMeta().(*metav1.ObjectMeta)
	}
	if sm, ok := obj.(*ServiceMonitor); ok {
		return sm.ObjectMeta
	}
	panic(fmt.Sprintf("no metadata on %T", obj))
}

func checkLabels(t *testing.T, where string, ls map[string]string) {
	t.Helper()
	for k, v := range ls {
		for _, msg := range validation.IsQualifiedName(k) {
			t.Errorf("%s: key %q: %s", where, k, msg)
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			t.Errorf("%s: %s=%q: %s", where, k, v, msg)
		}
	}
}

func selector(t *testing.T, where string, ls *metav1.LabelSelector) labels.Selector {
	t.Helper()
	if ls == nil {
		t.Errorf("%s: no selector", where)
		return labels.Nothing()
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		t.Errorf("%s: selector: %v", where, err)
		return labels.Nothing()
	}
	return sel
}

func checkProtocol(t *testing.T, where string, p corev1.Protocol) {
	t.Helper()
	switch p {
	case "", corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
	default:
		t.Errorf("%s: protocol %q", where, p)
	}
}

func checkContainerPorts(t *testing.T, where string, c corev1.Container) {
	t.Helper()
	seen := map[string]bool{}
	for _, p := range c.Ports {
		if p.Name != "" {
			for _, msg := range validation.IsValidPortName(p.Name) {
				t.Errorf("%s port %q: %s", where, p.Name, msg)
			}
			if seen[p.Name] {
				t.Errorf("%s: port name %q twice", where, p.Name)
			}
			seen[p.Name] = true
		}
		for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
			t.Errorf("%s port %q: %s", where, p.Name, msg)
		}
		checkProtocol(t, where+" port "+p.Name, p.Protocol)
	}
}

func checkResources(t *testing.T, where string, r corev1.ResourceRequirements) {
	t.Helper()
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := r.Requests[res]
		lim, okLim := r.Limits[res]
		if !okReq || !okLim {
			t.Errorf("%s: %s request and limit are both required", where, res)
			continue
		}
		if req.Sign() <= 0 {
			t.Errorf("%s: %s request %s", where, res, req.String())
		}
		if req.Cmp(lim) > 0 {
			t.Errorf("%s: %s request %s exceeds limit %s", where, res, req.String(), lim.String())
		}
	}
}

func checkContainerSecurity(t *testing.T, where string, sc *corev1.SecurityContext) {
	t.Helper()
	if sc == nil {
		t.Errorf("%s: no securityContext", where)
		return
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("%s: readOnlyRootFilesystem must be true", where)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation must be false", where)
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Errorf("%s: privileged", where)
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("%s: capabilities must drop ALL and add none", where)
	}
}

func findContainerPort(cs []corev1.Container, port intstr.IntOrString) (corev1.ContainerPort, bool) {
	for _, c := range cs {
		for _, p := range c.Ports {
			if (port.Type == intstr.String && p.Name == port.StrVal) || (port.Type == intstr.Int && p.ContainerPort == port.IntVal) {
				return p, true
			}
		}
	}
	return corev1.ContainerPort{}, false
}

func checkProbePort(t *testing.T, where string, c corev1.Container, p *corev1.Probe) {
	t.Helper()
	var port intstr.IntOrString
	switch {
	case p.HTTPGet != nil:
		port = p.HTTPGet.Port
		if !strings.HasPrefix(p.HTTPGet.Path, "/") {
			t.Errorf("%s: path %q", where, p.HTTPGet.Path)
		}
	case p.TCPSocket != nil:
		port = p.TCPSocket.Port
	case p.GRPC != nil:
		port = intstr.FromInt32(p.GRPC.Port)
	default:
		t.Errorf("%s: no handler a distroless or minimal image can serve (exec needs a binary)", where)
		return
	}
	if _, ok := findContainerPort([]corev1.Container{c}, port); !ok {
		t.Errorf("%s: port %s is not a port of the container", where, port.String())
	}
}

// checkPodReferences: every ConfigMap and Secret a pod references exists,
// with the keys it names, unless the reference is optional.
func checkPodReferences(t *testing.T, m *Manifests, where string, ps corev1.PodSpec) {
	t.Helper()
	optional := func(b *bool) bool { return b != nil && *b }
	for _, v := range ps.Volumes {
		if src := v.ConfigMap; src != nil {
			cm, ok := m.ConfigMaps[src.Name]
			if !ok {
				if !optional(src.Optional) {
					t.Errorf("%s volume %s: no configmap %s", where, v.Name, src.Name)
				}
				continue
			}
			for _, it := range src.Items {
				if _, ok := cm.Data[it.Key]; !ok {
					t.Errorf("%s volume %s: configmap %s has no key %q", where, v.Name, src.Name, it.Key)
				}
			}
		}
		if src := v.Secret; src != nil {
			s, ok := m.Secrets[src.SecretName]
			if !ok {
				if !optional(src.Optional) {
					t.Errorf("%s volume %s: no secret %s", where, v.Name, src.SecretName)
				}
				continue
			}
			for _, it := range src.Items {
				if !SecretHasKey(s, it.Key) {
					t.Errorf("%s volume %s: secret %s has no key %q", where, v.Name, src.SecretName, it.Key)
				}
			}
		}
	}
	volumes := map[string]bool{}
	for _, v := range ps.Volumes {
		volumes[v.Name] = true
	}
	for _, c := range append(slices.Clone(ps.InitContainers), ps.Containers...) {
		for _, vm := range c.VolumeMounts {
			if !volumes[vm.Name] {
				t.Errorf("%s container %s: mounts unknown volume %s", where, c.Name, vm.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				s, ok := m.Secrets[r.Name]
				if !optional(r.Optional) && (!ok || !SecretHasKey(s, r.Key)) {
					t.Errorf("%s container %s env %s: secret %s key %q does not exist", where, c.Name, e.Name, r.Name, r.Key)
				}
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				cm, ok := m.ConfigMaps[r.Name]
				if !optional(r.Optional) && (!ok || cm.Data[r.Key] == "") {
					t.Errorf("%s container %s env %s: configmap %s key %q does not exist", where, c.Name, e.Name, r.Name, r.Key)
				}
			}
		}
		for _, src := range c.EnvFrom {
			if r := src.SecretRef; r != nil && !optional(r.Optional) {
				if _, ok := m.Secrets[r.Name]; !ok {
					t.Errorf("%s container %s envFrom: no secret %s", where, c.Name, r.Name)
				}
			}
			if r := src.ConfigMapRef; r != nil && !optional(r.Optional) {
				if _, ok := m.ConfigMaps[r.Name]; !ok {
					t.Errorf("%s container %s envFrom: no configmap %s", where, c.Name, r.Name)
				}
			}
		}
	}
	for _, cm := range m.ConfigMaps {
		for k := range cm.Data {
			for _, msg := range validation.IsConfigMapKey(k) {
				t.Errorf("configmap %s key %q: %s", cm.Name, k, msg)
			}
		}
	}
}

func container(t *testing.T, ps corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range ps.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %s", name)
	return corev1.Container{}
}

// configMapAt resolves a file path inside container c to the ConfigMap
// volume mounted there and the key the file comes from.
func configMapAt(t *testing.T, m *Manifests, ps corev1.PodSpec, c corev1.Container, file string) (*corev1.ConfigMap, string) {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		rel, ok := strings.CutPrefix(file, strings.TrimSuffix(vm.MountPath, "/")+"/")
		if !ok {
			continue
		}
		if vm.SubPath != "" {
			t.Errorf("volumeMount %s uses subPath: a subPath mount never sees ConfigMap updates", vm.Name)
		}
		for _, v := range ps.Volumes {
			if v.Name != vm.Name || v.ConfigMap == nil {
				continue
			}
			key := rel
			if len(v.ConfigMap.Items) > 0 {
				key = ""
				for _, it := range v.ConfigMap.Items {
					if it.Path == rel {
						key = it.Key
					}
				}
				if key == "" {
					t.Errorf("--config %s: configmap volume %s projects no item at %q", file, v.Name, rel)
					return nil, ""
				}
			}
			cm, ok := m.ConfigMaps[v.ConfigMap.Name]
			if !ok {
				t.Errorf("--config %s: no configmap %s", file, v.ConfigMap.Name)
				return nil, ""
			}
			if !vm.ReadOnly {
				t.Errorf("volumeMount %s should be readOnly", vm.Name)
			}
			return cm, key
		}
	}
	t.Errorf("--config %s is not inside a mounted configmap volume", file)
	return nil, ""
}

// replicasFloor is the fewest replicas a Deployment can run with: its HPA's
// minReplicas, or its replica count.
func replicasFloor(m *Manifests, d *appsv1.Deployment) int {
	for _, h := range m.HPAs {
		if h.Spec.ScaleTargetRef.Kind == "Deployment" && h.Spec.ScaleTargetRef.Name == d.Name && h.Spec.MinReplicas != nil {
			return int(*h.Spec.MinReplicas)
		}
	}
	if d.Spec.Replicas != nil {
		return int(*d.Spec.Replicas)
	}
	return 1
}
