// Command bench measures what the gateway adds to a model call on each
// API surface it serves (chat completions, Responses, Messages).
//
// It starts, as separate processes re-executed from this binary, a mock
// model upstream answering all three surfaces, a bare reverse proxy (the
// no-policy baseline) and the gateway, then drives each with an open-loop,
// fixed-rate load generator (vegeta) in interleaved rounds (direct, bare
// proxy, gateway, repeat), so machine drift hits all three alike. It reports latency percentiles, the
// gateway's added latency, for streams the time to the first data byte at
// the client, CPU time and peak memory per process and the gateway's
// allocations per request. Incremental-streaming scenarios first send a
// deny probe and fail if any text no verdict allowed reached the client.
//
// Peers run in the same rounds when installed (each skipped with a note
// otherwise; --peers=false leaves them out): nginx (proxy_pass) and Caddy
// (reverse_proxy) from their Debian packages, and the Portkey gateway from
// bench/peers (npm ci --prefix bench/peers). The overload scenario, run
// only when named, drives the json request past the gateway's capacity
// against a tight admission cap and checks that the excess is refused
// with 503 and Retry-After, the admitted p99, the gateway's peak RSS and
// that every admitted answer has its output verdict (how fast refusals
// come is reported, not checked).
//
// Usage:
//
//	go run ./bench [--quick] [--scenario NAME,...] [--json FILE]
//	go run ./bench --saturate [--scenario json]
//	go run ./bench --soak [--soak-duration 5m] [--soak-rate 500]
//	go run ./bench --scenario overload [--overload-rate 3000]
//
// The load runs are manual: they need a quiet machine to mean anything.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

// run dispatches between the child roles and the driver.
func run(ctx context.Context, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case roleUpstream:
			return serveRole(ctx, args[1:], runUpstream)
		case roleProxy:
			return serveRole(ctx, args[1:], runBareProxy)
		case roleGateway:
			return serveRole(ctx, args[1:], runGateway)
		}
	}
	if err := drive(ctx, args); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}
