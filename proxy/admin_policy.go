package proxy

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// mountPolicyAdmin serves the active policy's version.
func (s *Server) mountPolicyAdmin(r chi.Router) {
	r.Get("/policy", func(w http.ResponseWriter, _ *http.Request) {
		version := ""
		if p := s.Policy(); p != nil {
			version = p.Version
		}
		writeJSON(w, http.StatusOK, map[string]any{"version": version})
	})
}
