package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/policy"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// policyCases is a cases file of "hooks-gateway policy test".
type policyCases struct {
	Cases []policyCase `yaml:"cases"`
}

// policyCase emits one context and states the combined verdict expected.
type policyCase struct {
	Name  string `yaml:"name"`
	Point string `yaml:"point"`
	// Route is what route selection sees; empty fields are absent.
	Route struct {
		AgentID string `yaml:"agent_id"`
		Tenant  string `yaml:"tenant"`
		Model   string `yaml:"model"`
		APIKey  string `yaml:"api_key"`
	} `yaml:"route"`
	// Context is merged over a valid generated context for Point:
	// mappings member by member, anything else replaced.
	Context map[string]any `yaml:"context"`
	Expect  struct {
		Decision string  `yaml:"decision"`
		Reason   *string `yaml:"reason"`
		// TransformValue, when present, is the combined verdict's
		// transform value (null included).
		TransformValue yaml.Node `yaml:"transform_value"`
		// Mode, when set, is the mode the point ran in (enforce or
		// evaluate_only), so a staged rollout can be tested.
		Mode string `yaml:"mode"`
		// Warnings, when present, are the reasons of the combined
		// verdict's warnings, in order ([] asserts there are none).
		Warnings *[]string `yaml:"warnings"`
	} `yaml:"expect"`
}

// builderOwned are the members the case runner's builder sets; a case's
// context cannot override them (agent.id comes from route.agent_id).
var builderOwned = [...]string{"spec", "interception_point", "timestamp", "sequence", "agent", "session", "target"}

func runPolicyTest(path, casesPath string, stdout, stderr io.Writer) int {
	doc, code := loadPolicy(path, stderr)
	if doc == nil {
		return code
	}
	cases, err := readCases(casesPath)
	if err != nil {
		fmt.Fprintf(stderr, "hooks-gateway policy test: %v\n", err)
		return exitUsage
	}
	pol, err := casePolicy(doc)
	if err != nil {
		fmt.Fprintf(stderr, "hooks-gateway policy test: %v\n", err)
		return exitProblems
	}
	failed := 0
	for i, c := range cases {
		name := c.Name
		if name == "" {
			name = fmt.Sprintf("cases[%d]", i)
		}
		route, problem := runCase(pol, c)
		if route == "" {
			route = "default chain"
		} else {
			route = "route " + route
		}
		if problem != "" {
			failed++
			fmt.Fprintf(stdout, "FAIL  %s (%s, %s): %s\n", name, c.Point, route, problem)
			continue
		}
		fmt.Fprintf(stdout, "PASS  %s (%s, %s)\n", name, c.Point, route)
	}
	fmt.Fprintf(stdout, "%d cases: %d passed, %d failed (policy %s)\n", len(cases), len(cases)-failed, failed, doc.Version)
	if failed > 0 {
		return exitProblems
	}
	return exitClean
}

func readCases(path string) ([]policyCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f policyCases
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Cases) == 0 {
		return nil, fmt.Errorf("%s: no cases", path)
	}
	return f.Cases, nil
}

// casePolicy compiles doc as the gateway would, in front of the built-in
// mock model, with a client key for every key a route names (the values
// never matter: cases name keys by name).
func casePolicy(doc *policy.Document) (*proxy.Policy, error) {
	cfg, err := config.Parse("policy test", []byte("upstreams: [{name: mock, type: mock}]\nrecords: {sinks: []}\n"))
	if err != nil {
		return nil, err
	}
	for _, r := range doc.Routes {
		if r.Match.APIKey != "" {
			cfg.Auth.APIKeys = append(cfg.Auth.APIKeys, config.APIKey{Name: r.Match.APIKey, Hash: sha256.Sum256([]byte(r.Match.APIKey))})
		}
	}
	return proxy.CompilePolicy(cfg, doc, nil, offlineEnv())
}

