package sessions_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// TestLeaseHoldsOffExpiry checks a session with a call in flight is not
// claimed idle however long the call runs, and that its idle time starts
// when the call is released.
func TestLeaseHoldsOffExpiry(t *testing.T) {
	const idle = 500 * time.Millisecond
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{IdleTimeout: idle})
		k := key("busy")
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		if err := a.Acquire(ctx, k, "call-1", time.Minute); err != nil {
			t.Fatal(err)
		}
		for range 3 { // three idle timeouts with the call in flight
			time.Sleep(idle)
			if got, err := b.ClaimExpired(ctx, 10); err != nil || len(got) != 0 {
				t.Fatalf("ClaimExpired with a call in flight = %+v, %v; want nothing", got, err)
			}
		}
		if n, err := b.InFlight(ctx, k); err != nil || n != 1 {
			t.Fatalf("InFlight = %d, %v; want 1", n, err)
		}
		if err := b.Release(ctx, k, "call-1"); err != nil {
			t.Fatal(err)
		}
		released := time.Now()
		if n, err := a.InFlight(ctx, k); err != nil || n != 0 {
			t.Fatalf("InFlight after Release = %d, %v; want 0", n, err)
		}
		if got, err := a.ClaimExpired(ctx, 10); err != nil || len(got) != 0 {
			t.Fatalf("ClaimExpired right after Release = %+v, %v; want nothing (idle time starts at the release)", got, err)
		}
		time.Sleep(time.Until(released.Add(idle + 100*time.Millisecond)))
		if got, err := a.ClaimExpired(ctx, 10); err != nil || len(got) != 1 || got[0].Key != k {
			t.Fatalf("ClaimExpired idle after the release = %+v, %v; want the session", got, err)
		}
	})
}

// TestLeaseExpires checks a lease nobody releases (a replica died mid-call)
// holds the session only until it ends: then the session is claimed.
func TestLeaseExpires(t *testing.T) {
	const idle, lease = 300 * time.Millisecond, 900 * time.Millisecond
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{IdleTimeout: idle})
		k := key("orphan")
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		if err := a.Acquire(ctx, k, "call-1", lease); err != nil {
			t.Fatal(err)
		}
		acquired := time.Now()
		time.Sleep(idle + 100*time.Millisecond)
		if got, err := b.ClaimExpired(ctx, 10); err != nil || len(got) != 0 {
			t.Fatalf("ClaimExpired within the lease = %+v, %v; want nothing", got, err)
		}
		time.Sleep(time.Until(acquired.Add(lease + 100*time.Millisecond)))
		if n, err := b.InFlight(ctx, k); err != nil || n != 0 {
			t.Fatalf("InFlight after the lease ended = %d, %v; want 0", n, err)
		}
		if got, err := b.ClaimExpired(ctx, 10); err != nil || len(got) != 1 || got[0] != (sessions.Expired{Key: k, Owner: owner}) {
			t.Fatalf("ClaimExpired after the lease ended = %+v, %v; want the session", got, err)
		}
	})
}

// TestAcquireIsActivity checks Acquire pushes the idle deadline even for a
// lease that ends at once.
func TestAcquireIsActivity(t *testing.T) {
	const idle = time.Second
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{IdleTimeout: idle})
		k := key("active")
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		begun := time.Now()
		time.Sleep(idle / 2)
		if err := a.Acquire(ctx, k, "call-1", time.Millisecond); err != nil {
			t.Fatal(err)
		}
		acquired := time.Now()
		time.Sleep(time.Until(begun.Add(idle + 100*time.Millisecond)))
		if got, err := b.ClaimExpired(ctx, 10); err != nil || len(got) != 0 {
			t.Fatalf("ClaimExpired idle after Begin but not after Acquire = %+v, %v; want nothing", got, err)
		}
		time.Sleep(time.Until(acquired.Add(idle + 100*time.Millisecond)))
		if got, err := b.ClaimExpired(ctx, 10); err != nil || len(got) != 1 {
			t.Fatalf("ClaimExpired idle after Acquire = %+v, %v; want the session", got, err)
		}
	})
}

// TestInFlightCounts checks InFlight counts distinct unexpired leases;
// Acquire under a call id already held renews it rather than adding one.
func TestInFlightCounts(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		k := key("calls")
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		inFlight := func(want int) {
			t.Helper()
			if n, err := b.InFlight(ctx, k); err != nil || n != want {
				t.Fatalf("InFlight = %d, %v; want %d", n, err, want)
			}
		}
		for _, id := range []string{"c1", "c2", "c3", "c2"} {
			if err := a.Acquire(ctx, k, id, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		inFlight(3)
		if err := a.Acquire(ctx, k, "short", time.Millisecond); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		inFlight(3)
		for _, id := range []string{"c1", "never-acquired", "c1"} {
			if err := b.Release(ctx, k, id); err != nil {
				t.Fatalf("Release(%s): %v", id, err)
			}
		}
		inFlight(2)
		// After End, calls in flight are still counted and still release.
		if _, _, err := a.End(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		inFlight(2)
		if err := a.Acquire(ctx, k, "c4", time.Minute); !errors.Is(err, sessions.ErrSessionEnded) {
			t.Fatalf("Acquire after End: %v; want ErrSessionEnded", err)
		}
		for _, id := range []string{"c2", "c3"} {
			if err := b.Release(ctx, k, id); err != nil {
				t.Fatal(err)
			}
		}
		inFlight(0)
	})
}

func TestAcquireArguments(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, _ := open(sessions.Options{})
		k := key("args")
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		for _, lease := range []time.Duration{0, -time.Second} {
			if err := a.Acquire(ctx, k, "c", lease); !errors.Is(err, sessions.ErrInvalidLease) {
				t.Errorf("Acquire(lease %v): %v; want ErrInvalidLease", lease, err)
			}
		}
		for _, id := range []string{"", "a b", strings.Repeat("x", sessions.MaxToolCallIDLen+1)} {
			if err := a.Acquire(ctx, k, id, time.Minute); !errors.Is(err, sessions.ErrInvalidToolCallID) {
				t.Errorf("Acquire(call id of %d bytes): %v; want ErrInvalidToolCallID", len(id), err)
			}
			if err := a.Release(ctx, k, id); !errors.Is(err, sessions.ErrInvalidToolCallID) {
				t.Errorf("Release(call id of %d bytes): %v; want ErrInvalidToolCallID", len(id), err)
			}
		}
		if n, err := a.InFlight(ctx, k); err != nil || n != 0 {
			t.Fatalf("InFlight after refused Acquires = %d, %v; want 0", n, err)
		}
	})
}
