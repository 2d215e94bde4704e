package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	policyfile "github.com/hooks-gateway/hooks-gateway/policy"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// turn is one request's view of its session: it builds contexts with the
// session's sequence source and emits them through the policy's emitter.
type turn struct {
	s   *Server
	pol *Policy
	// em is the chain the request's route selected; nil is the default.
	em      *enforcement.Emitter
	builder *enforcement.Builder
	managed bool
	// worst is the most severe decision seen, for the response header.
	worst enforcement.Decision
	mode  enforcement.Mode
	// ended is set once a per-request session emitted its agent_shutdown.
	ended bool
}

func newID(prefix string) string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; an id collision
		// would merge audit trails, so refuse rather than continue.
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return prefix + hex.EncodeToString(b[:])
}

// errStore marks a session-store failure: the emission fails closed.
var errStore = errors.New("session store unavailable")

// emit builds and emits one context. A blocking verdict comes back as a
// *enforcement.BlockedError; a context that cannot be built (store down,
// unrepresentable value) is recorded as a host failure and fails closed.
func (t *turn) emit(ctx context.Context, point enforcement.Point, fields map[string]any, opts ...enforcement.EmitOption) (*enforcement.Outcome, error) {
	ctx, span := t.s.startEmissionSpan(ctx, point, t.builder.SessionID)
	out, err := t.emitContext(ctx, point, fields, opts...)
	endEmissionSpan(span, out, err)
	return out, err
}

// emitContext is emit within the emission's span.
func (t *turn) emitContext(ctx context.Context, point enforcement.Point, fields map[string]any, opts ...enforcement.EmitOption) (*enforcement.Outcome, error) {
	em := t.emitter()
	c, err := t.builder.Build(ctx, point, fields)
	if err != nil {
		var pe *enforcement.ProjectionError
		if errors.As(err, &pe) {
			em.RecordHostFailure(ctx, pe.HostFailure())
			return nil, hostFailure(point, t.builder.SessionID, fmt.Sprintf("the %s context could not be built: %v", point, pe.Err))
		}
		em.RecordHostFailure(ctx, enforcement.HostFailure{
			Point: point, SessionID: t.builder.SessionID, Sequence: -1,
			Message: "session store unavailable: no sequence number",
		})
		t.s.log.Warn("session store failure", "session", t.builder.SessionID, "point", point, "error", err)
		return nil, hostFailure(point, t.builder.SessionID, errStore.Error())
	}
	out, err := em.EmitUnchecked(ctx, c, opts...)
	if out != nil {
		t.note(out)
	}
	if err != nil {
		return out, errorf(499, typeGatewayError, "client_closed_request", "the request was canceled during %s", point)
	}
	if !out.Proceed {
		return out, &enforcement.BlockedError{Outcome: out}
	}
	return out, nil
}

// emitter returns the chain the turn runs through.
func (t *turn) emitter() *enforcement.Emitter {
	if t.em != nil {
		return t.em
	}
	return t.pol.Emitter
}

// note tracks the most severe decision and the mode for response headers.
func (t *turn) note(out *enforcement.Outcome) {
	if headerRank(out.Verdict.Decision) > headerRank(t.worst) {
		t.worst = out.Verdict.Decision
	}
	if t.mode != enforcement.EvaluateOnly {
		t.mode = out.Mode
	}
}

// headerRank orders decisions for the Agent-Hooks-Decision header.
func headerRank(d enforcement.Decision) int {
	switch d {
	case enforcement.DecisionAllow:
		return 1
	case enforcement.DecisionTransform:
		return 2
	case enforcement.DecisionDeny:
		return 3
	}
	return 0
}

func hostFailure(point enforcement.Point, session, msg string) *apiError {
	return &apiError{
		status: http.StatusServiceUnavailable, typ: typeHostError, code: enforcement.ReasonContextInvalid,
		message: msg, point: point, session: session,
	}
}

