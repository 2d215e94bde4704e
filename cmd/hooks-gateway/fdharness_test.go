package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestSocketHarness measures a gateway binary under slow clients: it
// starts $HARNESS_BIN with $HARNESS_CONFIG under a file-descriptor limit
// of $HARNESS_NOFILE (lowered with ulimit, never raised), opens
// $HARNESS_CLIENTS connections that send a request's headers and trickle
// its body, and reports the descriptors the gateway holds and whether
// /healthz answers (on $HARNESS_ADDR, and on $HARNESS_PROBES when set).
// Manual: the figures in docs/performance.md come from it.
//
//	HARNESS_BIN=/tmp/gw HARNESS_CONFIG=gw.yaml HARNESS_ADDR=127.0.0.1:18080 \
//	  go test ./cmd/hooks-gateway -run TestSocketHarness -v
func TestSocketHarness(t *testing.T) {
	bin := os.Getenv("HARNESS_BIN")
	if bin == "" {
		t.Skip("manual: set HARNESS_BIN, HARNESS_CONFIG and HARNESS_ADDR")
	}
	addr, probes := os.Getenv("HARNESS_ADDR"), os.Getenv("HARNESS_PROBES")
	nofile := envInt("HARNESS_NOFILE", 2048)
	clients := envInt("HARNESS_CLIENTS", 3000)
	cmd := exec.Command("sh", "-c", fmt.Sprintf("ulimit -n %d && exec %s --config %s", nofile, bin, os.Getenv("HARNESS_CONFIG")))
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := probe(addr, "/healthz"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the gateway did not come up")
		}
		time.Sleep(50 * time.Millisecond)
	}
	before := fdCount(t, cmd.Process.Pid)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	dialFailed := 0
	for range clients {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			dialFailed++
			continue
		}
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
		conns = append(conns, c)
	}
	// Trickle for a while: one byte per connection every second.
	for range 3 {
		time.Sleep(time.Second)
		for _, c := range conns {
			c.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
			c.Write([]byte(" "))
		}
	}
	during := fdCount(t, cmd.Process.Pid)
	report := func(where string) string {
		d, err := probe(where, "/healthz")
		if err != nil {
			return fmt.Sprintf("no answer (%v after %s)", err, d.Round(time.Millisecond))
		}
		return "200 in " + d.Round(time.Millisecond).String()
	}
	t.Logf("clients %d (dial failures %d), fd limit %d: gateway fds %d idle, %d under the attack; /healthz on %s: %s",
		clients, dialFailed, nofile, before, during, addr, report(addr))
	if probes != "" {
		t.Logf("/healthz on the probe listener %s: %s", probes, report(probes))
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

func fdCount(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
