package proxy

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	policyfile "github.com/hooks-gateway/hooks-gateway/policy"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// Managed sessions follow the spec's lifecycle (§3.1, §6.1a) across every
// replica sharing the store:
//
//   - the request that claims a session emits agent_startup; every other
//     request of the session waits for that verdict (Status.Starting) and
//     is refused when it was a deny;
//   - each model call holds a lease, so the session does not expire idle
//     under a running call;
//   - ending a session (end endpoint, emit API, idle expiry) waits, up to
//     Options.EndWait, for the calls in flight, then seals the session:
//     agent_shutdown takes the last sequence number and a call still
//     running afterwards has its answer withheld.
//
// A session belongs to the key that claimed it and lives in that key's
// tenant: any other key is told the session does not exist.

// sessionKey is the store key of the session id p names. A tenantless
// client's id may not contain "/": that form is a tenant's session in the
// trail (trailSessionID).
func sessionKey(p Principal, id string) (sessions.Key, error) {
	if p.Tenant == "" && strings.Contains(id, "/") {
		return sessions.Key{}, &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: "invalid_session_id",
			message: "a session id may not contain \"/\" for a client without a tenant: <tenant>/<id> names a tenant's session in the trail", param: HeaderSession}
	}
	return sessions.Key{Tenant: p.Tenant, ID: id}, nil
}

// sessionName is a managed session's name in the trail: the client's
// id, qualified by its tenant as "<tenant>/<id>". Its client names it by
// its id alone (Agent-Hooks-Session both ways, the end endpoint, the emit
// API's session.id), inside its key's tenant.
func sessionName(k sessions.Key) string {
	if k.Tenant == "" {
		return k.ID
	}
	return k.Tenant + "/" + k.ID
}

// trailSessionID is the session.id a managed session's contexts and
// records carry: its name (sessionName), so that the sessions of two
// tenants that chose the same id never share a trail (records carry no
// tenant), followed by "~<incarnation>" where the store mints one per
// claim (the memory store): a client that goes on sending an id after the
// gateway restarted, or after the id's retention ran out, opens a new
// trail at sequence 0 instead of numbering a second agent_startup 0 in
// the earlier session's trail.
func trailSessionID(k sessions.Key, incarnation string) string {
	if incarnation == "" {
		return sessionName(k)
	}
	return sessionName(k) + "~" + incarnation
}

// routeRequest is what selects a request's policy route. Only what the
// key vouches for selects routes: an unauthenticated client's agent id is
// descriptive, never a route selector.
func routeRequest(p Principal, agentID, model string) policyfile.Request {
	r := policyfile.Request{Tenant: p.Tenant, APIKey: p.KeyID, Model: model}
	if p.authenticated() {
		r.AgentID = agentID
	}
	return r
}

// errStartupPending means the session's agent_startup verdict did not come
// within Options.StartupWait.
var errStartupPending = errors.New("the session's agent_startup is still being evaluated")

// sessionNotFound answers a session that does not exist for this key.
func sessionNotFound(id string, point enforcement.Point) *apiError {
	return &apiError{status: http.StatusNotFound, typ: typeSession, code: "session_not_found", message: "no such session", session: id, point: point}
}

// sessionEnded answers a session that ended (its id stays retired).
func sessionEnded(id string, point enforcement.Point) *apiError {
	return &apiError{status: http.StatusConflict, typ: typeSession, code: "session_ended", message: "the session has ended", session: id, point: point}
}

// sessionBlocked answers a session whose agent_startup was denied.
func sessionBlocked(id string, point enforcement.Point) *apiError {
	return &apiError{status: http.StatusForbidden, typ: typeDenied, code: "session_blocked", message: "the session was denied at agent_startup", session: id, point: point}
}

// agentMismatch answers a request naming another agent than its session's.
func agentMismatch(id string, point enforcement.Point) *apiError {
	return &apiError{status: http.StatusConflict, typ: typeSession, code: "agent_mismatch",
		message: "the session belongs to another agent id: a session has one agent for its whole life", session: id, point: point}
}

// awaitStartup waits while another request is getting the session's
// agent_startup verdict, polling the store (the claimer may be another
// replica). It returns the state once the verdict is in.
func (s *Server) awaitStartup(ctx context.Context, k sessions.Key, st sessions.Status) (sessions.Status, error) {
	deadline := time.Now().Add(s.opts.StartupWait)
	delay := 2 * time.Millisecond
	for st.Starting && !st.Ended {
		if !time.Now().Before(deadline) {
			return st, errStartupPending
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return st, ctx.Err()
		case <-t.C:
		}
		delay = min(delay*2, 100*time.Millisecond)
		var exists bool
		var err error
		if st, exists, err = s.opts.Store.Status(ctx, k); err != nil {
			return st, err
		}
		if !exists {
			return st, sessions.ErrUnknownSession
		}
	}
	return st, nil
}

