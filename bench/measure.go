package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// plan is how long each scenario runs.
type plan struct {
	rounds   int
	duration time.Duration // per target per round
	warmup   time.Duration // per target, before the first round
	rate     int           // overrides the scenario's rate when positive
	keep     bool          // keep each scenario's directory (logs, config, records)
	peers    peerOptions   // nginx, Caddy, Portkey beside the bare proxy
	// overloadRate and rssCeiling are the overload scenario's rate (0:
	// twice the gateway's saturation rate, searched first) and the
	// gateway's RSS ceiling.
	overloadRate int
	rssCeiling   int64
	// explicit names the flags given on the command line: a scenario's own
	// rounds, duration and warm-up do not replace those.
	explicit map[string]bool
}

// planned is p with sc's own rounds, duration and warm-up where the
// command line did not set them (nor --quick).
func (sc scenario) planned(p plan) plan {
	if p.explicit["quick"] {
		return p
	}
	if sc.rounds > 0 && !p.explicit["rounds"] {
		p.rounds = sc.rounds
	}
	if sc.duration > 0 && !p.explicit["duration"] {
		p.duration = sc.duration
	}
	if sc.warmup > 0 && !p.explicit["warmup"] {
		p.warmup = sc.warmup
	}
	return p
}

// TargetResult is one target's share of a scenario.
type TargetResult struct {
	Name       string `json:"name"`
	Requests   int    `json:"requests"`
	Errors     int    `json:"errors"`
	ErrorKinds string `json:"error_kinds,omitempty"`
	// Rate is the achieved send rate (requests over the span of their
	// send times).
	Rate    float64 `json:"achieved_rate"`
	Latency Latency `json:"latency"`
	// TTFB is, for a streamed answer, the time from send to the first
	// byte of the first data: line the client receives (Latency is the
	// total, to the last byte).
	TTFB *Latency `json:"ttfb,omitempty"`
	// CPUPer1k is the CPU seconds (user+system) the entry process spent
	// per 1,000 requests; UpstreamCPUPer1k the upstream's, for the proxies.
	CPUPer1k         float64 `json:"cpu_s_per_1k"`
	UpstreamCPUPer1k float64 `json:"upstream_cpu_s_per_1k,omitempty"`
	PeakRSS          int64   `json:"peak_rss_bytes"`
	// AddedP50 and AddedP99 are this target's latency over direct's;
	// CPUOverBare its CPU per request over the bare proxy's.
	AddedP50    time.Duration `json:"added_p50_ns"`
	AddedP99    time.Duration `json:"added_p99_ns"`
	CPUOverBare float64       `json:"cpu_over_bare,omitempty"`
}

// ScenarioResult is one scenario's measurements.
type ScenarioResult struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Rate        int    `json:"rate"`
	Skipped     string `json:"skipped,omitempty"`
	// Failed says why a scenario that ran is a failure (the deny probe
	// found unverdicted text released).
	Failed string `json:"failed,omitempty"`
	// Notes say which peers were left out and why.
	Notes     []string         `json:"notes,omitempty"`
	DenyProbe *DenyProbeResult `json:"deny_probe,omitempty"`
	Targets   []TargetResult   `json:"targets,omitempty"`
	// AddedP50 and AddedP99 are the gateway's latency over direct.
	AddedP50 time.Duration `json:"added_p50_ns"`
	AddedP99 time.Duration `json:"added_p99_ns"`
	// BareAddedP50 and BareAddedP99 are the bare proxy's over direct.
	BareAddedP50 time.Duration `json:"bare_added_p50_ns"`
	BareAddedP99 time.Duration `json:"bare_added_p99_ns"`
	// TTFBAdded is the gateway's time to first byte over direct, for
	// streamed answers.
	TTFBAdded *Added `json:"ttfb_added,omitempty"`
	// CPURatio is the gateway's CPU per request over the bare proxy's.
	CPURatio         float64 `json:"cpu_ratio_gateway_over_bare"`
	AllocsPerReq     float64 `json:"gateway_allocs_per_request"`
	AllocBytesPerReq float64 `json:"gateway_alloc_bytes_per_request"`
	// Growth is the chat50 scenario's turn 50 over turn 1.
	Growth *Growth `json:"growth,omitempty"`
}

// Added is one target's time over another's.
type Added struct {
	P50 time.Duration `json:"p50_ns"`
	P99 time.Duration `json:"p99_ns"`
}

