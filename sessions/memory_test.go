package sessions_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/sessions"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// fakeClock is a settable clock for Options.Now.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newFakeMemory() (*sessions.Memory, *fakeClock) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return sessions.NewMemory(sessions.Options{IdleTimeout: time.Minute, Retention: time.Hour, Now: clock.Now}), clock
}

// ids lists the session ids of expired sessions.
func ids(es []sessions.Expired) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key.ID)
	}
	return out
}

func TestMemoryIdleExpiry(t *testing.T) {
	ctx := context.Background()
	m, clock := newFakeMemory()
	claim := func(want ...string) {
		t.Helper()
		got, err := m.ClaimExpired(ctx, 10)
		if err != nil || !slices.Equal(ids(got), want) {
			t.Fatalf("ClaimExpired = %q, %v; want %q", ids(got), err, want)
		}
	}
	if _, _, err := m.Begin(ctx, key("s"), owner); err != nil {
		t.Fatal(err)
	}
	clock.Advance(30 * time.Second)
	if _, err := m.Next(ctx, key("s")); err != nil { // pushes the deadline to 1m30s
		t.Fatal(err)
	}
	clock.Advance(59 * time.Second)
	claim()
	clock.Advance(time.Second)
	claim("s")
	claim()
	if st, ok, _ := m.Status(ctx, key("s")); !ok || !st.Ended {
		t.Fatalf("Status after expiry = %+v, %v; want ended", st, ok)
	}
	if ended, _, err := m.End(ctx, key("s"), owner); ended || err != nil {
		t.Fatalf("End after expiry = %v, %v; want false, nil", ended, err)
	}
	if n, err := m.Next(ctx, key("s")); err != nil || n != 2 {
		t.Fatalf("Next for the shutdown = %d, %v; want 2 (0 went to the claim, 1 to the first Next)", n, err)
	}

	// Remembered for the retention, then forgotten and claimable afresh.
	clock.Advance(time.Hour - time.Nanosecond)
	if _, ok, _ := m.Status(ctx, key("s")); !ok {
		t.Fatal("ended session forgotten before its retention")
	}
	clock.Advance(time.Nanosecond)
	if _, ok, _ := m.Status(ctx, key("s")); ok {
		t.Fatal("ended session still remembered after its retention")
	}
	if claimed, st, err := m.Begin(ctx, key("s"), owner); err != nil || !claimed || st.Ended {
		t.Fatalf("Begin after forgetting = %v, %+v, %v; want a fresh claim", claimed, st, err)
	}
	if n, err := m.Next(ctx, key("s")); err != nil || n != 1 {
		t.Fatalf("Next of the fresh session = %d, %v; want 1 (0 is the claim's)", n, err)
	}
}

