// Package cputime gives benchmarks the process's CPU time, which they
// report per operation (cpu-ns/op): on a shared, oversubscribed machine it
// is steadier than wall time.
package cputime

import (
	"testing"
	"time"
)

// ReportPerOp reports the CPU time per iteration since start (a Process
// reading) as cpu-ns/op; nothing where the platform gives no CPU time.
func ReportPerOp(b *testing.B, start time.Duration) {
	if now := Process(); now > 0 {
		b.ReportMetric(float64((now-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
