package proxy

import (
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hooks-gateway/hooks-gateway/approvals"
)

// The approvals page: a server-rendered list of pending approvals with
// Approve and Reject buttons, plain HTML forms and no script.
//
// CSRF: the page sits behind the admin token (a browser sends it as HTTP
// Basic credentials, which it would also attach to a forged cross-site
// POST), so the form endpoint additionally requires the request to come
// from the page's own origin: its Origin header, or failing that its
// Referer, must name the host the request was sent to. A POST with
// neither is refused. The page also forbids framing and any script.

//go:embed admin_approvals.html
var approvalsPageSource string

var approvalsPage = template.Must(template.New("approvals").Parse(approvalsPageSource))

// pageCSP allows the page's inline style and form posts to itself only.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// pageData is what the page template renders.
type pageData struct {
	// Base is the admin root the links and forms point under ("/admin").
	Base      string
	Notice    string
	Approvals []pageApproval
}

type pageApproval struct {
	approvals.Approval
	Age, Left string
	// Context is the redacted context, indented.
	Context string
}

func (s *Server) mountApprovalsPage(r chi.Router) {
	r.Get("/", s.approvalsPage)
	r.Post("/approvals/{id}/decide", s.decideFromPage)
}

// adminBase is the path the admin routes are mounted under.
func adminBase(r *http.Request) string {
	p := r.URL.Path
	if i := strings.Index(p, "/approvals/"); i >= 0 {
		return p[:i]
	}
	return strings.TrimSuffix(p, "/")
}

func (s *Server) approvalsPage(w http.ResponseWriter, r *http.Request) {
	q := s.queue(w)
	if q == nil {
		return
	}
	list, err := q.List(r.Context())
	if err != nil {
		s.approvalStoreError(w, err)
		return
	}
	now := time.Now()
	data := pageData{Base: adminBase(r), Notice: noticeText(r.URL.Query().Get("done"))}
	for _, a := range list {
		var req struct {
			Context json.RawMessage `json:"context"`
		}
		_ = json.Unmarshal(a.Request, &req)
		data.Approvals = append(data.Approvals, pageApproval{
			Approval: a,
			Age:      now.Sub(a.Created).Round(time.Second).String(),
			Left:     a.Deadline.Sub(now).Round(time.Second).String(),
			Context:  indentJSON(req.Context),
		})
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if err := approvalsPage.Execute(w, data); err != nil {
		s.log.Warn("approvals page failed", "error", err)
	}
}

// noticeText is the confirmation shown after a decision (fixed strings:
// nothing from the query is echoed).
func noticeText(done string) string {
	switch done {
	case approvals.Approve:
		return "Approved."
	case approvals.Reject:
		return "Rejected."
	}
	return ""
}

func (s *Server) decideFromPage(w http.ResponseWriter, r *http.Request) {
	if s.queue(w) == nil {
		return
	}
	if !sameOrigin(r) {
		writeError(w, errorf(http.StatusForbidden, typeAuth, "cross_origin_form", "decisions from the page must come from the page's own origin (Origin or Referer)"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxDecisionBytes)
	if err := r.ParseForm(); err != nil {
		writeError(w, errorf(http.StatusBadRequest, typeInvalid, "invalid_decision", "the form could not be read"))
		return
	}
	d := approvals.Decision{Outcome: r.PostForm.Get("decision"), Message: strings.TrimSpace(r.PostForm.Get("message"))}
	s.decide(w, r, d, func(approvals.Approval) {
		http.Redirect(w, r, adminBase(r)+"/?done="+url.QueryEscape(d.Outcome), http.StatusSeeOther)
	})
}

// sameOrigin reports whether r's Origin (or, without one, its Referer)
// names the host r was sent to.
func sameOrigin(r *http.Request) bool {
	src := r.Header.Get("Origin")
	if src == "" || src == "null" {
		src = r.Header.Get("Referer")
	}
	if src == "" {
		return false
	}
	u, err := url.Parse(src)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}
