package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"
)

// runHealthcheck probes the gateway's liveness endpoint and exits 0 when it
// answers 200: the container image has no shell or curl, so its HEALTHCHECK
// runs the binary itself.
func runHealthcheck(ctx context.Context, args []string, stderr io.Writer) int {
	fl := flag.NewFlagSet("hooks-gateway healthcheck", flag.ContinueOnError)
	fl.SetOutput(stderr)
	url := fl.String("url", "http://127.0.0.1:8080/healthz", "liveness URL to probe")
	timeout := fl.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		fmt.Fprintf(stderr, "healthcheck: %v\n", err)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "healthcheck: %v\n", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "healthcheck: %s answered %d\n", *url, resp.StatusCode)
		return 1
	}
	return 0
}
