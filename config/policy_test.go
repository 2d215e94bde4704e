package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestPolicySection(t *testing.T) {
	clearEnv(t)
	c := mustParse(t, mockUpstream+"policy:\n  path: /etc/hooks-gateway/policy\n")
	if c.Policy.Path != "/etc/hooks-gateway/policy" || !c.Policy.Watch {
		t.Errorf("policy = %+v, want the path with watch on by default", c.Policy)
	}
	c = mustParse(t, mockUpstream+"policy:\n  path: p.yaml\n  watch: false\n")
	if c.Policy.Watch {
		t.Error("watch: false was not kept")
	}
	if len(c.Warnings()) != 0 {
		// The inline policy is empty, but the policy files hold one.
		t.Errorf("warnings with policy.path set: %v", c.Warnings())
	}
	if !mustParse(t, mockUpstream).Records.PolicyVersion {
		t.Error("records.policy_version is not on by default")
	}
	if mustParse(t, mockUpstream+"records:\n  policy_version: false\n").Records.PolicyVersion {
		t.Error("records.policy_version: false was not kept")
	}
}

func TestPolicySectionProblems(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"inline interceptors beside a policy path", mockUpstream + "policy:\n  path: p.yaml\ninterceptors:\n  - name: a\n    type: allow\n", []string{
			"gateway.yaml:6: interceptors: must be left out when policy.path is set: the policy files hold the interceptors",
		}},
		{"watch without a path", mockUpstream + "policy:\n  watch: true\n", []string{
			"gateway.yaml:5: policy.watch: is only used with policy.path",
		}},
		{"shapes", mockUpstream + "policy:\n  path: [a]\n  watch: often\n  reload: 1s\n", []string{
			"gateway.yaml:5: policy.path: must be a string",
			`gateway.yaml:6: policy.watch: must be true or false (got "often")`,
			"gateway.yaml:7: policy.reload: unknown key (expected one of path, watch)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := problemsOf(t, tt.src); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}
