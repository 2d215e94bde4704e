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
	policyfile "github.com/hooks-gateway/hooks-gateway/policy"
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
	pol, p, body, err := s.admitRequest(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.authorize(ctx, p, config.APIEmit, ""); err != nil {
		writeError(w, err)
		return
	}
	point, builder, fields, err := s.parseEmit(body, p)
	if err != nil {
		writeError(w, err)
		return
	}
	out, err := s.emitFor(ctx, pol, pol.EmitterFor(emitRoute(builder, fields, p)), point, builder, fields)
	if err != nil {
		writeError(w, err)
		return
	}
	vb, err := out.Verdict.MarshalJSON()
	if err != nil {
		writeError(w, err)
		return
	}
	tb, err := jsonvalue.Marshal(out.Target())
	if err != nil {
		writeError(w, err)
		return
	}
	b, err := json.Marshal(emitAnswer{Proceed: out.Proceed, Mode: out.Mode, Verdict: vb, Target: tb, Record: out.Record})
	if err != nil {
		writeError(w, err)
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
	ps, _ := obj["interception_point"].(string)
	point := enforcement.Point(ps)
	if !point.Valid() {
		return "", nil, nil, bad("interception_point", "interception_point must be one of the eight interception points")
	}
	agent, _ := obj["agent"].(map[string]any)
	id, _ := agent["id"].(string)
	framework, _ := agent["framework"].(string)
	if p.AgentID != "" {
		id = p.AgentID
	}
	if id == "" || framework == "" {
		return "", nil, nil, bad("agent", "agent must be an object with non-empty string id and framework")
	}
	if !enforcement.ValidFramework(framework) {
		return "", nil, nil, bad("agent.framework", "agent.framework must match ^[a-z0-9_-]+$")
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
	if p.Tenant != "" {
		fields["tenant"] = map[string]any{"id": p.Tenant}
	}
	b := &enforcement.Builder{
		Agent:     enforcement.Agent{ID: id, Framework: framework, Name: name, Version: version},
		SessionID: sid,
	}
	return point, b, fields, nil
}

// emitFor runs one emitted context against the session's state: the
// session's first emission must be agent_startup (it claims the session),
// agent_shutdown ends it exactly once, and nothing follows either a denied
// startup or the shutdown.
func (s *Server) emitFor(ctx context.Context, pol *Policy, em *enforcement.Emitter, point enforcement.Point, b *enforcement.Builder, fields map[string]any) (*enforcement.Outcome, error) {
	store := s.opts.Store
	if store == nil {
		return nil, errorf(http.StatusBadRequest, typeSession, "sessions_disabled", "managed sessions are not configured on this gateway")
	}
	id := b.SessionID
	conflict := func(code, msg string) error {
		return &apiError{status: http.StatusConflict, typ: typeSession, code: code, message: msg, session: id, point: point}
	}
	storeDown := func(err error) error {
		em.RecordHostFailure(ctx, enforcement.HostFailure{Point: point, SessionID: id, Sequence: -1, Message: "session store unavailable"})
		s.log.Warn("session store failure", "session", id, "error", err)
		return hostFailure(point, id, errStore.Error())
	}
	b.Sequence = sessions.Sequence(store, id)
	switch point {
	case enforcement.AgentStartup:
		claimed, st, err := store.Begin(ctx, id)
		switch {
		case err != nil:
			return nil, storeDown(err)
		case st.Ended:
			return nil, conflict("session_ended", "the session has ended")
		case !claimed:
			return nil, conflict("session_already_started", "agent_startup was already emitted for this session")
		}
		b.Sequence = &reservedFirst{next: b.Sequence}
	default:
		st, exists, err := store.Status(ctx, id)
		switch {
		case err != nil:
			return nil, storeDown(err)
		case !exists:
			return nil, conflict("session_not_started", "emit agent_startup first: it opens the session")
		case st.Ended:
			return nil, conflict("session_ended", "the session has ended")
		case st.Blocked && point != enforcement.AgentShutdown:
			return nil, conflict("session_blocked", "the session was denied at agent_startup: only agent_shutdown may follow")
		}
		if point == enforcement.AgentShutdown {
			won, err := store.End(ctx, id)
			switch {
			case err != nil:
				return nil, storeDown(err)
			case !won:
				return nil, conflict("session_ended", "the session has ended")
			}
		}
	}
	t := &turn{s: s, pol: pol, em: em, builder: b, managed: true}
	out, err := t.emit(ctx, point, fields)
	var blocked *enforcement.BlockedError
	switch {
	case errors.As(err, &blocked):
		if point == enforcement.AgentStartup {
			if bErr := store.Block(context.WithoutCancel(ctx), id); bErr != nil {
				s.log.Warn("could not mark session blocked", "session", id, "error", bErr)
			}
		}
		return blocked.Outcome, nil
	case err != nil:
		return nil, err
	}
	return out, nil
}

// emitRoute is what an emitted context is routed by: its agent, its tenant
// (the principal's, else the context's), the model it names, if any, and
// the client key.
func emitRoute(b *enforcement.Builder, fields map[string]any, p Principal) policyfile.Request {
	tenant, _ := fields["tenant"].(map[string]any)
	model, _ := fields["model"].(map[string]any)
	r := policyfile.Request{AgentID: b.Agent.ID, APIKey: p.KeyID}
	r.Tenant, _ = tenant["id"].(string)
	r.Model, _ = model["id"].(string)
	return r
}
