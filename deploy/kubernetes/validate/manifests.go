package validate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// ServiceMonitor is the subset of the Prometheus Operator's
// monitoring.coreos.com/v1 ServiceMonitor that deploy/kubernetes uses. The
// operator's Go types would pull its whole module in; this subset keeps the
// check strict instead: a field outside it is an unknown field, so using a
// new field means adding it here, deliberately.
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ServiceMonitorSpec `json:"spec"`
}

// ServiceMonitorSpec is the subset of the operator's ServiceMonitorSpec in use.
type ServiceMonitorSpec struct {
	JobLabel          string                `json:"jobLabel,omitempty"`
	Selector          metav1.LabelSelector  `json:"selector"`
	NamespaceSelector *NamespaceSelector    `json:"namespaceSelector,omitempty"`
	Endpoints         []ServiceMonitorPoint `json:"endpoints"`
}

// NamespaceSelector is the operator's NamespaceSelector.
type NamespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}

// ServiceMonitorPoint is the subset of the operator's Endpoint in use.
type ServiceMonitorPoint struct {
	Port          string `json:"port,omitempty"`
	Path          string `json:"path,omitempty"`
	Scheme        string `json:"scheme,omitempty"`
	Interval      string `json:"interval,omitempty"`
	ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
}

// Kustomization is the subset of kustomize's Kustomization in use.
type Kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images,omitempty"`
}

// Object is one decoded manifest document.
type Object struct {
	File  string // base name
	Index int    // document index in the file, from 0
	GVK   string // apiVersion/kind
	Obj   any    // a pointer to the typed object
}

func (o Object) String() string { return fmt.Sprintf("%s#%d (%s)", o.File, o.Index, o.GVK) }

// Manifests is every object in a directory, by kind and name.
type Manifests struct {
	Objects     []Object
	Files       []string // manifest files (base names), sorted; kustomization.yaml excluded
	Deployments map[string]*appsv1.Deployment
	Services    map[string]*corev1.Service
	ConfigMaps  map[string]*corev1.ConfigMap
	Secrets     map[string]*corev1.Secret
	PDBs        map[string]*policyv1.PodDisruptionBudget
	HPAs        map[string]*autoscalingv2.HorizontalPodAutoscaler
	Monitors    map[string]*ServiceMonitor
}

// KustomizationFile is excluded from the manifests and decoded on its own.
const KustomizationFile = "kustomization.yaml"

// newObject returns a fresh typed object for a manifest's apiVersion/kind.
func newObject(gvk string) (any, bool) {
	switch gvk {
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}, true
	case "v1/Service":
		return &corev1.Service{}, true
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}, true
	case "v1/Secret":
		return &corev1.Secret{}, true
	case "policy/v1/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, true
	case "autoscaling/v2/HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}, true
	case "monitoring.coreos.com/v1/ServiceMonitor":
		return &ServiceMonitor{}, true
	}
	return nil, false
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// SplitDocuments splits a multi-document YAML file, dropping documents
// that hold only comments or whitespace.
func SplitDocuments(data []byte) [][]byte {
	var docs [][]byte
	for _, d := range docSeparator.Split(string(data), -1) {
		j, err := yaml.YAMLToJSON([]byte(d))
		if err == nil && (bytes.Equal(j, []byte("null")) || len(bytes.TrimSpace(j)) == 0) {
			continue
		}
		docs = append(docs, []byte(d))
	}
	return docs
}

// DecodeStrict decodes one manifest document into its typed object,
// rejecting unknown fields, duplicate keys and unsupported kinds.
func DecodeStrict(doc []byte) (gvk string, obj any, err error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return "", nil, err
	}
	if tm.APIVersion == "" || tm.Kind == "" {
		return "", nil, fmt.Errorf("apiVersion and kind are required")
	}
	gvk = tm.APIVersion + "/" + tm.Kind
	obj, ok := newObject(gvk)
	if !ok {
		return gvk, nil, fmt.Errorf("unsupported apiVersion/kind %s (add it to newObject with its typed API object)", gvk)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return gvk, nil, err
	}
	return gvk, obj, nil
}

