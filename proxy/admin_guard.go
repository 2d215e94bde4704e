package proxy

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// adminGuard protects the admin endpoints from browsers driven by other
// sites. Without an admin token (a loopback listener, which config
// validation demands) a request must name the admin listener itself as
// its Host, so a DNS-rebinding page, whose requests name its own host,
// reads and decides nothing. With or without a token, a state-changing
// request (POST) must come from the admin origin itself: it is refused
// when the browser says it is cross-site or same-site (Sec-Fetch-Site) or
// when its Origin is not the Host it was sent to.
func (s *Server) adminGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.AdminToken == "" && !s.adminHost(r) {
			writeError(w, errorf(http.StatusMisdirectedRequest, typeAuth, "admin_host_refused",
				"the admin endpoints answer only requests addressed to the admin listener (Host: its address, localhost or 127.0.0.1 with its port)"))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			switch r.Header.Get("Sec-Fetch-Site") {
			case "cross-site", "same-site":
				writeError(w, errorf(http.StatusForbidden, typeAuth, "cross_site_request", "admin changes must come from the admin page or a non-browser client, not from another site"))
				return
			}
			if o := r.Header.Get("Origin"); o != "" && !originIsHost(o, r.Host) {
				writeError(w, errorf(http.StatusForbidden, typeAuth, "cross_origin_request", "the request's Origin is not the admin address it was sent to"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// originIsHost reports whether origin (scheme://host[:port]) names host.
func originIsHost(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}

// adminHost reports whether r's Host names the admin listener: its
// configured host, or localhost, 127.0.0.1 or [::1], with the port the
// connection arrived on (the configured one; also right for port 0).
func (s *Server) adminHost(r *http.Request) bool {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "80"
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil {
		return false
	}
	_, localPort, err := net.SplitHostPort(local.String())
	if err != nil || port != localPort {
		return false
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") || host == "127.0.0.1" || host == "::1" {
		return true
	}
	cfgHost, _, err := net.SplitHostPort(s.opts.AdminAddr)
	return err == nil && cfgHost != "" && strings.EqualFold(host, cfgHost)
}

// requireJSON refuses a state-changing request that is not
// application/json, which a cross-site form cannot send.
func requireJSON(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			writeError(w, errorf(http.StatusUnsupportedMediaType, typeInvalid, "unsupported_media_type", "admin changes are sent as Content-Type: application/json"))
			return
		}
		next(w, r)
	}
}
