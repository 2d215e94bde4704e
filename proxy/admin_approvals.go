package proxy

import "github.com/go-chi/chi/v5"

// mountApprovalsAdmin serves the approval queue (none yet).
func (s *Server) mountApprovalsAdmin(chi.Router) {}
