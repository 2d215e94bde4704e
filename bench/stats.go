package main

import (
	"math"
	"slices"
	"time"
)

// percentile is the nearest-rank p-quantile (0 < p ≤ 1) of sorted
// latencies; zero for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// The epsilon keeps exact ranks (p·n integral) from rounding up.
	rank := int(math.Ceil(p*float64(n) - 1e-9))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// Latency summarises a latency sample.
type Latency struct {
	P50 time.Duration `json:"p50_ns"`
	P90 time.Duration `json:"p90_ns"`
	P99 time.Duration `json:"p99_ns"`
	Max time.Duration `json:"max_ns"`
}

// summarize sorts lat in place and summarises it.
func summarize(lat []time.Duration) Latency {
	slices.Sort(lat)
	return Latency{
		P50: percentile(lat, 0.50),
		P90: percentile(lat, 0.90),
		P99: percentile(lat, 0.99),
		Max: percentile(lat, 1),
	}
}