// startupWaitError answers a failed awaitStartup; store failures are the
// caller's (it records them).
func startupWaitError(err error, id string, point enforcement.Point) (*apiError, bool) {
	switch {
	case errors.Is(err, errStartupPending):
		return &apiError{status: http.StatusServiceUnavailable, typ: typeSession, code: "session_starting", message: err.Error(), session: id, point: point}, true
	case errors.Is(err, sessions.ErrUnknownSession):
		return sessionNotFound(id, point), true
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errorf(499, typeGatewayError, "client_closed_request", "the client went away while the session was starting"), true
	}
	return nil, false
}

// awaitCalls waits, up to Options.EndWait, until the ended session has no
// model call in flight (and no startup under evaluation). Calls still
// running then find the session sealed and have their answers withheld.
func (s *Server) awaitCalls(ctx context.Context, k sessions.Key) {
	deadline := time.Now().Add(s.opts.EndWait)
	delay := 2 * time.Millisecond
	for {
		st, exists, err := s.opts.Store.Status(ctx, k)
		if err != nil || !exists {
			return // sealing reports the failure
		}
		n := 0
		if !st.Starting {
			if n, err = s.opts.Store.InFlight(ctx, k); err != nil {
				return
			}
		}
		if !st.Starting && n == 0 {
			return
		}
		if !time.Now().Before(deadline) {
			s.log.Warn("session ended with calls in flight: their answers are withheld", "session", k.ID, "calls", n, "waited", s.opts.EndWait.String())
			return
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(delay*2, 100*time.Millisecond)
	}
}

// sealSequence numbers a session's agent_shutdown: the last number the
// session hands out.
type sealSequence struct {
	store sessions.Store
	key   sessions.Key
}

func (q sealSequence) Next(ctx context.Context) (int64, error) { return q.store.Seal(ctx, q.key) }

// shutdownManaged closes a managed session this replica ended: it waits for
// the calls in flight, seals the session and emits its agent_shutdown with
// the session's own agent and tenant, and with reason error whatever the
// caller asked when the session's startup was denied; incarnation is the
// session's (sessions.Status). It returns the shutdown's record (nil
// when none could be made).
func (s *Server) shutdownManaged(ctx context.Context, k sessions.Key, owner sessions.Owner, incarnation, reason string) *enforcement.Record {
	s.dropMemo(k)                    // nothing of the session is read again
	ctx = context.WithoutCancel(ctx) // the shutdown closes the trail even when the client went away
	s.awaitCalls(ctx, k)
	// A session that ended while its agent_startup was being judged learns
	// only now whether that startup was denied (spec §6.1a: then error).
	if st, exists, err := s.opts.Store.Status(ctx, k); err == nil && exists && st.Blocked {
		reason = enforcement.ShutdownError
	}
	pol := s.Policy()
	p := Principal{KeyID: owner.KeyID, AgentID: owner.AgentID, Tenant: k.Tenant}
	t := &turn{s: s, pol: pol, em: pol.EmitterFor(routeRequest(p, owner.AgentID, "")), managed: true, key: k,
		builder: &enforcement.Builder{
			Agent:     enforcement.Agent{ID: owner.AgentID, Framework: Framework},
			SessionID: trailSessionID(k, incarnation),
			Sequence:  sealSequence{store: s.opts.Store, key: k},
			Common:    s.commonFields(ctx, nil, pol, k.Tenant),
			Stamps:    &s.stamps,
			Now:       s.opts.Now,
		}}
	out, err := t.emit(ctx, enforcement.AgentShutdown, enforcement.ShutdownFields(reason))
	var blocked *enforcement.BlockedError
	if err != nil && !errors.As(err, &blocked) { // a deny at shutdown is only recorded (§6.1a)
		s.log.Warn("agent_shutdown emission failed", "session", k.ID, "error", err)
	}
	if out == nil {
		return nil
	}
	return out.Record
}

// commonFields are the members every context of a request carries: its
// trace (from the client's traceparent, else the gateway's span), its
// tenant and the policy's context extensions.
func (s *Server) commonFields(ctx context.Context, r *http.Request, pol *Policy, tenant string) map[string]any {
	var tr map[string]any
	if r != nil {
		if h := r.Header.Get("traceparent"); h != "" { // most requests: no parse, no allocation
			tr = parseTraceparent(h)
		}
	}
	if tr == nil {
		tr = s.gatewayTrace(ctx)
	}
	if tr == nil && tenant == "" {
		if pol.ContextExtensions == nil {
			return nil
		}
		return pol.extensionsOnly()
	}
	common := map[string]any{}
	if tr != nil {
		common["trace"] = tr
	}
	if tenant != "" {
		common["tenant"] = map[string]any{"id": tenant}
	}
	if pol.ContextExtensions != nil {
		common["extensions"] = pol.ContextExtensions
	}
	return common
}
