package main

import (
	"io/fs"
	"log/slog"
	"runtime/debug"

	"github.com/hooks-gateway/hooks-gateway/internal/membudget"
)

// runtimeMemoryLimit is the soft memory limit to give the Go runtime: a
// share of the container's memory limit (membudget.RuntimeLimit), so that
// garbage left between collections cannot take the process past the
// container's limit while streams are buffered. ok is false when the
// operator set GOMEMLIMIT (the runtime already follows it) or no
// container limit is visible.
func runtimeMemoryLimit(sys fs.FS, getenv func(string) string) (limit, container int64, source string, ok bool) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, 0, "", false
	}
	container, source = membudget.ContainerLimit(sys)
	if container == 0 {
		return 0, 0, "", false
	}
	return membudget.RuntimeLimit(container), container, source, true
}

// applyRuntimeMemoryLimit sets the limit runtimeMemoryLimit derives, and
// says so in one log line.
func applyRuntimeMemoryLimit(logger *slog.Logger, sys fs.FS, getenv func(string) string) {
	limit, container, source, ok := runtimeMemoryLimit(sys, getenv)
	if !ok {
		return
	}
	debug.SetMemoryLimit(limit)
	logger.Info("go runtime memory limit set below the container's", "limit_bytes", limit, "container_limit_bytes", container, "from", source)
}
