// Package policy loads the gateway's policy: the interceptors, the
// enforcement settings that override the main configuration's, and the
// routes that select an interceptor chain per request.
//
// A policy lives either inline in the main configuration (its
// interceptors: section) or in files of its own (policy.path): one file,
// or a directory whose *.yaml and *.yml files are read in lexical order and
// merged into one document. Keeping it apart lets operators rotate it
// without restarting the gateway. Every load yields a Version derived from
// the exact source bytes, which records carry so that an audit trail names
// the policy that produced each decision.
package policy

import (
	"github.com/hooks-gateway/hooks-gateway/config"
)

// Document is a loaded, checked policy.
type Document struct {
	// Version is "sha256:" and the first 16 hex digits of the SHA-256 of
	// the source: file names and contents in order, or the main file's
	// interceptors and enforcement sections for an inline policy.
	Version string
	// Sources are the files read, in order (the main file for an inline
	// policy).
	Sources []string
	// Interceptors are the default chain, in order: every file's list,
	// concatenated. Names are unique across files.
	Interceptors []config.Interceptor
	// Enforcement is the main configuration's section with the document's
	// mode, point_modes and composition applied over it.
	Enforcement config.Enforcement
	// Routes select a chain per request; the first that matches wins and a
	// request no route matches gets the default chain.
	Routes []Route
}

// Route selects an interceptor chain and modes for the requests it
// matches.
type Route struct {
	Name  string
	Match Match
	// Interceptors name the document's interceptors, in chain order.
	Interceptors []string
	// Mode replaces the document's default mode when set; PointModes are
	// applied over the document's per-point modes.
	Mode       string
	PointModes map[string]string
	// Streaming, when set, is the streaming mode (buffered, incremental)
	// of the route's streamed answers, over streaming.mode and
	// streaming.surfaces.
	Streaming string
	// NativeSessions, when set, says whether the agents' own run ids
	// (Claude Code's, Codex's session headers) make managed sessions for
	// the route's requests, over sessions.native_ids.
	NativeSessions *bool
	// File and Line locate the route; APIKeyLine locates match.api_key.
	File       string
	Line       int
	APIKeyLine int
}

// Match holds a route's conditions: path.Match globs on the agent id, the
// tenant and the model, and the name of the client key
// (auth.api_keys[].name, which defaults to its key_env). Every field set must match; an empty
// Match matches every request.
type Match struct {
	AgentID string
	Tenant  string
	Model   string
	APIKey  string
}

// Request is what a route is matched against. Fields the request does not
// carry are empty, and a glob set on them does not match.
type Request struct {
	AgentID string
	Tenant  string
	Model   string
	// APIKey is the name of the client key the request authenticated
	// with.
	APIKey string
}

// Matches reports whether every condition of m holds for r.
func (m Match) Matches(r Request) bool {
	return glob(m.AgentID, r.AgentID) && glob(m.Tenant, r.Tenant) && glob(m.Model, r.Model) &&
		(m.APIKey == "" || m.APIKey == r.APIKey)
}

// EngineEnforcement returns the enforcement settings of route r: the
// document's, with the route's mode and point modes applied.
func (d *Document) EngineEnforcement(r Route) config.Enforcement {
	e := d.Enforcement
	if r.Mode != "" {
		e.Mode = r.Mode
	}
	if len(r.PointModes) > 0 {
		pm := make(map[string]string, len(e.PointModes)+len(r.PointModes))
		for p, m := range e.PointModes {
			pm[p] = m
		}
		for p, m := range r.PointModes {
			pm[p] = m
		}
		e.PointModes = pm
	}
	return e
}
