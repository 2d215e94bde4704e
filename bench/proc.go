package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// userHZ is the kernel's clock tick for /proc times. Linux reports them in
// USER_HZ, which is 100 on every architecture Go supports (procfs assumes
// the same).
const userHZ = 100

// cpuTime is a process's user plus system CPU time so far: its CPU-time
// clock (clock_gettime on the clock id of pid, the scheduler's runtime of
// all its threads, to the nanosecond) where the kernel lets us read it,
// else utime + stime from /proc, in 10 ms ticks: too coarse for a phase
// of a few hundred requests.
func cpuTime(pid int) (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(int32((^pid)<<3|2), &ts); err == nil { // CPUCLOCK_SCHED of the process
		return time.Duration(ts.Nano()), nil
	}
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

// treePIDs is pid and its descendants (nginx's workers under its
// master), found through each process's parent in /proc.
func treePIDs(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return []int{pid}
	}
	children := map[int][]int{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if pp, err := parseStatPPID(string(b)); err == nil {
			children[pp] = append(children[pp], n)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// parseStatPPID reads the parent pid (field 4) of a /proc/<pid>/stat line.
func parseStatPPID(stat string) (int, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat: no command name")
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("stat: no parent pid")
	}
	return strconv.Atoi(f[1])
}

// treeCPU is the CPU time of pid and its live descendants.
func treeCPU(pid int) time.Duration {
	var d time.Duration
	for _, p := range treePIDs(pid) {
		c, _ := cpuTime(p)
		d += c
	}
	return d
}

// treePeakRSS is the sum of the peak resident sets of pid and its live
// descendants: an upper bound on the tree's peak (each process may have
// peaked at a different moment).
func treePeakRSS(pid int) int64 {
	var sum int64
	for _, p := range treePIDs(pid) {
		hwm, _, _ := memStatus(p)
		sum += hwm
	}
	return sum
}
