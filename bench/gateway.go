package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/gctune"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// runGateway is the gateway role: it loads and serves a configuration file
// the way cmd/hooks-gateway does (its collector pace included; tracing
// aside: the bench configurations export no spans), and adds the pprof handlers under /debug/pprof/ so a
// run can be profiled.
func runGateway(ctx context.Context, fl *flag.FlagSet, args []string) (http.Handler, func(), error) {
	path := fl.String("config", "", "configuration file")
	if err := fl.Parse(args); err != nil {
		return nil, nil, err
	}
	if *path == "" {
		return nil, nil, errors.New("gateway: --config is required")
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return nil, nil, fmt.Errorf("configuration rejected:\n%w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gctune.Apply(logger, gctune.Decide(cfg.Runtime.GCPercent, cfg.Limits.BufferBudget, os.DirFS("/"), os.Getenv))
	// Records go to the sinks the configuration names (a jsonl file in the
	// bench configurations); a stdout sink would write to the child's log.
	asm, err := proxy.Build(ctx, cfg, io.Discard, logger)
	if err != nil {
		return nil, nil, fmt.Errorf("build: %w", err)
	}
	sweepCtx, stopSweep := context.WithCancel(context.Background())
	go asm.Server.RunSweeper(sweepCtx)

	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/", asm.Server)
	return mux, func() { stopSweep(); asm.Close() }, nil
}
