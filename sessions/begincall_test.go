package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// beginCall is BeginCall of a one-minute call named id, failing the test
// on error.
func beginCall(t *testing.T, s sessions.Store, k sessions.Key, o sessions.Owner, id, agent string) sessions.CallStart {
	t.Helper()
	cs, err := s.BeginCall(context.Background(), k, o, sessions.Call{ID: id, Lease: time.Minute, Agent: agent})
	if err != nil {
		t.Fatalf("BeginCall(%s) = %v", id, err)
	}
	return cs
}

// inFlight is InFlight, failing the test on error.
func inFlight(t *testing.T, s sessions.Store, k sessions.Key) int {
	t.Helper()
	n, err := s.InFlight(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBeginCallLifecycle follows a session through BeginCall: the claim
// (lease, no number: 0 is the startup's), a join while Starting (lease,
// no number), joins once admitted (lease and the next number, which Next
// continues after), and the refusals that take neither.
func TestBeginCallLifecycle(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		k := key("turns")

		cs := beginCall(t, a, k, owner, "call-1", "")
		want := sessions.CallStart{Claimed: true, Status: sessions.Status{Started: true, Starting: true, Owner: owner}, Leased: true, Seq: -1}
		if !reflect.DeepEqual(cs, want) {
			t.Fatalf("claim = %+v; want %+v", cs, want)
		}
		cs = beginCall(t, b, k, owner, "call-2", owner.AgentID)
		want = sessions.CallStart{Status: sessions.Status{Started: true, Starting: true, Owner: owner}, Leased: true, Seq: -1}
		if !reflect.DeepEqual(cs, want) {
			t.Fatalf("join while Starting = %+v; want %+v", cs, want)
		}
		if n := inFlight(t, a, k); n != 2 {
			t.Fatalf("InFlight = %d; want 2", n)
		}
		if err := a.Admit(ctx, k); err != nil {
			t.Fatal(err)
		}
		// Numbers: 0 the startup's; BeginCall and Next share the sequence.
		if n, err := a.Next(ctx, k); err != nil || n != 1 {
			t.Fatalf("Next = %d, %v; want 1", n, err)
		}
		admitted := sessions.Status{Started: true, Owner: owner}
		for i, s := range []sessions.Store{b, a, b} {
			cs = beginCall(t, s, k, owner, fmt.Sprintf("call-%d", i+3), "")
			if want := (sessions.CallStart{Status: admitted, Leased: true, Seq: int64(i + 2)}); !reflect.DeepEqual(cs, want) {
				t.Fatalf("join %d once admitted = %+v; want %+v", i, cs, want)
			}
		}
		if n, err := b.Next(ctx, k); err != nil || n != 5 {
			t.Fatalf("Next after BeginCall = %d, %v; want 5", n, err)
		}
		if n := inFlight(t, b, k); n != 5 {
			t.Fatalf("InFlight = %d; want 5", n)
		}

		// Another agent asserted: neither lease nor number.
		cs = beginCall(t, a, k, owner, "call-other", "other-agent")
		if want := (sessions.CallStart{Status: admitted, Seq: -1}); !reflect.DeepEqual(cs, want) {
			t.Fatalf("another agent = %+v; want %+v", cs, want)
		}
		// Another key: foreign, nothing changes.
		_, err := b.BeginCall(ctx, k, sessions.Owner{KeyID: "key-2", AgentID: owner.AgentID}, sessions.Call{ID: "call-foreign", Lease: time.Minute})
		if !errors.Is(err, sessions.ErrForeignSession) {
			t.Fatalf("foreign BeginCall = %v; want ErrForeignSession", err)
		}
		if n := inFlight(t, a, k); n != 5 {
			t.Fatalf("InFlight after refusals = %d; want 5", n)
		}
		if n, err := a.Next(ctx, k); err != nil || n != 6 {
			t.Fatalf("Next after refusals = %d, %v; want 6 (no hole)", n, err)
		}

		// Ended: neither lease nor number, the status says so.
		if won, _, err := a.End(ctx, k, owner); err != nil || !won {
			t.Fatalf("End = %v, %v", won, err)
		}
		cs = beginCall(t, b, k, owner, "call-late", "")
		if want := (sessions.CallStart{Status: sessions.Status{Started: true, Ended: true, Owner: owner}, Seq: -1}); !reflect.DeepEqual(cs, want) {
			t.Fatalf("after End = %+v; want %+v", cs, want)
		}
		if n := inFlight(t, a, k); n != 5 {
			t.Fatalf("InFlight after End = %d; want 5", n)
		}
		if n, err := a.Seal(ctx, k); err != nil || n != 7 {
			t.Fatalf("Seal = %d, %v; want 7", n, err)
		}
	})
}

