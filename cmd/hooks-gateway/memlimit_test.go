package main

import (
	"testing"
	"testing/fstest"
)

func TestRuntimeMemoryLimit(t *testing.T) {
	cgroup := fstest.MapFS{"sys/fs/cgroup/memory.max": {Data: []byte("1073741824\n")}}
	none := func(string) string { return "" }
	cases := []struct {
		name   string
		sys    fstest.MapFS
		getenv func(string) string
		want   int64
		ok     bool
	}{
		{"container limit", cgroup, none, 966367638, true}, // 90% of 1 GiB
		{"GOMEMLIMIT wins", cgroup, func(k string) string {
			if k == "GOMEMLIMIT" {
				return "500MiB"
			}
			return ""
		}, 0, false},
		{"no limit visible", fstest.MapFS{"sys/fs/cgroup/memory.max": {Data: []byte("max\n")}}, none, 0, false},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got, _, _, ok := runtimeMemoryLimit(tt.sys, tt.getenv)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("runtimeMemoryLimit = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
