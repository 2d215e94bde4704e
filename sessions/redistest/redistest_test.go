package redistest_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// pong reports whether the server at addr answers PING.
func pong(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

func TestKillRestartKeepsPort(t *testing.T) {
	s := redistest.StartServer(t)
	if !strings.HasPrefix(s.URL(), "redis://127.0.0.1:") || !pong(s.Addr()) {
		t.Fatalf("server at %s not answering", s.URL())
	}
	addr := s.Addr()
	s.Kill()
	if pong(addr) {
		t.Fatal("server still answers after Kill")
	}
	s.Kill() // idempotent
	s.Restart()
	if s.Addr() != addr || !pong(addr) {
		t.Fatalf("restarted server at %s not answering on %s", s.Addr(), addr)
	}
}

func TestStartStop(t *testing.T) {
	url, stop := redistest.Start(t)
	addr := strings.TrimPrefix(url, "redis://")
	if !pong(addr) {
		t.Fatal("server not answering")
	}
	stop()
	if pong(addr) {
		t.Fatal("server still answers after stop")
	}
}

func TestStartCluster(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	if len(c.Nodes) != 3 {
		t.Fatalf("%d nodes; want 3", len(c.Nodes))
	}
	out, err := c.Run(c.Nodes[0], "cluster", "info")
	if err != nil || !strings.Contains(out, "cluster_known_nodes:3") {
		t.Fatalf("cluster info = %q, %v; want 3 known nodes", out, err)
	}
}
