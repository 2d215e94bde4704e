package config

import "go.yaml.in/yaml/v3"

// DefaultGCPercent is the Go collector's pace the gateway sets when the
// operator sets neither runtime.gc_percent nor GOGC: the heap may grow to
// five times its live size between collections. The gateway's live heap is
// small (configuration, connections, the answers being judged) and every
// request leaves short-lived garbage, so at Go's default of 100 it
// collects every few MiB allocated: in process a request costs about 32%
// less CPU at 400 (docs/performance.md, "Collector pace").
const DefaultGCPercent = 400

// Runtime tunes the Go runtime of the gateway's process. It is read at
// startup; a reload does not change it.
type Runtime struct {
	// GCPercent is the collector's target heap growth between collections,
	// in percent of the live heap (Go's GOGC). 0 leaves the runtime's own
	// setting (Go's default, or GOGC). The GOGC environment variable, when
	// set, wins over it.
	GCPercent int
}

func (d *decoder) runtime(n *yaml.Node, field string, r *Runtime) {
	d.mapping(n, field, map[string]handler{
		"gc_percent": func(f string, v *yaml.Node) { r.GCPercent = int(d.int(v, f, int64(r.GCPercent))) },
	})
}

func (v *validator) runtime() {
	if p := v.c.Runtime.GCPercent; p < 0 || p > 10000 {
		v.problem("runtime.gc_percent", "must be from 0 (the runtime's own setting) to 10000 (got %d)", p)
	}
}
