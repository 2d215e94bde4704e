package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// TestTenantsAreNamespaces checks one id in two tenants is two unrelated
// sessions: separate claims, owners, sequences, verdicts, ends, leases and
// tool calls.
func TestTenantsAreNamespaces(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		ka, kb := sessions.Key{Tenant: "a", ID: "x"}, sessions.Key{Tenant: "b", ID: "x"}
		oa, ob := sessions.Owner{KeyID: "key-a", AgentID: "agent-a"}, sessions.Owner{KeyID: "key-b", AgentID: "agent-b"}
		if claimed, _, err := a.Begin(ctx, ka, oa); err != nil || !claimed {
			t.Fatalf("Begin(a/x) = %v, %v; want claimed", claimed, err)
		}
		if claimed, st, err := b.Begin(ctx, kb, ob); err != nil || !claimed || st.Owner != ob {
			t.Fatalf("Begin(b/x) = %v, %+v, %v; want claimed by b's key (another tenant's x)", claimed, st, err)
		}
		for range 3 {
			if _, err := a.Next(ctx, ka); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := b.Next(ctx, kb); err != nil || n != 1 {
			t.Fatalf("Next(b/x) = %d, %v; want 1, its own sequence", n, err)
		}
		if err := a.Block(ctx, ka); err != nil {
			t.Fatal(err)
		}
		if err := a.OpenToolCall(ctx, ka, "tool-1"); err != nil {
			t.Fatal(err)
		}
		if closed, err := b.CloseToolCall(ctx, kb, "tool-1"); err != nil || closed {
			t.Fatalf("CloseToolCall(b/x) of a/x's tool call = %v, %v; want false", closed, err)
		}
		if err := a.Acquire(ctx, ka, "call-1", time.Minute); err != nil {
			t.Fatal(err)
		}
		if n, err := b.InFlight(ctx, kb); err != nil || n != 0 {
			t.Fatalf("InFlight(b/x) = %d, %v; want 0", n, err)
		}
		if won, _, err := a.End(ctx, ka, oa); err != nil || !won {
			t.Fatalf("End(a/x) = %v, %v", won, err)
		}
		want := sessions.Status{Started: true, Starting: true, Owner: ob}
		if st, ok, err := a.Status(ctx, kb); err != nil || !ok || st != want {
			t.Fatalf("Status(b/x) after a/x blocked and ended = %+v, %v, %v; want %+v", st, ok, err, want)
		}
		if err := b.Acquire(ctx, kb, "call-1", time.Minute); err != nil {
			t.Fatalf("Acquire(b/x) after a/x ended: %v", err)
		}
		if closed, err := a.CloseToolCall(ctx, ka, "tool-1"); err != nil || !closed {
			t.Fatalf("CloseToolCall(a/x) = %v, %v; want its own open call", closed, err)
		}
	})
}

// TestForeignOwner checks another key can neither begin nor end a session,
// and that its attempts change nothing: not the owner, not the state, not
// the idle deadline. The same key with another agent id is the owner, and
// the claim's agent id stays the session's.
func TestForeignOwner(t *testing.T) {
	const idle = time.Second
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{IdleTimeout: idle})
		k := key("mine")
		intruder := sessions.Owner{KeyID: "key-2", AgentID: "agent-2"}
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		if err := a.Admit(ctx, k); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		time.Sleep(idle / 2)
		for range 3 {
			if claimed, st, err := b.Begin(ctx, k, intruder); claimed || st != (sessions.Status{}) || !errors.Is(err, sessions.ErrForeignSession) {
				t.Fatalf("foreign Begin = %v, %+v, %v; want ErrForeignSession, nothing disclosed", claimed, st, err)
			}
			if won, st, err := b.End(ctx, k, intruder); won || st != (sessions.Status{}) || !errors.Is(err, sessions.ErrForeignSession) {
				t.Fatalf("foreign End = %v, %+v, %v; want ErrForeignSession, nothing disclosed", won, st, err)
			}
			if _, _, err := b.Begin(ctx, k, sessions.Owner{AgentID: owner.AgentID}); !errors.Is(err, sessions.ErrForeignSession) {
				t.Fatalf("Begin without a key of a keyed session: %v; want ErrForeignSession", err)
			}
		}
		want := sessions.Status{Started: true, Owner: owner}
		if st, ok, err := a.Status(ctx, k); err != nil || !ok || st != want {
			t.Fatalf("Status after foreign attempts = %+v, %v, %v; want %+v", st, ok, err, want)
		}
		// The owner's key with another agent id is the owner; the claim's
		// agent id stays the session's.
		if claimed, st, err := a.Begin(ctx, k, sessions.Owner{KeyID: owner.KeyID, AgentID: "other-agent"}); err != nil || claimed || st != want {
			t.Fatalf("Begin by the owner's key with another agent = %v, %+v, %v; want not claimed, %+v", claimed, st, err, want)
		}
		// That Begin (half an idle timeout in) pushed the deadline to about
		// 1.5 idle (TestForeignAttemptsDoNotPushDeadline isolates the
		// foreign calls' lack of effect on it).
		time.Sleep(time.Until(start.Add(idle/2 + idle + 100*time.Millisecond)))
		got, err := b.ClaimExpired(ctx, 10)
		if err != nil || len(got) != 1 || got[0] != (sessions.Expired{Key: k, Owner: owner}) {
			t.Fatalf("ClaimExpired = %+v, %v; want the session with its claimer's owner and agent", got, err)
		}
	})
}

