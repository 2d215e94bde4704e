package netguard

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// serve runs h behind a Listener with opts on a loopback port.
func serve(t *testing.T, opts ListenerOptions, h http.Handler) (string, *Listener) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := NewListener(inner, opts)
	srv := &http.Server{Handler: h, ConnContext: ConnContext, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return inner.Addr().String(), ln
}

// get sends one GET on a fresh connection and returns the status line, or
// the error.
func get(addr, path string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// A listener full in both pools closes new connections at once and counts
// them; a reserve connection carries its pool to the handler; a closed
// connection gives its slot back.
func TestListenerPools(t *testing.T) {
	var refused atomic.Int64
	addr, ln := serve(t, ListenerOptions{Max: 2, Reserve: 1, Refused: func() { refused.Add(1) }},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if Reserved(r.Context()) {
				io.WriteString(w, "reserve")
				return
			}
			io.WriteString(w, "main")
		}))
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	waitFor(t, func() bool { m, _ := ln.Open(); return m == 2 })
	// The reserve slot: the request sees its pool.
	rc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, r := ln.Open(); return r == 1 })
	// Both full: the next connection is closed unanswered.
	if line, err := get(addr, "/"); err == nil {
		t.Fatalf("a connection beyond both pools was answered: %q", line)
	}
	if refused.Load() != 1 {
		t.Fatalf("refused %d, want 1", refused.Load())
	}
	fmt.Fprintf(rc, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(rc)
	if !strings.HasSuffix(string(b), "reserve") {
		t.Fatalf("reserve connection answered %q", b)
	}
	rc.Close()
	for _, c := range held {
		c.Close()
	}
	waitFor(t, func() bool { m, r := ln.Open(); return m == 0 && r == 0 })
	if line, err := get(addr, "/"); err != nil || line != "HTTP/1.1 200 OK" {
		t.Fatalf("after the slots were freed: %q, %v", line, err)
	}
}

// A reserve connection cannot be held open by trickling headers: its
// reads end at ReserveReadTimeout whatever the server's own timeouts.
func TestReserveReadTimeout(t *testing.T) {
	addr, ln := serve(t, ListenerOptions{Max: 0, Reserve: 1, ReserveReadTimeout: 200 * time.Millisecond},
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	io.WriteString(c, "GET / HTTP/1.1\r\n")
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	io.ReadAll(c) // the server closes it
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the reserve connection was held %s", d)
	}
	waitFor(t, func() bool { _, r := ln.Open(); return r == 0 })
}

// Wait returns when the last tracked handler returns, not before.
func TestTracker(t *testing.T) {
	var tr Tracker
	release := make(chan struct{})
	h := tr.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	go h.ServeHTTP(nil, nil)
	waitFor(t, func() bool { return tr.Running() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := tr.Wait(ctx); err == nil {
		t.Fatal("Wait returned with a handler running")
	}
	close(release)
	if err := tr.Wait(context.Background()); err != nil || tr.Running() != 0 {
		t.Fatalf("Wait: %v, running %d", err, tr.Running())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
