package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// handleEndSession serves POST /v1/agent-hooks/sessions/{id}/end with an
// optional body {"reason": "completed"|"error"|"cancelled"}. Exactly one
// caller across replicas wins the end; it waits (up to Options.EndWait)
// for the session's calls in flight and emits agent_shutdown, with reason
// error for a session denied at agent_startup. Only the key that claimed
// the session may end it; any other is told it does not exist.
func (s *Server) handleEndSession(w http.ResponseWriter, r *http.Request) {
	pol := s.Policy()
	p, err := s.authenticate(r, pol)
	if err == nil {
		err = s.authorize(r.Context(), p, config.APISessions, "")
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if s.opts.Store == nil {
		writeError(w, errorf(http.StatusBadRequest, typeSession, "sessions_disabled", "managed sessions are not configured on this gateway"))
		return
	}
	id := chi.URLParam(r, "id")
	reason := enforcement.ShutdownCompleted
	body, err := readBody(w, r, 4<<10)
	if err != nil {
		writeError(w, err)
		return
	}
	if len(body) > 0 {
		in, err := decodeObject(body)
		if err != nil {
			writeError(w, err)
			return
		}
		switch v := in["reason"].(type) {
		case nil: // absent or null: the default
		case string:
			reason = v
		default:
			writeError(w, &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: "invalid_request", message: "reason must be a string", param: "reason"})
			return
		}
	}
	switch reason {
	case enforcement.ShutdownCompleted, enforcement.ShutdownError, enforcement.ShutdownCancelled:
	default:
		writeError(w, &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: "invalid_request", message: "reason must be completed, error or cancelled", param: "reason"})
		return
	}
	key, err := sessionKey(p, id)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.checkEndingAgent(r, p, key); err != nil {
		writeError(w, err)
		return
	}
	won, st, err := s.opts.Store.End(r.Context(), key, sessions.Owner{KeyID: p.KeyID})
	switch {
	case errors.Is(err, sessions.ErrUnknownSession), errors.Is(err, sessions.ErrForeignSession):
		writeError(w, sessionNotFound(id, ""))
		return
	case errors.Is(err, sessions.ErrInvalidSessionID):
		writeError(w, &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: "invalid_session_id", message: err.Error()})
		return
	case err != nil:
		s.log.Warn("session store failure", "session", id, "error", err)
		writeError(w, hostFailure(enforcement.AgentShutdown, id, errStore.Error()))
		return
	case !won:
		writeError(w, &apiError{status: http.StatusConflict, typ: typeSession, code: "session_ended", message: "the session has already ended", session: id})
		return
	}
	if st.Blocked {
		reason = enforcement.ShutdownError // spec §6.1a: a session denied at startup ends in error
	}
	rec := s.shutdownManaged(r.Context(), key, st.Owner, st.Incarnation, reason)
	w.Header().Set("Content-Type", "application/json")
	out := map[string]any{"session_id": id, "ended": true, "reason": reason}
	if rec != nil {
		out["record"] = rec
	}
	json.NewEncoder(w).Encode(out)
}

// checkEndingAgent refuses to end a session for an agent other than its
// own, as model calls and the emit API refuse to act in it: a key's agent,
// or without keys the agent the request asserts (Agent-Hooks-Agent). A
// request without keys that asserts no agent ends the session as before.
func (s *Server) checkEndingAgent(r *http.Request, p Principal, key sessions.Key) error {
	agentID, err := s.requestAgent(r, p)
	if err != nil || agentID == "" || p.authenticated() {
		return err // a key's sessions are its agent's
	}
	st, exists, err := s.opts.Store.Status(r.Context(), key)
	switch {
	case err != nil:
		s.log.Warn("session store failure", "session", key.ID, "error", err)
		return hostFailure(enforcement.AgentShutdown, key.ID, errStore.Error())
	case !exists:
		return sessionNotFound(key.ID, "")
	case st.Owner.AgentID != agentID:
		return agentMismatch(key.ID, "")
	}
	return nil
}

// handleModels serves GET /v1/models from the configured upstreams, less
// the models the client's key may not call.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	pol := s.Policy()
	p, err := s.authenticate(r, pol)
	if err != nil {
		writeError(w, err)
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	data := []model{}
	for _, id := range pol.Router.Models() {
		if p.allowsModel(id) {
			data = append(data, model{ID: id, Object: "model", OwnedBy: "hooks-gateway"})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

// handleHealth is liveness: the process serves HTTP.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"status":"ok"}`)
}

// handleReady is readiness: a policy is loaded and the session store
// answers. A gateway whose store is down would fail every managed request
// closed, so it leaves the load balancer's rotation until the store returns.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if s.Policy() == nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"status":"unavailable","reason":"no policy loaded"}`)
		return
	}
	if s.opts.Store != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.opts.Store.Ping(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"status":"unavailable","reason":"session store unreachable"}`)
			return
		}
	}
	io.WriteString(w, `{"status":"ready"}`)
}
