package proxy

import (
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/jcs"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// Agents retry what failed: Codex retries a 403, and a stream cut after
// its 200, several times, and each retry would run the model upstream
// again to be denied again. A managed session remembers its last policy
// deny for a short window: a request identical to the denied one (same
// surface, same body, same policy version) gets the same deny again
// without an emission or an upstream call. The original deny's record is
// the record; the replay is logged and counted
// (hooks_gateway_denies_replayed_total).

// DefaultDenyReplayWindow is how long a session's last deny is replayed.
const DefaultDenyReplayWindow = time.Minute

// maxRememberedDenies bounds the sessions whose last deny is remembered;
// past it the oldest is forgotten first.
const maxRememberedDenies = 10000

// deniedRequest identifies a request the way a retry repeats it.
type deniedRequest struct {
	api     wire.API
	version string // the policy version that denied it
	body    [sha256.Size]byte
}

// rememberedDeny is a session's last policy deny.
type rememberedDeny struct {
	req   deniedRequest
	err   apiError
	until time.Time
}

// denyMemory holds each managed session's last policy deny for a window.
type denyMemory struct {
	mu     sync.Mutex
	bySess map[sessions.Key]rememberedDeny
	order  []sessions.Key // insertion order, for eviction; may hold stale keys
}

// remember keeps err as k's last deny of req until now+window.
func (d *denyMemory) remember(k sessions.Key, req deniedRequest, err *apiError, now time.Time, window time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bySess == nil {
		d.bySess = make(map[sessions.Key]rememberedDeny)
	}
	if _, ok := d.bySess[k]; !ok {
		for len(d.bySess) >= maxRememberedDenies && len(d.order) > 0 {
			delete(d.bySess, d.order[0])
			d.order = d.order[1:]
		}
		d.order = append(d.order, k)
	}
	d.bySess[k] = rememberedDeny{req: req, err: *err, until: now.Add(window)}
	if len(d.order) > 2*maxRememberedDenies {
		d.compact()
	}
}

// compact drops the order's keys that no longer have an entry.
func (d *denyMemory) compact() {
	kept := d.order[:0]
	seen := make(map[sessions.Key]bool, len(d.bySess))
	for _, k := range d.order {
		if _, ok := d.bySess[k]; ok && !seen[k] {
			seen[k] = true
			kept = append(kept, k)
		}
	}
	d.order = kept
}

// has reports whether k has a deny remembered at now: most sessions have
// none, and their requests are not hashed.
func (d *denyMemory) has(k sessions.Key, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.bySess[k]
	if ok && !now.Before(e.until) {
		delete(d.bySess, k)
		return false
	}
	return ok
}

// lookup returns k's remembered deny of req, if it has one at now.
func (d *denyMemory) lookup(k sessions.Key, req deniedRequest, now time.Time) (apiError, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.bySess[k]
	if !ok || e.req != req || !now.Before(e.until) {
		return apiError{}, false
	}
	return e.err, true
}

// isPolicyDeny reports whether err answers a policy deny (a verdict, not
// an outage, not bad input): the only errors a retry would meet again.
func isPolicyDeny(err *apiError) bool {
	return err.typ == typeDenied && err.status == http.StatusForbidden && err.point != ""
}

// noteDeny remembers err when it answers a policy deny in a managed
// session.
func (mc *modelCall) noteDeny(err error) {
	s := mc.s
	if err == nil || !mc.t.managed || s.opts.DenyReplayWindow <= 0 {
		return
	}
	ae := asAPIError(err)
	if !isPolicyDeny(ae) {
		return
	}
	req := deniedRequest{api: mc.surf.API(), body: retryHash(mc.body)}
	if mc.t.pol != nil {
		req.version = mc.t.pol.Version
	}
	s.denies.remember(mc.t.key, req, ae, time.Now(), s.opts.DenyReplayWindow)
}

// replayedDeny returns the deny the managed session id (sessionIDOf)
// remembers for a request identical to this one, if any; the replay is
// logged and counted. A request without a remembered deny in its session
// pays one map look-up: its body is hashed only after one.
func (s *Server) replayedDeny(pol *Policy, p Principal, id string, api wire.API, body []byte) (apiError, bool) {
	if s.opts.DenyReplayWindow <= 0 || id == "" {
		return apiError{}, false
	}
	k, err := sessionKey(p, id)
	now := time.Now()
	if err != nil || !s.denies.has(k, now) {
		return apiError{}, false // a bad id is refused by beginTurn, with its reason
	}
	d, ok := s.denies.lookup(k, deniedRequest{api: api, version: pol.Version, body: retryHash(body)}, now)
	if !ok {
		return apiError{}, false
	}
	s.metrics.DenyReplayed(string(api))
	s.log.Info("a retry of a denied request answered with its deny, without an upstream call",
		"session", sessionName(k), "point", d.point, "reason", d.code)
	return d, true
}

// retryHash identifies a request body as its retries repeat it: its
// canonical JSON (RFC 8785: Codex sends a map whose member order changes
// on every retry), without the top-level stream and max_tokens members.
// Claude Code retries a stream that failed after its 200 without
// streaming, and with half the max_tokens (measured: 128000, then 64000):
// the same conversation, a shorter answer at most. It runs only after a
// deny in the request's session.
func retryHash(body []byte) [sha256.Size]byte {
	v, err := jsonvalue.Decode(body)
	obj, ok := v.(map[string]any)
	if err != nil || !ok {
		return sha256.Sum256(body)
	}
	delete(obj, "stream")
	delete(obj, "max_tokens")
	h := sha256.New()
	if jcs.HashCanonical(h, obj, 0) != nil {
		return sha256.Sum256(body) // outside the canonical domain: byte for byte
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}
