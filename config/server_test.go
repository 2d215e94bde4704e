package config

import (
	"slices"
	"testing"
	"time"
)

// TestServerSection: defaults when left out, each key read, and the bounds
// (positive values, read_timeout covering read_header_timeout) reported at
// their lines.
func TestServerSection(t *testing.T) {
	if got := mustParse(t, mockUpstream).Server; got != defaultServer() {
		t.Fatalf("defaults %+v", got)
	}
	c := mustParse(t, mockUpstream+`server:
  read_header_timeout: 2s
  read_timeout: 30s
  idle_timeout: 1m
  max_connections: 100
  probe_connections: 4
  max_requests: 50
`)
	want := Server{ReadHeaderTimeout: 2 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: time.Minute,
		MaxConnections: 100, ProbeConnections: 4, MaxRequests: 50}
	if c.Server != want {
		t.Fatalf("got %+v, want %+v", c.Server, want)
	}
	got := problemsOf(t, mockUpstream+`server:
  read_header_timeout: 20s
  read_timeout: 5s
  idle_timeout: 0
  max_connections: 0
  probe_connections: -1
  max_requests: many
`)
	wantProblems := []string{
		"gateway.yaml:10: server.max_requests: must be an integer (got \"many\")",
		"gateway.yaml:6: server.read_timeout: must be at least server.read_header_timeout (20s): it bounds the headers and the body together (got 5s)",
		"gateway.yaml:7: server.idle_timeout: must be positive (got 0s)",
		"gateway.yaml:8: server.max_connections: must be positive (got 0)",
		"gateway.yaml:9: server.probe_connections: must be positive (got -1)",
	}
	slices.Sort(got)
	slices.Sort(wantProblems)
	if !slices.Equal(got, wantProblems) {
		t.Fatalf("problems:\n%q\nwant\n%q", got, wantProblems)
	}
}
