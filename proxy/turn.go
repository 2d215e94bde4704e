package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// turn is one request's view of its session: it builds contexts with the
// session's sequence source and emits them through the policy's emitter.
type turn struct {
	s   *Server
	pol *Policy
	// em is the chain the request's route selected; nil is the default.
	em *enforcement.Emitter
	// streaming is the streaming mode that route sets ("" for none).
	streaming string
	builder   *enforcement.Builder
	managed   bool
	// key is a managed session's store key; lease its model call's lease
	// ("" once released, and for the emit API's turns).
	key   sessions.Key
	lease string
	// releaseLate leaves the lease to the handler, which gives it up once
	// the answer is on the wire (see modelCall.finish): a Redis round trip
	// less before the client has its answer.
	releaseLate bool
	// point is the last point the turn emitted; stage where its model
	// call is (point, or stageUpstream, stageRelease), for internal_error.
	point enforcement.Point
	stage string
	// worst is the most severe decision seen, for the response header.
	worst enforcement.Decision
	mode  enforcement.Mode
	// ended is set once a per-request session emitted its agent_shutdown.
	ended bool
	// memoOpt hands each emission the managed session's cache, for the
	// identities and verdicts of the objects it keeps (nil: no cache).
	memoOpt enforcement.EmitOption
	// postOwed is set while the turn's model call owes the trail its
	// post_model_call: its pre_model_call proceeded and no post_model_call
	// was emitted (or withheld) since. A call cut before its response
	// settles it in end (cutPost).
	postOwed bool
	// inputAt and inputIDs are a managed turn's user messages (their
	// indexes and identities, userInputs) and judged, when its BeginCall
	// could tell, which of them the session judged. pendingInputs are the
	// identities whose inputs proceeded, recorded judged by the turn's
	// next sequence number (markingSequence).
	inputAt       []int
	inputIDs      []string
	judged        []bool
	pendingInputs []string
	// storage holds what newTurn's builder points to, in the turn's own
	// allocation: the builder, and a per-request session's counter.
	storage struct {
		builder enforcement.Builder
		counter enforcement.Counter
	}
}

// withheld answers a call whose session ended while it was in flight. The
// trail ended with the session's agent_shutdown and no record may follow
// it, so the withholding is logged, not recorded.
func (t *turn) withheld(point enforcement.Point) error {
	t.s.log.Info("the session ended while a call was in flight: its answer is withheld", "session", t.builder.SessionID, "point", point)
	return &apiError{status: http.StatusConflict, typ: typeSession, code: "session_ended",
		message: "the session ended while this call was in flight; its answer is withheld", session: t.builder.SessionID, point: point}
}

// sessionHeader is the Agent-Hooks-Session response header: the id the
// client uses for the session, the one the end endpoint takes (a
// per-request session's is its trail id; a managed one's is its key's ID:
// no tenant, no incarnation).
func (t *turn) sessionHeader() string {
	if t.managed {
		return t.key.ID
	}
	return t.builder.SessionID
}

// errStore marks a session-store failure: the emission fails closed.
var errStore = errors.New("session store unavailable")

// emit builds and emits one context. A blocking verdict comes back as a
// *enforcement.BlockedError; a context that cannot be built (store down,
// unrepresentable value) is recorded as a host failure and fails closed.
func (t *turn) emit(ctx context.Context, point enforcement.Point, fields map[string]any, opts ...enforcement.EmitOption) (*enforcement.Outcome, error) {
	t.point, t.stage = point, string(point)
	ctx, span := t.s.startEmissionSpan(ctx, point, t.builder.SessionID)
	out, err := t.emitContext(ctx, point, fields, opts...)
	endEmissionSpan(span, out, err)
	return out, err
}

