package proxy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultWatchDebounce is how long Watch waits after the last file event
// before it reloads: editors and ConfigMap updates write in several steps.
const DefaultWatchDebounce = 250 * time.Millisecond

// Watch reloads the policy whenever something changes in the directory
// holding path (and in path itself when it is a directory), until ctx is
// done. Watching directories rather than files is what makes Kubernetes
// ConfigMap updates visible: they swap a ..data symlink, and never write
// the files they expose. Events are debounced; a reload with unchanged
// content swaps nothing. It returns once the watches are in place; errors
// from then on are logged.
func (r *Reloader) Watch(ctx context.Context, path string, debounce time.Duration) error {
	if debounce <= 0 {
		debounce = DefaultWatchDebounce
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("policy watch: %w", err)
	}
	dirs := []string{filepath.Dir(filepath.Clean(path))}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		dirs = append(dirs, path)
	}
	for _, d := range dirs {
		if err := w.Add(d); err != nil {
			w.Close()
			return fmt.Errorf("policy watch %s: %w", d, err)
		}
	}
	go r.watchLoop(ctx, w, debounce)
	return nil
}

func (r *Reloader) watchLoop(ctx context.Context, w *fsnotify.Watcher, debounce time.Duration) {
	defer w.Close()
	timer := time.NewTimer(debounce)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue // touch and permission changes change no content
			}
			timer.Reset(debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			r.log.Warn("policy watch error", "error", err)
		case <-timer.C:
			// Reload logs and counts its own failures.
			r.Reload(ctx)
		}
	}
}
