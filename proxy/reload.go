package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	policyfile "github.com/hooks-gateway/hooks-gateway/policy"
)

// Reloader replaces a server's policy with the one its files hold now,
// client keys included (auth.keys_file is re-read). The file watcher,
// SIGHUP and POST /admin/reload all call Reload; reloads run one at a
// time.
//
// A new policy is loaded, compiled and checked whole before it is swapped
// in (Server.SetPolicy): a policy that fails any step leaves the previous
// one in effect, and requests in flight always finish on the chain they
// started with.
type Reloader struct {
	srv     *Server
	load    func() (*Source, error)
	compile func(*Source) (*Policy, error)
	log     *slog.Logger
	now     func() time.Time
	// onSwap, when set, runs after a new policy is swapped in (Build has
	// the record sinks mark its version).
	onSwap func(context.Context, *Policy)

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

// Source is what a reload reads: the policy document, and the client
// keys as the key file holds them now.
type Source struct {
	Doc  *policyfile.Document
	Auth config.Auth
}

// NewReloader returns a reloader for srv, whose current policy counts as
// loaded now. load reads the policy files and the key file; compile
// builds a policy from them exactly as the server's first one was built
// (same sink, observer and environment).
func NewReloader(srv *Server, load func() (*Source, error), compile func(*Source) (*Policy, error), logger *slog.Logger) *Reloader {
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
	src, err := r.load()
	if err == nil && r.unchanged(src) {
		r.st.LastError, r.st.LastErrorAt = "", nil
		return ReloadResult{Version: src.Doc.Version}, nil
	}
	var pol *Policy
	if err == nil {
		pol, err = r.compile(src)
	}
	if err != nil {
		at := r.now().UTC()
		r.st.LastError, r.st.LastErrorAt = err.Error(), &at
		r.srv.metrics.ReloadFailed()
		r.log.Error("policy reload rejected; the previous policy stays in effect", "version", r.current(), "error", err.Error())
		return ReloadResult{}, err
	}
	r.srv.SetPolicy(pol)
	if r.onSwap != nil {
		r.onSwap(ctx, pol)
	}
	r.st = PolicyStatus{Version: pol.Version, Sources: pol.Sources, LoadedAt: r.now().UTC()}
	r.log.Info("policy reloaded", "version", pol.Version, "sources", pol.Sources, "client_keys", len(pol.Principals))
	return ReloadResult{Version: pol.Version, Changed: true}, nil
}

// unchanged reports whether src holds the policy and the keys in effect.
func (r *Reloader) unchanged(src *Source) bool {
	p := r.srv.Policy()
	return p != nil && p.Version == src.Doc.Version && p.KeysVersion == src.Auth.Version()
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
