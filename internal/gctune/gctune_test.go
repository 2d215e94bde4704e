package gctune

import (
	"testing"
	"testing/fstest"

	"github.com/hooks-gateway/hooks-gateway/internal/membudget"
)

func TestDecide(t *testing.T) {
	cgroup := fstest.MapFS{"sys/fs/cgroup/memory.max": {Data: []byte("1073741824\n")}}
	unlimited := fstest.MapFS{"sys/fs/cgroup/memory.max": {Data: []byte("max\n")}}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	const budget = 256 << 20
	cases := []struct {
		name    string
		percent int
		sys     fstest.MapFS
		getenv  func(string) string
		budget  int64 // limits.buffer_budget; 0 when left out
		want    Plan
	}{
		{"container limit", 400, cgroup, env(), budget, Plan{GCPercent: 400, MemoryLimit: 966367638, LimitFrom: "/sys/fs/cgroup/memory.max"}}, // 90% of 1 GiB
		{"no container: four budgets", 400, unlimited, env(), budget, Plan{GCPercent: 400, MemoryLimit: 4 * budget, LimitFrom: "buffer budget"}},
		{"small budget: 1 GiB floor", 400, unlimited, env(), 16 << 20, Plan{GCPercent: 400, MemoryLimit: 1 << 30, LimitFrom: "buffer budget"}},
		{"large budget", 400, unlimited, env(), 2 << 30, Plan{GCPercent: 400, MemoryLimit: 8 << 30, LimitFrom: "buffer budget"}},
		{"derived budget", 400, unlimited, env(), 0, Plan{GCPercent: 400, MemoryLimit: 4 * membudget.FallbackLimit, LimitFrom: "buffer budget"}},
		{"default pace, no container: no limit", 0, unlimited, env(), budget, Plan{}},
		{"a pace at Go's default needs no limit", 100, unlimited, env(), budget, Plan{GCPercent: 100}},
		{"GOGC wins", 400, unlimited, env("GOGC", "100"), budget, Plan{}},
		{"GOGC wins, container limit kept", 400, cgroup, env("GOGC", "off"), budget, Plan{MemoryLimit: 966367638, LimitFrom: "/sys/fs/cgroup/memory.max"}},
		{"GOMEMLIMIT wins", 400, cgroup, env("GOMEMLIMIT", "500MiB"), budget, Plan{GCPercent: 400}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.percent, tt.budget, tt.sys, tt.getenv); got != tt.want {
				t.Fatalf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}
