package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Overload scenario targets (issue 16): admitted p99 and the refusals'.
const (
	overloadP99Target = 50 * time.Millisecond
	// defaultOverloadRate is twice the gateway's saturation rate on the
	// 2-core development machine (1,500 req/s, docs/performance.md).
	defaultOverloadRate = 3000
	// defaultRSSCeiling is the gateway's peak RSS the scenario allows.
	defaultRSSCeiling = 256 << 20
	// overloadMaxRequests and overloadBufferBudget are server.max_requests
	// and limits.buffer_budget in configs/overload.yaml.
	overloadMaxRequests  = 32
	overloadBufferBudget = 16 << 20
)

// OverloadTarget is one target's answers under overload.
type OverloadTarget struct {
	Name     string `json:"name"`
	Requests int    `json:"requests"`
	Admitted int    `json:"admitted"`
	Refused  int    `json:"refused_503"`
	// RefusedNoRetryAfter counts the 503s without a Retry-After.
	RefusedNoRetryAfter int     `json:"refused_without_retry_after"`
	Other               int     `json:"other"`
	OtherKinds          string  `json:"other_kinds,omitempty"`
	AdmittedLatency     Latency `json:"admitted_latency"`
	RefusalLatency      Latency `json:"refusal_latency"`
	PeakRSS             int64   `json:"peak_rss_bytes"`
	CPUPer1k            float64 `json:"cpu_s_per_1k"`
}

// OverloadResult is the overload scenario's outcome.
type OverloadResult struct {
	Rate           int              `json:"rate"`
	RateSource     string           `json:"rate_source"`
	MaxRequests    int              `json:"gateway_max_requests"`
	RSSCeiling     int64            `json:"rss_ceiling_bytes"`
	Targets        []OverloadTarget `json:"targets"`
	GatewayOK      int              `json:"gateway_answers_200"`
	OutputVerdicts int              `json:"gateway_output_permit_records"`
	// Checks are the targets' pass/fail lines for the gateway.
	Checks []string `json:"checks"`
	Passed bool     `json:"passed"`
}

