//go:build unix

package rawjson

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) consumed by this process,
// GC workers included. Benchmarks report it per op because wall time is
// unreliable on a shared, oversubscribed machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
