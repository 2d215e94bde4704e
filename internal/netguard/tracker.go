package netguard

import (
	"context"
	"net/http"
	"sync"
)

// Tracker counts the handlers running, so that a shutdown that cut them
// off (closed their connections, cancelled their contexts) can wait for
// them to finish their own cleanup.
type Tracker struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0; nil while n is 0
}

// Wrap counts next's invocations.
func (t *Tracker) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.mu.Lock()
		t.n++
		t.mu.Unlock()
		defer t.done()
		next.ServeHTTP(w, r)
	})
}

func (t *Tracker) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n--
	if t.n == 0 && t.zero != nil {
		close(t.zero)
		t.zero = nil
	}
}

// Running returns the number of handlers running.
func (t *Tracker) Running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// Wait returns once no handler runs, or with ctx's error.
func (t *Tracker) Wait(ctx context.Context) error {
	t.mu.Lock()
	if t.n == 0 {
		t.mu.Unlock()
		return nil
	}
	if t.zero == nil {
		t.zero = make(chan struct{})
	}
	zero := t.zero
	t.mu.Unlock()
	select {
	case <-zero:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
