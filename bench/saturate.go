package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

// saturationStep is how long each rate is held.
const saturationStep = 5 * time.Second

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
// generator, on the same machine, is then the limit as much as the target).
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
	for rate := 250; !done[0] || !done[1]; rate = nextRate(rate) {
		for i, t := range ts {
			if done[i] {
				continue
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			fmt.Fprintf(os.Stderr, "bench: saturation %s at %d req/s…\n", t.name, rate)
			r := attack(atk, t.reqs, rate, saturationStep, false)
			step := SaturationStep{Rate: rate, Achieved: r.rate(), P99: summarize(r.latencies).P99, Errors: r.errors}
			step.Pass = step.Errors == 0 && step.P99 <= bound && step.Achieved >= 0.95*float64(rate)
			tr := &res.Targets[i]
			tr.Steps = append(tr.Steps, step)
			if step.Pass {
				tr.MaxRate = rate
			} else {
				done[i] = true
			}
			time.Sleep(time.Second) // let queues drain between steps
		}
	}
	if res.Targets[0].MaxRate > 0 {
		res.Ratio = float64(res.Targets[1].MaxRate) / float64(res.Targets[0].MaxRate)
	}
	return res, nil
}

// nextRate grows the rate by about a quarter, in round steps.
func nextRate(r int) int {
	return (r*5/4 + 49) / 50 * 50
}