// TestForeignAttemptsDoNotPushDeadline isolates the no-side-effect rule:
// only foreign calls happen after the claim, and the session expires on
// its original schedule.
func TestForeignAttemptsDoNotPushDeadline(t *testing.T) {
	const idle = time.Second
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{IdleTimeout: idle})
		k := key("quiet")
		intruder := sessions.Owner{KeyID: "key-2"}
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		claimedAt := time.Now()
		deadline := claimedAt.Add(idle)
		// Keep knocking until just past the original deadline: had any
		// attempt pushed it, the session would now be due idle later.
		for time.Now().Before(deadline.Add(100 * time.Millisecond)) {
			if _, _, err := b.Begin(ctx, k, intruder); !errors.Is(err, sessions.ErrForeignSession) {
				t.Fatalf("foreign Begin: %v", err)
			}
			if _, _, err := b.End(ctx, k, intruder); !errors.Is(err, sessions.ErrForeignSession) {
				t.Fatalf("foreign End: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		got, err := a.ClaimExpired(ctx, 10)
		if err != nil || len(got) != 1 || got[0].Key != k {
			t.Fatalf("ClaimExpired %v after the claim = %+v, %v; want the session (foreign calls must not push its deadline)", time.Since(claimedAt), got, err)
		}
	})
}

// TestBeginRaceTwoKeys races two keys' first requests for one session: one
// claim overall; the claimer's key sees the session, the other key only
// ErrForeignSession.
func TestBeginRaceTwoKeys(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		keys := []sessions.Owner{{KeyID: "key-1", AgentID: "x"}, {KeyID: "key-2", AgentID: "y"}}
		for i := range 20 {
			k := key(fmt.Sprintf("contested-%d", i))
			var mu sync.Mutex
			claims := map[string]int{}
			foreign := map[string]int{}
			var n int
			race(16, a, b, func(s sessions.Store) {
				mu.Lock()
				o := keys[n%2]
				n++
				mu.Unlock()
				claimed, st, err := s.Begin(ctx, k, o)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(err, sessions.ErrForeignSession):
					foreign[o.KeyID]++
				case err != nil:
					t.Error(err)
				case claimed:
					claims[o.KeyID]++
				case st.Owner != o:
					t.Errorf("Begin by %s = %+v; the session is reported as another key's", o.KeyID, st)
				}
			})
			if len(claims) != 1 {
				t.Fatalf("claims %v; want exactly one", claims)
			}
			for winner, c := range claims {
				if c != 1 || foreign[winner] != 0 {
					t.Fatalf("winner %s: %d claims, %d foreign answers; want 1 and 0", winner, c, foreign[winner])
				}
				loser := keys[0].KeyID
				if loser == winner {
					loser = keys[1].KeyID
				}
				if foreign[loser] != 8 {
					t.Fatalf("foreign answers %v; want all 8 of %s's requests", foreign, loser)
				}
			}
		}
	})
}

// TestRetiredIDs checks an ended session's id stays retired (Begin answers
// Ended, without a claim) for the retention, then is forgotten and can be
// claimed afresh.
func TestRetiredIDs(t *testing.T) {
	const retention = 500 * time.Millisecond
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{Retention: retention})
		k := key("retired")
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.End(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		endedAt := time.Now()
		for time.Since(endedAt) < retention/2 {
			if claimed, st, err := b.Begin(ctx, k, owner); err != nil || claimed || !st.Ended {
				t.Fatalf("Begin %v after End = %v, %+v, %v; want the retired session (ended)", time.Since(endedAt), claimed, st, err)
			}
			if _, _, err := b.Begin(ctx, k, sessions.Owner{KeyID: "key-2"}); !errors.Is(err, sessions.ErrForeignSession) {
				t.Fatalf("another key's Begin of a retired session: %v; want ErrForeignSession", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(time.Until(endedAt.Add(retention + 200*time.Millisecond)))
		if _, ok, err := a.Status(ctx, k); err != nil || ok {
			t.Fatalf("Status after the retention = %v, %v; want forgotten", ok, err)
		}
		if claimed, st, err := b.Begin(ctx, k, sessions.Owner{KeyID: "key-2"}); err != nil || !claimed || st.Ended {
			t.Fatalf("Begin after the retention = %v, %+v, %v; want a fresh claim", claimed, st, err)
		}
		if n, err := a.Next(ctx, k); err != nil || n != 1 {
			t.Fatalf("Next of the fresh session = %d, %v; want 1", n, err)
		}
	})
}
