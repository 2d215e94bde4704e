package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/sessions"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// fixture opens two handles on one shared store: two replicas (separate
// clients) for Redis, the same instance twice for Memory, which is the
// only way two callers share a memory store. open is called once per test.
type fixture struct {
	name string
	open func(t *testing.T, opts sessions.Options) (a, b sessions.Store)
}

// forEachStore runs the contract test body against every Store
// implementation, each on a fresh store (a fresh redis-server for Redis).
func forEachStore(t *testing.T, body func(t *testing.T, open func(sessions.Options) (a, b sessions.Store))) {
	t.Helper()
	fixtures := []fixture{
		{"memory", func(t *testing.T, opts sessions.Options) (sessions.Store, sessions.Store) {
			m := sessions.NewMemory(opts)
			return m, m
		}},
		{"redis", func(t *testing.T, opts sessions.Options) (sessions.Store, sessions.Store) {
			url, _ := redistest.Start(t)
			replica := func() sessions.Store {
				r, err := sessions.NewRedis(context.Background(), sessions.RedisOptions{
					URL: url, KeyPrefix: "test:" + t.Name() + ":", Options: opts,
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = r.Close() })
				return r
			}
			return replica(), replica()
		}},
	}
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			body(t, func(opts sessions.Options) (sessions.Store, sessions.Store) { return f.open(t, opts) })
		})
	}
}

func TestSequenceStartsAtZero(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		for _, id := range []string{"s1", "s2"} {
			if claimed, st, err := a.Begin(ctx, id); err != nil || !claimed || st != (sessions.Status{Started: true}) {
				t.Fatalf("Begin(%s) = %v, %+v, %v; want claimed, started", id, claimed, st, err)
			}
		}
		// The claim reserved 0 for agent_startup; Next continues at 1.
		for want := int64(1); want <= 10; want++ {
			for _, id := range []string{"s1", "s2"} {
				src := sessions.Sequence(a, id)
				if want%2 == 1 {
					src = sessions.Sequence(b, id)
				}
				if got, err := src.Next(ctx); err != nil || got != want {
					t.Fatalf("Next(%s) = %d, %v; want %d", id, got, err, want)
				}
			}
		}
	})
}

func TestConcurrentNextIsGapless(t *testing.T) {
	const workers, perWorker = 8, 500
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		if _, _, err := a.Begin(ctx, "hot"); err != nil {
			t.Fatal(err)
		}
		got := make([][]int64, workers)
		var wg sync.WaitGroup
		for w := range workers {
			store := a
			if w%2 == 1 {
				store = b
			}
			wg.Go(func() {
				for range perWorker {
					n, err := store.Next(ctx, "hot")
					if err != nil {
						t.Error(err)
						return
					}
					if k := len(got[w]); k > 0 && n <= got[w][k-1] {
						t.Errorf("worker %d: %d after %d, not increasing", w, n, got[w][k-1])
					}
					got[w] = append(got[w], n)
				}
			})
		}
		wg.Wait()
		all := slices.Concat(got...)
		slices.Sort(all)
		for i, n := range all {
			if n != int64(i+1) {
				t.Fatalf("sorted sequences[%d] = %d; want 1..%d without gaps or duplicates", i, n, workers*perWorker)
			}
		}
		if len(all) != workers*perWorker {
			t.Fatalf("got %d numbers; want %d", len(all), workers*perWorker)
		}
	})
}

// race runs fn from n goroutines, alternating between the two stores, all
// released at once.
func race(n int, a, b sessions.Store, fn func(s sessions.Store)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			<-start
			fn(s)
		})
	}
	close(start)
	wg.Wait()
}

func TestBeginClaimsExactlyOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		for i := range 20 {
			id := fmt.Sprintf("begin-%d", i)
			var mu sync.Mutex
			claims := 0
			race(16, a, b, func(s sessions.Store) {
				claimed, st, err := s.Begin(ctx, id)
				if err != nil || !st.Started || st.Ended || st.Blocked {
					t.Errorf("Begin(%s) = %+v, %v", id, st, err)
				}
				if claimed {
					mu.Lock()
					claims++
					mu.Unlock()
				}
			})
			if claims != 1 {
				t.Fatalf("%s claimed %d times; want exactly once", id, claims)
			}
		}
	})
}

func TestEndExactlyOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		for i := range 20 {
			id := fmt.Sprintf("end-%d", i)
			if _, _, err := a.Begin(ctx, id); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			wins := 0
			race(16, a, b, func(s sessions.Store) {
				ended, err := s.End(ctx, id)
				if err != nil {
					t.Errorf("End(%s): %v", id, err)
				}
				if ended {
					mu.Lock()
					wins++
					mu.Unlock()
				}
			})
			if wins != 1 {
				t.Fatalf("%s ended %d times; want exactly once", id, wins)
			}
		}
	})
}

func TestClaimExpiredExactlyOnce(t *testing.T) {
	// idle leaves the sweep ample time to finish before "fresh" expires,
	// even on a loaded CI machine.
	const sessionsN, idle = 200, 2 * time.Second
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{IdleTimeout: idle})
		ids := make([]string, sessionsN)
		for i := range ids {
			ids[i] = fmt.Sprintf("idle-%03d", i)
			if _, _, err := a.Begin(ctx, ids[i]); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(idle + 100*time.Millisecond)
		if _, _, err := b.Begin(ctx, "fresh"); err != nil {
			t.Fatal(err)
		}

		// Four sweepers (two per replica) race each other and an End on
		// every third id; every id must end exactly once overall.
		var mu sync.Mutex
		winners := map[string]int{}
		win := func(id string) {
			mu.Lock()
			winners[id]++
			mu.Unlock()
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 0; i < sessionsN; i += 3 {
				s := a
				if i%2 == 1 {
					s = b
				}
				ended, err := s.End(ctx, ids[i])
				if err != nil {
					t.Error(err)
				}
				if ended {
					win(ids[i])
				}
			}
		})
		race(4, a, b, func(s sessions.Store) {
			for {
				got, err := s.ClaimExpired(ctx, 7)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) > 7 {
					t.Errorf("ClaimExpired(7) returned %d ids", len(got))
				}
				if len(got) == 0 {
					return
				}
				for _, id := range got {
					win(id)
				}
			}
		})
		wg.Wait()

		for _, id := range ids {
			if winners[id] != 1 {
				t.Errorf("%s ended %d times; want exactly once", id, winners[id])
			}
			if st, ok, err := b.Status(ctx, id); err != nil || !ok || !st.Ended {
				t.Errorf("Status(%s) = %+v, %v, %v; want ended", id, st, ok, err)
			}
		}
		if n := winners["fresh"]; n != 0 {
			t.Errorf("fresh session claimed %d times before its deadline", n)
		}
		if len(winners) != sessionsN {
			t.Errorf("%d distinct ids ended; want %d", len(winners), sessionsN)
		}
	})
}

func TestClaimExpiredNonPositiveMax(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, _ := open(sessions.Options{IdleTimeout: time.Millisecond})
		if _, _, err := a.Begin(ctx, "x"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		for _, max := range []int{0, -1} {
			if got, err := a.ClaimExpired(ctx, max); err != nil || len(got) != 0 {
				t.Fatalf("ClaimExpired(%d) = %v, %v; want nothing", max, got, err)
			}
		}
	})
}

func TestBlock(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		if _, _, err := a.Begin(ctx, "denied"); err != nil {
			t.Fatal(err)
		}
		if err := a.Block(ctx, "denied"); err != nil {
			t.Fatal(err)
		}
		want := sessions.Status{Started: true, Blocked: true}
		if st, ok, err := b.Status(ctx, "denied"); err != nil || !ok || st != want {
			t.Fatalf("Status = %+v, %v, %v; want %+v", st, ok, err, want)
		}
		if claimed, st, err := b.Begin(ctx, "denied"); err != nil || claimed || st != want {
			t.Fatalf("Begin after Block = %v, %+v, %v; want not claimed, %+v", claimed, st, err, want)
		}
	})
}

