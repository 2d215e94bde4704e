package proxy

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// Admin surface. The admin endpoints (policy version and reload,
// approvals) are served under /admin: on the main listener when
// Options.AdminOnMain is set (then only with a bearer token, AdminToken),
// and always by AdminHandler, which the binary serves on listeners.admin.
//
// Each admin feature mounts its routes from its own file (mountPolicyAdmin,
// mountApprovalsAdmin), so features stay independent.

// AdminHandler returns the admin endpoints, rooted at /admin, guarded by
// Options.AdminToken when one is set.
func (s *Server) AdminHandler() http.Handler {
	r := chi.NewRouter()
	r.Mount("/admin", s.adminRoutes())
	r.NotFound(notFound)
	return r
}

// adminRoutes are the admin endpoints relative to /admin, behind adminAuth.
func (s *Server) adminRoutes() http.Handler {
	r := chi.NewRouter()
	r.Use(s.adminGuard, s.adminAuth)
	s.mountPolicyAdmin(r)
	s.mountApprovalsAdmin(r)
	r.NotFound(notFound)
	return r
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, errorf(http.StatusNotFound, typeNotFound, "not_found", "no route for %s %s", r.Method, r.URL.Path))
}

// adminAuth requires the admin token, as a bearer token or as the password
// of HTTP Basic authentication (so a browser can open the admin page), when
// one is configured.
func (s *Server) adminAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := s.opts.AdminToken
		if token == "" {
			next.ServeHTTP(w, r)
			return
		}
		got := ""
		if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
			got = strings.TrimPrefix(h, "Bearer ")
		} else if _, pw, ok := r.BasicAuth(); ok {
			got = pw
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="hooks-gateway admin"`)
			writeError(w, errorf(http.StatusUnauthorized, typeAuth, "invalid_admin_token", "the admin endpoints need the admin token (Authorization: Bearer <token>)"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeJSON answers status with v as a JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
