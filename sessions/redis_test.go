package sessions_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hooks-gateway/hooks-gateway/sessions"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

func newRedis(t *testing.T, opts sessions.RedisOptions) *sessions.Redis {
	t.Helper()
	r, err := sessions.NewRedis(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestNewRedisURL(t *testing.T) {
	for _, bad := range []string{"", "http://127.0.0.1:6379", "redis://127.0.0.1:6379/notadb", "redis://user:hunter2@[::1"} {
		_, err := sessions.NewRedis(context.Background(), sessions.RedisOptions{URL: bad})
		if err == nil {
			t.Errorf("NewRedis(%q) succeeded; want an error", bad)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("NewRedis error leaks the password: %v", err)
		}
	}
	// Nothing listens on port 1: construction still succeeds (no I/O), and
	// Ping reports the outage quickly.
	r := newRedis(t, sessions.RedisOptions{URL: "redis://127.0.0.1:1"})
	start := time.Now()
	if err := r.Ping(context.Background()); err == nil {
		t.Fatal("Ping to a closed port succeeded")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Ping took %v to fail; want fast failure", d)
	}
}

// TestRedisFailsClosedAndRecovers kills Redis under a live store: every
// method must fail fast with an error (never a made-up answer), and once
// Redis is back on the same port the same store works again.
func TestRedisFailsClosedAndRecovers(t *testing.T) {
	srv := redistest.StartServer(t)
	r := newRedis(t, sessions.RedisOptions{URL: srv.URL()})
	ctx := context.Background()
	if _, _, err := r.Begin(ctx, "s"); err != nil {
		t.Fatal(err)
	}

	srv.Kill()
	calls := map[string]func() error{
		"Begin":        func() error { _, _, err := r.Begin(ctx, "s"); return err },
		"Next":         func() error { _, err := r.Next(ctx, "s"); return err },
		"Block":        func() error { return r.Block(ctx, "s") },
		"End":          func() error { _, err := r.End(ctx, "s"); return err },
		"ClaimExpired": func() error { _, err := r.ClaimExpired(ctx, 10); return err },
		"Status":       func() error { _, _, err := r.Status(ctx, "s"); return err },
		"Ping":         func() error { return r.Ping(ctx) },
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		if err == nil || errors.Is(err, sessions.ErrUnknownSession) {
			t.Errorf("%s with Redis down: %v; want a store error", name, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s took %v to fail; want fast failure", name, d)
		}
	}

	srv.Restart()
	deadline := time.Now().Add(5 * time.Second)
	for r.Ping(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("store did not reconnect within 5s of the restart")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The restarted server is empty (no persistence): the session is claimed
	// afresh, and the scripts are reloaded after the NOSCRIPT fallback.
	if claimed, _, err := r.Begin(ctx, "s"); err != nil || !claimed {
		t.Fatalf("Begin after restart = %v, %v; want claimed", claimed, err)
	}
	if n, err := r.Next(ctx, "s"); err != nil || n != 1 {
		t.Fatalf("Next after restart = %d, %v; want 1 (0 is the claim's)", n, err)
	}
}

// TestRedisWritesRunOnce checks a timed-out script is not re-sent. Redis
// runs the script at once but its reply is delayed past the client's read
// timeout (a latency spike): the call must fail, having run exactly once,
// so the next call gets 2. A retrying client would re-send it and answer
// 2 on the retry, silently burning 1 (a gap in the sequence; for Begin and
// End, a lost exactly-once winner).
func TestRedisWritesRunOnce(t *testing.T) {
	srv := redistest.StartServer(t)
	proxy := startDelayProxy(t, srv.Addr())
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{
		Addr:            proxy.addr,
		ReadTimeout:     time.Second, // generous: only the delayed reply may time out, even on a loaded machine
		MaxRetries:      3,           // the store must not rely on the caller disabling retries
		MinRetryBackoff: time.Millisecond,
		MaxRetryBackoff: 2 * time.Millisecond,
	})
	t.Cleanup(func() { _ = client.Close() })
	r := newRedis(t, sessions.RedisOptions{Client: client})
	if _, _, err := r.Begin(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Next(ctx, "s"); err != nil || n != 1 {
		t.Fatalf("Next = %d, %v", n, err)
	}

	proxy.delayOnce.Store(int64(1500 * time.Millisecond))
	if n, err := r.Next(ctx, "s"); err == nil {
		t.Fatalf("Next with its reply delayed past the read timeout = %d; want a timeout, not a retry", n)
	}
	if n, err := r.Next(ctx, "s"); err != nil || n != 3 {
		t.Fatalf("Next after the timeout = %d, %v; want 3 (the timed-out call ran exactly once)", n, err)
	}
}

// delayProxy forwards TCP to a server. When delayOnce is set, the next
// server-to-client chunk is held back that many nanoseconds (and delayOnce
// is cleared), so exactly one reply arrives late.
type delayProxy struct {
	addr      string
	delayOnce atomic.Int64
}

func startDelayProxy(t *testing.T, upstream string) *delayProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &delayProxy{addr: l.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				_ = c.Close()
				continue
			}
			closeBoth := func() { _ = c.Close(); _ = u.Close() }
			t.Cleanup(closeBoth)
			wg.Go(func() { defer closeBoth(); _, _ = io.Copy(u, c) })
			wg.Go(func() {
				defer closeBoth()
				buf := make([]byte, 32<<10)
				for {
					n, err := u.Read(buf)
					if n > 0 {
						time.Sleep(time.Duration(p.delayOnce.Swap(0)))
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			})
		}
	})
	return p
}

// TestRedisKeysExpire checks the keys' lifetimes: a live session's hash
// outlives its idle deadline by the retention, an ended one is kept for the
// retention only and leaves the idle index.
func TestRedisKeysExpire(t *testing.T) {
	url, _ := redistest.Start(t)
	ctx := context.Background()
	raw := redis.NewClient(&redis.Options{Addr: strings.TrimPrefix(url, "redis://")})
	t.Cleanup(func() { _ = raw.Close() })
	r := newRedis(t, sessions.RedisOptions{URL: url, KeyPrefix: "p:", Options: sessions.Options{
		IdleTimeout: 10 * time.Minute, Retention: time.Hour,
	}})
	if _, _, err := r.Begin(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if ttl := raw.PTTL(ctx, "p:s:{s}").Val(); ttl <= time.Hour+9*time.Minute || ttl > time.Hour+10*time.Minute {
		t.Errorf("live session TTL = %v; want idle+retention (1h10m)", ttl)
	}
	score, err := raw.ZScore(ctx, "p:idle", "s").Result()
	if err != nil {
		t.Fatalf("idle index entry: %v", err)
	}
	server, err := raw.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.UnixMilli(int64(score)).Sub(server); d < 9*time.Minute || d > 10*time.Minute {
		t.Errorf("idle deadline is %v after the server's clock; want 10m", d)
	}
	if _, err := r.End(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if ttl := raw.PTTL(ctx, "p:s:{s}").Val(); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("ended session TTL = %v; want retention (1h)", ttl)
	}
	if err := raw.ZScore(ctx, "p:idle", "s").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("ended session still in the idle index (%v)", err)
	}
	keys, err := raw.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "p:") {
			t.Errorf("key %q outside the configured prefix", k)
		}
	}
}

// TestRedisForgottenSession checks that a session whose hash expired is
// unknown again and is claimed afresh by the next Begin.
func TestRedisForgottenSession(t *testing.T) {
	url, _ := redistest.Start(t)
	ctx := context.Background()
	r := newRedis(t, sessions.RedisOptions{URL: url, Options: sessions.Options{
		IdleTimeout: 20 * time.Millisecond, Retention: 20 * time.Millisecond,
	}})
	if _, _, err := r.Begin(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond)
	if _, ok, err := r.Status(ctx, "s"); err != nil || ok {
		t.Fatalf("Status after idle+retention = %v, %v; want forgotten", ok, err)
	}
	// Its stale idle-index entry is dropped without being handed out: there
	// is no session left to shut down.
	if got, err := r.ClaimExpired(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("ClaimExpired = %v, %v; want nothing", got, err)
	}
	if claimed, st, err := r.Begin(ctx, "s"); err != nil || !claimed || st.Ended {
		t.Fatalf("Begin after forgetting = %v, %+v, %v; want a fresh claim", claimed, st, err)
	}
}
