package policy

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
)

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const baseFile = `interceptors:
  - name: deny-secret
    type: regex
    action: deny
    reason: policy:secret
    patterns: ['secret']
`

const routesFile = `enforcement:
  mode: evaluate_only
  point_modes: {output: enforce}
interceptors:
  - name: pass
    type: allow
routes:
  - name: payments
    match: {agent_id: "pay-*", tenant: acme, model: "gpt-4o*", api_key: PAYMENTS_KEY}
    interceptors: [pass, deny-secret]
    mode: enforce
    point_modes: {pre_tool_call: evaluate_only}
    streaming: incremental
`

func TestLoadDirectoryMergesFilesInLexicalOrder(t *testing.T) {
	dir := t.TempDir()
	// Written out of order: the name decides.
	b := write(t, dir, "20-routes.yml", routesFile)
	a := write(t, dir, "10-base.yaml", baseFile)
	write(t, dir, "README.md", "not a policy")
	write(t, dir, ".hidden.yaml", "not: [valid")
	doc, err := Load(dir, config.DefaultEnforcement())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(doc.Sources, []string{a, b}) {
		t.Errorf("sources = %v", doc.Sources)
	}
	var names []string
	for _, ic := range doc.Interceptors {
		names = append(names, ic.Name)
	}
	if !reflect.DeepEqual(names, []string{"deny-secret", "pass"}) {
		t.Errorf("interceptors = %v, want the files' lists appended in file order", names)
	}
	if doc.Enforcement.Mode != "evaluate_only" || doc.Enforcement.PointModes["output"] != "enforce" {
		t.Errorf("enforcement = %+v, want the document's mode over the default", doc.Enforcement)
	}
	if doc.Enforcement.Composition.Profile != config.DefaultEnforcement().Composition.Profile {
		t.Errorf("composition = %+v, want the base's where the document is silent", doc.Enforcement.Composition)
	}
	if len(doc.Routes) != 1 {
		t.Fatalf("routes = %+v", doc.Routes)
	}
	r := doc.Routes[0]
	if r.File != b || r.Line != 8 || r.Match != (Match{AgentID: "pay-*", Tenant: "acme", Model: "gpt-4o*", APIKey: "PAYMENTS_KEY"}) {
		t.Errorf("route = %+v", r)
	}
	e := doc.EngineEnforcement(r)
	if e.Mode != "enforce" || e.PointModes["pre_tool_call"] != "evaluate_only" || e.PointModes["output"] != "enforce" {
		t.Errorf("route enforcement = %+v, want the route's modes over the document's", e)
	}
	if r.Streaming != "incremental" {
		t.Errorf("route streaming = %q, want incremental", r.Streaming)
	}
	if !reflect.DeepEqual(r.Interceptors, []string{"pass", "deny-secret"}) {
		t.Errorf("route interceptors = %v, want the route's order", r.Interceptors)
	}
	if !strings.HasPrefix(doc.Version, "sha256:") || len(doc.Version) != len("sha256:")+16 {
		t.Errorf("version = %q", doc.Version)
	}
}

func TestVersionFollowsContentAndNamesOnly(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	write(t, d1, "a.yaml", baseFile)
	write(t, d2, "a.yaml", baseFile)
	v1, err := Version(d1)
	if err != nil {
		t.Fatal(err)
	}
	if v2, _ := Version(d2); v2 != v1 {
		t.Errorf("the same files in another directory: %s vs %s", v2, v1)
	}
	doc, err := Load(d1, config.DefaultEnforcement())
	if err != nil || doc.Version != v1 {
		t.Fatalf("Load version %v (%v), Version %s", doc, err, v1)
	}
	write(t, d2, "a.yaml", baseFile+"  - name: more\n    type: allow\n")
	if v2, _ := Version(d2); v2 == v1 {
		t.Error("a content change kept the version")
	}
	d3 := t.TempDir()
	write(t, d3, "b.yaml", baseFile)
	if v3, _ := Version(d3); v3 == v1 {
		t.Error("a renamed file kept the version")
	}
}