func TestMemoryClaimsOldestFirst(t *testing.T) {
	ctx := context.Background()
	m, clock := newFakeMemory()
	for _, id := range []string{"c", "a", "b"} {
		if _, _, err := m.Begin(ctx, key(id), owner); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	clock.Advance(time.Minute)
	for _, want := range [][]string{{"c", "a"}, {"b"}, nil} {
		if got, err := m.ClaimExpired(ctx, 2); err != nil || !slices.Equal(ids(got), want) {
			t.Fatalf("ClaimExpired(2) = %q, %v; want %q", ids(got), err, want)
		}
	}
}

// TestMemoryEvictsAbandoned checks nothing leaks when no one ever sweeps or
// ends a session: it is dropped IdleTimeout+Retention after last activity.
func TestMemoryEvictsAbandoned(t *testing.T) {
	ctx := context.Background()
	m, clock := newFakeMemory()
	for _, id := range []string{"x", "y"} {
		if _, _, err := m.Begin(ctx, key(id), owner); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Minute + time.Hour - time.Nanosecond)
	if st, ok, _ := m.Status(ctx, key("x")); !ok || st.Ended {
		t.Fatalf("unswept session = %+v, %v; want live (nobody ended it yet)", st, ok)
	}
	clock.Advance(time.Nanosecond)
	if _, ok, _ := m.Status(ctx, key("x")); ok {
		t.Fatal("abandoned session not forgotten after idle+retention")
	}
	if got, err := m.ClaimExpired(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("ClaimExpired = %+v, %v; forgotten sessions must not be handed out", got, err)
	}
	if n := m.Len(); n != 0 {
		t.Fatalf("Len after sweep = %d; want 0", n)
	}
}

// TestMemoryLeaseTiming pins the lease arithmetic on a fake clock: a sweep
// past the idle deadline reschedules a leased session at its lease's end,
// to the nanosecond; a released lease restarts the idle time; a long lease
// keeps the session from being forgotten.
func TestMemoryLeaseTiming(t *testing.T) {
	ctx := context.Background()
	m, clock := newFakeMemory() // idle 1m, retention 1h
	k := key("s")
	claim := func(want ...string) {
		t.Helper()
		got, err := m.ClaimExpired(ctx, 10)
		if err != nil || !slices.Equal(ids(got), want) {
			t.Fatalf("ClaimExpired = %q, %v; want %q", ids(got), err, want)
		}
	}
	if _, _, err := m.Begin(ctx, k, owner); err != nil {
		t.Fatal(err)
	}
	if err := m.Acquire(ctx, k, "call", 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	claim() // leased: rescheduled at the lease's end (5m)
	clock.Advance(3*time.Minute - time.Nanosecond)
	if n, _ := m.InFlight(ctx, k); n != 1 {
		t.Fatalf("InFlight a nanosecond before the lease ends = %d; want 1", n)
	}
	claim()
	clock.Advance(time.Nanosecond)
	if n, _ := m.InFlight(ctx, k); n != 0 {
		t.Fatalf("InFlight when the lease ends = %d; want 0", n)
	}
	claim("s")

	// Release restarts the idle time.
	k2 := key("s2")
	if _, _, err := m.Begin(ctx, k2, owner); err != nil {
		t.Fatal(err)
	}
	if err := m.Acquire(ctx, k2, "call", time.Hour); err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Minute)
	if err := m.Release(ctx, k2, "call"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute - time.Nanosecond)
	claim()
	clock.Advance(time.Nanosecond)
	claim("s2")

	// A lease longer than idle+retention keeps an unswept session.
	k3 := key("s3")
	if _, _, err := m.Begin(ctx, k3, owner); err != nil {
		t.Fatal(err)
	}
	if err := m.Acquire(ctx, k3, "call", 3*time.Hour); err != nil {
		t.Fatal(err)
	}
	clock.Advance(3*time.Hour + time.Hour - time.Nanosecond)
	if _, ok, _ := m.Status(ctx, k3); !ok {
		t.Fatal("session forgotten before its lease's end plus the retention")
	}
	clock.Advance(time.Nanosecond)
	if _, ok, _ := m.Status(ctx, k3); ok {
		t.Fatal("session still remembered after its lease's end plus the retention")
	}
}

// ClaimOpen ends every session that has not ended, idle or not, and
// returns each once: neither it nor ClaimExpired returns it again.
func TestMemoryClaimOpen(t *testing.T) {
	ctx := context.Background()
	m, clock := newFakeMemory()
	owner := sessions.Owner{KeyID: "k", AgentID: "a"}
	for _, id := range []string{"s1", "s2", "s3"} {
		if _, _, err := m.Begin(ctx, sessions.Key{ID: id}, owner); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := m.End(ctx, sessions.Key{ID: "s3"}, owner); err != nil {
		t.Fatal(err)
	}
	got, err := m.ClaimOpen(ctx, 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("ClaimOpen(1) = %v, %v", ids(got), err)
	}
	rest, _ := m.ClaimOpen(ctx, 100)
	all := append(ids(got), ids(rest)...)
	slices.Sort(all)
	if !slices.Equal(all, []string{"s1", "s2"}) {
		t.Fatalf("claimed %v, want the open s1 and s2 once each", all)
	}
	if again, _ := m.ClaimOpen(ctx, 100); len(again) != 0 {
		t.Fatalf("claimed again: %v", ids(again))
	}
	clock.Advance(2 * time.Minute)
	if exp, _ := m.ClaimExpired(ctx, 100); len(exp) != 0 {
		t.Fatalf("ClaimExpired returned claimed sessions: %v", ids(exp))
	}
}

// Each claim of an id in the memory store has an incarnation of its own:
// every state of the session reports the one its claim minted; the same
// id claimed in another process's store (a restarted gateway) or again
// after its retention ran out has another. Redis mints none: its id names
// one session for the store's whole life.
func TestMemoryIncarnations(t *testing.T) {
	ctx := context.Background()
	m, clock := newFakeMemory()
	k, owner := sessions.Key{ID: "run"}, sessions.Owner{KeyID: "k", AgentID: "a"}
	claimed, st, err := m.Begin(ctx, k, owner)
	if err != nil || !claimed || st.Incarnation == "" {
		t.Fatalf("claim = %v, %+v, %v: want an incarnation", claimed, st, err)
	}
	first := st.Incarnation
	if err := m.Admit(ctx, k); err != nil {
		t.Fatal(err)
	}
	cs, err := m.BeginCall(ctx, k, owner, sessions.Call{ID: "c1", Lease: time.Minute})
	if err != nil || cs.Claimed || cs.Status.Incarnation != first {
		t.Fatalf("joining call = %+v, %v: want the claim's incarnation %s", cs, err, first)
	}
	if err := m.Release(ctx, k, "c1"); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := m.Status(ctx, k); st.Incarnation != first {
		t.Fatalf("Status incarnation %q, want %s", st.Incarnation, first)
	}
	// A restarted gateway: a new store, the same id.
	_, st2, err := sessions.NewMemory(sessions.Options{}).Begin(ctx, k, owner)
	if err != nil || st2.Incarnation == "" || st2.Incarnation == first {
		t.Fatalf("the id claimed after a restart: incarnation %q (%v), want one other than %s", st2.Incarnation, err, first)
	}
	clock.Advance(2 * time.Minute)
	exp, err := m.ClaimExpired(ctx, 10)
	if err != nil || len(exp) != 1 || exp[0].Incarnation != first {
		t.Fatalf("ClaimExpired = %+v, %v: want the session with incarnation %s", exp, err, first)
	}
	clock.Advance(2 * time.Hour) // past the retention: the id is forgotten
	claimed, st3, err := m.Begin(ctx, k, owner)
	if err != nil || !claimed || st3.Incarnation == "" || st3.Incarnation == first {
		t.Fatalf("the id claimed after its retention: %v, incarnation %q (%v), want a new claim with another than %s", claimed, st3.Incarnation, err, first)
	}

	url, _ := redistest.Start(t)
	r, err := sessions.NewRedis(ctx, sessions.RedisOptions{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, st, err := r.Begin(ctx, k, owner); err != nil || st.Incarnation != "" {
		t.Fatalf("redis claim: incarnation %q (%v), want none", st.Incarnation, err)
	}
}
