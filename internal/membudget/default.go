package membudget

import (
	"io/fs"
	"strconv"
	"strings"
)

// FallbackLimit is the budget when no container memory limit is visible.
const FallbackLimit int64 = 256 << 20

// MinDerived is the smallest derived budget: under it a memory limit
// leaves no room to buffer even one default-sized response.
const MinDerived int64 = 16 << 20

// DefaultLimit derives the budget from the container's memory limit (see
// ContainerLimit): a quarter of it, since a buffered byte costs the
// gateway about two to three bytes of heap (the raw stream, its assembly,
// the released copy) and the Go heap may grow past its live size between
// collections (RuntimeLimit narrows that). Without a visible limit it is
// FallbackLimit. It reports where the figure came from.
func DefaultLimit(sys fs.FS) (limit int64, source string) {
	if n, src := ContainerLimit(sys); n > 0 {
		return max(n/4, MinDerived), src
	}
	return FallbackLimit, ""
}

// RuntimeLimit is the Go runtime's soft memory limit for a container
// limited to containerLimit bytes: 90% of it, so the collector works
// harder as the heap nears the limit instead of letting garbage take the
// process past it. Measured: 300 concurrent 2.4 MB streams peak at
// 1.3 GB RSS with the default budget alone, at 0.84 GB with a 900 MiB
// runtime limit (docs/performance.md).
func RuntimeLimit(containerLimit int64) int64 { return containerLimit / 10 * 9 }

// ContainerLimit reads the container's memory limit. sys is the host's
// root file system (os.DirFS("/") in production); the limit is read from
// cgroup v2 (sys/fs/cgroup/memory.max), else cgroup v1
// (sys/fs/cgroup/memory/memory.limit_in_bytes). It is 0 when none is
// visible ("max", absent files, v1's huge "unlimited" value).
func ContainerLimit(sys fs.FS) (limit int64, source string) {
	for _, f := range []string{"sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := fs.ReadFile(sys, f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 { // "max", or v1's page-rounded MaxInt64
			continue
		}
		return n, "/" + f
	}
	return 0, ""
}
