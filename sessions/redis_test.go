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
	if _, _, err := r.Begin(ctx, key("s"), owner); err != nil {
		t.Fatal(err)
	}

	srv.Kill()
	calls := map[string]func() error{
		"Begin":        func() error { _, _, err := r.Begin(ctx, key("s"), owner); return err },
		"Next":         func() error { _, err := r.Next(ctx, key("s")); return err },
		"Block":        func() error { return r.Block(ctx, key("s")) },
		"End":          func() error { _, _, err := r.End(ctx, key("s"), owner); return err },
		"Admit":        func() error { return r.Admit(ctx, key("s")) },
		"Acquire":      func() error { return r.Acquire(ctx, key("s"), "c", time.Minute) },
		"Release":      func() error { return r.Release(ctx, key("s"), "c") },
		"InFlight":     func() error { _, err := r.InFlight(ctx, key("s")); return err },
		"Seal":         func() error { _, err := r.Seal(ctx, key("s")); return err },
		"OpenTool":     func() error { return r.OpenToolCall(ctx, key("s"), "t") },
		"CloseTool":    func() error { _, err := r.CloseToolCall(ctx, key("s"), "t"); return err },
		"ClaimExpired": func() error { _, err := r.ClaimExpired(ctx, 10); return err },
		"Status":       func() error { _, _, err := r.Status(ctx, key("s")); return err },
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
	if claimed, _, err := r.Begin(ctx, key("s"), owner); err != nil || !claimed {
		t.Fatalf("Begin after restart = %v, %v; want claimed", claimed, err)
	}
	if n, err := r.Next(ctx, key("s")); err != nil || n != 1 {
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
	if _, _, err := r.Begin(ctx, key("s"), owner); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Next(ctx, key("s")); err != nil || n != 1 {
		t.Fatalf("Next = %d, %v", n, err)
	}

	proxy.delayOnce.Store(int64(1500 * time.Millisecond))
	if n, err := r.Next(ctx, key("s")); err == nil {
		t.Fatalf("Next with its reply delayed past the read timeout = %d; want a timeout, not a retry", n)
	}
	if n, err := r.Next(ctx, key("s")); err != nil || n != 3 {
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

// TestRedisKeysExpire checks the keys' lifetimes: a live session's keys
// outlive its idle deadline by the retention (or its lease's end by the
// retention, if later), an ended one's are kept for the retention only and
// it leaves the idle index.
func TestRedisKeysExpire(t *testing.T) {
	url, _ := redistest.Start(t)
	ctx := context.Background()
	raw := redis.NewClient(&redis.Options{Addr: strings.TrimPrefix(url, "redis://")})
	t.Cleanup(func() { _ = raw.Close() })
	r := newRedis(t, sessions.RedisOptions{URL: url, KeyPrefix: "p:", Options: sessions.Options{
		IdleTimeout: 10 * time.Minute, Retention: time.Hour,
	}})
	k := key("s") // tenant "tenant-1": tag "8:tenant-1s"
	const hash, calls, tools, member = "p:s:{8:tenant-1s}", "p:s:{8:tenant-1s}:calls", "p:s:{8:tenant-1s}:tools", "8:tenant-1s"
	ttlBetween := func(what string, keys []string, lo, hi time.Duration) {
		t.Helper()
		for _, key := range keys {
			if ttl := raw.PTTL(ctx, key).Val(); ttl <= lo || ttl > hi {
				t.Errorf("%s: TTL of %s = %v; want in (%v, %v]", what, key, ttl, lo, hi)
			}
		}
	}
	if _, _, err := r.Begin(ctx, k, owner); err != nil {
		t.Fatal(err)
	}
	ttlBetween("live session", []string{hash}, time.Hour+9*time.Minute, time.Hour+10*time.Minute)
	// The index holds a lower bound (negative, due at once, until a sweep
	// reschedules it); the deadline itself is in the session's hash.
	if score, err := raw.ZScore(ctx, r.IdleKeyOf(member), member).Result(); err != nil || score >= 0 {
		t.Fatalf("idle index entry = %v, %v; want a negative score", score, err)
	}
	// The claimer's Admit confirms the entry.
	if n := raw.HExists(ctx, hash, "unindexed").Val(); !n {
		t.Errorf("a new session is not marked unindexed before its claimer's Admit")
	}
	if err := r.Admit(ctx, k); err != nil {
		t.Fatal(err)
	}
	if n := raw.HExists(ctx, hash, "unindexed").Val(); n {
		t.Errorf("indexed session still marked unindexed after its claimer's Admit")
	}
	deadline, err := raw.HGet(ctx, hash, "deadline").Int64()
	if err != nil {
		t.Fatalf("deadline: %v", err)
	}
	server, err := raw.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.UnixMilli(deadline).Sub(server); d < 9*time.Minute || d > 10*time.Minute {
		t.Errorf("idle deadline is %v after the server's clock; want 10m", d)
	}
	// A sweep before the deadline claims nothing and moves the entry to it.
	if got, err := r.ClaimExpired(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("ClaimExpired = %v, %v; want nothing", got, err)
	}
	if score := raw.ZScore(ctx, r.IdleKeyOf(member), member).Val(); int64(score) != deadline {
		t.Errorf("rescheduled at %v; want the deadline %d", int64(score), deadline)
	}

	// A lease longer than the idle timeout keeps every key of the session
	// until its end plus the retention; a tool-call set created later
	// takes the same TTL.
	if err := r.Acquire(ctx, k, "call-1", 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := r.OpenToolCall(ctx, k, "tool-1"); err != nil {
		t.Fatal(err)
	}
	ttlBetween("leased session", []string{hash, calls, tools}, 3*time.Hour-time.Minute, 3*time.Hour)
	if _, err := r.Next(ctx, k); err != nil {
		t.Fatal(err)
	}
	ttlBetween("activity never shortens", []string{hash, calls, tools}, 3*time.Hour-time.Minute, 3*time.Hour)

	if _, _, err := r.End(ctx, k, owner); err != nil {
		t.Fatal(err)
	}
	ttlBetween("ended session", []string{hash, calls, tools}, 59*time.Minute, time.Hour)
	if err := raw.ZScore(ctx, r.IdleKeyOf(member), member).Err(); !errors.Is(err, redis.Nil) {
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

// hashTag is the part of a key Redis Cluster hashes: the text between the
// first '{' and the first '}' after it, when non-empty; else the whole key.
func hashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// TestRedisHashTags checks, on the keys Redis holds, that every key of one
// session shares one hash tag (one Cluster slot) and that sessions whose
// tenant and id are built to confuse a naive encoding (braces, separators,
// the escape byte, a tenant/id split moved by one byte) get distinct tags.
func TestRedisHashTags(t *testing.T) {
	url, _ := redistest.Start(t)
	ctx := context.Background()
	raw := redis.NewClient(&redis.Options{Addr: strings.TrimPrefix(url, "redis://")})
	t.Cleanup(func() { _ = raw.Close() })
	r := newRedis(t, sessions.RedisOptions{URL: url, KeyPrefix: "p:"})
	tricky := []sessions.Key{
		{Tenant: "", ID: "a}b"},
		{Tenant: "a", ID: "}b"},
		{Tenant: "a}", ID: "b"},
		{Tenant: "{", ID: "}"},
		{Tenant: "", ID: "{}"},
		{Tenant: "1:a", ID: "b"},
		{Tenant: "1", ID: ":ab"},
		{Tenant: "%7D", ID: "x"},
		{Tenant: "}", ID: "x"},
		{Tenant: "a/b", ID: "c"},
		{Tenant: "a", ID: "b/c"},
		{Tenant: "a:b", ID: "c"},
		{Tenant: "a", ID: "b:c"},
		{Tenant: "", ID: "{idle:0}"}, // must not name an index shard's tag
	}
	for _, k := range tricky {
		if claimed, _, err := r.Begin(ctx, k, owner); err != nil || !claimed {
			t.Fatalf("Begin(%+v) = %v, %v; want a fresh claim (no collision)", k, claimed, err)
		}
		if err := r.Acquire(ctx, k, "call", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := r.OpenToolCall(ctx, k, "tool"); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := raw.Keys(ctx, "p:s:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range keys {
		if strings.Contains(key, "{idle:") {
			t.Errorf("session key %q looks like an index shard", key)
		}
	}
	byTag := map[string][]string{}
	for _, key := range keys {
		byTag[hashTag(key)] = append(byTag[hashTag(key)], key)
	}
	if len(byTag) != len(tricky) {
		t.Fatalf("%d distinct hash tags for %d sessions: %q", len(byTag), len(tricky), byTag)
	}
	for tag, ks := range byTag {
		if len(ks) != 3 {
			t.Errorf("tag %q holds keys %q; want a session's hash, calls and tools", tag, ks)
		}
	}
	shards, err := raw.Keys(ctx, "p:{idle:*}").Result()
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	for _, shard := range shards {
		ms, err := raw.ZRange(ctx, shard, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, ms...)
	}
	if len(members) != len(tricky) {
		t.Errorf("idle index holds %d members; want %d", len(members), len(tricky))
	}
	for _, m := range members {
		if _, ok := byTag[m]; !ok {
			t.Errorf("idle index member %q is not a session's hash tag", m)
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
	if _, _, err := r.Begin(ctx, key("s"), owner); err != nil {
		t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond)
	if _, ok, err := r.Status(ctx, key("s")); err != nil || ok {
		t.Fatalf("Status after idle+retention = %v, %v; want forgotten", ok, err)
	}
	// Its stale idle-index entry is dropped without being handed out: there
	// is no session left to shut down.
	if got, err := r.ClaimExpired(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("ClaimExpired = %v, %v; want nothing", got, err)
	}
	if claimed, st, err := r.Begin(ctx, key("s"), owner); err != nil || !claimed || st.Ended {
		t.Fatalf("Begin after forgetting = %v, %+v, %v; want a fresh claim", claimed, st, err)
	}
}

// TestRedisLeasedSessionRescheduled checks a sweep that finds a session
// past its idle deadline but leased moves its idle-index entry one idle
// timeout on, so later sweeps do not look at it again until then.
func TestRedisLeasedSessionRescheduled(t *testing.T) {
	url, _ := redistest.Start(t)
	ctx := context.Background()
	raw := redis.NewClient(&redis.Options{Addr: strings.TrimPrefix(url, "redis://")})
	t.Cleanup(func() { _ = raw.Close() })
	const idle = 200 * time.Millisecond
	r := newRedis(t, sessions.RedisOptions{URL: url, KeyPrefix: "p:", Options: sessions.Options{IdleTimeout: idle}})
	k := key("s")
	if _, _, err := r.Begin(ctx, k, owner); err != nil {
		t.Fatal(err)
	}
	if err := r.Acquire(ctx, k, "call", time.Hour); err != nil {
		t.Fatal(err)
	}
	time.Sleep(idle + 100*time.Millisecond)
	if got, err := r.ClaimExpired(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("ClaimExpired = %+v, %v; want nothing", got, err)
	}
	score, err := raw.ZScore(ctx, r.IdleKeyOf("8:tenant-1s"), "8:tenant-1s").Result()
	if err != nil {
		t.Fatal(err)
	}
	server, err := raw.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	// A release may come any time, so the entry comes back one idle
	// timeout later, not at the lease's end.
	if d := time.UnixMilli(int64(score)).Sub(server); d < idle/2 || d > idle {
		t.Errorf("leased session rescheduled %v after the server's clock; want one idle timeout (%v)", d, idle)
	}
}

// countHook counts the commands a client sends (a pipeline counts once:
// one round trip).
type countHook struct{ n atomic.Int64 }

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// TestRedisRoundTrips pins the round trips of a managed session's turns
// (docs/operations.md "Round trips"): creating a session costs BeginCall's
// script and the idle-index ZADD, and the claimer's Admit confirms the
// entry (no HDEL of its own); a turn of a known session costs one BeginCall
// (Begin, Acquire and the first Next), a Next per further emission and a
// Release.
func TestRedisRoundTrips(t *testing.T) {
	client := startClient(t)
	r := newRedis(t, sessions.RedisOptions{Client: client, KeyPrefix: "rt:"})
	ctx := context.Background()
	// Warm up: load the scripts (a first EVALSHA falls back to EVAL) and
	// open the connection, on another session.
	warm := key("warm-up")
	if _, err := r.BeginCall(ctx, warm, owner, sessions.Call{ID: "c", Lease: time.Minute}); err != nil {
		t.Fatal(err)
	}
	_ = r.Admit(ctx, warm)
	_, _ = r.Next(ctx, warm)
	_ = r.Release(ctx, warm, "c")
	h := &countHook{}
	client.AddHook(h)
	k := key("turns")
	trips := func(what string, want int64, fn func() error) {
		t.Helper()
		before := h.n.Load()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := h.n.Load() - before; got != want {
			t.Errorf("%s: %d round trips; want %d", what, got, want)
		}
	}
	call := sessions.Call{ID: "call-1", Lease: time.Minute}
	trips("create", 2, func() error {
		cs, err := r.BeginCall(ctx, k, owner, call)
		if err == nil && !cs.Claimed {
			err = errors.New("not claimed")
		}
		return err
	})
	marked := func() bool {
		t.Helper()
		v, err := client.HMGet(ctx, "rt:s:{8:tenant-1turns}", "started", "unindexed").Result()
		if err != nil || v[0] == nil {
			t.Fatalf("session hash = %v, %v", v, err)
		}
		return v[1] != nil
	}
	if !marked() {
		t.Fatal("a new session is not marked unindexed before its claimer confirms the entry")
	}
	trips("admit", 1, func() error { return r.Admit(ctx, k) })
	if marked() {
		t.Fatal("the claimer's Admit left the unindexed mark")
	}
	trips("release", 1, func() error { return r.Release(ctx, k, call.ID) })
	for i := range 3 {
		call.ID = "call-" + string(rune('2'+i))
		trips("known session's turn", 5, func() error {
			cs, err := r.BeginCall(ctx, k, owner, call)
			if err == nil && cs.Seq < 0 {
				err = errors.New("no first number")
			}
			for range 3 {
				if err == nil {
					_, err = r.Next(ctx, k)
				}
			}
			if err == nil {
				err = r.Release(ctx, k, call.ID)
			}
			return err
		})
	}
}

// failZAdd fails every ZADD a client sends while on is set.
type failZAdd struct{ on atomic.Bool }

func (h *failZAdd) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *failZAdd) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.on.Load() && cmd.Name() == "zadd" {
			cmd.SetErr(errors.New("zadd refused"))
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}

func (h *failZAdd) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestRedisBeginCallIndexError checks a BeginCall whose idle-index ZADD
// fails (after its script took the lease) fails closed without leaving
// the call's lease behind, both for the claim and for a join that
// indexes a session its claimer has not confirmed.
func TestRedisBeginCallIndexError(t *testing.T) {
	client := startClient(t)
	h := &failZAdd{}
	client.AddHook(h)
	r := newRedis(t, sessions.RedisOptions{Client: client, KeyPrefix: "ie:"})
	ctx := context.Background()
	k := key("unindexed")
	h.on.Store(true)
	if _, err := r.BeginCall(ctx, k, owner, sessions.Call{ID: "call-1", Lease: time.Minute}); err == nil {
		t.Fatal("claim with a failing ZADD succeeded")
	}
	if n := inFlight(t, r, k); n != 0 {
		t.Fatalf("InFlight after the claim's indexing error = %d; want 0", n)
	}
	if _, err := r.BeginCall(ctx, k, owner, sessions.Call{ID: "call-2", Lease: time.Minute}); err == nil {
		t.Fatal("join of an unindexed session with a failing ZADD succeeded")
	}
	if n := inFlight(t, r, k); n != 0 {
		t.Fatalf("InFlight after the join's indexing error = %d; want 0", n)
	}
	h.on.Store(false)
	cs, err := r.BeginCall(ctx, k, owner, sessions.Call{ID: "call-3", Lease: time.Minute})
	if err != nil || !cs.Leased || cs.Seq != -1 {
		t.Fatalf("join once ZADD works = %+v, %v; want leased, no number (still Starting)", cs, err)
	}
	if n := inFlight(t, r, k); n != 1 {
		t.Fatalf("InFlight = %d; want 1", n)
	}
}

// startClient starts a Redis for the test and returns a client of it of
// the test's own (closed with the test), for hooks on its commands.
func startClient(t *testing.T) *redis.Client {
	t.Helper()
	url, _ := redistest.Start(t)
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	return client
}
