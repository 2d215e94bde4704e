package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

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
	// Every surface's series exists from the start: a dashboard's rate()
	// sees 0, not no data, until the first replay.
	for _, api := range []wire.API{wire.ChatCompletions, wire.Responses, wire.Messages} {
		d.byAPI.WithLabelValues(string(api))
	}
	reg.MustRegister(d.byAPI)
	return d
}

// DenyReplayed counts one replayed deny on api (a surface name: bounded).
func (m *Metrics) DenyReplayed(api string) {
	m.denyReplays.byAPI.WithLabelValues(api).Inc()
}