// runScenario starts sc's processes, drives the three targets in
// interleaved rounds and summarises them.
func runScenario(ctx context.Context, sc scenario, p plan, redisURL string) (*ScenarioResult, error) {
	p = sc.planned(p)
	res := &ScenarioResult{Name: sc.name, Description: sc.description, Rate: sc.rate}
	if p.rate > 0 {
		res.Rate = p.rate
	}
	if sc.skip != "" {
		res.Skipped = sc.skip
		return res, nil
	}
	if sc.rounds > 0 || sc.duration > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("plan: %d round(s) × %s per target, %s warm-up", p.rounds, p.duration, p.warmup))
	}
	if sc.managed && redisURL == "" {
		res.Skipped = "redis-server is not on PATH"
		return res, nil
	}
	dir, cleanup, err := workDir(sc.name, p.keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	st, err := startStack(ctx, dir, sc, redisURL)
	if err != nil {
		var skip *errSkip
		if errors.As(err, &skip) {
			res.Skipped = skip.why
			return res, nil
		}
		return nil, fmt.Errorf("%s: %w", sc.name, err)
	}
	defer st.stop()
	started, notes := startPeers(ctx, dir, st.upstream.url(), scenarioPeers(sc, p.peers))
	defer func() {
		for _, sp := range started {
			sp.proc.stop()
		}
	}()
	res.Notes = append(res.Notes, notes...)
	base := st.targets(sc)
	targets := append([]*target{}, base[:2]...) // direct, bare proxy
	for _, sp := range started {
		t := peerTarget(sc, sp, st.upstream)
		if err := probe(ctx, t, nil); err != nil {
			res.Notes = append(res.Notes, sp.name+" skipped: "+oneLine(err.Error()))
			continue
		}
		targets = append(targets, t)
	}
	targets = append(targets, base[2]) // gateway, last
	gwIdx := len(targets) - 1
	for _, t := range base {
		var check func(string) string
		if t.proc == st.gateway {
			check = sc.check
		}
		if err := probe(ctx, t, check); err != nil {
			if t.proc == st.gateway {
				// The gateway refusing or mangling the workload is a
				// finding to report, not a reason to abandon the run.
				res.Skipped = err.Error()
				return res, nil
			}
			return nil, fmt.Errorf("%s: %w", sc.name, err)
		}
	}
	if sc.mcp {
		if err := mcpDenyCheck(ctx, base[2].url); err != nil {
			res.Failed = err.Error()
			return res, nil
		}
		res.Notes = append(res.Notes, "deny check: a tools/call of "+mcpDeniedTool+" through the gateway was answered with an isError result, policy:tool_not_allowed at pre_tool_call")
	}
	if sc.denyProbe {
		d, err := runDenyProbe(ctx, st.gateway.url()+sc.path, sc)
		if err != nil {
			res.Failed = err.Error()
			return res, nil
		}
		res.DenyProbe = d
		if why := d.failure(); why != "" {
			// A gateway that leaks is not measured for speed.
			res.Failed = "deny probe: " + why
			return res, nil
		}
	}

	stream := isStream(sc.request)
	atk := loadClient()
	for _, t := range targets {
		if p.warmup > 0 { // 0 would attack until stopped
			attack(atk, t.reqs, res.Rate, p.warmup, stream)
		}
	}
	totals := make([]*attackResult, len(targets))
	cpu := make([]time.Duration, len(targets))
	upCPU := make([]time.Duration, len(targets))
	var mallocs, allocBytes float64
	for range p.rounds {
		for i, t := range targets {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			c0, u0 := mustCPU(t.proc), extraCPU(t)
			var m0, b0 float64
			if i == gwIdx {
				m0, b0 = gatewayAllocs(ctx, st.gateway)
			}
			r := attack(atk, t.reqs, res.Rate, p.duration, stream)
			cpu[i] += mustCPU(t.proc) - c0
			upCPU[i] += extraCPU(t) - u0
			if i == gwIdx {
				m1, b1 := gatewayAllocs(ctx, st.gateway)
				mallocs += m1 - m0
				allocBytes += b1 - b0
			}
			if totals[i] == nil {
				totals[i] = r
			} else {
				totals[i].merge(r)
			}
		}
	}
	for i, t := range targets {
		tot := totals[i]
		tr := TargetResult{
			Name: t.name, Requests: tot.requests, Errors: tot.errors, ErrorKinds: tot.errorSummary(),
			Rate: tot.sendRate(), Latency: summarize(tot.latencies), PeakRSS: treePeakRSS(t.proc.pid()),
			CPUPer1k: per1k(cpu[i], tot.requests),
		}
		if len(t.extra) > 0 {
			tr.UpstreamCPUPer1k = per1k(upCPU[i], tot.requests)
		}
		if stream {
			l := summarize(tot.ttfb)
			tr.TTFB = &l
		}
		res.Targets = append(res.Targets, tr)
	}
	compare(res)
	direct, gw := res.Targets[0], res.Targets[gwIdx]
	if stream {
		res.TTFBAdded = &Added{P50: gw.TTFB.P50 - direct.TTFB.P50, P99: gw.TTFB.P99 - direct.TTFB.P99}
	}
	if gw.Requests > 0 {
		res.AllocsPerReq = mallocs / float64(gw.Requests)
		res.AllocBytesPerReq = allocBytes / float64(gw.Requests)
	}
	return res, nil
}

