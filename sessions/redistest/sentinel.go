package redistest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// SentinelMaster is the master name StartSentinel monitors.
const SentinelMaster = "mymaster"

// StartSentinel starts a standalone master and one Sentinel (redis-server
// --sentinel) monitoring it as SentinelMaster, and returns the master and
// the Sentinel's host:port. Both are killed when the test ends.
func StartSentinel(t testing.TB) (master *Server, sentinelAddr string) {
	t.Helper()
	bin := lookPath(t, "redis-server")
	master = startServer(t, bin, "")
	// Sentinel rewrites its config file, so it gets its own writable one.
	conf := filepath.Join(t.TempDir(), "sentinel.conf")
	body := "sentinel monitor " + SentinelMaster + " 127.0.0.1 " + strconv.Itoa(master.Port()) + " 1\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatalf("redistest: sentinel config: %v", err)
	}
	return master, startServer(t, bin, conf, "--sentinel").Addr()
}