// beginTurn resolves the request's session. Without Agent-Hooks-Session the
// request is a whole session of its own; with it, the session lives in the
// store and the first request to claim it emits agent_startup.
func (s *Server) beginTurn(ctx context.Context, r *http.Request, pol *Policy, p Principal, model string, tools []string) (*turn, error) {
	agentID := p.AgentID
	if agentID == "" {
		agentID = strings.TrimSpace(r.Header.Get(HeaderAgent))
	}
	if agentID == "" {
		agentID = s.opts.DefaultAgentID
	}
	common := map[string]any{}
	if tr := parseTraceparent(r.Header.Get("traceparent")); tr != nil {
		common["trace"] = tr
	} else if tr := s.gatewayTrace(ctx); tr != nil {
		common["trace"] = tr
	}
	if p.Tenant != "" {
		common["tenant"] = map[string]any{"id": p.Tenant}
	}
	if pol.ContextExtensions != nil {
		common["extensions"] = pol.ContextExtensions
	}
	t := &turn{s: s, pol: pol, builder: &enforcement.Builder{
		Agent:  enforcement.Agent{ID: agentID, Framework: Framework},
		Common: common,
	}}
	t.em = pol.EmitterFor(policyfile.Request{AgentID: agentID, Tenant: p.Tenant, Model: model, APIKey: p.KeyID})
	id := r.Header.Get(HeaderSession)
	if id == "" {
		t.builder.SessionID = newID("req-")
		t.builder.Sequence = &enforcement.Counter{}
		if _, err := t.emit(ctx, enforcement.AgentStartup, enforcement.StartupFields(tools)); err != nil {
			t.end(ctx, enforcement.ShutdownError)
			return nil, err
		}
		return t, nil
	}
	if s.opts.Store == nil {
		return nil, errorf(http.StatusBadRequest, typeSession, "sessions_disabled", "managed sessions are not configured on this gateway")
	}
	t.managed = true
	t.builder.SessionID = id
	claimed, st, err := s.opts.Store.Begin(ctx, id)
	if err != nil {
		if errors.Is(err, sessions.ErrInvalidSessionID) {
			return nil, &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: "invalid_session_id", message: err.Error(), param: HeaderSession}
		}
		pol.Emitter.RecordHostFailure(ctx, enforcement.HostFailure{
			Point: enforcement.AgentStartup, SessionID: id, Sequence: -1,
			Message: "session store unavailable",
		})
		s.log.Warn("session store failure", "session", id, "error", err)
		return nil, hostFailure(enforcement.AgentStartup, id, errStore.Error())
	}
	t.builder.Sequence = sessions.Sequence(s.opts.Store, id)
	switch {
	case st.Ended:
		return nil, &apiError{status: http.StatusConflict, typ: typeSession, code: "session_ended", message: "the session has ended", session: id}
	case st.Blocked:
		return nil, &apiError{status: http.StatusForbidden, typ: typeDenied, code: "session_blocked", message: "the session was denied at agent_startup", session: id}
	}
	if claimed {
		// The claim reserved sequence 0 for this startup.
		t.builder.Sequence = &reservedFirst{next: t.builder.Sequence}
		if _, err := t.emit(ctx, enforcement.AgentStartup, enforcement.StartupFields(tools)); err != nil {
			if bErr := s.opts.Store.Block(context.WithoutCancel(ctx), id); bErr != nil {
				s.log.Warn("could not mark session blocked", "session", id, "error", bErr)
			}
			return nil, err
		}
	}
	return t, nil
}

// end closes a per-request session with agent_shutdown, once. It runs
// before the answer is released, so a client that has its answer can rely
// on the session's trail being complete. Managed sessions end on the end
// endpoint or on idle expiry instead.
func (t *turn) end(ctx context.Context, reason string) {
	if t.managed || t.ended {
		return
	}
	t.ended = true
	// The shutdown closes the trail even when the client went away.
	if _, err := t.emit(context.WithoutCancel(ctx), enforcement.AgentShutdown, enforcement.ShutdownFields(reason)); err != nil {
		var blocked *enforcement.BlockedError
		if !errors.As(err, &blocked) { // a deny at shutdown is only recorded (§6.1a)
			t.s.log.Warn("agent_shutdown emission failed", "session", t.builder.SessionID, "error", err)
		}
	}
}

// parseTraceparent extracts W3C Trace Context ids ("00-<trace>-<span>-<flags>").
func parseTraceparent(h string) map[string]any {
	parts := strings.Split(strings.TrimSpace(h), "-")
	if len(parts) != 4 || len(parts[1]) != 32 || len(parts[2]) != 16 || !isLowerHex(parts[1]) || !isLowerHex(parts[2]) {
		return nil
	}
	if strings.Trim(parts[1], "0") == "" || strings.Trim(parts[2], "0") == "" {
		return nil
	}
	return map[string]any{"trace_id": parts[1], "span_id": parts[2]}
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// reservedFirst hands out the sequence number 0 a session claim reserved,
// then defers to the store.
type reservedFirst struct {
	used bool
	next enforcement.SequenceSource
}

func (r *reservedFirst) Next(ctx context.Context) (int64, error) {
	if !r.used {
		r.used = true
		return 0, nil
	}
	return r.next.Next(ctx)
}