// runCase emits the case's context through the chain its route selects and
// returns the route's name and what differs from the expectation ("" when
// nothing does).
func runCase(pol *proxy.Policy, c policyCase) (string, string) {
	point := enforcement.Point(c.Point)
	if !point.Valid() {
		return "", fmt.Sprintf("point %q is not an interception point", c.Point)
	}
	route, em := pol.RouteFor(policy.Request{AgentID: c.Route.AgentID, Tenant: c.Route.Tenant, Model: c.Route.Model, APIKey: c.Route.APIKey})
	fields := caseFields(point, c.Route.Model)
	for k, v := range c.Context {
		if isBuilderOwned(k) {
			return route, fmt.Sprintf("context.%s is set by the runner and cannot be given", k)
		}
		fields[k] = merge(fields[k], v)
	}
	if c.Route.Tenant != "" {
		fields["tenant"] = merge(fields["tenant"], map[string]any{"id": c.Route.Tenant})
	}
	agent := c.Route.AgentID
	if agent == "" {
		agent = "policy-test"
	}
	b := &enforcement.Builder{
		Agent:     enforcement.Agent{ID: agent, Framework: "hooks-gateway"},
		SessionID: "policy-test",
		Sequence:  &enforcement.Counter{},
	}
	ctx := context.Background()
	ec, err := b.Build(ctx, point, fields)
	if err != nil {
		return route, fmt.Sprintf("the context is not valid: %v", err)
	}
	out, err := em.EmitUnchecked(ctx, ec)
	if err != nil {
		return route, fmt.Sprintf("the emission failed: %v", err)
	}
	if problem := compare(c, out.Verdict); problem != "" {
		return route, problem
	}
	if c.Expect.Mode != "" && string(out.Mode) != c.Expect.Mode {
		return route, fmt.Sprintf("ran in mode %s, want %s", out.Mode, c.Expect.Mode)
	}
	return route, ""
}

func compare(c policyCase, v enforcement.Verdict) string {
	got := string(v.Decision)
	if v.Reason != "" {
		got += " " + v.Reason
	}
	if c.Expect.Decision == "" {
		return "expect.decision is required"
	}
	if string(v.Decision) != c.Expect.Decision {
		return fmt.Sprintf("got %s, want %s", got, c.Expect.Decision)
	}
	if c.Expect.Reason != nil && v.Reason != *c.Expect.Reason {
		return fmt.Sprintf("got %s, want reason %q", got, *c.Expect.Reason)
	}
	if c.Expect.Warnings != nil {
		reasons := make([]string, 0, len(v.Warnings))
		for _, w := range v.Warnings {
			reasons = append(reasons, w.Reason)
		}
		if !slices.Equal(reasons, *c.Expect.Warnings) {
			return fmt.Sprintf("got warnings %q, want %q", reasons, *c.Expect.Warnings)
		}
	}
	if c.Expect.TransformValue.Kind != 0 {
		if v.Transform == nil {
			return fmt.Sprintf("got %s without a transform, want one", got)
		}
		var want any
		if err := c.Expect.TransformValue.Decode(&want); err != nil {
			return fmt.Sprintf("expect.transform_value: %v", err)
		}
		wantJSON, err := jsonvalue.FromGo(want)
		if err != nil {
			return fmt.Sprintf("expect.transform_value: %v", err)
		}
		if !jsonvalue.Equal(v.Transform.Value, wantJSON) {
			gotText, _ := json.Marshal(v.Transform.Value)
			wantText, _ := json.Marshal(wantJSON)
			return fmt.Sprintf("transform value %s, want %s", gotText, wantText)
		}
	}
	return ""
}

func isBuilderOwned(k string) bool {
	for _, o := range builderOwned {
		if k == o {
			return true
		}
	}
	return false
}

// caseFields is a small valid context for point, for cases to amend.
func caseFields(point enforcement.Point, model string) map[string]any {
	if model == "" {
		model = "model"
	}
	call := enforcement.ToolCall{ID: "call_0", Name: "tool", Args: map[string]any{}}
	switch point {
	case enforcement.AgentStartup:
		return enforcement.StartupFields(nil)
	case enforcement.Input:
		return enforcement.InputFields("", "user")
	case enforcement.PreModelCall:
		return enforcement.PreModelFields(model, []any{map[string]any{"role": "user", "content": ""}})
	case enforcement.PostModelCall:
		return enforcement.PostModelFields(model, enforcement.ModelResponse{Content: "", FinishReason: "stop"})
	case enforcement.PreToolCall:
		return enforcement.PreToolFields(call)
	case enforcement.PostToolCall:
		return enforcement.PostToolFields(call, "", false)
	case enforcement.Output:
		return enforcement.OutputFields("")
	}
	return enforcement.ShutdownFields(enforcement.ShutdownCompleted)
}

// merge lays over onto base: mappings member by member, anything else
// replaced.
func merge(base, over any) any {
	bm, ok1 := base.(map[string]any)
	om, ok2 := over.(map[string]any)
	if !ok1 || !ok2 {
		return over
	}
	out := make(map[string]any, len(bm)+len(om))
	for k, v := range bm {
		out[k] = v
	}
	for k, v := range om {
		out[k] = merge(out[k], v)
	}
	return out
}
