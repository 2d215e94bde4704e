package main

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// attackResult is one fixed-rate attack on one target.
type attackResult struct {
	latencies []time.Duration
	requests  int
	errors    int
	// errorKinds counts errors by status or transport message, for the
	// report (bodies are not kept).
	errorKinds map[string]int
	elapsed    time.Duration // first request sent to last answer received
}

// rate is the achieved request rate.
func (a *attackResult) rate() float64 {
	if a.elapsed <= 0 {
		return 0
	}
	return float64(a.requests) / a.elapsed.Seconds()
}

// merge adds b's requests to a.
func (a *attackResult) merge(b *attackResult) {
	a.latencies = append(a.latencies, b.latencies...)
	a.requests += b.requests
	a.errors += b.errors
	a.elapsed += b.elapsed
	if a.errorKinds == nil {
		a.errorKinds = map[string]int{}
	}
	for k, n := range b.errorKinds {
		a.errorKinds[k] += n
	}
}

// errorSummary lists the error kinds, most frequent first.
func (a *attackResult) errorSummary() string {
	kinds := make([]string, 0, len(a.errorKinds))
	for k := range a.errorKinds {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return a.errorKinds[kinds[i]] > a.errorKinds[kinds[j]] })
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d× %s", a.errorKinds[k], k))
	}
	return strings.Join(parts, "; ")
}

// loadClient is the generator's HTTP client. Attacks share it so its
// connections stay warm from one round to the next (a vegeta Attacker
// cannot be reused once an attack has ended).
func loadClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConns = 4096
	tr.MaxIdleConnsPerHost = 4096
	tr.ForceAttemptHTTP2 = false
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// newAttacker is an open-loop generator: requests leave on schedule
// whatever the latency of earlier ones (workers are added as needed), so
// a slow target cannot hide its queueing (no coordinated omission).
func newAttacker(c *http.Client) *vegeta.Attacker {
	return vegeta.NewAttacker(
		vegeta.Client(c),
		vegeta.MaxBody(0), // answers are read to the end but not kept
		vegeta.Workers(32),
	)
}

// attack sends targets (round robin) at rate for d and collects the results.
func attack(c *http.Client, targets []vegeta.Target, rate int, d time.Duration) *attackResult {
	atk := newAttacker(c)
	res := &attackResult{errorKinds: map[string]int{}}
	var first, last time.Time
	for r := range atk.Attack(vegeta.NewStaticTargeter(targets...), vegeta.ConstantPacer{Freq: rate, Per: time.Second}, d, "") {
		res.requests++
		if first.IsZero() || r.Timestamp.Before(first) {
			first = r.Timestamp
		}
		if end := r.End(); end.After(last) {
			last = end
		}
		if r.Error != "" || r.Code != http.StatusOK {
			res.errors++
			kind := r.Error
			if r.Code != 0 {
				kind = fmt.Sprintf("HTTP %d", r.Code)
			}
			res.errorKinds[kind]++
			continue
		}
		res.latencies = append(res.latencies, r.Latency)
	}
	res.elapsed = last.Sub(first)
	return res
}
