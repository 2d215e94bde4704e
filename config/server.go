package config

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// Defaults of the server section: what a client may hold of the gateway's
// sockets and handlers.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultServerIdleTimeout = 120 * time.Second
	DefaultMaxConnections    = 4096
	DefaultProbeConnections  = 16
	DefaultMaxRequests       = 1024
)

// Server bounds what clients can hold of the main listener: how long a
// request may take to arrive, how long an idle connection stays, how many
// connections and requests run at once. There is no write timeout: a
// buffered stream may take as long as its upstream (upstreams[].timeout).
type Server struct {
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, headers and body: a body
	// still arriving then is cut and its connection closed.
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle that long.
	IdleTimeout time.Duration
	// MaxConnections caps the client connections open at once; beyond it
	// (and the probe reserve) a connection is closed as soon as accepted.
	MaxConnections int
	// ProbeConnections are admitted beyond MaxConnections for /healthz,
	// /readyz and /metrics only.
	ProbeConnections int
	// MaxRequests caps the requests handled at once (probes not counted);
	// beyond it a request is answered 503 with Retry-After at once.
	MaxRequests int
	// MaxRequestsPerClient caps the requests one client (its key, or its
	// address without keys) holds at once, so one client cannot take every
	// slot; 0 is a quarter of MaxRequests (ClientCap).
	MaxRequestsPerClient int
}

// ClientCap is the per-client cap in effect: MaxRequestsPerClient, or a
// quarter of MaxRequests (at least 1) when it is unset.
func (s Server) ClientCap() int {
	if s.MaxRequestsPerClient > 0 {
		return s.MaxRequestsPerClient
	}
	return max(1, s.MaxRequests/4)
}

func defaultServer() Server {
	return Server{
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		ReadTimeout:       DefaultReadTimeout,
		IdleTimeout:       DefaultServerIdleTimeout,
		MaxConnections:    DefaultMaxConnections,
		ProbeConnections:  DefaultProbeConnections,
		MaxRequests:       DefaultMaxRequests,
	}
}

func (d *decoder) server(n *yaml.Node, field string, s *Server) {
	d.mapping(n, field, map[string]handler{
		"read_header_timeout": func(f string, v *yaml.Node) { s.ReadHeaderTimeout = d.duration(v, f, s.ReadHeaderTimeout) },
		"read_timeout":        func(f string, v *yaml.Node) { s.ReadTimeout = d.duration(v, f, s.ReadTimeout) },
		"idle_timeout":        func(f string, v *yaml.Node) { s.IdleTimeout = d.duration(v, f, s.IdleTimeout) },
		"max_connections":     func(f string, v *yaml.Node) { s.MaxConnections = int(d.int(v, f, int64(s.MaxConnections))) },
		"probe_connections":   func(f string, v *yaml.Node) { s.ProbeConnections = int(d.int(v, f, int64(s.ProbeConnections))) },
		"max_requests":        func(f string, v *yaml.Node) { s.MaxRequests = int(d.int(v, f, int64(s.MaxRequests))) },
		"max_requests_per_client": func(f string, v *yaml.Node) {
			if s.MaxRequestsPerClient = int(d.int(v, f, 1)); s.MaxRequestsPerClient <= 0 {
				d.ps.add(v.Line, f, "must be positive (leave it out for a quarter of max_requests)")
			}
		},
	})
}

func (v *validator) server() {
	s := v.c.Server
	for _, k := range []struct {
		key string
		d   time.Duration
	}{{"read_header_timeout", s.ReadHeaderTimeout}, {"read_timeout", s.ReadTimeout}, {"idle_timeout", s.IdleTimeout}} {
		if k.d <= 0 {
			v.problem("server."+k.key, "must be positive (got %s)", k.d)
		}
	}
	if s.ReadHeaderTimeout > 0 && s.ReadTimeout > 0 && s.ReadTimeout < s.ReadHeaderTimeout {
		v.problem("server.read_timeout", "must be at least server.read_header_timeout (%s): it bounds the headers and the body together (got %s)", s.ReadHeaderTimeout, s.ReadTimeout)
	}
	for _, k := range []struct {
		key string
		n   int
	}{{"max_connections", s.MaxConnections}, {"probe_connections", s.ProbeConnections}, {"max_requests", s.MaxRequests}} {
		if k.n <= 0 {
			v.problem("server."+k.key, "must be positive (got %d)", k.n)
		}
	}
	if s.MaxRequestsPerClient > s.MaxRequests && s.MaxRequests > 0 {
		v.problem("server.max_requests_per_client", "must be at most server.max_requests (%d) (got %d)", s.MaxRequests, s.MaxRequestsPerClient)
	}
}