// Load decodes every *.yaml file in dir except kustomization.yaml. It fails
// on the first document that does not decode strictly and on duplicate
// kind/name pairs.
func Load(dir string) (*Manifests, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	m := &Manifests{
		Deployments: map[string]*appsv1.Deployment{},
		Services:    map[string]*corev1.Service{},
		ConfigMaps:  map[string]*corev1.ConfigMap{},
		Secrets:     map[string]*corev1.Secret{},
		PDBs:        map[string]*policyv1.PodDisruptionBudget{},
		HPAs:        map[string]*autoscalingv2.HorizontalPodAutoscaler{},
		Monitors:    map[string]*ServiceMonitor{},
	}
	sort.Strings(paths)
	for _, p := range paths {
		base := filepath.Base(p)
		if base == KustomizationFile {
			continue
		}
		m.Files = append(m.Files, base)
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		for i, doc := range SplitDocuments(data) {
			gvk, obj, err := DecodeStrict(doc)
			if err != nil {
				return nil, fmt.Errorf("%s#%d: %w", base, i, err)
			}
			o := Object{File: base, Index: i, GVK: gvk, Obj: obj}
			if err := m.add(o); err != nil {
				return nil, fmt.Errorf("%s: %w", o, err)
			}
			m.Objects = append(m.Objects, o)
		}
	}
	return m, nil
}

func (m *Manifests) add(o Object) error {
	put := func(name string, exists bool) error {
		if name == "" {
			return fmt.Errorf("metadata.name is required")
		}
		if exists {
			return fmt.Errorf("a second %s named %q", o.GVK, name)
		}
		return nil
	}
	var err error
	switch v := o.Obj.(type) {
	case *appsv1.Deployment:
		_, dup := m.Deployments[v.Name]
		if err = put(v.Name, dup); err == nil {
			m.Deployments[v.Name] = v
		}
	case *corev1.Service:
		_, dup := m.Services[v.Name]
		if err = put(v.Name, dup); err == nil {
			m.Services[v.Name] = v
		}
	case *corev1.ConfigMap:
		_, dup := m.ConfigMaps[v.Name]
		if err = put(v.Name, dup); err == nil {
			m.ConfigMaps[v.Name] = v
		}
	case *corev1.Secret:
		_, dup := m.Secrets[v.Name]
		if err = put(v.Name, dup); err == nil {
			m.Secrets[v.Name] = v
		}
	case *policyv1.PodDisruptionBudget:
		_, dup := m.PDBs[v.Name]
		if err = put(v.Name, dup); err == nil {
			m.PDBs[v.Name] = v
		}
	case *autoscalingv2.HorizontalPodAutoscaler:
		_, dup := m.HPAs[v.Name]
		if err = put(v.Name, dup); err == nil {
			m.HPAs[v.Name] = v
		}
	case *ServiceMonitor:
		_, dup := m.Monitors[v.Name]
		if err = put(v.Name, dup); err == nil {
			m.Monitors[v.Name] = v
		}
	default:
		err = fmt.Errorf("no index for %T", o.Obj)
	}
	return err
}

// SecretHasKey reports whether the Secret holds key in data or stringData.
func SecretHasKey(s *corev1.Secret, key string) bool {
	if _, ok := s.Data[key]; ok {
		return true
	}
	_, ok := s.StringData[key]
	return ok
}

// Flag returns the value following name in args ("--name value" or
// "--name=value"), and whether it was present.
func Flag(args []string, name string) (string, bool) {
	for i, a := range args {
		for _, prefix := range []string{"-" + name, "--" + name} {
			if a == prefix && i+1 < len(args) {
				return args[i+1], true
			}
			if v, ok := strings.CutPrefix(a, prefix+"="); ok {
				return v, true
			}
		}
	}
	return "", false
}
