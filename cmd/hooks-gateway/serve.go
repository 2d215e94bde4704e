package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/netguard"
	"github.com/hooks-gateway/hooks-gateway/metrics"
)

// probeReadTimeout bounds all reading on a connection admitted from the
// probe reserve: a probe sends its request at once, and a client trickling
// its headers must not keep a reserve slot.
const probeReadTimeout = 2 * time.Second

// fdHeadroom is the file descriptors kept out of the connection cap for
// what else the gateway opens: upstream and Redis connections, record
// files, the admin listener.
const fdHeadroom = 256

// cutGrace bounds how long, once the drain timeout has passed and the
// requests still running were cancelled, the gateway waits for them to
// close their sessions' trails (agent_shutdown, lease release) before the
// record sinks are flushed and the process exits.
const cutGrace = 10 * time.Second

// newHTTPServer serves h with the server section's timeouts. There is no
// WriteTimeout: a buffered stream may run as long as its upstream call.
// Request contexts derive from base, which the shutdown cancels past the
// drain timeout.
func newHTTPServer(sc config.Server, h http.Handler, base context.Context) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: sc.ReadHeaderTimeout,
		ReadTimeout:       sc.ReadTimeout,
		IdleTimeout:       sc.IdleTimeout,
		ConnContext:       netguard.ConnContext,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
}

// probeConns caps the connections of the probe listener: probes come
// from a few schedulers and scrapers, and a flood there must not cost the
// gateway its descriptors.
const probeConns = 64

// newProbeServer serves the probe listener with short timeouts: a probe
// sends its request at once and has no body.
func newProbeServer(h http.Handler, base context.Context) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: probeReadTimeout,
		ReadTimeout:       probeReadTimeout,
		IdleTimeout:       30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
}

// probeListener caps the probe listener's connections.
func probeListener(ln net.Listener) net.Listener {
	return netguard.NewListener(ln, netguard.ListenerOptions{Max: probeConns})
}

// guardListener caps the main listener's connections: server.max_connections
// for any request plus server.probe_connections for probes, lowered to fit
// the process's file-descriptor limit when that is smaller.
func guardListener(ln net.Listener, sc config.Server, m *metrics.Metrics, logger *slog.Logger) *netguard.Listener {
	maxConns := sc.MaxConnections
	if limit, ok := fdLimit(); ok && uint64(maxConns+sc.ProbeConnections+fdHeadroom) > limit {
		fit := int(limit) - sc.ProbeConnections - fdHeadroom
		if fit < 1 {
			fit = 1
		}
		logger.Warn("server.max_connections lowered to fit the file-descriptor limit",
			"configured", maxConns, "effective", fit, "fd_limit", limit)
		maxConns = fit
	}
	gl := netguard.NewListener(ln, netguard.ListenerOptions{
		Max: maxConns, Reserve: sc.ProbeConnections, ReserveReadTimeout: probeReadTimeout,
		Refused: func() { m.Refused(metrics.RefusedConnection) },
	})
	m.ObserveConnections(gl.Open)
	return gl
}

// cutOff ends what the drain left running: it closes every connection (no
// answer reaches a client after this), cancels the requests' contexts so
// each fails closed and closes its session's trail (agent_shutdown with
// reason cancelled for a per-request session; a managed session's call
// releases its lease and the session stays open for another replica),
// and waits up to cutGrace for them.
func cutOff(servers []*http.Server, cancelRequests context.CancelFunc, running *netguard.Tracker, logger *slog.Logger) {
	logger.Warn("drain timeout passed: cutting off the requests still running", "requests", running.Running())
	for _, srv := range servers {
		srv.Close()
	}
	cancelRequests()
	ctx, cancel := context.WithTimeout(context.Background(), cutGrace)
	defer cancel()
	if err := running.Wait(ctx); err != nil {
		logger.Warn("requests still running after the cut: their trails may be incomplete", "requests", running.Running(), "waited", cutGrace.String())
	}
}