func TestLoadConfigMapLayout(t *testing.T) {
	// Kubernetes mounts a ConfigMap as timestamped directories behind a
	// ..data symlink, with each key a symlink through ..data.
	dir := t.TempDir()
	data := filepath.Join(dir, "..2026_01_01_00_00_00.000000001")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, data, "policy.yaml", baseFile)
	if err := os.Symlink(filepath.Base(data), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..data", "policy.yaml"), filepath.Join(dir, "policy.yaml")); err != nil {
		t.Fatal(err)
	}
	doc, err := Load(dir, config.DefaultEnforcement())
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Sources) != 1 || filepath.Base(doc.Sources[0]) != "policy.yaml" || len(doc.Interceptors) != 1 {
		t.Errorf("sources %v, interceptors %d", doc.Sources, len(doc.Interceptors))
	}
}

func TestLoadProblemsCarryFileAndLine(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.yaml", baseFile+`enforcement:
  mode: strict
`)
	b := write(t, dir, "b.yaml", `interceptors:
  - name: deny-secret
    type: allow
  - name: Bad Name
    type: allow
enforcement:
  mode: enforce
routes:
  - name: r1
    match: {model: "gpt-[", api_key: "not a var", colour: red}
    interceptors: [deny-secret, missing, deny-secret]
    point_modes: {nowhere: enforce}
  - name: r1
    interceptors: []
    streaming: eager
`)
	_, err := Load(dir, config.DefaultEnforcement())
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("Load = %v, want a *config.Error", err)
	}
	want := []string{
		a + `:8: enforcement.mode: must be one of enforce, evaluate_only (got "strict")`,
		b + `:2: interceptors[0].name: duplicate interceptor name "deny-secret" (also ` + a + `:2)`,
		b + `:4: interceptors[1].name: must match ^[a-z0-9][a-z0-9_.-]*$ (got "Bad Name")`,
		b + `:6: enforcement: is already set in ` + a + `:7 (at most one policy file may set it)`,
		b + `:10: routes[0].match.colour: unknown key (expected one of agent_id, api_key, model, tenant)`,
		b + `:10: routes[0].match.model: invalid glob "gpt-[": syntax error in pattern`,
		b + `:10: routes[0].match.api_key: must be the name of a client key (auth.api_keys[].name, which defaults to its key_env) (got "not a var")`,
		b + `:11: routes[0].interceptors[1]: no interceptor is named "missing" in the policy`,
		b + `:11: routes[0].interceptors[2]: "deny-secret" is listed twice`,
		b + `:12: routes[0].point_modes.nowhere: unknown interception point "nowhere" (one of agent_startup, input, pre_model_call, post_model_call, pre_tool_call, post_tool_call, output, agent_shutdown)`,
		b + `:13: routes[1].name: duplicate route name "r1" (also routes[0])`,
		b + `:14: routes[1].interceptors: must list at least one interceptor of the policy`,
		b + `:15: routes[1].streaming: must be buffered or incremental (got "eager")`,
	}
	var got []string
	for _, p := range cerr.Problems {
		got = append(got, p.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestLoadUnreadable(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "absent.yaml"), config.DefaultEnforcement()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	empty := t.TempDir()
	write(t, empty, "notes.txt", "x")
	if _, err := Load(empty, config.DefaultEnforcement()); err == nil || !strings.Contains(err.Error(), "no *.yaml or *.yml files") {
		t.Errorf("directory without policy files: %v", err)
	}
	bad := write(t, t.TempDir(), "p.yaml", "interceptors: [\n")
	var cerr *config.Error
	if _, err := Load(bad, config.DefaultEnforcement()); !errors.As(err, &cerr) || cerr.Problems[0].File != bad {
		t.Errorf("invalid YAML: %v", err)
	}
}

func TestInlineVersion(t *testing.T) {
	parse := func(src string) *config.Config {
		t.Helper()
		c, err := config.Parse("gateway.yaml", []byte("upstreams: [{name: mock, type: mock}]\n"+src))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	one := parse("interceptors: [{name: a, type: allow}]\n")
	d1, err := FromConfig(one)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d1.Sources, []string{"gateway.yaml"}) || len(d1.Interceptors) != 1 || len(d1.Routes) != 0 {
		t.Errorf("inline document = %+v", d1)
	}
	same, _ := FromConfig(parse("# a comment changes nothing\ninterceptors: [{name: a, type: allow}]\n"))
	if same.Version != d1.Version {
		t.Errorf("same policy, versions %s and %s", same.Version, d1.Version)
	}
	for _, src := range []string{
		"interceptors: [{name: b, type: allow}]\n",
		"interceptors: [{name: a, type: allow}]\nenforcement: {mode: evaluate_only}\n",
		"interceptors: [{name: a, type: allow}]\nenforcement: {point_modes: {input: evaluate_only}}\n",
	} {
		if d, _ := FromConfig(parse(src)); d.Version == d1.Version {
			t.Errorf("%q kept the version %s", src, d.Version)
		}
	}
}

func TestMatch(t *testing.T) {
	m := Match{AgentID: "pay-*", Tenant: "acme", Model: "gpt-4o*", APIKey: "PAYMENTS_KEY"}
	full := Request{AgentID: "pay-1", Tenant: "acme", Model: "gpt-4o-mini", APIKey: "PAYMENTS_KEY"}
	if !m.Matches(full) {
		t.Error("every condition holds, no match")
	}
	for name, r := range map[string]Request{
		"agent":  {AgentID: "ops-1", Tenant: "acme", Model: "gpt-4o", APIKey: "PAYMENTS_KEY"},
		"tenant": {AgentID: "pay-1", Tenant: "other", Model: "gpt-4o", APIKey: "PAYMENTS_KEY"},
		"model":  {AgentID: "pay-1", Tenant: "acme", Model: "o3", APIKey: "PAYMENTS_KEY"},
		"key":    {AgentID: "pay-1", Tenant: "acme", Model: "gpt-4o", APIKey: "OTHER_KEY"},
		"absent": {AgentID: "pay-1", Model: "gpt-4o", APIKey: "PAYMENTS_KEY"},
	} {
		if m.Matches(r) {
			t.Errorf("%s differs, still a match", name)
		}
	}
	if !(Match{}).Matches(Request{}) {
		t.Error("an empty match is a catch-all")
	}
}

// TestLoadEmptyDocumentIsAnError: an empty policy document (an empty or
// truncated file, whitespace or comments only, a bare "---", a YAML null)
// fails the load naming the file, alone or as one file of a directory, so
// a truncated file never silently drops its part of the chain.
func TestLoadEmptyDocumentIsAnError(t *testing.T) {
	for name, text := range map[string]string{
		"empty":         "",
		"whitespace":    " \n   \n\n",
		"comments only": "# interceptors: moved elsewhere\n",
		"document mark": "---\n",
		"null":          "null\n",
		"tilde":         "--- ~\n",
	} {
		t.Run(name, func(t *testing.T) {
			single := write(t, t.TempDir(), "policy.yaml", text)
			wantEmpty(t, single, single)

			dir := t.TempDir()
			write(t, dir, "10-base.yaml", baseFile)
			truncated := write(t, dir, "20-more.yaml", text)
			wantEmpty(t, dir, truncated)
		})
	}
}

func wantEmpty(t *testing.T, path, file string) {
	t.Helper()
	doc, err := Load(path, config.DefaultEnforcement())
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("Load(%s) = %+v, %v; want a *config.Error", path, doc, err)
	}
	want := file + ": the policy file is empty (no YAML mapping); it must set interceptors, enforcement or routes"
	if len(cerr.Problems) != 1 || cerr.Problems[0].String() != want {
		t.Errorf("problems = %v\nwant [%s]", cerr.Problems, want)
	}
}
