package config

import (
	"reflect"
	"slices"
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
}

// Records are spec-valid lines by default, attributed by policy markers;
// the deprecated records.policy_version maps onto the markers with a
// warning, and must not contradict records.policy_markers.
func TestRecordsFormatAndMarkers(t *testing.T) {
	clearEnv(t)
	c := mustParse(t, mockUpstream)
	if c.Records.Format != RecordsFormatRecord || !c.Records.PolicyMarkers {
		t.Errorf("default records: format %q markers %v, want record with markers", c.Records.Format, c.Records.PolicyMarkers)
	}
	for _, w := range c.Warnings() {
		if strings.Contains(w, "records.") {
			t.Errorf("default config warns: %s", w)
		}
	}
	if c := mustParse(t, mockUpstream+"records:\n  format: envelope\n  policy_markers: false\n"); c.Records.Format != RecordsFormatEnvelope || c.Records.PolicyMarkers {
		t.Errorf("envelope without markers not kept: %+v", c.Records)
	}
	for src, markers := range map[string]bool{"true": true, "false": false} {
		c := mustParse(t, mockUpstream+"records:\n  policy_version: "+src+"\n")
		if c.Records.PolicyMarkers != markers {
			t.Errorf("policy_version: %s gave policy_markers %v", src, c.Records.PolicyMarkers)
		}
		if !slices.ContainsFunc(c.Warnings(), func(w string) bool { return strings.Contains(w, "records.policy_version: is deprecated") }) {
			t.Errorf("policy_version: %s without a deprecation warning: %v", src, c.Warnings())
		}
	}
	for _, src := range []string{
		"records:\n  format: ndjson\n",
		"records:\n  policy_version: true\n  policy_markers: false\n",
	} {
		if _, err := Parse("gateway.yaml", []byte(mockUpstream+src)); err == nil {
			t.Errorf("%q was accepted", src)
		}
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
