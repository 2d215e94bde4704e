package metrics

import "github.com/prometheus/client_golang/prometheus"

// denyReplays counts the policy denies answered again from a session's
// memory, without an emission or an upstream call.
type denyReplays struct {
	byAPI *prometheus.CounterVec
}

func newDenyReplays(reg *prometheus.Registry) *denyReplays {
	d := &denyReplays{byAPI: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hooks_gateway_denies_replayed_total",
		Help: "Requests of a managed session identical to its last policy deny within sessions.deny_replay_window, answered with that deny again without an emission or an upstream call, by API surface.",
	}, []string{"api"})}
	reg.MustRegister(d.byAPI)
	return d
}

// DenyReplayed counts one replayed deny on api (a surface name: bounded).
func (m *Metrics) DenyReplayed(api string) {
	m.denyReplays.byAPI.WithLabelValues(api).Inc()
}