// compare fills in each target's figures over direct and the bare proxy,
// and the gateway's summary fields. Targets are direct, bare proxy, the
// peers, gateway, in that order.
func compare(res *ScenarioResult) {
	ts := res.Targets
	direct, bareCPU := ts[0].Latency, ts[1].CPUPer1k
	for i := range ts {
		ts[i].AddedP50 = ts[i].Latency.P50 - direct.P50
		ts[i].AddedP99 = ts[i].Latency.P99 - direct.P99
		if i > 0 && bareCPU > 0 {
			ts[i].CPUOverBare = ts[i].CPUPer1k / bareCPU
		}
	}
	bare, gw := ts[1], ts[len(ts)-1]
	res.AddedP50, res.AddedP99 = gw.AddedP50, gw.AddedP99
	res.BareAddedP50, res.BareAddedP99 = bare.AddedP50, bare.AddedP99
	res.CPURatio = gw.CPUOverBare
}

// gatewayOf is the gateway's result: the last target.
func (res *ScenarioResult) gatewayOf() TargetResult { return res.Targets[len(res.Targets)-1] }

// scenarioPeers are the peer options for sc: an MCP scenario leaves out
// the peers that route model calls only.
func scenarioPeers(sc scenario, o peerOptions) peerOptions {
	if sc.mcp {
		o.skipModelRouters = true
	}
	return o
}

// peerTarget is the target of a started peer.
func peerTarget(sc scenario, sp startedPeer, upstream *child) *target {
	base := sp.proc.url()
	t := &target{name: sp.name, proc: sp.proc, url: base + sc.path, extra: []*child{upstream}}
	var hdr map[string]string
	if sp.headers != nil {
		hdr = sp.headers(sc.path, upstream.url())
	}
	t.reqs = requestsWith(sc, t.url, hdr)
	return t
}

// workDir is a fresh directory for one scenario's logs, configuration
// and records. cleanup removes it, unless keep: then it is named on
// stderr and left.
func workDir(name string, keep bool) (dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", "hooks-bench-"+name+"-")
	if err != nil {
		return "", nil, err
	}
	if keep {
		fmt.Fprintf(os.Stderr, "bench: %s: logs, configuration and records kept in %s\n", name, dir)
		return dir, func() {}, nil
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// per1k is CPU seconds per 1,000 requests.
func per1k(d time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return d.Seconds() * 1000 / float64(n)
}

// mustCPU is a child's CPU time, its descendants' included (nginx's
// workers); a child that vanished reads as zero and its errors show in
// the results.
func mustCPU(c *child) time.Duration {
	return treeCPU(c.pid())
}

// extraCPU is the CPU time of the processes behind t's entry process.
func extraCPU(t *target) time.Duration {
	var d time.Duration
	for _, c := range t.extra {
		d += mustCPU(c)
	}
	return d
}

// gatewayAllocs reads the gateway's cumulative heap allocations (count and
// bytes) from its /metrics. The scrape's own allocations are a few
// hundred per round, noise against thousands of requests.
func gatewayAllocs(ctx context.Context, gw *child) (count, bytes float64) {
	count, _ = scrapeMetric(ctx, gw.url()+"/metrics", "go_memstats_mallocs_total")
	bytes, _ = scrapeMetric(ctx, gw.url()+"/metrics", "go_memstats_alloc_bytes_total")
	return count, bytes
}
