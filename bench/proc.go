package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the kernel's clock tick for /proc times. Linux reports them in
// USER_HZ, which is 100 on every architecture Go supports (procfs assumes
// the same).
const userHZ = 100

// cpuTime is a process's user plus system CPU time so far.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu time: %w", err)
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line. The command name (field 2) may hold spaces and
// parentheses, so fields are counted after its last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat: no command name")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state): utime is field 14, at f[11].
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// memStatus returns the VmHWM (peak resident set) and VmRSS of a process,
// in bytes.
func memStatus(pid int) (hwm, rss int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("memory status: %w", err)
	}
	return parseStatusMem(string(b))
}

// parseStatusMem reads VmHWM and VmRSS ("VmHWM:     12345 kB") from a
// /proc/<pid>/status text.
func parseStatusMem(status string) (hwm, rss int64, err error) {
	found := 0
	for line := range strings.Lines(status) {
		key, rest, ok := strings.Cut(line, ":")
		if !ok || (key != "VmHWM" && key != "VmRSS") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("status: unexpected %s line %q", key, strings.TrimSpace(line))
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("status: %s: %w", key, err)
		}
		if key == "VmHWM" {
			hwm = n << 10
		} else {
			rss = n << 10
		}
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("status: VmHWM or VmRSS missing")
	}
	return hwm, rss, nil
}
