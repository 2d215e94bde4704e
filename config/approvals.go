package config

import (
	"fmt"
	"net/url"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Approval resolvers (approvals.resolver).
const (
	ResolverQueue   = "queue"
	ResolverWebhook = "webhook"
)

// Defaults of the approvals section.
const (
	DefaultApprovalTimeout        = 2 * time.Minute
	DefaultApprovalWebhookTimeout = 10 * time.Second
)

// Approvals configures the approval seam (spec §9): who decides liftable
// denies. With no resolver the engine enforces them as plain denies.
type Approvals struct {
	// Resolver is "" (none), ResolverQueue or ResolverWebhook.
	Resolver string
	// Timeout is how long a queued request waits for an administrator
	// before it resolves unresolved.
	Timeout time.Duration
	// RedactPaths are §5.2 paths (relative to $target) replaced by
	// "[redacted]" in what the resolver sees; paths that do not resolve at
	// a point are skipped there.
	RedactPaths []string
	Webhook     ApprovalWebhook
}

// ApprovalWebhook is the webhook resolver's endpoint.
type ApprovalWebhook struct {
	// URL receives each ApprovalRequest as a JSON POST. Never print it
	// beyond its host: its query may hold a credential.
	URL string
	// Timeout bounds one call.
	Timeout time.Duration
	// BearerTokenEnv names the variable holding the bearer token;
	// BearerToken is its value, read at load. Never print it.
	BearerTokenEnv string
	BearerToken    string
}

func defaultApprovals() Approvals {
	return Approvals{Timeout: DefaultApprovalTimeout, Webhook: ApprovalWebhook{Timeout: DefaultApprovalWebhookTimeout}}
}

// summary describes the resolver for the startup log ("" for none); the
// webhook URL shows only its host.
func (a Approvals) summary() string {
	switch a.Resolver {
	case ResolverQueue:
		return fmt.Sprintf("; approvals queue (timeout %s, %d redacted paths)", a.Timeout, len(a.RedactPaths))
	case ResolverWebhook:
		return fmt.Sprintf("; approvals webhook %s (timeout %s, %d redacted paths)", hostOf(a.Webhook.URL), a.Webhook.Timeout, len(a.RedactPaths))
	}
	return ""
}

func (d *decoder) approvals(n *yaml.Node, field string, a *Approvals) {
	d.mapping(n, field, map[string]handler{
		"resolver":     func(f string, v *yaml.Node) { a.Resolver = d.str(v, f) },
		"timeout":      func(f string, v *yaml.Node) { a.Timeout = d.duration(v, f, a.Timeout) },
		"redact_paths": func(f string, v *yaml.Node) { a.RedactPaths = d.strings(v, f) },
		"webhook": func(f string, v *yaml.Node) {
			w := &a.Webhook
			d.mapping(v, f, map[string]handler{
				"url":              func(f string, v *yaml.Node) { w.URL = d.str(v, f) },
				"timeout":          func(f string, v *yaml.Node) { w.Timeout = d.duration(v, f, w.Timeout) },
				"bearer_token_env": func(f string, v *yaml.Node) { w.BearerTokenEnv = d.str(v, f) },
			})
		},
	})
}

func (v *validator) approvals() {
	a := v.c.Approvals
	switch a.Resolver {
	case "", ResolverQueue, ResolverWebhook:
	default:
		v.problem("approvals.resolver", "must be %s or %s, or absent for none (got %q)", ResolverQueue, ResolverWebhook, a.Resolver)
	}
	if a.Timeout <= 0 {
		v.problem("approvals.timeout", "must be positive (got %s)", a.Timeout)
	}
	for i, p := range a.RedactPaths {
		if enforcement.ValidateTransformPath(p) != nil {
			v.problem(index("approvals.redact_paths", i), "must be a §5.2 path rooted at $target, such as $target.password or $target[0].content, without wildcards (got %q)", p)
		}
	}
	if a.Resolver != ResolverWebhook {
		if _, inFile := v.c.lines["approvals.webhook"]; inFile || a.Webhook.URL != "" {
			v.problem("approvals.webhook", "is only used by the webhook resolver")
		}
		return
	}
	w := a.Webhook
	// The URL is never quoted back: its query may hold a credential.
	if w.URL == "" {
		v.problem("approvals.webhook.url", "is required by the webhook resolver")
	} else if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.problem("approvals.webhook.url", "must be an absolute http:// or https:// URL")
	} else if u.User != nil {
		v.problem("approvals.webhook.url", "must not carry credentials; name the bearer token's environment variable in bearer_token_env")
	} else if u.Fragment != "" {
		v.problem("approvals.webhook.url", "must not have a fragment")
	}
	if w.Timeout <= 0 {
		v.problem("approvals.webhook.timeout", "must be positive (got %s)", w.Timeout)
	}
	if w.BearerTokenEnv != "" {
		v.secret("approvals.webhook.bearer_token_env", w.BearerTokenEnv, w.BearerToken, false)
	}
}

// approvalWarnings warns about a queue nobody can reach: without a
// separate admin listener the admin endpoints are served only with a token.
func (c *Config) approvalWarnings(warn func(field, format string, args ...any)) {
	if c.Approvals.Resolver == ResolverQueue && c.Listeners.Admin == "" && c.Auth.AdminToken == "" {
		warn("approvals.resolver", "queue is unreachable: the admin endpoints need listeners.admin or auth.admin_token_env, so every escalation times out as %s", enforcement.ReasonApprovalUnresolved)
	}
}