// runOverload drives the json request at rate against the bare proxy and
// a gateway with a tight admission cap (configs/overload.yaml), in
// interleaved rounds, and checks the gateway's refusals, admitted latency,
// memory and records.
func runOverload(ctx context.Context, p plan) (*OverloadResult, error) {
	sc := overloadScenario()
	res := &OverloadResult{Rate: p.overloadRate, RateSource: "--overload-rate", MaxRequests: overloadMaxRequests, RSSCeiling: p.rssCeiling}
	if res.Rate <= 0 {
		js, _ := selectScenarios("json", false, false)
		sat, err := runSaturation(ctx, js[0], overloadP99Target)
		if err != nil {
			return nil, err
		}
		res.Rate = 2 * sat.Targets[1].MaxRate
		res.RateSource = fmt.Sprintf("twice the gateway's saturation rate found first (%d req/s)", sat.Targets[1].MaxRate)
	}
	dir, cleanup, err := workDir(overloadName, p.keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	st, err := startStack(ctx, dir, sc, "")
	if err != nil {
		return nil, err
	}
	defer st.stop() // a no-op after the explicit stop below

	ts := st.targets(sc)[1:] // bare proxy, gateway
	for _, t := range ts {
		if err := probe(ctx, t, nil); err != nil {
			return nil, err
		}
	}
	gwOK := 1 // the probe
	atk := loadClient()
	tallies := make([]overloadTally, len(ts))
	cpu := make([]time.Duration, len(ts))
	for range p.rounds {
		for i, t := range ts {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			fmt.Fprintf(os.Stderr, "bench: overload %s at %d req/s…\n", t.name, res.Rate)
			c0 := mustCPU(t.proc)
			overloadAttack(atk, t.reqs, res.Rate, p.duration, &tallies[i])
			cpu[i] += mustCPU(t.proc) - c0
			time.Sleep(time.Second) // let queues drain between targets
		}
	}
	for i, t := range ts {
		tl := &tallies[i]
		res.Targets = append(res.Targets, OverloadTarget{
			Name: t.name, Requests: tl.requests, Admitted: len(tl.admitted), Refused: len(tl.refused),
			RefusedNoRetryAfter: tl.noRetryAfter, Other: tl.otherCount(), OtherKinds: kindSummary(tl.other),
			AdmittedLatency: summarize(tl.admitted), RefusalLatency: summarize(tl.refused),
			PeakRSS: treePeakRSS(t.proc.pid()), CPUPer1k: per1k(cpu[i], tl.requests),
		})
	}
	gwOK += len(tallies[1].admitted)
	st.stop() // flushes and closes the records file
	n, err := countOutputPermits(st.recordsPath)
	if err != nil {
		return nil, err
	}
	res.GatewayOK, res.OutputVerdicts = gwOK, n
	res.Checks, res.Passed = overloadChecks(res)
	return res, nil
}

// overloadScenario is the json scenario's request against the overload
// configuration.
func overloadScenario() scenario {
	return scenario{name: overloadName, config: "overload.yaml", path: chatPath,
		request: chatRequest(2048, false, false), upstream: upstreamOptions{contentBytes: 1024, chunks: 200}}
}

// overloadAttack sends targets at rate for d, tallying every answer with
// its headers (the Retry-After of each 503).
func overloadAttack(c *http.Client, targets []vegeta.Target, rate int, d time.Duration, t *overloadTally) {
	for r := range hits(c, targets, rate, d) {
		t.add(int(r.Code), r.Headers, r.Latency, r.Error)
	}
}

// countOutputPermits counts the records of the output point whose verdict
// let the answer through: each answer the gateway released was judged
// there, so a 200 without one would be an unverdicted release.
func countOutputPermits(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("records: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	n := 0
	for sc.Scan() {
		// Only the point and the decision: the file holds other lines too
		// (a record without a verdict is not an output verdict).
		var r struct {
			Point   enforcement.Point `json:"interception_point"`
			Verdict struct {
				Decision enforcement.Decision `json:"decision"`
			} `json:"verdict"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return 0, fmt.Errorf("records: %w", err)
		}
		if r.Point == enforcement.Output && (r.Verdict.Decision == enforcement.DecisionAllow || r.Verdict.Decision == enforcement.DecisionTransform) {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("records: %w", err)
	}
	return n, nil
}

// overloadChecks are the overload targets, judged on the gateway.
func overloadChecks(r *OverloadResult) ([]string, bool) {
	gw := r.Targets[len(r.Targets)-1]
	ok := true
	var out []string
	check := func(pass bool, format string, args ...any) {
		mark := "pass"
		if !pass {
			mark, ok = "FAIL", false
		}
		out = append(out, mark+": "+fmt.Sprintf(format, args...))
	}
	check(gw.Refused > 0, "requests beyond capacity refused with 503: %d of %d", gw.Refused, gw.Requests)
	check(gw.RefusedNoRetryAfter == 0, "every 503 carries Retry-After (%d without)", gw.RefusedNoRetryAfter)
	check(gw.AdmittedLatency.P99 < overloadP99Target, "admitted p99 %s < %s", ms(gw.AdmittedLatency.P99), ms(overloadP99Target))
	check(gw.PeakRSS < r.RSSCeiling, "peak RSS %.1f MiB < ceiling %.0f MiB", float64(gw.PeakRSS)/(1<<20), float64(r.RSSCeiling)/(1<<20))
	check(r.OutputVerdicts >= r.GatewayOK, "every admitted answer verdicted: %d answers 200, %d permitting output records", r.GatewayOK, r.OutputVerdicts)
	if gw.Other == 0 {
		check(true, "no other errors")
	} else {
		check(false, "no other errors: %d (%s)", gw.Other, gw.OtherKinds)
	}
	return out, ok
}

// overloadName is the overload scenario's name in --scenario.
const overloadName = "overload"
