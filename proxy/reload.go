package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	policyfile "github.com/hooks-gateway/hooks-gateway/policy"
)

// Reloader replaces a server's policy with the one its files hold now. The
// file watcher, SIGHUP and POST /admin/reload all call Reload; reloads run
// one at a time.
//
// A new policy is loaded, compiled and checked whole before it is swapped
// in (Server.SetPolicy): a policy that fails any step leaves the previous
// one in effect, and requests in flight always finish on the chain they
// started with.
type Reloader struct {
	srv     *Server
	load    func() (*policyfile.Document, error)
	compile func(*policyfile.Document) (*Policy, error)
	log     *slog.Logger
	now     func() time.Time

	mu sync.Mutex // serializes Reload; guards status
	st PolicyStatus
}

// PolicyStatus describes the policy in effect and the last reload attempt.
type PolicyStatus struct {
	Version  string    `json:"version"`
	Sources  []string  `json:"sources"`
	LoadedAt time.Time `json:"loaded_at"`
	// LastError is the last failed reload's error (every problem with its
	// file and line), cleared by the next successful or unchanged reload.
	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
}

// ReloadResult is the outcome of a reload that did not fail.
type ReloadResult struct {
	Version string `json:"version"`
	// Changed is false when the files hold the policy already in effect:
	// nothing was swapped.
	Changed bool `json:"changed"`
}

// NewReloader returns a reloader for srv, whose current policy counts as
// loaded now. load reads the policy files; compile builds a policy from
// them exactly as the server's first one was built (same sink, observer
// and environment).
func NewReloader(srv *Server, load func() (*policyfile.Document, error), compile func(*policyfile.Document) (*Policy, error), logger *slog.Logger) *Reloader {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Reloader{srv: srv, load: load, compile: compile, log: logger, now: time.Now}
	r.st.LoadedAt = r.now().UTC()
	if p := srv.Policy(); p != nil {
		r.st.Version, r.st.Sources = p.Version, p.Sources
	}
	srv.reloader.Store(r)
	return r
}

// errReloadCanceled reports a reload abandoned because its context ended.
var errReloadCanceled = errors.New("policy reload canceled")

// Reload loads the policy files and swaps the policy in when its version
// differs from the one in effect. A failure keeps the old policy, counts in
// agent_hooks_policy_reloads_total{result="error"}, is logged and shown by
// Status until a later reload succeeds.
func (r *Reloader) Reload(ctx context.Context) (ReloadResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return ReloadResult{}, fmt.Errorf("%w: %w", errReloadCanceled, err)
	}
	doc, err := r.load()
	if err == nil && r.current() == doc.Version {
		r.st.LastError, r.st.LastErrorAt = "", nil
		return ReloadResult{Version: doc.Version}, nil
	}
	var pol *Policy
	if err == nil {
		pol, err = r.compile(doc)
	}
	if err != nil {
		at := r.now().UTC()
		r.st.LastError, r.st.LastErrorAt = err.Error(), &at
		r.srv.metrics.ReloadFailed()
		r.log.Error("policy reload rejected; the previous policy stays in effect", "version", r.current(), "error", err.Error())
		return ReloadResult{}, err
	}
	r.srv.SetPolicy(pol)
	r.st = PolicyStatus{Version: pol.Version, Sources: pol.Sources, LoadedAt: r.now().UTC()}
	r.log.Info("policy reloaded", "version", pol.Version, "sources", pol.Sources)
	return ReloadResult{Version: pol.Version, Changed: true}, nil
}

func (r *Reloader) current() string {
	if p := r.srv.Policy(); p != nil {
		return p.Version
	}
	return ""
}

// Status returns the policy in effect and the last reload error.
func (r *Reloader) Status() PolicyStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.st
	st.Sources = append([]string(nil), st.Sources...)
	return st
}
