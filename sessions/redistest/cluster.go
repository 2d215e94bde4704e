package redistest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clusterReadyTimeout bounds how long StartCluster waits for
// cluster_state:ok on every node.
const clusterReadyTimeout = 30 * time.Second

// Cluster is a local Redis Cluster: masters first, then their replicas.
type Cluster struct {
	tb    testing.TB
	cli   string
	Nodes []*Server
}

// StartCluster starts a Redis Cluster of masters masters with replicas
// replicas each (redis-server --cluster-enabled yes, joined by redis-cli
// --cluster create) and waits until every node reports cluster_state:ok.
// Its nodes are killed when the test ends. The test is skipped (failed in
// CI) when redis-server or redis-cli is missing, and skipped when
// redis-server was built without cluster support.
func StartCluster(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	bin := lookPath(t, "redis-server")
	cli := lookPath(t, "redis-cli")
	if masters < 3 {
		t.Fatalf("redistest: a Redis Cluster needs at least 3 masters, not %d", masters)
	}
	// A join that stalls (seen once under heavy load: redis-cli waiting
	// for the cluster to join until its timeout) is retried once with
	// fresh nodes rather than failing the test.
	var out string
	var err error
	for attempt := 1; ; attempt++ {
		c := &Cluster{tb: t, cli: cli}
		for range masters * (1 + replicas) {
			// Each node writes nodes.conf in its own temporary --dir; its
			// bus port is chosen free too rather than port+10000, which
			// may be taken or out of range.
			bus, perr := freePort()
			if perr != nil {
				t.Fatalf("redistest: find free port: %v", perr)
			}
			c.Nodes = append(c.Nodes, startServer(t, bin, "",
				"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
				"--cluster-node-timeout", "2000", "--cluster-port", strconv.Itoa(bus),
			))
		}
		if info, ierr := c.run(c.Nodes[0], "cluster", "info"); ierr != nil || !strings.Contains(info, "cluster_state:") {
			t.Skipf("redistest: redis-server lacks cluster support: %v %s", ierr, info)
		}
		args := []string{"--cluster", "create"}
		args = append(args, c.Addrs()...)
		args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
		if out, err = c.cliRun(args...); err == nil {
			c.WaitOK()
			return c
		}
		if attempt == 2 {
			break
		}
		t.Logf("redistest: redis-cli --cluster create failed (%v); retrying with fresh nodes", err)
		for _, n := range c.Nodes {
			n.Kill()
		}
	}
	t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	return nil
}

// Addrs returns every node's host:port.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr()
	}
	return out
}

// WaitOK waits until every live node reports cluster_state:ok and agrees on
// the slot assignment (all 16384 slots assigned and ok), failing the test
// after 30 s.
func (c *Cluster) WaitOK() {
	c.tb.Helper()
	deadline := time.Now().Add(clusterReadyTimeout)
	for {
		ready := true
		var last string
		for _, n := range c.Nodes {
			info, err := c.run(n, "cluster", "info")
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
				ready, last = false, fmt.Sprintf("%s: %v %s", n.Addr(), err, info)
				break
			}
		}
		if ready {
			return
		}
		if time.Now().After(deadline) {
			c.tb.Fatalf("redistest: cluster not ok within %v: %s", clusterReadyTimeout, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Run runs one redis-cli command against node n and returns its output.
func (c *Cluster) Run(n *Server, args ...string) (string, error) { return c.run(n, args...) }

func (c *Cluster) run(n *Server, args ...string) (string, error) {
	return c.cliRun(append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(n.Port())}, args...)...)
}

// cliRun runs redis-cli with a timeout.
func (c *Cluster) cliRun(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadyTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, c.cli, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
