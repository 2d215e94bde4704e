package sessions_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hooks-gateway/hooks-gateway/sessions"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// counters is the counter surface both stores offer.
type counters interface {
	ReserveCounter(ctx context.Context, key string, ttl time.Duration, n, limit int64) (int64, bool, error)
	AddCounter(ctx context.Context, key string, ttl time.Duration, n int64) (int64, error)
	ReadCounter(ctx context.Context, key string) (int64, error)
}

var (
	_ counters = (*sessions.Memory)(nil)
	_ counters = (*sessions.Redis)(nil)
)

// forEachCounters runs body against both stores; for Redis, a and b are
// two replicas (separate clients) on one redis-server.
func forEachCounters(t *testing.T, body func(t *testing.T, a, b counters)) {
	t.Helper()
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		a, b := open(sessions.Options{})
		body(t, a.(counters), b.(counters))
	})
}

func TestCounterReserveUpToLimit(t *testing.T) {
	forEachCounters(t, func(t *testing.T, a, b counters) {
		ctx := context.Background()
		const limit = 5
		for i := int64(1); i <= limit; i++ {
			c := []counters{a, b}[i%2] // alternate replicas
			v, ok, err := c.ReserveCounter(ctx, "k", time.Hour, 1, limit)
			if err != nil || !ok || v != i {
				t.Fatalf("reserve %d = (%d, %v, %v); want (%d, true, nil)", i, v, ok, err, i)
			}
		}
		v, ok, err := a.ReserveCounter(ctx, "k", time.Hour, 1, limit)
		if err != nil || ok || v != limit {
			t.Fatalf("reserve past the limit = (%d, %v, %v); want (%d, false, nil)", v, ok, err, limit)
		}
		// A refused reservation leaves the counter alone.
		if v, err := b.ReadCounter(ctx, "k"); err != nil || v != limit {
			t.Errorf("read = (%d, %v); want (%d, nil)", v, err, limit)
		}
		// A larger reservation is refused whole, not clipped.
		if v, ok, err := a.ReserveCounter(ctx, "other", time.Hour, 7, limit); err != nil || ok || v != 0 {
			t.Errorf("reserve 7 of 5 = (%d, %v, %v); want (0, false, nil)", v, ok, err)
		}
	})
}

func TestCounterAddAndRead(t *testing.T) {
	forEachCounters(t, func(t *testing.T, a, b counters) {
		ctx := context.Background()
		if v, err := a.ReadCounter(ctx, "missing"); err != nil || v != 0 {
			t.Errorf("read of a missing counter = (%d, %v); want (0, nil)", v, err)
		}
		if v, err := a.AddCounter(ctx, "t", time.Hour, 40); err != nil || v != 40 {
			t.Fatalf("add = (%d, %v)", v, err)
		}
		if v, err := b.AddCounter(ctx, "t", time.Hour, 2); err != nil || v != 42 {
			t.Fatalf("add from the other replica = (%d, %v); want 42", v, err)
		}
		if v, err := b.AddCounter(ctx, "t", time.Hour, -2); err != nil || v != 40 {
			t.Fatalf("give back = (%d, %v); want 40", v, err)
		}
		if v, err := a.ReadCounter(ctx, "t"); err != nil || v != 40 {
			t.Errorf("read = (%d, %v); want 40", v, err)
		}
	})
}

