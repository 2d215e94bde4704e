package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Report is everything one run measured; --json writes it.
type Report struct {
	Started    time.Time           `json:"started"`
	Machine    Machine             `json:"machine"`
	Command    string              `json:"command"`
	Plan       string              `json:"plan"`
	Scenarios  []*ScenarioResult   `json:"scenarios,omitempty"`
	Saturation []*SaturationResult `json:"saturation,omitempty"`
	Soak       *SoakResult         `json:"soak,omitempty"`
	Overload   *OverloadResult     `json:"overload,omitempty"`
}

// drive is the bench's driver: it parses the flags, runs the selected
// mode and prints the report.
func drive(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("bench", flag.ContinueOnError)
	quick := fl.Bool("quick", false, "a ~25-second run: one scenario per API surface, one short round")
	names := fl.String("scenario", "", "comma-separated scenarios (default: all, or the quick set with --quick)")
	rounds := fl.Int("rounds", 3, "interleaved rounds (direct, bare proxy, gateway)")
	duration := fl.Duration("duration", 10*time.Second, "load per target per round")
	warmup := fl.Duration("warmup", 2*time.Second, "load per target before the first round (0: none)")
	rate := fl.Int("rate", 0, "requests per second (default: each scenario's own)")
	keep := fl.Bool("keep", false, "keep each scenario's temporary directory (child logs, configuration, records)")
	jsonOut := fl.String("json", "", "also write the report as JSON to this file")
	saturate := fl.Bool("saturate", false, "find the highest rate each of bare proxy and gateway sustain")
	p99Bound := fl.Duration("p99-bound", 50*time.Millisecond, "saturation: highest acceptable p99")
	soak := fl.Bool("soak", false, "soak: steady load with managed Redis sessions, sampling memory and goroutines")
	soakDuration := fl.Duration("soak-duration", 5*time.Minute, "soak length")
	soakRate := fl.Int("soak-rate", 500, "soak requests per second")
	withPeers := fl.Bool("peers", true, "also measure nginx, Caddy and the Portkey gateway, each when installed")
	peersDir := fl.String("peers-dir", "bench/peers", "where the npm peers are installed (npm ci --prefix bench/peers)")
	overloadRate := fl.Int("overload-rate", defaultOverloadRate, "overload scenario: requests per second (0: twice the gateway's saturation rate, searched first)")
	rssCeiling := fl.Int("overload-rss-ceiling-mib", defaultRSSCeiling>>20, "overload scenario: the gateway's peak RSS ceiling, MiB")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	// A zero-length attack runs until its pacer stops, which a constant
	// pacer never does: refuse what would hang.
	switch {
	case *duration <= 0:
		return fmt.Errorf("bench: --duration must be positive, got %s", *duration)
	case *warmup < 0:
		return fmt.Errorf("bench: --warmup must not be negative (0: no warm-up), got %s", *warmup)
	case *rounds < 1:
		return fmt.Errorf("bench: --rounds must be at least 1, got %d", *rounds)
	}
	p := plan{rounds: *rounds, duration: *duration, warmup: *warmup, rate: *rate, keep: *keep,
		peers: peerOptions{enabled: *withPeers, npmDir: *peersDir}, overloadRate: *overloadRate, rssCeiling: int64(*rssCeiling) << 20}
	p.explicit = map[string]bool{}
	fl.Visit(func(f *flag.Flag) { p.explicit[f.Name] = true })
	if *quick {
		p.rounds, p.duration, p.warmup = 1, 2*time.Second, 500*time.Millisecond
	}
	if err := setSealEnv(); err != nil {
		return err
	}
	selected, err := selectScenarios(*names, *quick, *saturate || *soak)
	if err != nil {
		return err
	}
	rep := &Report{Started: time.Now().UTC(), Machine: machine(), Command: "go run ./bench " + strings.Join(args, " "),
		Plan: fmt.Sprintf("%d round(s) × %s per target, %s warm-up", p.rounds, p.duration, p.warmup)}
	for _, sc := range selected {
		if pl := sc.planned(p); pl.duration != p.duration {
			rep.Plan += fmt.Sprintf(" (%s: %s per target)", sc.name, pl.duration)
		}
	}

	dir, err := os.MkdirTemp("", "hooks-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	redisURL := ""
	if *soak || slices.ContainsFunc(selected, func(s scenario) bool { return s.managed }) {
		rs, err := startRedis(ctx, dir)
		if err != nil {
			return err
		}
		if rs != nil {
			defer rs.stop()
			redisURL = rs.url()
		}
	}

	switch {
	case *soak:
		rep.Plan = fmt.Sprintf("soak: %s at %d req/s", *soakDuration, *soakRate)
		if rep.Soak, err = runSoak(ctx, redisURL, *soakDuration, *soakRate); err != nil {
			return err
		}
	case *saturate:
		rep.Plan = fmt.Sprintf("saturation: steps of %s, errors 0 and p99 ≤ %s", saturationStep, *p99Bound)
		for _, sc := range selected {
			r, err := runSaturation(ctx, sc, *p99Bound)
			if err != nil {
				return err
			}
			rep.Saturation = append(rep.Saturation, r)
		}
	default:
		for _, sc := range selected {
			fmt.Fprintf(os.Stderr, "bench: %s…\n", sc.name)
			if sc.name == overloadName {
				rep.Plan += " (overload: no warm-up)"
				if rep.Overload, err = runOverload(ctx, p); err != nil {
					return err
				}
				continue
			}
			if sc.run != nil {
				rs, err := sc.run(ctx, sc, sc.planned(p))
				if err != nil {
					return err
				}
				rep.Scenarios = append(rep.Scenarios, rs...)
				continue
			}
			r, err := runScenario(ctx, sc, p, redisURL)
			if err != nil {
				return err
			}
			rep.Scenarios = append(rep.Scenarios, r)
		}
	}
	writeMarkdown(os.Stdout, rep)
	if *jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", *jsonOut, err)
		}
	}
	var failed []string
	for _, s := range rep.Scenarios {
		if s.Failed != "" {
			failed = append(failed, s.Name)
		}
	}
	if rep.Overload != nil && !rep.Overload.Passed {
		failed = append(failed, overloadName)
	}
	if len(failed) > 0 {
		return fmt.Errorf("failed: %s (see the report)", strings.Join(failed, ", "))
	}
	return nil
}

