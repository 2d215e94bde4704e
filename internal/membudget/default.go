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

// DefaultLimit derives the budget from the container's memory limit: a
// quarter of it, since a buffered byte costs the gateway about two to
// three bytes of heap (the raw stream, its assembly, the released copy)
// and the Go heap may grow to twice its live size between collections.
// sys is the host's root file system (os.DirFS("/") in production); the
// limit is read from cgroup v2 (sys/fs/cgroup/memory.max), else cgroup
// v1 (sys/fs/cgroup/memory/memory.limit_in_bytes). Without a visible
// limit ("max", absent files, v1's huge "unlimited" value) it is
// FallbackLimit. It reports where the figure came from.
func DefaultLimit(sys fs.FS) (limit int64, source string) {
	for _, f := range []string{"sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := fs.ReadFile(sys, f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 { // "max", or v1's page-rounded MaxInt64
			continue
		}
		return max(n/4, MinDerived), "/" + f
	}
	return FallbackLimit, ""
}
