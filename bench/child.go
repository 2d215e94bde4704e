package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The roles this binary plays when it re-executes itself.
const (
	roleUpstream = "upstream"
	roleProxy    = "bareproxy"
	roleGateway  = "gateway"
)

// readyFD is the descriptor on which a child announces its address: the
// parent passes the write end of a pipe as the first extra file.
const readyFD = 3

// roleFunc builds a child's handler from its flags. close, when non-nil,
// runs after the server has stopped.
type roleFunc func(ctx context.Context, fl *flag.FlagSet, args []string) (h http.Handler, close func(), err error)

// serveRole runs one child role: it listens on a free loopback port,
// announces the address on readyFD and serves until it is signalled.
func serveRole(ctx context.Context, args []string, fn roleFunc) int {
	fl := flag.NewFlagSet(os.Args[0], flag.ContinueOnError)
	h, closeFn, err := fn(ctx, fl, args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 2
	}
	if closeFn != nil {
		defer closeFn()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(os.Stderr, "listen: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	ready := os.NewFile(readyFD, "ready")
	fmt.Fprintln(ready, ln.Addr().String())
	ready.Close()
	select {
	case err := <-errc:
		fmt.Fprintf(os.Stderr, "serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return 0
}

// child is a role process started by the driver.
type child struct {
	name    string
	cmd     *exec.Cmd
	addr    string
	logPath string
	exited  chan struct{}
}

// startChild re-executes this binary in role with args and waits for it to
// announce its address. Its stderr goes to a log file in dir.
func startChild(ctx context.Context, dir, name, role string, args ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locate own binary: %w", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("ready pipe: %w", err)
	}
	defer pr.Close()
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		pw.Close()
		return nil, fmt.Errorf("child log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(exe, append([]string{role}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{pw}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	pw.Close()
	c := &child{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(c.exited) }()

	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(pr).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case addr := <-line:
		if addr != "" {
			c.addr = addr
			return c, nil
		}
		<-c.exited
	case <-time.After(60 * time.Second):
		c.stop()
		return nil, fmt.Errorf("%s did not start within 60s: %s", name, c.logTail())
	case <-ctx.Done():
		c.stop()
		return nil, ctx.Err()
	}
	return nil, &childExitError{name: name, log: c.logTail()}
}

// childExitError reports a child that exited before it was ready, with
// the end of its log (a gateway rejecting its configuration says why).
type childExitError struct {
	name, log string
}

func (e *childExitError) Error() string {
	return fmt.Sprintf("%s exited before it was ready: %s", e.name, e.log)
}

// pid is the child's process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// url is the child's base URL.
func (c *child) url() string { return "http://" + c.addr }

// stop asks the child to end, then kills it if it does not. Once the
// child has exited it returns at once, so stopping twice is harmless.
func (c *child) stop() {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-c.exited
	}
}

// logTail is the last lines of the child's log.
func (c *child) logTail() string {
	f, err := os.Open(c.logPath)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, "\n")
}

// isExit reports whether err is a child that exited before it was ready.
func isExit(err error) bool {
	var ce *childExitError
	return errors.As(err, &ce)
}