// selectScenarios resolves --scenario. Saturation and soak default to the
// json scenario.
func selectScenarios(names string, quick, single bool) ([]scenario, error) {
	all := append(append(scenarios(), agentScenarios()...), scenario{name: overloadName})
	if names == "" {
		var out []scenario
		for _, sc := range all {
			if sc.name == overloadName {
				continue // only when named: it is a test of refusals, not a measurement of cost
			}
			if (!quick && !single) || (quick && sc.quick) || (single && sc.name == "json") {
				out = append(out, sc)
			}
		}
		return out, nil
	}
	var out []scenario
	for _, n := range strings.Split(names, ",") {
		i := slices.IndexFunc(all, func(s scenario) bool { return s.name == strings.TrimSpace(n) })
		if i < 0 {
			known := make([]string, len(all))
			for j, s := range all {
				known[j] = s.name
			}
			return nil, fmt.Errorf("unknown scenario %q (known: %s)", n, strings.Join(known, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// Machine describes where the run happened.
type Machine struct {
	CPUs       int    `json:"cpus"`
	CPUModel   string `json:"cpu_model"`
	GoVersion  string `json:"go_version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = cpuModel(string(b))
	}
	return m
}

// cpuModel is the first "model name" of a /proc/cpuinfo text.
func cpuModel(cpuinfo string) string {
	for line := range strings.Lines(cpuinfo) {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
