package metrics

import "github.com/prometheus/client_golang/prometheus"

// ObserveSessionCache registers, read at scrape time, the session cache's
// managed sessions and bytes (sessions.cache_bytes bounds them) and its
// unit lookups by result: a hit is a message or item of an earlier
// request of the session that was not read again. Only the first call on
// a Metrics registers.
func (m *Metrics) ObserveSessionCache(stats func() (sessions int, bytes int64, hits, misses uint64)) {
	m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "hooks_gateway_session_cache_sessions",
		Help: "Managed sessions the session cache holds on this replica.",
	}, func() float64 { s, _, _, _ := stats(); return float64(s) }))
	m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "hooks_gateway_session_cache_bytes",
		Help: "Estimated bytes the session cache holds on this replica (sessions.cache_bytes bounds it).",
	}, func() float64 { _, b, _, _ := stats(); return float64(b) }))
	for _, r := range []string{"hit", "miss"} {
		m.reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "hooks_gateway_session_cache_units_total",
			Help:        "Wire units (messages, input items, large members) of managed sessions' requests looked up in the session cache, by result: a hit was not read again.",
			ConstLabels: prometheus.Labels{"result": r},
		}, func() float64 {
			_, _, h, mi := stats()
			if r == "hit" {
				return float64(h)
			}
			return float64(mi)
		}))
	}
}
