// Package gctune sets the pace of the Go collector for the gateway's
// process: the heap growth allowed between collections (GOGC) and the soft
// memory limit (GOMEMLIMIT) that bounds it. What the operator set in the
// environment always wins.
package gctune

import (
	"io/fs"
	"log/slog"
	"runtime/debug"

	"github.com/hooks-gateway/hooks-gateway/internal/membudget"
)

// Plan is what Decide chose to set; zero fields are left as the runtime
// has them.
type Plan struct {
	// GCPercent is the collector's target heap growth, in percent of the
	// live heap.
	GCPercent int
	// MemoryLimit is the soft memory limit, bytes.
	MemoryLimit int64
	// LimitFrom says where MemoryLimit comes from: the container's limit
	// file, or "buffer budget".
	LimitFrom string
}

// budgetShare is how much of the process's memory the buffer budget is
// meant to be (membudget.DefaultLimit takes a quarter of a container's
// limit): without a container limit, four budgets are the memory the
// configuration implies.
const budgetShare = 4

// minLimit is the least soft limit set from the budget: a small budget
// must not push the collector into running flat out (it takes up to half
// the CPU past the limit) on a heap of connections and configuration.
const minLimit = 1 << 30

// Decide works out the plan for a configured gcPercent (0: the runtime's
// own) and buffer budget (bytes; 0 when derived, as membudget.DefaultLimit
// derives it). sys is the host's root file
// system (os.DirFS("/") in production), getenv the environment.
//
//   - GOGC set: the collector's pace is left alone; else gcPercent.
//   - GOMEMLIMIT set: the memory limit is left alone. Else, with a visible
//     container limit, 90% of it (membudget.RuntimeLimit), so garbage
//     cannot carry the process past the container's limit; else, when the
//     pace lets the heap grow more than Go's default does, four budgets
//     (at least 1 GiB), so the slower pace never lets a heap of buffered
//     answers grow further than the memory the budget was sized for.
func Decide(gcPercent int, budget int64, sys fs.FS, getenv func(string) string) Plan {
	var p Plan
	pace := 100
	if getenv("GOGC") == "" && gcPercent > 0 {
		p.GCPercent, pace = gcPercent, gcPercent
	}
	if getenv("GOMEMLIMIT") != "" {
		return p
	}
	if container, source := membudget.ContainerLimit(sys); container > 0 {
		p.MemoryLimit, p.LimitFrom = membudget.RuntimeLimit(container), source
	} else if pace > 100 {
		if budget == 0 {
			budget, _ = membudget.DefaultLimit(sys)
		}
		p.MemoryLimit, p.LimitFrom = max(budget*budgetShare, minLimit), "buffer budget"
	}
	return p
}

// Apply sets the plan on the runtime and says what it set in one log line.
func Apply(logger *slog.Logger, p Plan) {
	if p.GCPercent > 0 {
		debug.SetGCPercent(p.GCPercent)
	}
	if p.MemoryLimit > 0 {
		debug.SetMemoryLimit(p.MemoryLimit)
	}
	if p.GCPercent > 0 || p.MemoryLimit > 0 {
		logger.Info("go collector paced", "gc_percent", p.GCPercent, "memory_limit_bytes", p.MemoryLimit, "memory_limit_from", p.LimitFrom)
	}
}
