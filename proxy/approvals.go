package proxy

import (
	"fmt"
	"io"
	"time"

	"github.com/hooks-gateway/hooks-gateway/approvals"
	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// resolverGrace is added to a resolver's own bound for the engine's bound
// on the resolver call, so that the resolver's answer (unresolved, or its
// own timeout error) is the one the engine sees.
const resolverGrace = 5 * time.Second

// ApprovalSeam is what the approvals section builds: the resolver and
// redactor every policy's emitter consults and, for the queue resolver, the
// queue the admin endpoints serve. The Assembly owns it, so policies built
// again (reloads) share one queue; the zero value is no resolver.
type ApprovalSeam struct {
	Resolver enforcement.ApprovalResolver
	Redactor enforcement.ApprovalRedactor
	// Queue is nil unless approvals.resolver is queue.
	Queue *approvals.Queue
	// ResolverTimeout is the engine's bound on one resolver call.
	ResolverTimeout time.Duration
}

// PolicyOption gives an emitter the seam's resolver and redactor.
func (s *ApprovalSeam) PolicyOption() PolicyOption {
	return func(o *enforcement.Options) {
		if s == nil || s.Resolver == nil {
			return
		}
		o.Resolver, o.Redactor, o.ResolverTimeout = s.Resolver, s.Redactor, s.ResolverTimeout
	}
}

// buildApprovals builds the seam from cfg.Approvals. The queue keeps its
// approvals in Redis when the session store is Redis (same URL and key
// prefix, so every replica sees them), in memory otherwise. The returned
// closer, when not nil, releases the Redis client.
func buildApprovals(cfg *config.Config) (*ApprovalSeam, io.Closer, error) {
	ac := cfg.Approvals
	seam := &ApprovalSeam{}
	if ac.Resolver == "" {
		return seam, nil, nil
	}
	if len(ac.RedactPaths) > 0 {
		red, err := approvals.Redactor(ExtensionNamespace, ac.RedactPaths)
		if err != nil {
			return nil, nil, err
		}
		seam.Redactor = red
	}
	switch ac.Resolver {
	case config.ResolverWebhook:
		w, err := approvals.NewWebhook(approvals.WebhookOptions{URL: ac.Webhook.URL, Token: ac.Webhook.BearerToken, Timeout: ac.Webhook.Timeout})
		if err != nil {
			return nil, nil, err
		}
		seam.Resolver, seam.ResolverTimeout = w, w.Timeout()+resolverGrace
		return seam, nil, nil
	case config.ResolverQueue:
		var store approvals.Store = approvals.NewMemory(0)
		var closer io.Closer
		if cfg.Sessions.Store == config.StoreRedis {
			r, err := approvals.NewRedis(approvals.RedisOptions{URL: cfg.Sessions.RedisURL, KeyPrefix: cfg.Sessions.KeyPrefix})
			if err != nil {
				return nil, nil, err
			}
			store, closer = r, r
		}
		seam.Queue = approvals.NewQueue(store, ac.Timeout)
		seam.Resolver, seam.ResolverTimeout = seam.Queue, seam.Queue.Timeout()+resolverGrace
		return seam, closer, nil
	}
	return nil, nil, fmt.Errorf("unknown approval resolver %q", ac.Resolver)
}

// buildApprovals builds the seam and registers its closer on a.
func (a *Assembly) buildApprovals(cfg *config.Config) (*ApprovalSeam, error) {
	seam, closer, err := buildApprovals(cfg)
	if closer != nil {
		a.closers = append(a.closers, closer)
	}
	return seam, err
}
