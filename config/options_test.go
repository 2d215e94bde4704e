package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

type testOptions struct {
	Patterns []string          `yaml:"patterns"`
	Action   string            `yaml:"action"`
	Limit    int8              `yaml:"limit"`
	Ratio    float64           `yaml:"ratio"`
	Strict   bool              `yaml:"strict"`
	Every    time.Duration     `yaml:"every"`
	Labels   map[string]string `yaml:"labels"`
	Optional *string           `yaml:"optional"`
	Nested   struct {
		Depth int `yaml:"depth"`
	} `yaml:"nested"`
	Raw    yaml.Node `yaml:"raw"`
	Hidden string    `yaml:"-"`
}

// interceptorOf parses a config whose only interceptor is given in src.
func interceptorOf(t *testing.T, src string) Interceptor {
	t.Helper()
	c := mustParse(t, mockUpstream+"interceptors:\n"+src)
	return c.Interceptors[0]
}

func TestDecodeOptions(t *testing.T) {
	clearEnv(t)
	ic := interceptorOf(t, `  - name: r
    type: custom
    points: [input]
    patterns: [a, b]
    action: deny
    limit: 7
    ratio: 0.5
    strict: true
    every: 90s
    labels: {team: core}
    optional: ""
    nested:
      depth: 3
    raw: {any: [thing]}
`)
	var got testOptions
	if err := ic.DecodeOptions(&got); err != nil {
		t.Fatalf("DecodeOptions: %v", err)
	}
	if !reflect.DeepEqual(got.Patterns, []string{"a", "b"}) || got.Action != "deny" || got.Limit != 7 || got.Ratio != 0.5 ||
		!got.Strict || got.Every != 90*time.Second || got.Labels["team"] != "core" || got.Optional == nil || *got.Optional != "" ||
		got.Nested.Depth != 3 || got.Raw.Kind != yaml.MappingNode || got.Raw.Line != 18 {
		t.Errorf("DecodeOptions = %+v", got)
	}
}

func TestDecodeOptionsProblems(t *testing.T) {
	clearEnv(t)
	ic := interceptorOf(t, `  - name: r
    type: custom
    patterns: a
    actoin: deny
    limit: 300
    ratio: lots
    strict: "true"
    every: 10
    nested:
      depht: 3
    Hidden: x
`)
	var got testOptions
	err := ic.DecodeOptions(&got)
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("DecodeOptions = %v, want *Error", err)
	}
	known := "(expected one of action, every, labels, limit, nested, optional, patterns, ratio, raw, strict)"
	want := []string{
		"gateway.yaml:7: interceptors[0].patterns: must be a list",
		"gateway.yaml:8: interceptors[0].actoin: unknown key " + known,
		"gateway.yaml:9: interceptors[0].limit: 300 is out of range",
		`gateway.yaml:10: interceptors[0].ratio: must be a number (got "lots")`,
		`gateway.yaml:11: interceptors[0].strict: must be true or false (got "true")`,
		`gateway.yaml:12: interceptors[0].every: must be a duration such as 30s or 5m (got "10")`,
		"gateway.yaml:14: interceptors[0].nested.depht: unknown key (expected one of depth)",
		"gateway.yaml:15: interceptors[0].Hidden: unknown key " + known,
	}
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	if err := ic.DecodeOptions(got); err == nil || errors.As(err, &cerr) {
		t.Errorf("DecodeOptions(non-pointer) = %v, want a plain error", err)
	}
	var bad struct {
		C chan int `yaml:"patterns"`
	}
	if err := ic.DecodeOptions(&bad); !errors.Is(err, errUnsupported) {
		t.Errorf("DecodeOptions(chan) = %v, want errUnsupported", err)
	}
	var none struct{}
	if err := interceptorOf(t, "  - {name: a, type: allow, extra: 1}\n").DecodeOptions(&none); err == nil ||
		err.Error() != "gateway.yaml:5: interceptors[0].extra: unknown key (this type takes no options)" {
		t.Errorf("DecodeOptions(no options) = %v", err)
	}
}

func TestProblemf(t *testing.T) {
	clearEnv(t)
	ic := interceptorOf(t, `  - name: r
    type: custom
    patterns:
      - a
      - 'b('
    action: deny
`)
	for path, want := range map[string]string{
		"":            "gateway.yaml:5: interceptors[0]: msg",
		"type":        "gateway.yaml:6: interceptors[0].type: msg",
		"patterns":    "gateway.yaml:7: interceptors[0].patterns: msg",
		"patterns[1]": "gateway.yaml:9: interceptors[0].patterns[1]: msg",
		"patterns[7]": "gateway.yaml:7: interceptors[0].patterns[7]: msg",
		"missing.key": "gateway.yaml:5: interceptors[0].missing.key: msg",
	} {
		if got := ic.Problemf(path, "msg").String(); got != want {
			t.Errorf("Problemf(%q) = %s, want %s", path, got, want)
		}
	}
	// A hand-built interceptor has no mapping; problems still name it.
	hand := Interceptor{Name: "x", Type: "allow", Index: 3}
	if got := hand.Problemf("type", "msg").String(); got != "interceptors[3].type: msg" {
		t.Errorf("Problemf on a hand-built interceptor = %s", got)
	}
	if err := hand.DecodeOptions(&struct{}{}); err != nil {
		t.Errorf("DecodeOptions on a hand-built interceptor = %v", err)
	}
}
