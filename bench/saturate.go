package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

// saturationStep is how long each rate is held.
const saturationStep = 5 * time.Second

// refineSteps is how many bisection steps follow the search: three take
// the quarter step between the last passing and the failing rate to an
// eighth of it, about 3% of the rate (each midpoint is rounded down to a
// multiple of 50 req/s).
const refineSteps = 3

// SaturationStep is one rate tried on one target.
type SaturationStep struct {
	Rate     int           `json:"rate"`
	Achieved float64       `json:"achieved_rate"`
	P99      time.Duration `json:"p99_ns"`
	Errors   int           `json:"errors"`
	Pass     bool          `json:"pass"`
}

// SaturationTarget is the search on one target.
type SaturationTarget struct {
	Name    string           `json:"name"`
	MaxRate int              `json:"max_passing_rate"`
	Steps   []SaturationStep `json:"steps"`
}

// SaturationResult compares the bare proxy and the gateway on one scenario.
type SaturationResult struct {
	Scenario string             `json:"scenario"`
	P99Bound time.Duration      `json:"p99_bound_ns"`
	Targets  []SaturationTarget `json:"targets"`
	// Ratio is the gateway's highest passing rate over the bare proxy's.
	Ratio float64 `json:"ratio_gateway_over_bare"`
}

// runSaturation raises the rate on the bare proxy and on the gateway, each
// step alternating between them, until a step fails: an error, a p99
// above bound, or an achieved rate below 95% of the one asked for (the
// generator, on the same machine, is then the limit as much as the target);
// then it bisects between the last passing and the failing rate.
func runSaturation(ctx context.Context, sc scenario, bound time.Duration) (*SaturationResult, error) {
	dir, err := os.MkdirTemp("", "hooks-bench-saturate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if sc.managed {
		return nil, fmt.Errorf("saturation runs per-request scenarios only, not %s", sc.name)
	}
	st, err := startStack(ctx, dir, sc, "")
	if err != nil {
		return nil, err
	}
	defer st.stop()
	ts := st.targets(sc)[1:] // bare proxy, gateway
	res := &SaturationResult{Scenario: sc.name, P99Bound: bound}
	done := make([]bool, len(ts))
	for _, t := range ts {
		if err := probe(ctx, t, nil); err != nil {
			return nil, err
		}
		res.Targets = append(res.Targets, SaturationTarget{Name: t.name})
	}
	atk := loadClient()
	try := func(i, rate int) (bool, error) {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		t := ts[i]
		fmt.Fprintf(os.Stderr, "bench: saturation %s at %d req/s…\n", t.name, rate)
		r := attack(atk, t.reqs, rate, saturationStep, false)
		step := SaturationStep{Rate: rate, Achieved: r.rate(), P99: summarize(r.latencies).P99, Errors: r.errors}
		step.Pass = step.Errors == 0 && step.P99 <= bound && step.Achieved >= 0.95*float64(rate)
		tr := &res.Targets[i]
		tr.Steps = append(tr.Steps, step)
		if step.Pass && rate > tr.MaxRate {
			tr.MaxRate = rate
		}
		// Let queues drain between steps: a failed step can leave seconds
		// of backlog, which would fail the bisection's next step too.
		drain := time.Second
		if !step.Pass {
			drain = saturationStep
		}
		time.Sleep(drain)
		return step.Pass, nil
	}
	// Rates grow by a quarter until a step fails; failed[i] is that rate.
	failed := make([]int, len(ts))
	for rate := 250; !done[0] || !done[1]; rate = nextRate(rate) {
		for i := range ts {
			if done[i] {
				continue
			}
			pass, err := try(i, rate)
			if err != nil {
				return nil, err
			}
			if !pass {
				done[i], failed[i] = true, rate
			}
		}
	}
	// Then bisect between the highest passing and the failing rate, so the
	// result is not quantized to the quarter steps (whose ratios between
	// two targets jump from 64% to 80% to 100%).
	for range refineSteps {
		for i := range ts {
			mid, ok := bisectRate(res.Targets[i].MaxRate, failed[i])
			if !ok {
				continue
			}
			pass, err := try(i, mid)
			if err != nil {
				return nil, err
			}
			if !pass {
				failed[i] = mid
			}
		}
	}
	if res.Targets[0].MaxRate > 0 {
		res.Ratio = float64(res.Targets[1].MaxRate) / float64(res.Targets[0].MaxRate)
	}
	return res, nil
}

// bisectRate is the round rate (a multiple of 50) halfway between the
// passing rate lo and the failing rate hi; false when none lies strictly
// between them.
func bisectRate(lo, hi int) (int, bool) {
	mid := (lo + hi) / 2 / 50 * 50
	return mid, mid > lo && mid < hi
}

// nextRate grows the rate by about a quarter, in round steps.
func nextRate(r int) int {
	return (r*5/4 + 49) / 50 * 50
}
