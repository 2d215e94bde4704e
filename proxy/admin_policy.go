package proxy

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// mountPolicyAdmin serves the policy in effect (GET /admin/policy) and
// reloads it from its files (POST /admin/reload).
func (s *Server) mountPolicyAdmin(r chi.Router) {
	r.Get("/policy", func(w http.ResponseWriter, _ *http.Request) {
		if rl := s.Reloader(); rl != nil {
			writeJSON(w, http.StatusOK, rl.Status())
			return
		}
		st := PolicyStatus{}
		if p := s.Policy(); p != nil {
			st.Version, st.Sources = p.Version, p.Sources
		}
		writeJSON(w, http.StatusOK, st)
	})
	r.Post("/reload", requireJSON(func(w http.ResponseWriter, r *http.Request) {
		rl := s.Reloader()
		if rl == nil {
			writeError(w, errorf(http.StatusNotImplemented, typeInvalid, "reload_unavailable", "this gateway's policy cannot be reloaded"))
			return
		}
		res, err := rl.Reload(r.Context())
		if err != nil {
			// The error names files, lines and fields, never payload: the
			// operator needs it verbatim to fix the policy.
			body := map[string]any{"reloaded": false, "version": rl.Status().Version, "error": err.Error()}
			var cerr *config.Error
			if errors.As(err, &cerr) {
				problems := make([]string, len(cerr.Problems))
				for i, p := range cerr.Problems {
					problems[i] = p.String()
				}
				body["problems"] = problems
			}
			writeJSON(w, http.StatusUnprocessableEntity, body)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"reloaded": res.Changed, "version": res.Version})
	}))
}
