package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hooks-gateway/hooks-gateway/proxy"
	"github.com/hooks-gateway/hooks-gateway/records"
)

// soakSampleEvery is the soak's sampling period.
const soakSampleEvery = 10 * time.Second

// SoakSample is the gateway's state at one moment of the soak.
type SoakSample struct {
	At         time.Duration `json:"at_ns"`
	RSS        int64         `json:"rss_bytes"`
	Goroutines int           `json:"goroutines"`
}

// SoakResult is a soak run's outcome.
type SoakResult struct {
	Duration   time.Duration `json:"duration_ns"`
	Rate       int           `json:"rate"`
	Requests   int           `json:"requests"`
	Errors     int           `json:"errors"`
	ErrorKinds string        `json:"error_kinds,omitempty"`
	Latency    Latency       `json:"latency"`
	Samples    []SoakSample  `json:"samples"`
	// Flat says whether memory and goroutines stopped growing after the
	// warm-up (see flatness).
	Flat        bool   `json:"flat"`
	FlatVerdict string `json:"flat_verdict"`
	// Verify is the records verify summary; VerifyErrors its error count
	// (gaps, duplicates, reordering).
	Verify       string `json:"records_verify"`
	VerifyErrors int    `json:"records_verify_errors"`
}

// runSoak drives the gateway with managed Redis sessions at a steady rate,
// samples its memory and goroutines, then ends every session and verifies
// the records trail.
func runSoak(ctx context.Context, redisURL string, d time.Duration, rate int) (*SoakResult, error) {
	if redisURL == "" {
		return nil, fmt.Errorf("soak needs redis-server on PATH")
	}
	var sc scenario
	for _, s := range scenarios() {
		if s.name == "redis" {
			sc = s
		}
	}
	dir, err := os.MkdirTemp("", "hooks-bench-soak-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	st, err := startStack(ctx, dir, sc, redisURL)
	if err != nil {
		return nil, err
	}
	defer st.stop() // a no-op after the explicit stop below
	gw := st.targets(sc)[2]
	if err := probe(ctx, gw, nil); err != nil {
		return nil, err
	}

	res := &SoakResult{Duration: d, Rate: rate}
	var mu sync.Mutex
	sample := func(at time.Duration) {
		_, rss, _ := memStatus(st.gateway.pid())
		g, _ := scrapeMetric(ctx, st.gateway.url()+"/metrics", "go_goroutines")
		mu.Lock()
		res.Samples = append(res.Samples, SoakSample{At: at, RSS: rss, Goroutines: int(g)})
		mu.Unlock()
	}
	start := time.Now()
	sample(0)
	sctx, stopSampling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(soakSampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-tick.C:
				sample(time.Since(start))
			}
		}
	})
	r := attack(loadClient(), gw.reqs, rate, d, false)
	stopSampling()
	wg.Wait()
	res.Requests, res.Errors, res.ErrorKinds = r.requests, r.errors, r.errorSummary()
	res.Latency = summarize(r.latencies)
	res.Flat, res.FlatVerdict = flatness(res.Samples)

	// Ending the sessions completes their trails (agent_shutdown), so the
	// verification below reports real gaps, not open sessions.
	for _, t := range gw.reqs {
		endSession(ctx, st.gateway.url(), t.Header.Get(proxy.HeaderSession))
	}
	st.stop() // flushes and closes the records file
	rep, err := records.VerifyFiles([]string{st.recordsPath})
	if err != nil {
		return nil, fmt.Errorf("records verify: %w", err)
	}
	res.Verify, res.VerifyErrors = rep.Summary(), rep.Errors()
	return res, nil
}

// endSession ends a managed session; failures show in the verification.
func endSession(ctx context.Context, base, id string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/agent-hooks/sessions/"+id+"/end", nil)
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// flatness judges whether the samples stopped growing: after the first
// third (warm-up: pools, caches and the session store fill), the peak RSS
// of the last third stays within 10% of the middle third's and the
// goroutine count within 10% + 20 of it.
func flatness(s []SoakSample) (bool, string) {
	if len(s) < 6 {
		return false, fmt.Sprintf("too few samples (%d) to judge", len(s))
	}
	third := len(s) / 3
	mid, last := s[third:2*third], s[2*third:]
	peak := func(xs []SoakSample) (rss int64, g int) {
		for _, x := range xs {
			rss, g = max(rss, x.RSS), max(g, x.Goroutines)
		}
		return rss, g
	}
	mr, mg := peak(mid)
	lr, lg := peak(last)
	flat := float64(lr) <= 1.10*float64(mr) && float64(lg) <= 1.10*float64(mg)+20
	verdict := fmt.Sprintf("RSS peak %.1f → %.1f MiB, goroutines peak %d → %d (middle → last third)",
		float64(mr)/(1<<20), float64(lr)/(1<<20), mg, lg)
	if flat {
		return true, "flat: " + verdict
	}
	return false, "growing: " + verdict
}