// TestCounterConcurrentReserveNeverExceedsLimit races many goroutines on
// two replicas against one limit: exactly limit reservations succeed.
func TestCounterConcurrentReserveNeverExceedsLimit(t *testing.T) {
	forEachCounters(t, func(t *testing.T, a, b counters) {
		ctx := context.Background()
		const limit, workers, each = 37, 16, 10
		var granted atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for w := range workers {
			wg.Go(func() {
				c := []counters{a, b}[w%2]
				for range each {
					_, ok, err := c.ReserveCounter(ctx, "race", time.Hour, 1, limit)
					if err != nil {
						errs <- err
						return
					}
					if ok {
						granted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if g := granted.Load(); g != limit {
			t.Errorf("%d reservations granted; want exactly %d", g, limit)
		}
		if v, err := a.ReadCounter(ctx, "race"); err != nil || v != limit {
			t.Errorf("counter = (%d, %v); want %d", v, err, limit)
		}
	})
}

func TestCounterInvalid(t *testing.T) {
	forEachCounters(t, func(t *testing.T, a, _ counters) {
		ctx := context.Background()
		long := strings.Repeat("k", 2000)
		if _, _, err := a.ReserveCounter(ctx, "", time.Hour, 1, 1); !errors.Is(err, sessions.ErrInvalidCounter) {
			t.Errorf("empty key: %v", err)
		}
		if _, err := a.AddCounter(ctx, long, time.Hour, 1); !errors.Is(err, sessions.ErrInvalidCounter) {
			t.Errorf("long key: %v", err)
		} else if strings.Contains(err.Error(), long[:10]) {
			t.Errorf("error echoes the key: %v", err)
		}
		if _, err := a.AddCounter(ctx, "k", 0, 1); !errors.Is(err, sessions.ErrInvalidCounter) {
			t.Errorf("zero ttl: %v", err)
		}
	})
}

func TestMemoryCounterExpires(t *testing.T) {
	m, clock := newFakeMemory()
	ctx := context.Background()
	if _, err := m.AddCounter(ctx, "w", time.Minute, 3); err != nil {
		t.Fatal(err)
	}
	clock.Advance(59 * time.Second)
	// Writes do not push the expiry: a window ends on schedule.
	if v, err := m.AddCounter(ctx, "w", time.Minute, 1); err != nil || v != 4 {
		t.Fatalf("add before expiry = (%d, %v); want 4", v, err)
	}
	clock.Advance(time.Second)
	if v, err := m.ReadCounter(ctx, "w"); err != nil || v != 0 {
		t.Errorf("read after expiry = (%d, %v); want 0", v, err)
	}
	if v, _, err := m.ReserveCounter(ctx, "w", time.Minute, 1, 1); err != nil || v != 1 {
		t.Errorf("reserve after expiry = (%d, %v); want a fresh counter at 1", v, err)
	}
}

func TestRedisCounterLayout(t *testing.T) {
	url, _ := redistest.Start(t)
	ctx := context.Background()
	raw := redis.NewClient(&redis.Options{Addr: strings.TrimPrefix(url, "redis://")})
	t.Cleanup(func() { _ = raw.Close() })
	r := newRedis(t, sessions.RedisOptions{URL: url, KeyPrefix: "p:"})
	if _, _, err := r.ReserveCounter(ctx, "tenant:acme", 10*time.Minute, 1, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := r.AddCounter(ctx, "tokens", time.Hour, 9); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]time.Duration{"p:budget:tenant:acme": 10 * time.Minute, "p:budget:tokens": time.Hour} {
		ttl, err := raw.PTTL(ctx, key).Result()
		if err != nil || ttl <= want-time.Minute || ttl > want {
			t.Errorf("%s TTL = (%v, %v); want about %v", key, ttl, err, want)
		}
	}
	// A later write does not push the TTL back out.
	if err := raw.PExpire(ctx, "p:budget:tokens", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.AddCounter(ctx, "tokens", time.Hour, 1); err != nil {
		t.Fatal(err)
	}
	if ttl := raw.PTTL(ctx, "p:budget:tokens").Val(); ttl > time.Minute {
		t.Errorf("TTL pushed to %v by a write; want it left at 1m", ttl)
	}
}

// TestRedisCounterFailsClosed checks that a dead Redis is an error, never
// a made-up count.
func TestRedisCounterFailsClosed(t *testing.T) {
	srv := redistest.StartServer(t)
	r := newRedis(t, sessions.RedisOptions{URL: srv.URL()})
	srv.Kill()
	ctx := context.Background()
	if _, _, err := r.ReserveCounter(ctx, "k", time.Hour, 1, 10); err == nil {
		t.Error("ReserveCounter with Redis down succeeded")
	}
	if _, err := r.AddCounter(ctx, "k", time.Hour, 1); err == nil {
		t.Error("AddCounter with Redis down succeeded")
	}
	if _, err := r.ReadCounter(ctx, "k"); err == nil {
		t.Error("ReadCounter with Redis down succeeded")
	}
}
