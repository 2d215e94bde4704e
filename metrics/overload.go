package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Refusal reasons of hooks_gateway_overload_refusals_total.
const (
	// RefusedConnection: a connection closed at accept, both the main
	// connection cap and the probe reserve being full.
	RefusedConnection = "connections"
	// RefusedProbeOnly: a request other than a probe on a connection
	// admitted from the probe reserve (503).
	RefusedProbeOnly = "probe_reserve"
	// RefusedRequests: a request beyond server.max_requests (503).
	RefusedRequests = "requests"
	// RefusedClient: a request beyond its client's share,
	// server.max_requests_per_client (503).
	RefusedClient = "client"
)

// overload is what the server refused to keep answering.
type overload struct {
	refusals *prometheus.CounterVec
	children [4]prometheus.Counter
}

func newOverload(reg *prometheus.Registry) *overload {
	o := &overload{refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hooks_gateway_overload_refusals_total",
		Help: "Connections and requests refused for load, by reason: connections (closed at accept beyond server.max_connections and the probe reserve), probe_reserve (a non-probe request on a reserve connection, 503), requests (beyond server.max_requests, 503), client (beyond one client's server.max_requests_per_client, 503).",
	}, []string{"reason"})}
	for i, r := range [...]string{RefusedConnection, RefusedProbeOnly, RefusedRequests, RefusedClient} {
		o.children[i] = o.refusals.WithLabelValues(r)
	}
	reg.MustRegister(o.refusals)
	return o
}

// Refused counts one refusal for reason (one of the Refused* constants;
// any other is ignored: labels stay bounded).
func (m *Metrics) Refused(reason string) {
	switch reason {
	case RefusedConnection:
		m.overload.children[0].Inc()
	case RefusedProbeOnly:
		m.overload.children[1].Inc()
	case RefusedRequests:
		m.overload.children[2].Inc()
	case RefusedClient:
		m.overload.children[3].Inc()
	}
}

// ObserveRequestsInFlight registers a gauge read at scrape time: the
// requests being handled, probes not counted. Only the first call on a
// Metrics registers (a Metrics serves one gateway).
func (m *Metrics) ObserveRequestsInFlight(requests func() int) {
	m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "hooks_gateway_requests_in_flight",
		Help: "Requests being handled, probes (/healthz, /readyz, /metrics) not counted; server.max_requests caps it.",
	}, func() float64 { return float64(requests()) }))
}

// ObserveConnections registers a gauge read at scrape time: the client
// connections open on the main listener per pool. Only the first call on
// a Metrics registers.
func (m *Metrics) ObserveConnections(conns func() (main, reserve int)) {
	m.reg.Register(&connsCollector{conns: conns, desc: prometheus.NewDesc("hooks_gateway_connections_open",
		"Client connections open on the main listener, by pool: main (capped by server.max_connections) and probe (the reserve for probes).",
		[]string{"pool"}, nil)})
}

// connsCollector reads both pools at scrape time.
type connsCollector struct {
	desc  *prometheus.Desc
	conns func() (int, int)
}

func (c *connsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *connsCollector) Collect(ch chan<- prometheus.Metric) {
	main, reserve := c.conns()
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(main), "main")
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(reserve), "probe")
}
