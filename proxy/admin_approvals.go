package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/hooks-gateway/hooks-gateway/approvals"
)

// maxDecisionBytes bounds a decision body (a transform value included).
const maxDecisionBytes = 1 << 20

// mountApprovalsAdmin serves the approval queue: JSON endpoints under
// /admin/approvals and the page at /admin/ (admin_approvals_page.go).
//
//	GET  /admin/approvals       {"approvals": [pending approvals, oldest first]}
//	GET  /admin/approvals/{id}  one approval, pending or decided
//	POST /admin/approvals/{id}  {"decision": "approve"|"reject", "message": "…",
//	                             "transform": {"path": "$target…", "value": …}}
//
// The POST requires Content-Type: application/json, which a cross-site
// form cannot send: together with the admin token this keeps other sites
// from deciding through a logged-in browser.
func (s *Server) mountApprovalsAdmin(r chi.Router) {
	r.Get("/approvals", s.listApprovals)
	r.Get("/approvals/{id}", s.getApproval)
	r.Post("/approvals/{id}", s.decideApproval)
	s.mountApprovalsPage(r)
}

// queue returns the approval queue, or answers 404 when there is none.
func (s *Server) queue(w http.ResponseWriter) *approvals.Queue {
	if s.opts.Approvals == nil {
		writeError(w, errorf(http.StatusNotFound, typeNotFound, "no_approval_queue", "no approval queue is configured (approvals.resolver is not queue)"))
	}
	return s.opts.Approvals
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	q := s.queue(w)
	if q == nil {
		return
	}
	list, err := q.List(r.Context())
	if err != nil {
		s.approvalStoreError(w, err)
		return
	}
	if list == nil {
		list = []approvals.Approval{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": list})
}

func (s *Server) getApproval(w http.ResponseWriter, r *http.Request) {
	q := s.queue(w)
	if q == nil {
		return
	}
	a, err := q.Get(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.approvalError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// decisionBody is the JSON a POST /admin/approvals/{id} carries.
type decisionBody struct {
	Decision  string               `json:"decision"`
	Message   string               `json:"message"`
	Transform *approvals.Transform `json:"transform"`
}

func (s *Server) decideApproval(w http.ResponseWriter, r *http.Request) {
	q := s.queue(w)
	if q == nil {
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeError(w, errorf(http.StatusUnsupportedMediaType, typeInvalid, "unsupported_media_type", "a decision is sent as Content-Type: application/json"))
		return
	}
	var body decisionBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxDecisionBytes))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil || dec.More() {
		writeError(w, errorf(http.StatusBadRequest, typeInvalid, "invalid_decision", `the body must be one JSON object {"decision": "approve"|"reject", "message": "…", "transform": {"path": …, "value": …}}`))
		return
	}
	s.decide(w, r, approvals.Decision{Outcome: body.Decision, Message: body.Message, Transform: body.Transform}, func(a approvals.Approval) {
		writeJSON(w, http.StatusOK, a)
	})
}

// decide records d for the {id} of r and calls done with the decided
// approval, or answers the error.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, d approvals.Decision, done func(approvals.Approval)) {
	q := s.opts.Approvals
	id := chi.URLParam(r, "id")
	if err := q.Decide(r.Context(), id, d); err != nil {
		s.approvalError(w, err)
		return
	}
	a, err := q.Get(r.Context(), id)
	if err != nil {
		s.approvalError(w, err)
		return
	}
	s.log.Info("approval decided", "approval", id, "outcome", d.Outcome, "point", a.Point, "session", a.SessionID)
	done(a)
}

// approvalError answers a queue error: 404, 409, 400 for an invalid
// decision, 503 for a store failure.
func (s *Server) approvalError(w http.ResponseWriter, err error) {
	var invalid *approvals.InvalidDecisionError
	switch {
	case errors.Is(err, approvals.ErrNotFound):
		writeError(w, errorf(http.StatusNotFound, typeNotFound, "approval_not_found", "no such approval (unknown, or expired)"))
	case errors.Is(err, approvals.ErrConflict):
		writeError(w, errorf(http.StatusConflict, typeInvalid, "approval_decided", "the approval was already decided or timed out"))
	case errors.As(err, &invalid):
		writeError(w, errorf(http.StatusBadRequest, typeInvalid, "invalid_decision", "%s", invalid.Error()))
	default:
		s.approvalStoreError(w, err)
	}
}

func (s *Server) approvalStoreError(w http.ResponseWriter, err error) {
	s.log.Warn("approval store failed", "error", err)
	writeError(w, errorf(http.StatusServiceUnavailable, typeGatewayError, "approval_store_failed", "the approval store is unavailable"))
}

// indentJSON is raw re-indented for display, without JSON's \u003c-style
// HTML escaping (the page's template escapes); raw itself on failure.
func indentJSON(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return b.String()
}
