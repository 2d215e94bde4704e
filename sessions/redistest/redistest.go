// Package redistest runs a throwaway redis-server for tests: a real Redis on
// a free loopback port, with no persistence, killed when the test ends.
//
// redis-server must be on PATH. Without it the test is skipped, unless the
// CI environment variable is set (to anything but "", "0" or "false"): CI
// installs Redis, so there a missing binary fails the test instead of
// silently skipping the Redis coverage.
package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// readyTimeout bounds how long a start waits for the server to answer PING.
const readyTimeout = 5 * time.Second

// Server is a redis-server child process bound to 127.0.0.1 on a fixed
// port. Kill and Restart let fail-closed tests take Redis away and bring it
// back on the same address, so clients reconnect without being rebuilt.
// Restarted servers start empty (no persistence).
type Server struct {
	tb    testing.TB
	bin   string
	dir   string
	port  int
	extra []string // more redis-server arguments (cluster mode)
	conf  string   // config file, the first argument (Sentinel needs one)

	mu     sync.Mutex
	cmd    *exec.Cmd     // nil while killed
	exited chan error    // receives cmd.Wait's result
	log    *lockedWriter // the current process's output, for failure reports
}

// Start starts a redis-server and returns its URL (redis://127.0.0.1:port)
// and a function that stops it. The server is also stopped when the test
// ends, so calling stop is optional.
func Start(t testing.TB) (url string, stop func()) {
	t.Helper()
	s := StartServer(t)
	return s.URL(), s.Kill
}

// StartServer starts a redis-server and returns its handle. The server is
// killed when the test ends.
func StartServer(t testing.TB) *Server {
	t.Helper()
	return startServer(t, lookPath(t, "redis-server"), "")
}

// lookPath finds a Redis binary or skips (fails in CI) the test.
func lookPath(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if inCI() {
			t.Fatalf("redistest: %s not on PATH (CI must install it): %v", name, err)
		}
		t.Skipf("redistest: %s not on PATH; install it to run Redis tests", name)
	}
	return bin
}

// startServer starts bin on a free port, with config file conf first when
// it is not empty and extra arguments last.
func startServer(t testing.TB, bin, conf string, extra ...string) *Server {
	t.Helper()
	s := &Server{tb: t, bin: bin, dir: t.TempDir(), conf: conf, extra: extra}
	t.Cleanup(s.Kill)
	// A free port found by listening can be taken by someone else before
	// redis-server binds it; retry with a fresh port in that case.
	var lastErr error
	for range 3 {
		port, err := freePort()
		if err != nil {
			t.Fatalf("redistest: find free port: %v", err)
		}
		s.port = port
		if lastErr = s.start(); lastErr == nil {
			return s
		}
	}
	t.Fatalf("redistest: %v", lastErr)
	return nil
}

// inCI reports whether the CI environment variable asks for strictness.
func inCI() bool {
	switch os.Getenv("CI") {
	case "", "0", "false", "FALSE", "False":
		return false
	}
	return true
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Addr returns the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL returns the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr() }

// Port returns the server's TCP port; it stays the same across restarts.
func (s *Server) Port() int { return s.port }

// start launches redis-server on s.port and waits until it answers PING.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("redis-server on port %d already running", s.port)
	}
	log := &lockedWriter{}
	args := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--daemonize", "no",
		"--logfile", "",
	}
	if s.conf != "" {
		args = append([]string{s.conf}, args...)
	}
	cmd := exec.Command(s.bin, append(args, s.extra...)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(readyTimeout)
	for {
		if ping(s.Addr()) == nil {
			s.cmd, s.exited, s.log = cmd, exited, log
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("redis-server on port %d exited before answering PING (%v); log:\n%s", s.port, err, log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("redis-server on port %d did not answer PING within %v; log:\n%s", s.port, readyTimeout, log.String())
		}
	}
}

// Kill stops the server abruptly (SIGKILL) and waits for it to exit. It is
// a no-op when the server is not running.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd, s.exited = nil, nil
}

// Restart starts a fresh, empty server on the same port after Kill (or
// kills the running one first). It fails the test if the server does not
// come up within 5 s.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	if err := s.start(); err != nil {
		s.tb.Fatalf("redistest: restart: %v", err)
	}
}

// Log returns the output of the current (or last) server process.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// ping sends one RESP PING and expects +PONG.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("unexpected PING reply %q", line)
	}
	return nil
}

// lockedWriter lets the process's output be read while it is written.
type lockedWriter struct {
	mu sync.Mutex
	w  bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}
