//go:build unix

package main

import (
	"math"
	"syscall"
)

// fdLimit returns the process's soft limit on open files; none when it is
// unlimited or unreadable.
func fdLimit() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	cur := uint64(rl.Cur)
	if cur == 0 || cur >= math.MaxInt32 { // RLIM_INFINITY, however spelled
		return 0, false
	}
	return cur, true
}
