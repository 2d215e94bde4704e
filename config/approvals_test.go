package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestApprovalsDefaultNoResolver(t *testing.T) {
	clearEnv(t)
	c := mustParse(t, mockUpstream)
	if strings.Contains(c.Summary(), "approvals") {
		t.Errorf("summary mentions approvals without a resolver: %s", c.Summary())
	}
	if c.Approvals.Resolver != "" || c.Approvals.Timeout != DefaultApprovalTimeout || c.Approvals.Webhook.Timeout != DefaultApprovalWebhookTimeout {
		t.Errorf("approvals = %+v, want no resolver and the default timeouts", c.Approvals)
	}
}

func TestApprovalsParse(t *testing.T) {
	clearEnv(t)
	t.Setenv("APPROVALS_TOKEN_T", "tok-approvals")
	c := mustParse(t, mockUpstream+`approvals:
  resolver: webhook
  timeout: 45s
  redact_paths: ["$target.password", "$target[0].content"]
  webhook: {url: "https://approvals.internal/resolve", timeout: 3s, bearer_token_env: APPROVALS_TOKEN_T}
`)
	want := Approvals{
		Resolver: ResolverWebhook, Timeout: 45 * time.Second,
		RedactPaths: []string{"$target.password", "$target[0].content"},
		Webhook: ApprovalWebhook{URL: "https://approvals.internal/resolve", Timeout: 3 * time.Second,
			BearerTokenEnv: "APPROVALS_TOKEN_T", BearerToken: "tok-approvals"},
	}
	if !reflect.DeepEqual(c.Approvals, want) {
		t.Errorf("approvals = %+v\nwant %+v", c.Approvals, want)
	}
	if s := c.Summary(); !strings.HasSuffix(s, "; approvals webhook approvals.internal (timeout 3s, 2 redacted paths)") {
		t.Errorf("summary = %s", s)
	}
	c = mustParse(t, mockUpstream+"approvals:\n  resolver: queue\n")
	if s := c.Summary(); !strings.HasSuffix(s, "; approvals queue (timeout 2m0s, 0 redacted paths)") {
		t.Errorf("summary = %s", s)
	}
	if c.Approvals.Resolver != ResolverQueue || c.Approvals.Timeout != DefaultApprovalTimeout {
		t.Errorf("queue approvals = %+v", c.Approvals)
	}
}

func TestApprovalsProblems(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		name, src string
		want      []string
	}{
		{"bad values", mockUpstream + "approvals:\n  resolver: slack\n  timeout: 0s\n  redact_paths: [\"$.messages[*].content\"]\n", []string{
			`gateway.yaml:5: approvals.resolver: must be queue or webhook, or absent for none (got "slack")`,
			"gateway.yaml:6: approvals.timeout: must be positive (got 0s)",
			`gateway.yaml:7: approvals.redact_paths[0]: must be a §5.2 path rooted at $target, such as $target.password or $target[0].content, without wildcards (got "$.messages[*].content")`,
		}},
		{"webhook keys for the queue", mockUpstream + "approvals:\n  resolver: queue\n  webhook:\n    url: https://x.internal/\n", []string{
			"gateway.yaml:6: approvals.webhook: is only used by the webhook resolver",
		}},
		{"webhook without url, missing token", mockUpstream + "approvals:\n  resolver: webhook\n  webhook:\n    timeout: -1s\n    bearer_token_env: NOT_SET_APPROVALS_T\n", []string{
			"gateway.yaml:6: approvals.webhook.url: is required by the webhook resolver",
			"gateway.yaml:7: approvals.webhook.timeout: must be positive (got -1s)",
			"gateway.yaml:8: approvals.webhook.bearer_token_env: environment variable NOT_SET_APPROVALS_T is not set",
		}},
		{"webhook url with credentials", mockUpstream + "approvals:\n  resolver: webhook\n  webhook: {url: \"https://u:p@x.internal/\"}\n", []string{
			"gateway.yaml:6: approvals.webhook.url: must not carry credentials; name the bearer token's environment variable in bearer_token_env",
		}},
		{"unknown key", mockUpstream + "approvals:\n  resolvr: queue\n", []string{
			"gateway.yaml:5: approvals.resolvr: unknown key (expected one of redact_paths, resolver, timeout, webhook)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemsOf(t, tt.src)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestApprovalsUnreachableQueueWarns(t *testing.T) {
	clearEnv(t)
	c := mustParse(t, mockUpstream+"approvals:\n  resolver: queue\n")
	want := "gateway.yaml:5: approvals.resolver: queue is unreachable: the admin endpoints need listeners.admin or auth.admin_token_env, so every escalation times out as host_error:approval_unresolved"
	if w := c.Warnings(); !slices.Contains(w, want) {
		t.Errorf("warnings = %q, want %q", w, want)
	}
	c = mustParse(t, "listeners:\n  admin: 127.0.0.1:9001\n"+mockUpstream+"approvals:\n  resolver: queue\n")
	for _, w := range c.Warnings() {
		if strings.Contains(w, "approvals") {
			t.Errorf("queue served on an admin listener still warns: %s", w)
		}
	}
}
