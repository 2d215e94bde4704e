// Command hooks-gateway runs the AGENT-HOOKS enforcing proxy: an
// OpenAI-compatible endpoint that applies the configured policy to every
// model call.
//
// Usage:
//
//	hooks-gateway [--config FILE]
//	hooks-gateway policy check FILE|DIR
//	hooks-gateway policy test FILE|DIR CASES.yaml
//	hooks-gateway records verify [--strict] FILE [FILE...]
//	hooks-gateway healthcheck [--url URL] [--timeout D]
//	hooks-gateway keys new [--name NAME]
//	hooks-gateway keys hash < KEY
//
// Without --config it runs on the embedded default (listen 127.0.0.1:8080, memory
// sessions, the built-in mock model unless OPENAI_API_KEY is set, a demo
// policy that redacts e-mail addresses and denies leaked credentials).
//
// SIGHUP reloads the policy files (policy.path); so do changes to them when
// policy.watch is on, and POST /admin/reload; each reload re-reads
// auth.keys_file, which is watched too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/gctune"
	"github.com/hooks-gateway/hooks-gateway/internal/netguard"
	"github.com/hooks-gateway/hooks-gateway/proxy"
	"github.com/hooks-gateway/hooks-gateway/tracing"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil))
}

// run is main without the process. ready, when non-nil, receives the bound
// address once the listener is up (tests use it).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready chan<- string) int {
	if len(args) > 0 && args[0] == "records" {
		return runRecords(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "policy" {
		return runPolicy(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "healthcheck" {
		return runHealthcheck(ctx, args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "keys" {
		return runKeys(args[1:], os.Stdin, stdout, stderr)
	}
	fl := flag.NewFlagSet("hooks-gateway", flag.ContinueOnError)
	fl.SetOutput(stderr)
	path := fl.String("config", "", "configuration file (default: the embedded default configuration)")
	drain := fl.Duration("drain-timeout", 30*time.Second, "how long SIGTERM waits for in-flight requests")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	var cfg *config.Config
	var err error
	if *path == "" {
		cfg = config.Default()
		err = cfg.Validate()
	} else {
		cfg, err = config.Load(*path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hooks-gateway: configuration rejected:\n%v\n", err)
		return 2
	}
	for _, w := range cfg.Warnings() {
		logger.Warn(w)
	}
	if err := cfg.CheckExposure(cfg.Listeners.HTTP); err != nil {
		fmt.Fprintf(stderr, "hooks-gateway: %v\n", err)
		return 2
	}
	logger.Info(cfg.AuthSummary(cfg.Listeners.HTTP))
	gctune.Apply(logger, gctune.Decide(cfg.Runtime.GCPercent, cfg.Limits.BufferBudget, os.DirFS("/"), os.Getenv))
	tp, shutdownTracing, err := tracing.Setup(ctx, cfg.Tracing)
	if err != nil {
		fmt.Fprintf(stderr, "hooks-gateway: %v\n", err)
		return 2
	}
	// Runs last, after the drain: flushes the spans still batched.
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdownTracing(sctx); err != nil {
			logger.Warn("tracing shutdown incomplete", "error", err)
		}
	}()
	asm, err := proxy.Build(ctx, cfg, stdout, logger, proxy.WithTracer(tp.Tracer(tracing.TracerName)))
	if err != nil {
		fmt.Fprintf(stderr, "hooks-gateway: %v\n", err)
		return 2
	}
	defer asm.Close()

	ln, err := net.Listen("tcp", cfg.Listeners.HTTP)
	if err != nil {
		fmt.Fprintf(stderr, "hooks-gateway: listen %s: %v\n", cfg.Listeners.HTTP, err)
		return 1
	}
	// Requests run under base: past the drain timeout, cancelling it makes
	// each close its trail (see cutOff).
	base, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	var running netguard.Tracker
	servers := []*http.Server{newHTTPServer(cfg.Server, running.Wrap(asm.Server), base)}
	listeners := []net.Listener{guardListener(ln, cfg.Server, asm.Server.Metrics(), logger)}
	if cfg.Listeners.Admin != "" {
		aln, err := net.Listen("tcp", cfg.Listeners.Admin)
		if err != nil {
			ln.Close()
			fmt.Fprintf(stderr, "hooks-gateway: listen %s: %v\n", cfg.Listeners.Admin, err)
			return 1
		}
		servers = append(servers, newHTTPServer(cfg.Server, running.Wrap(asm.Server.AdminHandler()), base))
		listeners = append(listeners, aln)
		logger.Info("admin endpoints listening", "addr", aln.Addr().String())
	}
	if cfg.Listeners.Probes != "" {
		pln, err := net.Listen("tcp", cfg.Listeners.Probes)
		if err != nil {
			ln.Close()
			for _, l := range listeners[1:] {
				l.Close()
			}
			fmt.Fprintf(stderr, "hooks-gateway: listen %s: %v\n", cfg.Listeners.Probes, err)
			return 1
		}
		servers = append(servers, newProbeServer(asm.Server.ProbeHandler(), base))
		listeners = append(listeners, probeListener(pln))
		logger.Info("probe endpoints listening", "addr", pln.Addr().String())
	}
	logger.Info("hooks-gateway listening", "addr", ln.Addr().String(), "config", cfg.Summary(), "policy_version", asm.Server.Policy().Version)
	sweepCtx, stopSweep := context.WithCancel(context.Background())
	sweeping := make(chan struct{})
	go func() {
		defer close(sweeping)
		asm.Server.RunSweeper(sweepCtx)
	}()
	// Runs before asm.Close: no sweep emits into closed sinks.
	defer func() {
		stopSweep()
		<-sweeping
	}()
	if err := startReloads(sweepCtx, cfg, asm.Reloader, logger); err != nil {
		fmt.Fprintf(stderr, "hooks-gateway: %v\n", err)
		return 1
	}

	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { errc <- srv.Serve(listeners[i]) }()
	}
	if ready != nil {
		ready <- ln.Addr().String()
	}
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "hooks-gateway: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	logger.Info("draining in-flight requests", "timeout", drain.String())
	dctx, cancel := context.WithTimeout(context.Background(), *drain)
	defer cancel()
	// Both listeners drain at once, each with the whole timeout.
	drained := make(chan error, len(servers))
	for _, srv := range servers {
		go func() { drained <- srv.Shutdown(dctx) }()
	}
	code := 0
	for range servers {
		if err := <-drained; err != nil {
			code = 1
		}
	}
	if code != 0 {
		// The sinks are flushed afterwards, by the deferred asm.Close.
		cutOff(servers, cancelRequests, &running, logger)
	}
	// Sessions held in this process end with it: their trails get their
	// agent_shutdown before the sinks close.
	if n := asm.Server.EndOpenSessions(dctx); n > 0 {
		logger.Info("ended the open sessions", "sessions", n)
	}
	return code
}
