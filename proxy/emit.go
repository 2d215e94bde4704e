package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// gatewayOwned are context members the gateway fills; a caller sending them
// would be asking the gateway to trust its clock or its sequence.
var gatewayOwned = [...]string{"spec", "timestamp", "sequence", "target"}

// emitAnswer is the emit API's 200 body.
type emitAnswer struct {
	Proceed bool                `json:"proceed"`
	Mode    enforcement.Mode    `json:"mode"`
	Verdict json.RawMessage     `json:"verdict"`
	Target  json.RawMessage     `json:"target"`
	Record  *enforcement.Record `json:"record"`
}

// handleEmit serves POST /v1/agent-hooks/emit: any host (the SDK, or an
// agent in another language) submits the point-specific part of a context
// for its managed session; the gateway fills spec, timestamp and sequence,
// runs the central policy, records, and answers with the combined verdict
// and the enforced target. A deny is a 200 with proceed false: the caller
// asked for a verdict and got one.
func (s *Server) handleEmit(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// fail answers err; an internal_error is logged and counted (api
	// "none": no model call) at stage, the emission's point once known.
	var session string
	var point enforcement.Point
	fail := func(stage string, err error) {
		writeError(w, s.callError(apiNone, session, stage, point, err))
	}
	pol, p, body, err := s.admitRequest(w, r)
	if err != nil {
		fail(stageAdmission, err)
		return
	}
	if err := s.authorize(ctx, p, config.APIEmit, ""); err != nil {
		fail(stageAdmission, err)
		return
	}
	point, builder, fields, err := s.parseEmit(body, p)
	if err != nil {
		fail(stageAdmission, err)
		return
	}
	out, err := s.emitFor(ctx, pol, p, point, builder, fields)
	session = builder.SessionID // the session's trail id, once emitFor resolved it
	if err != nil {
		fail(string(point), err)
		return
	}
	vb, err := out.Verdict.MarshalJSON()
	if err != nil {
		fail(stageRelease, err)
		return
	}
	tb, err := jsonvalue.Marshal(out.Target())
	if err != nil {
		fail(stageRelease, err)
		return
	}
	b, err := json.Marshal(emitAnswer{Proceed: out.Proceed, Mode: out.Mode, Verdict: vb, Target: tb, Record: out.Record})
	if err != nil {
		fail(stageRelease, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// parseEmit validates an emit body before anything consumes a sequence
// number: every error is a 400 naming the field.
func (s *Server) parseEmit(body []byte, p Principal) (enforcement.Point, *enforcement.Builder, map[string]any, error) {
	bad := func(param, msg string) error {
		return &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: "invalid_request", message: msg, param: param}
	}
	obj, err := decodeObject(body)
	if err != nil {
		return "", nil, nil, err
	}
	for _, k := range gatewayOwned {
		if _, ok := obj[k]; ok {
			return "", nil, nil, bad(k, k+" is set by the gateway and must not be sent")
		}
	}
	if ext, ok := obj["extensions"].(map[string]any); ok {
		if _, ok := ext[ExtensionNamespace]; ok {
			// Policies read the gateway's facts there (the route, the
			// surface, an MCP method): a context may not assert them.
			return "", nil, nil, bad("extensions."+ExtensionNamespace, "extensions."+ExtensionNamespace+" is set by the gateway and must not be sent")
		}
	}
	ps, _ := obj["interception_point"].(string)
	point := enforcement.Point(ps)
	if !point.Valid() {
		return "", nil, nil, bad("interception_point", "interception_point must be one of the eight interception points")
	}
	agent, _ := obj["agent"].(map[string]any)
	id, _ := agent["id"].(string)
	framework, _ := agent["framework"].(string)
	if id == "" && p.authenticated() {
		id = p.AgentID
	}
	if id == "" || framework == "" {
		return "", nil, nil, bad("agent", "agent must be an object with non-empty string id and framework")
	}
	if !enforcement.ValidFramework(framework) {
		return "", nil, nil, bad("agent.framework", "agent.framework must match ^[a-z0-9_-]+$")
	}
	if p.authenticated() && id != p.AgentID {
		return "", nil, nil, identityMismatch("agent.id", "names another agent than the one the API key stands for")
	}
	name, _ := agent["name"].(string)
	version, _ := agent["version"].(string)
	session, _ := obj["session"].(map[string]any)
	sid, _ := session["id"].(string)
	if err := sessions.ValidateID(sid); err != nil {
		return "", nil, nil, bad("session.id", err.Error())
	}
	fields := make(map[string]any, len(obj))
	for k, v := range obj {
		switch k {
		case "interception_point", "agent":
		default:
			fields[k] = v
		}
	}
	if err := enforcement.CheckConditional(point, fields); err != nil {
		param := string(point)
		var fe *enforcement.FieldError
		if errors.As(err, &fe) {
			param = fe.Field
		}
		return "", nil, nil, bad(param, err.Error())
	}
	if err := s.checkEmitSchema(point, obj, id); err != nil {
		return "", nil, nil, err
	}
	// The tenant is the key's: a context may repeat it, never choose it.
	if t, ok := fields["tenant"]; ok {
		tm, _ := t.(map[string]any)
		if tid, _ := tm["id"].(string); tid == "" || tid != p.Tenant {
			return "", nil, nil, identityMismatch("tenant", "is the API key's tenant and cannot be chosen by the context")
		}
	}
	if p.Tenant != "" {
		fields["tenant"] = map[string]any{"id": p.Tenant}
	}
	b := &enforcement.Builder{
		Agent:     enforcement.Agent{ID: id, Framework: framework, Name: name, Version: version},
		SessionID: sid,
		Stamps:    &s.stamps,
		Now:       s.opts.Now,
	}
	return point, b, fields, nil
}

// emitFor runs one emitted context against the session's state: the
// session's first emission must be agent_startup (it claims the session for
// p's key, and the session's other emissions wait for its verdict),
// agent_shutdown ends it exactly once after the calls in flight, nothing
// follows either a denied startup or the shutdown, and each post_tool_call
// pairs with a pre_tool_call that proceeded (spec §3.1(5)).
func (s *Server) emitFor(ctx context.Context, pol *Policy, p Principal, point enforcement.Point, b *enforcement.Builder, fields map[string]any) (*enforcement.Outcome, error) {
	store := s.opts.Store
	if store == nil {
		return nil, errorf(http.StatusBadRequest, typeSession, "sessions_disabled", "managed sessions are not configured on this gateway")
	}
	id := b.SessionID
	key, err := sessionKey(p, id)
	if err != nil {
		return nil, err
	}
	b.SessionID = trailSessionID(key, "") // with its incarnation once the store named it
	model, _ := fields["model"].(map[string]any)
	modelID, _ := model["id"].(string)
	em := pol.EmitterFor(routeRequest(p, b.Agent.ID, modelID))
	conflict := func(code, msg string) error {
		return &apiError{status: http.StatusConflict, typ: typeSession, code: code, message: msg, session: id, point: point}
	}
	storeErr := func(err error) error {
		if ae := asAPIError(s.sessionStoreError(ctx, pol, err, id, point)); ae != nil {
			ae.point = point
			return ae
		}
		return err
	}
	b.Sequence = sessions.Sequence(store, key)
	var toolCallID string
	switch point {
	case enforcement.AgentStartup:
		claimed, st, err := store.Begin(ctx, key, sessions.Owner{KeyID: p.KeyID, AgentID: b.Agent.ID})
		switch {
		case err != nil:
			return nil, storeErr(err)
		case st.Ended:
			return nil, sessionEnded(id, point)
		case !claimed:
			return nil, conflict("session_already_started", "agent_startup was already emitted for this session")
		}
		b.SessionID = trailSessionID(key, st.Incarnation)
		b.Sequence = &reservedFirst{next: b.Sequence}
	default:
		st, exists, err := store.Status(ctx, key)
		switch {
		case err != nil:
			return nil, storeErr(err)
		case !exists:
			return nil, conflict("session_not_started", "emit agent_startup first: it opens the session")
		case st.Owner.KeyID != p.KeyID:
			return nil, sessionNotFound(id, point)
		case st.Owner.AgentID != b.Agent.ID:
			return nil, agentMismatch(id, point)
		}
		b.SessionID = trailSessionID(key, st.Incarnation)
		if st, err = s.awaitStartup(ctx, key, st); err != nil {
			if ae, ok := startupWaitError(err, id, point); ok {
				return nil, ae
			}
			return nil, storeErr(err)
		}
		switch {
		case st.Ended:
			return nil, sessionEnded(id, point)
		case st.Blocked && point != enforcement.AgentShutdown:
			return nil, conflict("session_blocked", "the session was denied at agent_startup: only agent_shutdown may follow")
		}
		switch point {
		case enforcement.AgentShutdown:
			if summary, _ := fields["summary"].(map[string]any); st.Blocked && summary["reason"] != enforcement.ShutdownError {
				return nil, conflict("shutdown_reason", "a session denied at agent_startup ends with summary.reason error (spec §6.1a)")
			}
			won, _, err := store.End(ctx, key, sessions.Owner{KeyID: p.KeyID, AgentID: b.Agent.ID})
			switch {
			case err != nil:
				return nil, storeErr(err)
			case !won:
				return nil, sessionEnded(id, point)
			}
			s.dropMemo(key)
			s.awaitCalls(context.WithoutCancel(ctx), key)
			b.Sequence = sealSequence{store: store, key: key}
		case enforcement.PreToolCall, enforcement.PostToolCall:
			call, _ := fields["tool_call"].(map[string]any)
			toolCallID, _ = call["id"].(string)
			if point == enforcement.PostToolCall {
				paired, err := store.CloseToolCall(ctx, key, toolCallID)
				switch {
				case err != nil:
					return nil, storeErr(err)
				case !paired:
					return nil, conflict("tool_call_unpaired", "post_tool_call needs an earlier pre_tool_call with the same tool_call.id that proceeded, and pairs with it once")
				}
			}
		}
	}
	t := &turn{s: s, pol: pol, em: em, builder: b, managed: true, key: key}
	out, err := t.emit(ctx, point, fields)
	if point == enforcement.AgentStartup {
		if sErr := s.settleStartup(ctx, pol, key, err); err == nil && sErr != nil {
			return nil, sErr
		}
	}
	var blocked *enforcement.BlockedError
	switch {
	case errors.As(err, &blocked):
		return blocked.Outcome, nil
	case err != nil:
		return nil, err
	}
	if point == enforcement.PreToolCall && out.Proceed {
		// The caller runs the tool on this answer: its post_tool_call must
		// find the pairing, or the answer would not hold.
		if err := store.OpenToolCall(ctx, key, toolCallID); err != nil {
			return nil, storeErr(err)
		}
	}
	return out, nil
}
