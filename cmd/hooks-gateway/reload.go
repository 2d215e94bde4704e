package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// startReloads wires the reload triggers of the process until ctx is done:
// SIGHUP always, the file watcher when the policy lives in files with
// policy.watch on, and always on auth.keys_file. Failed reloads are logged and counted by the reloader.
func startReloads(ctx context.Context, cfg *config.Config, r *proxy.Reloader, logger *slog.Logger) error {
	if cfg.Policy.Path != "" && cfg.Policy.Watch {
		if err := r.Watch(ctx, cfg.Policy.Path, proxy.DefaultWatchDebounce); err != nil {
			return err
		}
	}
	if cfg.Auth.KeysFile != "" {
		// Keys are issued and revoked by editing the file: always watched.
		if err := r.Watch(ctx, cfg.Auth.KeysFile, proxy.DefaultWatchDebounce); err != nil {
			return err
		}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				logger.Info("SIGHUP: reloading the policy")
				r.Reload(ctx)
			}
		}
	}()
	return nil
}