func TestEndedSessionStaysEnded(t *testing.T) {
	const idle = 30 * time.Millisecond
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{IdleTimeout: idle})
		if _, _, err := a.Begin(ctx, "done"); err != nil {
			t.Fatal(err)
		}
		if n, err := a.Next(ctx, "done"); err != nil || n != 1 {
			t.Fatalf("Next = %d, %v", n, err)
		}
		if ended, err := b.End(ctx, "done"); err != nil || !ended {
			t.Fatalf("End = %v, %v; want true", ended, err)
		}
		if ended, err := a.End(ctx, "done"); err != nil || ended {
			t.Fatalf("second End = %v, %v; want false, nil", ended, err)
		}
		want := sessions.Status{Started: true, Ended: true}
		if claimed, st, err := a.Begin(ctx, "done"); err != nil || claimed || st != want {
			t.Fatalf("Begin after End = %v, %+v, %v; want not claimed, %+v", claimed, st, err, want)
		}
		// The shutdown emission still needs its number…
		if n, err := b.Next(ctx, "done"); err != nil || n != 2 {
			t.Fatalf("Next after End = %d, %v; want 2", n, err)
		}
		// …but neither it nor Begin put the session back up for expiry.
		time.Sleep(idle + 20*time.Millisecond)
		if got, err := a.ClaimExpired(ctx, 10); err != nil || len(got) != 0 {
			t.Fatalf("ClaimExpired = %v, %v; an ended session must not be claimed", got, err)
		}
		if st, ok, err := b.Status(ctx, "done"); err != nil || !ok || st != want {
			t.Fatalf("Status = %+v, %v, %v; want %+v", st, ok, err, want)
		}
	})
}

func TestUnknownSession(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, _ := open(sessions.Options{})
		if _, err := a.Next(ctx, "nobody"); !errors.Is(err, sessions.ErrUnknownSession) {
			t.Errorf("Next: %v; want ErrUnknownSession", err)
		}
		if ended, err := a.End(ctx, "nobody"); ended || !errors.Is(err, sessions.ErrUnknownSession) {
			t.Errorf("End = %v, %v; want false, ErrUnknownSession", ended, err)
		}
		if err := a.Block(ctx, "nobody"); !errors.Is(err, sessions.ErrUnknownSession) {
			t.Errorf("Block: %v; want ErrUnknownSession", err)
		}
		if st, ok, err := a.Status(ctx, "nobody"); err != nil || ok || st != (sessions.Status{}) {
			t.Errorf("Status = %+v, %v, %v; want zero, false, nil", st, ok, err)
		}
		if err := a.Ping(ctx); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
}

func TestInvalidSessionIDs(t *testing.T) {
	bad := map[string]string{
		"empty":     "",
		"too long":  strings.Repeat("x", sessions.MaxIDLen+1),
		"space":     "a b",
		"newline":   "a\nb",
		"nul":       "a\x00",
		"del":       "a\x7f",
		"non-ascii": "sessión",
	}
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, _ := open(sessions.Options{})
		for name, id := range bad {
			errs := map[string]error{}
			_, _, errs["Begin"] = a.Begin(ctx, id)
			_, errs["Next"] = a.Next(ctx, id)
			errs["Block"] = a.Block(ctx, id)
			_, errs["End"] = a.End(ctx, id)
			_, _, errs["Status"] = a.Status(ctx, id)
			for method, err := range errs {
				if !errors.Is(err, sessions.ErrInvalidSessionID) {
					t.Errorf("%s(%s id): %v; want ErrInvalidSessionID", method, name, err)
				}
			}
		}
		longest := strings.Repeat("~", sessions.MaxIDLen)
		if claimed, _, err := a.Begin(ctx, longest); err != nil || !claimed {
			t.Errorf("Begin(128-byte id) = %v, %v; want claimed", claimed, err)
		}
		if claimed, _, err := a.Begin(ctx, "{weird}:id!"); err != nil || !claimed {
			t.Errorf("Begin(punctuated id) = %v, %v; want claimed", claimed, err)
		}
	})
}

func TestValidateIDDoesNotEchoID(t *testing.T) {
	err := sessions.ValidateID("secret token")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("ValidateID = %v; want an error naming the rule, not the id", err)
	}
}
