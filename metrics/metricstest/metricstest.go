// Package metricstest reads gathered Prometheus families in tests: every
// series of a family keyed by its sorted labels, and an exact assertion.
package metricstest

import (
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// Series returns every series of a family as "k=v,k=v" (sorted labels) →
// a counter's or gauge's value, or a histogram's sample count. A missing
// family gives an empty map.
func Series(fams map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range fams[name].GetMetric() {
		var kv []string
		for _, l := range m.GetLabel() {
			kv = append(kv, l.GetName()+"="+l.GetValue())
		}
		slices.Sort(kv)
		key := strings.Join(kv, ",")
		switch {
		case m.Counter != nil:
			out[key] = m.GetCounter().GetValue()
		case m.Gauge != nil:
			out[key] = m.GetGauge().GetValue()
		case m.Histogram != nil:
			out[key] = float64(m.GetHistogram().GetSampleCount())
		}
	}
	return out
}

// WantSeries asserts a family's series exactly: the same label sets, the
// same values, nothing else.
func WantSeries(t testing.TB, fams map[string]*dto.MetricFamily, name string, want map[string]float64) {
	t.Helper()
	got := Series(fams, name)
	for k, v := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s{%s} missing, want %v", name, k, v)
		} else if g != v {
			t.Errorf("%s{%s} = %v, want %v", name, k, g, v)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s{%s} = %v, not expected", name, k, g)
		}
	}
}