// emitContext is emit within the emission's span.
func (t *turn) emitContext(ctx context.Context, point enforcement.Point, fields map[string]any, opts ...enforcement.EmitOption) (*enforcement.Outcome, error) {
	em := t.emitter()
	if point == enforcement.PostModelCall {
		t.postOwed = false // whatever follows records it, or withholds it in a sealed session
	}
	c, err := t.builder.Build(ctx, point, fields)
	if err != nil {
		var pe *enforcement.ProjectionError
		if errors.As(err, &pe) {
			em.RecordHostFailure(ctx, pe.HostFailure())
			return nil, hostFailure(point, t.builder.SessionID, fmt.Sprintf("the %s context could not be built: %v", point, pe.Err))
		}
		if errors.Is(err, sessions.ErrSessionSealed) || errors.Is(err, sessions.ErrUnknownSession) {
			return nil, t.withheld(point)
		}
		em.RecordHostFailure(ctx, enforcement.HostFailure{
			Point: point, SessionID: t.builder.SessionID, Sequence: -1,
			Message: "session store unavailable: no sequence number",
		})
		t.s.log.Warn("session store failure", "session", t.builder.SessionID, "point", point, "error", err)
		return nil, hostFailure(point, t.builder.SessionID, errStore.Error())
	}
	if t.memoOpt != nil {
		// A copy: the caller's array is never written.
		opts = append(opts[:len(opts):len(opts)], t.memoOpt)
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

// beginTurn begins the request's turn for agentID (requestAgent) in the
// session id names (sessionIDOf, resolved once by the caller). Without an
// id the request is a whole session of its own; with one, the session
// lives in the store, belongs to the key that claimed it, and the first request to claim
// it emits agent_startup while the session's other requests wait for the
// verdict. A managed turn holds a lease on its session until release and,
// in an admitted session, already holds its first emission's number: the
// caller's next step must be an emission (a number taken and never
// recorded would be a hole in the session's sequence).
func (s *Server) beginTurn(ctx context.Context, r *http.Request, pol *Policy, p Principal, agentID, id, model string, tools []string, inputs func() ([]int, []string)) (*turn, error) {
	if id == "" {
		t := s.newTurn(ctx, r, pol, p, agentID, model)
		t.builder.SessionID = wire.MintID("req-")
		t.builder.Sequence = &t.storage.counter
		if _, err := t.emit(ctx, enforcement.AgentStartup, enforcement.StartupFields(tools)); err != nil {
			t.end(ctx, enforcement.ShutdownError)
			return nil, err
		}
		return t, nil
	}
	if s.opts.Store == nil {
		return nil, errorf(http.StatusBadRequest, typeSession, "sessions_disabled", "managed sessions are not configured on this gateway")
	}
	key, err := sessionKey(p, id)
	if err != nil {
		return nil, err
	}
	asserted := agentID != "" // the key's agent, or the anonymous client's header
	if !asserted {
		agentID = s.opts.DefaultAgentID
	}
	// One store step claims or joins the session and takes the call's
	// lease (before the startup verdict, its own or the one it waits for,
	// so the session cannot expire idle meanwhile) and, in an admitted
	// session, the number of the turn's first emission.
	call := sessions.Call{ID: wire.MintID("call-"), Lease: s.opts.CallLease}
	if asserted {
		call.Agent = agentID
	}
	var inputAt []int
	if inputs != nil {
		// Asked in the same step: which user messages the session judged.
		inputAt, call.Inputs = inputs()
	}
	cs, err := s.opts.Store.BeginCall(ctx, key, sessions.Owner{KeyID: p.KeyID, AgentID: agentID}, call)
	if err != nil {
		return nil, s.sessionStoreError(ctx, pol, err, id, enforcement.AgentStartup)
	}
	claimed, st := cs.Claimed, cs.Status
	if !claimed && asserted && st.Owner.AgentID != agentID {
		return nil, agentMismatch(id, "") // no lease, no number taken
	}
	if st.Ended {
		return nil, sessionEnded(id, "")
	}
	t, err := s.startManagedTurn(ctx, r, pol, p, key, cs, agentID, model, tools)
	if err != nil {
		if cs.Leased {
			if rErr := s.opts.Store.Release(context.WithoutCancel(ctx), key, call.ID); rErr != nil {
				s.log.Warn("could not release a session lease", "session", id, "error", rErr)
			}
		}
		return nil, err
	}
	if cs.Leased {
		t.lease = call.ID
	}
	t.inputAt, t.inputIDs, t.judged = inputAt, call.Inputs, cs.Judged
	return t, nil
}

// sessionIDOf is the managed session a request names: its
// Agent-Hooks-Session, else its agent's own run id where native sessions
// are on for its route, else "" (a per-request session).
func (s *Server) sessionIDOf(r *http.Request, pol *Policy, p Principal, agentID, model string) string {
	if id := r.Header.Get(HeaderSession); id != "" || s.opts.Store == nil {
		return id
	}
	if !pol.nativeSessions(routeRequest(p, cmp.Or(agentID, s.opts.DefaultAgentID), model), s.opts.NativeSessions) {
		return ""
	}
	return nativeSessionID(r.Header)
}

// startManagedTurn settles the agent_startup of a managed session this
// request joined (claimed: it emits the startup; otherwise it waits for the
// claimer's verdict) and starts the request's turn in it.
func (s *Server) startManagedTurn(ctx context.Context, r *http.Request, pol *Policy, p Principal, key sessions.Key, cs sessions.CallStart, agentID, model string, tools []string) (*turn, error) {
	id, claimed, st := key.ID, cs.Claimed, cs.Status
	if !claimed {
		agentID = st.Owner.AgentID
		var err error
		if st, err = s.awaitStartup(ctx, key, st); err != nil {
			if ae, ok := startupWaitError(err, id, ""); ok {
				return nil, ae
			}
			return nil, s.sessionStoreError(ctx, pol, err, id, enforcement.AgentStartup)
		}
	}
	switch {
	case st.Ended:
		return nil, sessionEnded(id, "")
	case st.Blocked:
		return nil, sessionBlocked(id, "")
	}
	t := s.newTurn(ctx, r, pol, p, agentID, model)
	t.managed, t.key = true, key
	t.builder.SessionID = trailSessionID(key, st.Incarnation)
	t.builder.Sequence = &markingSequence{t: t, next: sessions.Sequence(s.opts.Store, key)}
	// The first emission's number is already taken: by the claim (0, for
	// this startup) or by BeginCall in an admitted session (which is
	// neither ended nor blocked, checked above from the same step).
	first := cs.Seq
	if claimed {
		first = 0
	}
	if first >= 0 {
		t.builder.Sequence = &reservedFirst{n: first, next: t.builder.Sequence}
	}
	if claimed {
		_, err := t.emit(ctx, enforcement.AgentStartup, enforcement.StartupFields(tools))
		if err := s.settleStartup(ctx, pol, key, err); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// settleStartup reports a claimed session's agent_startup verdict to the
// store, releasing the session's waiting requests: a deny (or a failed
// startup) blocks the session, anything else admits it. It returns the
// startup's error, or the store's when the verdict could not be kept.
func (s *Server) settleStartup(ctx context.Context, pol *Policy, k sessions.Key, startupErr error) error {
	ctx = context.WithoutCancel(ctx)
	if startupErr != nil {
		if err := s.opts.Store.Block(ctx, k); err != nil {
			s.log.Warn("could not mark session blocked", "session", k.ID, "error", err)
		}
		return startupErr
	}
	if err := s.opts.Store.Admit(ctx, k); err != nil {
		return s.sessionStoreError(ctx, pol, err, k.ID, enforcement.AgentStartup)
	}
	return nil
}

// requestAgent is the agent a request names: its key's, or, for the
// anonymous client, its Agent-Hooks-Agent header ("" when it names none).
// A key's request naming another agent in the header is refused.
func (s *Server) requestAgent(r *http.Request, p Principal) (string, error) {
	header := strings.TrimSpace(r.Header.Get(HeaderAgent))
	if !p.authenticated() {
		return header, nil
	}
	if header != "" && header != p.AgentID {
		return "", identityMismatch(HeaderAgent, "names another agent than the one the API key stands for")
	}
	return p.AgentID, nil
}

// identityMismatch refuses a request asserting an identity its key does not
// carry.
func identityMismatch(param, msg string) *apiError {
	return &apiError{status: http.StatusForbidden, typ: typeAuth, code: "identity_mismatch", message: param + " " + msg, param: param}
}

// newTurn starts a turn of agentID for p under pol, on the route p's
// identity selects.
func (s *Server) newTurn(ctx context.Context, r *http.Request, pol *Policy, p Principal, agentID, model string) *turn {
	if agentID == "" {
		agentID = s.opts.DefaultAgentID
	}
	em, streaming := pol.chainFor(routeRequest(p, agentID, model))
	t := &turn{s: s, pol: pol, em: em, streaming: streaming}
	t.builder = &t.storage.builder
	t.builder.Agent = enforcement.Agent{ID: agentID, Framework: Framework}
	t.builder.Common = s.commonFields(ctx, r, pol, p.Tenant)
	t.builder.Stamps, t.builder.Agents = &s.stamps, &s.agents
	t.builder.Now = s.opts.Now
	// A model call's fields are fresh trees (the request's projection,
	// the answer's) that nothing changes after their emission: one copy
	// less per emission. They are decoded JSON and constructors' values
	// (TestTurnContextsAreValueTrees), so Build need not walk them to
	// prove it: the emitter's bounds check walks every context anyway.
	t.builder.AdoptFields, t.builder.TrustedFields = true, true
	return t
}

// sessionStoreError answers a store call that failed for session id:
// refusals the store names become client errors; anything else is the
// store being unavailable, recorded as a host failure at point.
func (s *Server) sessionStoreError(ctx context.Context, pol *Policy, err error, id string, point enforcement.Point) error {
	switch {
	case errors.Is(err, sessions.ErrInvalidSessionID):
		return &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: "invalid_session_id", message: err.Error(), param: HeaderSession}
	case errors.Is(err, sessions.ErrForeignSession), errors.Is(err, sessions.ErrUnknownSession):
		return sessionNotFound(id, "")
	case errors.Is(err, sessions.ErrSessionEnded), errors.Is(err, sessions.ErrSessionSealed):
		return sessionEnded(id, "")
	}
	pol.Emitter.RecordHostFailure(context.WithoutCancel(ctx), enforcement.HostFailure{
		Point: point, SessionID: id, Sequence: -1, Message: "session store unavailable",
	})
	s.log.Warn("session store failure", "session", id, "error", err)
	return hostFailure(point, id, errStore.Error())
}

// release gives up a managed turn's lease: the session's idle time starts.
func (t *turn) release(ctx context.Context) {
	if t.lease == "" {
		return
	}
	if err := t.s.opts.Store.Release(context.WithoutCancel(ctx), t.key, t.lease); err != nil {
		t.s.log.Warn("could not release a session lease", "session", t.key.ID, "error", err)
	}
	t.lease = ""
}

// end closes a per-request session with agent_shutdown, once, and releases
// a managed turn's lease (unless releaseLate leaves it to the handler). It
// runs before the answer is released, so a client that has its answer can
// rely on the session's trail being complete. Managed sessions end on the
// end endpoint, the emit API or idle expiry instead.
func (t *turn) end(ctx context.Context, reason string) {
	if t.postOwed && ctx.Err() != nil {
		t.cutPost(ctx)
	}
	if t.managed {
		if !t.releaseLate {
			t.release(ctx)
		}
		return
	}
	if t.ended {
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

// cutMessage is the message of a cut call's post_model_call record.
const cutMessage = "the model call was cut before its response arrived (the client went away or the gateway stopped): there is no response to build post_model_call from"

// cutPost records the post_model_call of a model call cut before its
// response (the client went away, or the gateway's drain cut it off), so
// that its pre_model_call has its post_model_call in the trail (spec
// §3.1(4)), ahead of the session's agent_shutdown. No response exists to
// build the context from, so the record is the host failure of §6.3 and
// §10.3: deny host_error:context_invalid, null identities, no interceptor
// dispatched, with the next sequence number. In a session sealed
// meanwhile nothing may follow its agent_shutdown: the post is withheld,
// and logged. No other reserved reason fits: streaming_unsupported is
// for a stream the host received and could not buffer (§12.1), and the
// timeout reasons name interceptors and resolvers.
func (t *turn) cutPost(ctx context.Context) {
	t.postOwed = false
	ctx = context.WithoutCancel(ctx)
	f, err := t.builder.Failure(ctx, enforcement.PostModelCall, cutMessage)
	switch {
	case errors.Is(err, sessions.ErrSessionSealed), errors.Is(err, sessions.ErrUnknownSession):
		t.s.log.Info("the session ended while a cut call was in flight: its post_model_call is withheld", "session", t.builder.SessionID)
		return
	case err != nil:
		t.s.log.Warn("session store failure", "session", t.builder.SessionID, "point", enforcement.PostModelCall, "error", err)
		f = enforcement.HostFailure{Point: enforcement.PostModelCall, SessionID: t.builder.SessionID, Sequence: -1,
			Message: "session store unavailable: no sequence number"}
	}
	t.emitter().RecordHostFailure(ctx, f)
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

// markingSequence is a managed turn's sequence source: the number that
// follows the turn's inputs also records them judged, in one store step.
type markingSequence struct {
	t    *turn
	next enforcement.SequenceSource
}

func (q *markingSequence) Next(ctx context.Context) (int64, error) {
	if ids := q.t.pendingInputs; len(ids) > 0 {
		q.t.pendingInputs = nil
		return q.t.s.opts.Store.NextMarkingInputs(ctx, q.t.key, ids)
	}
	return q.next.Next(ctx)
}

// reservedFirst hands out a number already taken (n: 0 for the startup a
// session claim reserved, or the one BeginCall took), then defers to the
// store.
type reservedFirst struct {
	used bool
	n    int64
	next enforcement.SequenceSource
}

func (r *reservedFirst) Next(ctx context.Context) (int64, error) {
	if !r.used {
		r.used = true
		return r.n, nil
	}
	return r.next.Next(ctx)
}