// TestBeginCallBlocked checks a blocked session's BeginCall takes neither
// lease nor number, and that Block on the claim's session keeps numbers
// gapless for its shutdown.
func TestBeginCallBlocked(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		k := key("denied")
		if cs := beginCall(t, a, k, owner, "call-1", ""); !cs.Claimed || cs.Seq != -1 {
			t.Fatalf("claim = %+v", cs)
		}
		if err := a.Block(ctx, k); err != nil {
			t.Fatal(err)
		}
		cs := beginCall(t, b, k, owner, "call-2", "")
		if want := (sessions.CallStart{Status: sessions.Status{Started: true, Blocked: true, Owner: owner}, Seq: -1}); !reflect.DeepEqual(cs, want) {
			t.Fatalf("blocked = %+v; want %+v", cs, want)
		}
		if n := inFlight(t, b, k); n != 1 {
			t.Fatalf("InFlight = %d; want 1 (the claim's)", n)
		}
		if err := a.Release(ctx, k, "call-1"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := b.End(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		if n, err := b.Seal(ctx, k); err != nil || n != 1 {
			t.Fatalf("Seal = %d, %v; want 1 (right after the startup's 0)", n, err)
		}
	})
}

// TestBeginCallArguments checks BeginCall validates the call and the key
// before touching the store.
func TestBeginCallArguments(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, _ := open(sessions.Options{})
		for _, c := range []struct {
			k    sessions.Key
			call sessions.Call
			want error
		}{
			{key("s"), sessions.Call{ID: "", Lease: time.Minute}, sessions.ErrInvalidToolCallID},
			{key("s"), sessions.Call{ID: "has space", Lease: time.Minute}, sessions.ErrInvalidToolCallID},
			{key("s"), sessions.Call{ID: "call", Lease: 0}, sessions.ErrInvalidLease},
			{key(""), sessions.Call{ID: "call", Lease: time.Minute}, sessions.ErrInvalidSessionID},
		} {
			if _, err := a.BeginCall(ctx, c.k, owner, c.call); !errors.Is(err, c.want) {
				t.Errorf("BeginCall(%+v) = %v; want %v", c.call, err, c.want)
			}
		}
		if _, exists, err := a.Status(ctx, key("s")); err != nil || exists {
			t.Fatalf("Status after refused calls = %v, %v; want unknown", exists, err)
		}
	})
}

// TestBeginCallGapless races turns (BeginCall, then Next for the rest of
// the turn's emissions) on both replicas with plain Nexts: every number is
// handed out once, none is skipped.
func TestBeginCallGapless(t *testing.T) {
	const workers, turns = 8, 60
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		k := key("hot")
		if cs := beginCall(t, a, k, owner, "claim", ""); !cs.Claimed {
			t.Fatalf("claim = %+v", cs)
		}
		if err := a.Admit(ctx, k); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		all := []int64{0}
		var calls atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			s := a
			if w%2 == 1 {
				s = b
			}
			wg.Go(func() {
				for range turns {
					id := fmt.Sprintf("call-%d", calls.Add(1))
					cs, err := s.BeginCall(ctx, k, owner, sessions.Call{ID: id, Lease: time.Minute})
					if err != nil || !cs.Leased || cs.Seq < 0 {
						t.Errorf("BeginCall = %+v, %v", cs, err)
						return
					}
					got := []int64{cs.Seq}
					for range 3 {
						n, err := s.Next(ctx, k)
						if err != nil {
							t.Error(err)
							return
						}
						got = append(got, n)
					}
					if err := s.Release(ctx, k, id); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					all = append(all, got...)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		slices.Sort(all)
		for i, n := range all {
			if n != int64(i) {
				t.Fatalf("sorted numbers[%d] = %d; want 0..%d without gaps or duplicates", i, n, workers*turns*4)
			}
		}
		if n := inFlight(t, a, k); n != 1 {
			t.Fatalf("InFlight = %d; want 1 (the claim's)", n)
		}
	})
}

// TestBeginCallIndexes checks a session created by BeginCall is swept once
// idle: its idle-index entry was written and confirmed on the way (for
// Redis, by the claim and the claimer's Admit).
func TestBeginCallIndexes(t *testing.T) {
	const idle = 300 * time.Millisecond
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{IdleTimeout: idle})
		k := key("swept")
		if cs := beginCall(t, a, k, owner, "call-1", ""); !cs.Claimed || !cs.Leased {
			t.Fatalf("claim = %+v", cs)
		}
		if err := a.Admit(ctx, k); err != nil {
			t.Fatal(err)
		}
		if cs := beginCall(t, b, k, owner, "call-2", ""); cs.Seq != 1 {
			t.Fatalf("join = %+v; want number 1", cs)
		}
		for _, id := range []string{"call-1", "call-2"} {
			if err := b.Release(ctx, k, id); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(idle + 100*time.Millisecond)
		got, err := b.ClaimExpired(ctx, 10)
		if err != nil || len(got) != 1 || got[0].Key != k || got[0].Owner != owner {
			t.Fatalf("ClaimExpired = %+v, %v; want the session", got, err)
		}
	})
}
