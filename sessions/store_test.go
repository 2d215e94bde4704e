package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
// implementation, each on a fresh store (a fresh redis-server for Redis, a
// fresh master and Sentinel for redis-sentinel, a fresh three-master Redis
// Cluster for redis-cluster).
func forEachStore(t *testing.T, body func(t *testing.T, open func(sessions.Options) (a, b sessions.Store))) {
	t.Helper()
	fixtures := []fixture{
		{"memory", func(t *testing.T, opts sessions.Options) (sessions.Store, sessions.Store) {
			m := &blankIncarnations{Memory: sessions.NewMemory(opts), t: t}
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
		{"redis-sentinel", func(t *testing.T, opts sessions.Options) (sessions.Store, sessions.Store) {
			_, sentinel := redistest.StartSentinel(t)
			replica := func() sessions.Store {
				r, err := sessions.NewRedis(context.Background(), sessions.RedisOptions{
					Sentinel:  &sessions.Sentinel{Master: redistest.SentinelMaster, Addrs: []string{sentinel}},
					KeyPrefix: "test:" + t.Name() + ":", Options: opts,
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = r.Close() })
				return r
			}
			return replica(), replica()
		}},
		{"redis-cluster", func(t *testing.T, opts sessions.Options) (sessions.Store, sessions.Store) {
			c := redistest.StartCluster(t, 3, 0)
			replica := func() sessions.Store {
				r, err := sessions.NewRedis(context.Background(), sessions.RedisOptions{
					Cluster: c.Addrs(), KeyPrefix: "test:" + t.Name() + ":", Options: opts,
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

// owner is the claimer in tests that do not vary it.
var owner = sessions.Owner{KeyID: "key-1", AgentID: "agent-1"}

// key names session id in the tests' default tenant.
func key(id string) sessions.Key { return sessions.Key{Tenant: "tenant-1", ID: id} }

func TestSequenceStartsAtZero(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		for _, id := range []string{"s1", "s2"} {
			if claimed, st, err := a.Begin(ctx, key(id), owner); err != nil || !claimed || st != (sessions.Status{Started: true, Starting: true, Owner: owner}) {
				t.Fatalf("Begin(%s) = %v, %+v, %v; want claimed, started", id, claimed, st, err)
			}
		}
		// The claim reserved 0 for agent_startup; Next continues at 1.
		for want := int64(1); want <= 10; want++ {
			for _, id := range []string{"s1", "s2"} {
				src := sessions.Sequence(a, key(id))
				if want%2 == 1 {
					src = sessions.Sequence(b, key(id))
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
		if _, _, err := a.Begin(ctx, key("hot"), owner); err != nil {
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
					n, err := store.Next(ctx, key("hot"))
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
				claimed, st, err := s.Begin(ctx, key(id), owner)
				if err != nil || !st.Started || !st.Starting || st.Ended || st.Blocked || st.Owner != owner {
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
			if _, _, err := a.Begin(ctx, key(id), owner); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			wins := 0
			race(16, a, b, func(s sessions.Store) {
				ended, st, err := s.End(ctx, key(id), owner)
				if err != nil || !st.Ended || st.Owner != owner {
					t.Errorf("End(%s) = %+v, %v; want ended, with its owner", id, st, err)
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
		ids := make([]sessions.Key, sessionsN)
		for i := range ids {
			ids[i] = key(fmt.Sprintf("idle-%03d", i))
			if _, _, err := a.Begin(ctx, ids[i], owner); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(idle + 100*time.Millisecond)
		if _, _, err := b.Begin(ctx, key("fresh"), owner); err != nil {
			t.Fatal(err)
		}

		// Four sweepers (two per replica) race each other and an End on
		// every third id; every id must end exactly once overall.
		var mu sync.Mutex
		winners := map[sessions.Key]int{}
		win := func(k sessions.Key) {
			mu.Lock()
			winners[k]++
			mu.Unlock()
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 0; i < sessionsN; i += 3 {
				s := a
				if i%2 == 1 {
					s = b
				}
				ended, _, err := s.End(ctx, ids[i], owner)
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
					t.Errorf("ClaimExpired(7) returned %d sessions", len(got))
				}
				if len(got) == 0 {
					return
				}
				for _, e := range got {
					if e.Owner != owner || e.Blocked {
						t.Errorf("ClaimExpired: %+v; want the claimer as owner, not blocked", e)
					}
					win(e.Key)
				}
			}
		})
		wg.Wait()

		for _, k := range ids {
			if winners[k] != 1 {
				t.Errorf("%s ended %d times; want exactly once", k.ID, winners[k])
			}
			if st, ok, err := b.Status(ctx, k); err != nil || !ok || !st.Ended {
				t.Errorf("Status(%s) = %+v, %v, %v; want ended", k.ID, st, ok, err)
			}
		}
		if n := winners[key("fresh")]; n != 0 {
			t.Errorf("fresh session claimed %d times before its deadline", n)
		}
		if len(winners) != sessionsN {
			t.Errorf("%d distinct sessions ended; want %d", len(winners), sessionsN)
		}
	})
}

func TestClaimExpiredNonPositiveMax(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, _ := open(sessions.Options{IdleTimeout: time.Millisecond})
		if _, _, err := a.Begin(ctx, key("x"), owner); err != nil {
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

// TestStartingAdmitBlock checks the Starting state: set by the claim, seen
// by every replica, cleared by Admit or by Block (which also blocks).
func TestStartingAdmitBlock(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		for _, id := range []string{"admitted", "denied"} {
			if _, _, err := a.Begin(ctx, key(id), owner); err != nil {
				t.Fatal(err)
			}
			starting := sessions.Status{Started: true, Starting: true, Owner: owner}
			if st, ok, err := b.Status(ctx, key(id)); err != nil || !ok || st != starting {
				t.Fatalf("Status(%s) before the verdict = %+v, %v, %v; want %+v", id, st, ok, err, starting)
			}
			if claimed, st, err := b.Begin(ctx, key(id), owner); err != nil || claimed || st != starting {
				t.Fatalf("second Begin(%s) = %v, %+v, %v; want not claimed, %+v", id, claimed, st, err, starting)
			}
		}
		if err := a.Admit(ctx, key("admitted")); err != nil {
			t.Fatal(err)
		}
		if err := a.Block(ctx, key("denied")); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]sessions.Status{
			"admitted": {Started: true, Owner: owner},
			"denied":   {Started: true, Blocked: true, Owner: owner},
		} {
			if st, ok, err := b.Status(ctx, key(id)); err != nil || !ok || st != want {
				t.Fatalf("Status(%s) = %+v, %v, %v; want %+v", id, st, ok, err, want)
			}
			if claimed, st, err := b.Begin(ctx, key(id), owner); err != nil || claimed || st != want {
				t.Fatalf("Begin(%s) after the verdict = %v, %+v, %v; want not claimed, %+v", id, claimed, st, err, want)
			}
		}
		// A blocked session's expiry reports it blocked (shutdown reason
		// error) with its agent.
		if _, st, err := b.End(ctx, key("denied"), owner); err != nil || !st.Blocked || st.Owner != owner {
			t.Fatalf("End(denied) = %+v, %v; want blocked, with its owner", st, err)
		}
	})
}

func TestEndedSessionStaysEnded(t *testing.T) {
	const idle = 30 * time.Millisecond
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{IdleTimeout: idle})
		k := key("done")
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		if err := a.Admit(ctx, k); err != nil {
			t.Fatal(err)
		}
		if n, err := a.Next(ctx, k); err != nil || n != 1 {
			t.Fatalf("Next = %d, %v", n, err)
		}
		want := sessions.Status{Started: true, Ended: true, Owner: owner}
		if ended, st, err := b.End(ctx, k, owner); err != nil || !ended || st != want {
			t.Fatalf("End = %v, %+v, %v; want true, %+v", ended, st, err, want)
		}
		if ended, st, err := a.End(ctx, k, owner); err != nil || ended || st != want {
			t.Fatalf("second End = %v, %+v, %v; want false, %+v", ended, st, err, want)
		}
		if claimed, st, err := a.Begin(ctx, k, owner); err != nil || claimed || st != want {
			t.Fatalf("Begin after End = %v, %+v, %v; want not claimed, %+v", claimed, st, err, want)
		}
		// No new call may start…
		if err := a.Acquire(ctx, k, "late-call", time.Minute); !errors.Is(err, sessions.ErrSessionEnded) {
			t.Fatalf("Acquire after End: %v; want ErrSessionEnded", err)
		}
		// …but calls in flight still get numbers…
		if n, err := b.Next(ctx, k); err != nil || n != 2 {
			t.Fatalf("Next after End = %d, %v; want 2", n, err)
		}
		// …and neither Next nor Begin put the session back up for expiry.
		time.Sleep(idle + 20*time.Millisecond)
		if got, err := a.ClaimExpired(ctx, 10); err != nil || len(got) != 0 {
			t.Fatalf("ClaimExpired = %v, %v; an ended session must not be claimed", got, err)
		}
		if st, ok, err := b.Status(ctx, k); err != nil || !ok || st != want {
			t.Fatalf("Status = %+v, %v, %v; want %+v", st, ok, err, want)
		}
	})
}

// TestSeal checks the shutdown takes the last number: only after End, only
// once, and nothing is numbered after it.
func TestSeal(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		k := key("sealed")
		if _, err := a.Seal(ctx, k); !errors.Is(err, sessions.ErrUnknownSession) {
			t.Fatalf("Seal of an unknown session: %v; want ErrUnknownSession", err)
		}
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		if err := a.Admit(ctx, k); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Seal(ctx, k); !errors.Is(err, sessions.ErrSessionNotEnded) {
			t.Fatalf("Seal of a live session: %v; want ErrSessionNotEnded", err)
		}
		for want := int64(1); want <= 3; want++ {
			if n, err := a.Next(ctx, k); err != nil || n != want {
				t.Fatalf("Next = %d, %v; want %d", n, err, want)
			}
		}
		if _, _, err := a.End(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		if n, err := b.Next(ctx, k); err != nil || n != 4 {
			t.Fatalf("Next of a call in flight after End = %d, %v; want 4", n, err)
		}
		if n, err := b.Seal(ctx, k); err != nil || n != 5 {
			t.Fatalf("Seal = %d, %v; want 5, after every other number", n, err)
		}
		if _, err := a.Next(ctx, k); !errors.Is(err, sessions.ErrSessionSealed) {
			t.Fatalf("Next after Seal: %v; want ErrSessionSealed", err)
		}
		if _, err := a.Seal(ctx, k); !errors.Is(err, sessions.ErrSessionSealed) {
			t.Fatalf("second Seal: %v; want ErrSessionSealed", err)
		}
		want := sessions.Status{Started: true, Ended: true, Sealed: true, Owner: owner}
		if st, ok, err := b.Status(ctx, k); err != nil || !ok || st != want {
			t.Fatalf("Status = %+v, %v, %v; want %+v", st, ok, err, want)
		}
		if err := a.OpenToolCall(ctx, k, "call_1"); !errors.Is(err, sessions.ErrSessionSealed) {
			t.Fatalf("OpenToolCall after Seal: %v; want ErrSessionSealed", err)
		}
	})
}

// TestSealRacesNext races Next against one Seal on two replicas: every
// number is handed out once, and the seal's is larger than every number
// Next handed out.
func TestSealRacesNext(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		for i := range 10 {
			k := key(fmt.Sprintf("seal-%d", i))
			if _, _, err := a.Begin(ctx, k, owner); err != nil {
				t.Fatal(err)
			}
			if _, _, err := a.End(ctx, k, owner); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var nexts []int64
			var seals []int64
			var turn atomic.Int32
			race(16, a, b, func(s sessions.Store) {
				if turn.Add(1)%4 == 0 {
					n, err := s.Seal(ctx, k)
					if err == nil {
						mu.Lock()
						seals = append(seals, n)
						mu.Unlock()
					} else if !errors.Is(err, sessions.ErrSessionSealed) {
						t.Error(err)
					}
					return
				}
				for {
					n, err := s.Next(ctx, k)
					if errors.Is(err, sessions.ErrSessionSealed) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					nexts = append(nexts, n)
					mu.Unlock()
				}
			})
			if len(seals) != 1 {
				t.Fatalf("%d Seals won; want exactly one", len(seals))
			}
			all := append(slices.Clone(nexts), seals[0])
			slices.Sort(all)
			for j, n := range all {
				if n != int64(j+1) {
					t.Fatalf("numbers %v are not 1..%d without gaps or duplicates", all, len(all))
				}
			}
			if all[len(all)-1] != seals[0] {
				t.Fatalf("Seal took %d but Next handed out %d", seals[0], all[len(all)-1])
			}
		}
	})
}

func TestUnknownSession(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, _ := open(sessions.Options{})
		k := key("nobody")
		if _, err := a.Next(ctx, k); !errors.Is(err, sessions.ErrUnknownSession) {
			t.Errorf("Next: %v; want ErrUnknownSession", err)
		}
		if ended, _, err := a.End(ctx, k, owner); ended || !errors.Is(err, sessions.ErrUnknownSession) {
			t.Errorf("End = %v, %v; want false, ErrUnknownSession", ended, err)
		}
		if err := a.Block(ctx, k); !errors.Is(err, sessions.ErrUnknownSession) {
			t.Errorf("Block: %v; want ErrUnknownSession", err)
		}
		if err := a.Admit(ctx, k); !errors.Is(err, sessions.ErrUnknownSession) {
			t.Errorf("Admit: %v; want ErrUnknownSession", err)
		}
		if err := a.Acquire(ctx, k, "c", time.Minute); !errors.Is(err, sessions.ErrUnknownSession) {
			t.Errorf("Acquire: %v; want ErrUnknownSession", err)
		}
		if err := a.Release(ctx, k, "c"); err != nil {
			t.Errorf("Release: %v; want nil", err)
		}
		if n, err := a.InFlight(ctx, k); err != nil || n != 0 {
			t.Errorf("InFlight = %d, %v; want 0, nil", n, err)
		}
		if err := a.OpenToolCall(ctx, k, "t"); !errors.Is(err, sessions.ErrUnknownSession) {
			t.Errorf("OpenToolCall: %v; want ErrUnknownSession", err)
		}
		if ok, err := a.CloseToolCall(ctx, k, "t"); ok || !errors.Is(err, sessions.ErrUnknownSession) {
			t.Errorf("CloseToolCall = %v, %v; want false, ErrUnknownSession", ok, err)
		}
		if st, ok, err := a.Status(ctx, k); err != nil || ok || st != (sessions.Status{}) {
			t.Errorf("Status = %+v, %v, %v; want zero, false, nil", st, ok, err)
		}
		if err := a.Ping(ctx); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
}

func TestInvalidKeys(t *testing.T) {
	bad := map[string]sessions.Key{
		"empty":            {ID: ""},
		"too long":         {ID: strings.Repeat("x", sessions.MaxIDLen+1)},
		"space":            {ID: "a b"},
		"newline":          {ID: "a\nb"},
		"nul":              {ID: "a\x00"},
		"del":              {ID: "a\x7f"},
		"non-ascii":        {ID: "sessión"},
		"tenant too long":  {Tenant: strings.Repeat("t", sessions.MaxIDLen+1), ID: "x"},
		"tenant space":     {Tenant: "a b", ID: "x"},
		"tenant non-ascii": {Tenant: "tenänt", ID: "x"},
	}
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, _ := open(sessions.Options{})
		for name, k := range bad {
			errs := map[string]error{}
			_, _, errs["Begin"] = a.Begin(ctx, k, owner)
			errs["Admit"] = a.Admit(ctx, k)
			_, errs["Next"] = a.Next(ctx, k)
			errs["Block"] = a.Block(ctx, k)
			errs["Acquire"] = a.Acquire(ctx, k, "c", time.Minute)
			errs["Release"] = a.Release(ctx, k, "c")
			_, errs["InFlight"] = a.InFlight(ctx, k)
			_, _, errs["End"] = a.End(ctx, k, owner)
			_, errs["Seal"] = a.Seal(ctx, k)
			errs["OpenToolCall"] = a.OpenToolCall(ctx, k, "t")
			_, errs["CloseToolCall"] = a.CloseToolCall(ctx, k, "t")
			_, _, errs["Status"] = a.Status(ctx, k)
			for method, err := range errs {
				if !errors.Is(err, sessions.ErrInvalidSessionID) {
					t.Errorf("%s(%s): %v; want ErrInvalidSessionID", method, name, err)
				}
			}
		}
		longest := sessions.Key{Tenant: strings.Repeat("~", sessions.MaxIDLen), ID: strings.Repeat("~", sessions.MaxIDLen)}
		if claimed, _, err := a.Begin(ctx, longest, owner); err != nil || !claimed {
			t.Errorf("Begin(128-byte tenant and id) = %v, %v; want claimed", claimed, err)
		}
		if claimed, _, err := a.Begin(ctx, sessions.Key{ID: "{weird}:id!"}, owner); err != nil || !claimed {
			t.Errorf("Begin(punctuated id, no tenant) = %v, %v; want claimed", claimed, err)
		}
	})
}

func TestValidateIDDoesNotEchoID(t *testing.T) {
	err := sessions.ValidateID("secret token")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("ValidateID = %v; want an error naming the rule, not the id", err)
	}
	err = sessions.ValidateKey(sessions.Key{Tenant: "secret tenant", ID: "x"})
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("ValidateKey = %v; want an error naming the rule, not the tenant", err)
	}
}

// blankIncarnations runs the contract tests on the memory store, whose
// states carry the incarnation it mints per claim, where Redis's carry
// none: it checks each incarnation's form, then blanks it, so one
// expected state serves both (TestMemoryIncarnations tests their values).
type blankIncarnations struct {
	*sessions.Memory
	t *testing.T
}

func (b *blankIncarnations) blank(inc *string) {
	b.t.Helper()
	if len(*inc) != sessions.IncarnationLen || strings.Trim(*inc, "0123456789abcdef") != "" {
		b.t.Errorf("incarnation %q: want %d lowercase hex digits", *inc, sessions.IncarnationLen)
	}
	*inc = ""
}

func (b *blankIncarnations) Begin(ctx context.Context, k sessions.Key, o sessions.Owner) (bool, sessions.Status, error) {
	claimed, st, err := b.Memory.Begin(ctx, k, o)
	if err == nil {
		b.blank(&st.Incarnation)
	}
	return claimed, st, err
}

func (b *blankIncarnations) BeginCall(ctx context.Context, k sessions.Key, o sessions.Owner, c sessions.Call) (sessions.CallStart, error) {
	cs, err := b.Memory.BeginCall(ctx, k, o, c)
	if err == nil {
		b.blank(&cs.Status.Incarnation)
	}
	return cs, err
}

func (b *blankIncarnations) End(ctx context.Context, k sessions.Key, o sessions.Owner) (bool, sessions.Status, error) {
	won, st, err := b.Memory.End(ctx, k, o)
	if err == nil {
		b.blank(&st.Incarnation)
	}
	return won, st, err
}

func (b *blankIncarnations) Status(ctx context.Context, k sessions.Key) (sessions.Status, bool, error) {
	st, exists, err := b.Memory.Status(ctx, k)
	if exists {
		b.blank(&st.Incarnation)
	}
	return st, exists, err
}

func (b *blankIncarnations) ClaimExpired(ctx context.Context, max int) ([]sessions.Expired, error) {
	es, err := b.Memory.ClaimExpired(ctx, max)
	for i := range es {
		b.blank(&es[i].Incarnation)
	}
	return es, err
}
